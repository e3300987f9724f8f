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
		{255, 255, 255}, {20, 20, 20},  {228, 228, 228}, {110, 110, 110}, {31, 119, 180},
		{214, 39, 40},   {44, 160, 44}, {255, 127, 14},  {148, 103, 189}, {150, 150, 150},
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

// The legend goes in the header, right of the title, in as many rows as it needs, so it never
// covers a line; returns the rows used (0: no labels). draw 0 only measures.
static int legend(PlotImage *im, int x0, int x1, int y, const PlotSeries *s, int ns, int draw)
{
	int rows = 0, x = x1;
	for (int k = ns - 1; k >= 0; k--) { // right to left, so the first series ends up leftmost
		if (!s[k].label)
			continue;
		int w = plot_text_width(s[k].label, 1) + 26;
		if (rows == 0 || (x - w < x0 && x < x1)) {
			rows++;
			x = x1;
		}
		x -= w;
		if (!draw)
			continue;
		int ly = y + (rows - 1) * 12;
		plot_line(im, x + 4, ly + 3, x + 18, ly + 3, s[k].colour, s[k].dash);
		plot_line(im, x + 4, ly + 4, x + 18, ly + 4, s[k].colour, s[k].dash);
		plot_text(im, x + 22, ly, s[k].label, PC_TEXT, 1);
	}
	return rows;
}

void plot_chart(PlotImage *im, PlotBox b, const char *title, const char *xlabel, const PlotSeries *s, int ns,
		const double *xlim)
{
	const int left = 64, right = 12, bottom = 30;
	const int key_x0 = b.x + left + plot_text_width(title, 1) + 24, key_x1 = b.x + b.w - right;
	const int rows = legend(im, key_x0, key_x1, b.y + 6, s, ns, 0), top = 24 + 12 * (rows > 1 ? rows - 1 : 0);
	const int px = b.x + left, py = b.y + top, pw = b.w - left - right, ph = b.h - top - bottom;
	plot_text(im, b.x + left, b.y + 6, title, PC_TEXT, 1);
	legend(im, key_x0, key_x1, b.y + 6, s, ns, 1);
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
	// a margin, so a point on the last step (a final evaluation) is not cut by the frame
	const double xpad = 0.015 * (xhi - xlo);
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
	xlo -= xpad;
	xhi += xpad;
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
			int alone = !have && (i + 1 >= s[k].n || !isfinite(s[k].x[i + 1]) || !isfinite(s[k].y[i + 1]));
			if (alone) { // a lone point (one evaluation) gets a marker and its value
				plot_rect(im, x - 2, y - 2, 5, 5, s[k].colour);
				label(buf, sizeof buf, s[k].y[i], 1e-9);
				int tw = plot_text_width(buf, 1);
				plot_text(im, x + 6 + tw < px + pw ? x + 6 : x - 6 - tw, y - 3, buf, s[k].colour, 1);
			}
			have = 1;
			lx = x;
			ly = y;
		}
	}
}
