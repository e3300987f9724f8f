// Panels of tools/plot. Scales are linear, ranges come from the finite data padded by 5 %, and
// ticks are 1, 2 or 5 times a power of ten so the labels stay short.
#include "plot_chart.h" // defines: PlotSeries, PlotBox, plot_chart, plot_palette, plot_ticks

#include <math.h>   // defines: isfinite, floor, ceil, log10, pow, fabs
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: strlen

#include "plot_draw.h" // defines: plot_rect, plot_line, plot_text, plot_text_width

void plot_palette(PlotImage *im)
{
	static const uint8_t rgb[PC_COUNT][3] = {
		{ 255, 255, 255 }, { 20, 20, 20 },  { 228, 228, 228 }, { 110, 110, 110 }, { 31, 119, 180 },
		{ 214, 39, 40 },   { 44, 160, 44 }, { 255, 127, 14 },  { 148, 103, 189 }, { 150, 150, 150 },
	};
	for (int i = 0; i < PC_COUNT; i++)
		for (int c = 0; c < 3; c++)
			im->palette[i][c] = rgb[i][c];
	im->n_colours = PC_COUNT;
}

void plot_ticks(double lo, double hi, int max, double *first, double *step, int *count)
{
	double raw = (hi - lo) / (max > 1 ? max - 1 : 1);
	if (!(raw > 0))
		raw = 1;
	double mag = pow(10, floor(log10(raw))), norm = raw / mag;
	*step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
	*first = ceil(lo / *step - 1e-9) * *step;
	*count = (int)floor((hi - *first) / *step + 1e-9) + 1;
	if (*count < 0)
		*count = 0;
}

static void label(char *buf, size_t cap, double v, double step)
{
	if (fabs(v) < step * 1e-6)
		v = 0;
	snprintf(buf, cap, "%.4g", v);
}

void plot_chart(PlotImage *im, PlotBox b, const char *title, const char *xlabel, const PlotSeries *s, int ns,
		const double *xlim)
{
	const int left = 64, right = 12, top = 24, bottom = 30;
	const int px = b.x + left, py = b.y + top, pw = b.w - left - right, ph = b.h - top - bottom;
	plot_text(im, b.x + left, b.y + 6, title, PC_TEXT, 1);
	plot_text(im, b.x + b.w - right - plot_text_width(xlabel, 1), b.y + b.h - 10, xlabel, PC_AXIS, 1);
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	for (int k = 0; k < ns; k++)
		for (int i = 0; i < s[k].n; i++)
			if (isfinite(s[k].x[i]) && isfinite(s[k].y[i])) {
				xlo = fmin(xlo, s[k].x[i]);
				xhi = fmax(xhi, s[k].x[i]);
				ylo = fmin(ylo, s[k].y[i]);
				yhi = fmax(yhi, s[k].y[i]);
			}
	plot_line(im, px, py + ph, px + pw, py + ph, PC_AXIS, 0);
	plot_line(im, px, py, px, py + ph, PC_AXIS, 0);
	if (!(xlo <= xhi)) {
		plot_text(im, px + pw / 2 - plot_text_width("no data", 1) / 2, py + ph / 2, "no data", PC_GREY, 1);
		return;
	}
	if (xlim) {
		xlo = fmin(xlo, xlim[0]);
		xhi = fmax(xhi, xlim[1]);
	}
	if (xhi == xlo) {
		xlo -= 0.5;
		xhi += 0.5;
	}
	double pad = yhi > ylo ? 0.05 * (yhi - ylo) : (ylo ? 0.1 * fabs(ylo) : 1);
	ylo -= pad;
	yhi += pad;
	double first, step;
	int n;
	char buf[32];
	plot_ticks(ylo, yhi, 6, &first, &step, &n);
	for (int i = 0; i < n; i++) {
		double v = first + i * step;
		int y = py + ph - (int)((v - ylo) / (yhi - ylo) * ph + 0.5);
		plot_line(im, px + 1, y, px + pw, y, PC_GRID, 0);
		plot_line(im, px - 4, y, px, y, PC_AXIS, 0);
		label(buf, sizeof buf, v, step);
		plot_text(im, px - 7 - plot_text_width(buf, 1), y - 3, buf, PC_TEXT, 1);
	}
	plot_ticks(xlo, xhi, 7, &first, &step, &n);
	for (int i = 0; i < n; i++) {
		double v = first + i * step;
		int x = px + (int)((v - xlo) / (xhi - xlo) * pw + 0.5);
		plot_line(im, x, py, x, py + ph - 1, PC_GRID, 0);
		plot_line(im, x, py + ph, x, py + ph + 4, PC_AXIS, 0);
		label(buf, sizeof buf, v, step);
		plot_text(im, x - plot_text_width(buf, 1) / 2, py + ph + 7, buf, PC_TEXT, 1);
	}
	for (int k = 0; k < ns; k++) {
		int have = 0, lx = 0, ly = 0;
		for (int i = 0; i < s[k].n; i++) {
			if (!isfinite(s[k].x[i]) || !isfinite(s[k].y[i])) {
				have = 0; // a gap
				continue;
			}
			int x = px + (int)((s[k].x[i] - xlo) / (xhi - xlo) * pw + 0.5);
			int y = py + ph - (int)((s[k].y[i] - ylo) / (yhi - ylo) * ph + 0.5);
			if (have)
				plot_line(im, lx, ly, x, y, s[k].colour, s[k].dash);
			else
				plot_rect(im, x - 1, y - 1, 3, 3, s[k].colour); // a lone point stays visible
			have = 1;
			lx = x;
			ly = y;
		}
	}
	// legend, top right inside the plot area
	int ly = py + 4;
	for (int k = 0; k < ns; k++) {
		if (!s[k].label)
			continue;
		int w = plot_text_width(s[k].label, 1), x = px + pw - w - 6;
		plot_rect(im, x - 22, ly - 2, w + 26, 11, PC_BG);
		plot_line(im, x - 18, ly + 3, x - 4, ly + 3, s[k].colour, s[k].dash);
		plot_line(im, x - 18, ly + 4, x - 4, ly + 4, s[k].colour, s[k].dash);
		plot_text(im, x, ly, s[k].label, PC_TEXT, 1);
		ly += 12;
	}
}
