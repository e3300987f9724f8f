// Drawing on tools/plot's palette canvas: rectangles, 1-pixel lines (solid or dashed) and text in
// the tools' built-in 5x7 bitmap font (tools/text_font.c).
#include "plot_draw.h" // defines: plot_rect, plot_line, plot_text, plot_text_width

#include <stdlib.h> // defines: abs

#include "text_font.h" // defines: text_font_bitmap, text_draw, text_width

static void dot(PlotImage *im, int x, int y, uint8_t c)
{
	if (x >= 0 && y >= 0 && x < im->w && y < im->h)
		im->px[(size_t)y * im->w + x] = c;
}

void plot_rect(PlotImage *im, int x, int y, int w, int h, uint8_t c)
{
	for (int j = y; j < y + h; j++)
		for (int i = x; i < x + w; i++)
			dot(im, i, j, c);
}

void plot_line(PlotImage *im, int x0, int y0, int x1, int y1, uint8_t c, int dash)
{
	// Bresenham; dash > 0 draws dash pixels on, dash off
	int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1, dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1, e = dx + dy, k = 0;
	for (;;) {
		if (!dash || (k / dash) % 2 == 0)
			dot(im, x0, y0, c);
		k++;
		if (x0 == x1 && y0 == y1)
			break;
		int e2 = 2 * e;
		if (e2 >= dy) {
			e += dy;
			x0 += sx;
		}
		if (e2 <= dx) {
			e += dx;
			y0 += sy;
		}
	}
}

int plot_text_width(const char *s, int scale)
{
	return text_width(text_font_bitmap(scale), s);
}

typedef struct {
	PlotImage *im;
	uint8_t colour;
} Pen;

static void put(void *ctx, int x, int y, uint8_t coverage)
{
	Pen *p = ctx;
	(void)coverage; // the bitmap font covers whole pixels
	dot(p->im, x, y, p->colour);
}

void plot_text(PlotImage *im, int x, int y, const char *s, uint8_t c, int scale)
{
	Pen p = {im, c};
	text_draw(text_font_bitmap(scale), x, y, s, put, &p);
}
