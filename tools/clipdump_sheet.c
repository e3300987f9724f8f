// Contact-sheet canvas: rows of frames with word-wrapped UTF-8 text under each (the tools' text
// renderer), written as an RGB PNG by the tools' one PNG writer (png_write.h).
#include "clipdump_sheet.h" // defines: sheet_new, sheet_put_frames, sheet_text, sheet_write_png

#include "png_write.h" // defines: PngImage, png_write_file

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARGIN 4
#define BG 24   // dark grey background
#define INK 235 // text

int sheet_new(Sheet *s, int rows, int frames, int fw, int fh, int lines, TextFont *font)
{
	s->font = font;
	s->rows = rows;
	s->fh = fh;
	s->lines = lines;
	s->w = frames * fw;
	int min_w = 40 * text_width(font, "M") + 2 * MARGIN; // room for 40 characters
	if (s->w < min_w)
		s->w = min_w;
	s->row_h = fh + 2 * MARGIN + lines * text_font_line_height(font);
	s->h = rows * s->row_h;
	s->rgb = malloc((size_t)s->w * s->h * 3);
	if (!s->rgb)
		return -ENOMEM;
	memset(s->rgb, BG, (size_t)s->w * s->h * 3);
	return 0;
}

void sheet_free(Sheet *s)
{
	free(s->rgb);
	s->rgb = NULL;
}

void sheet_put_frames(Sheet *s, int row, const uint8_t *frames, int T, int fw, int fh, int scale)
{
	uint8_t *top = s->rgb + (size_t)row * s->row_h * s->w * 3;
	const int sw = fw * scale;
	for (int t = 0; t < T && (t + 1) * sw <= s->w; t++)
		for (int y = 0; y < fh * scale; y++) {
			const uint8_t *src = frames + (((size_t)t * fh + y / scale) * fw) * 3;
			uint8_t *dst = top + ((size_t)y * s->w + (size_t)t * sw) * 3;
			if (scale == 1) {
				memcpy(dst, src, (size_t)fw * 3);
				continue;
			}
			for (int x = 0; x < sw; x++)
				memcpy(dst + (size_t)x * 3, src + (size_t)(x / scale) * 3, 3);
		}
}

typedef struct {
	Sheet *s;
	int y0, y1; // the row's band: text never spills into the next row
} Ink;

static void put(void *ctx, int x, int y, uint8_t a)
{
	Ink *k = ctx;
	if (x < 0 || x >= k->s->w || y < k->y0 || y >= k->y1)
		return;
	uint8_t *p = k->s->rgb + ((size_t)y * k->s->w + x) * 3;
	int v = p[0] + (INK - p[0]) * a / 255; // coverage blends toward the ink
	p[0] = p[1] = p[2] = (uint8_t)v;
}

// the longest prefix of [p, end) that fits in width w: up to its last space, else as many
// characters as fit (at least one); *next is where the following line starts
static size_t fit(TextFont *f, const char *p, const char *end, int w, const char **next)
{
	char buf[1024];
	size_t best_space = 0, n = 0;
	for (const char *q = p; q < end;) {
		const char *c = q;
		text_utf8_next(&q);
		size_t len = (size_t)(q - p);
		if (len >= sizeof buf)
			break;
		memcpy(buf, p, len);
		buf[len] = 0;
		if (text_width(f, buf) > w && n > 0)
			break;
		if (*c == ' ')
			best_space = (size_t)(c - p);
		n = len;
	}
	if (p + n < end && best_space > 0) {
		*next = p + best_space + 1;
		return best_space;
	}
	*next = p + n;
	return n;
}

int sheet_text(Sheet *s, int row, int line, const char *text)
{
	const int lh = text_font_line_height(s->font), y_band = row * s->row_h + s->fh + MARGIN;
	Ink k = {s, row * s->row_h, (row + 1) * s->row_h};
	char buf[1024];
	while (*text) {
		const char *end = strchr(text, '\n');
		if (!end)
			end = text + strlen(text);
		const char *p = text;
		do {
			const char *next;
			size_t n = fit(s->font, p, end, s->w - 2 * MARGIN, &next);
			if (n >= sizeof buf)
				n = sizeof buf - 1;
			memcpy(buf, p, n);
			buf[n] = 0;
			if (line < s->lines)
				text_draw(s->font, MARGIN, y_band + line * lh, buf, put, &k);
			line++;
			p = next;
		} while (p < end);
		text = *end ? end + 1 : end;
	}
	return line;
}

int sheet_write_png(const Sheet *s, const char *path)
{
	PngImage png = {.w = s->w, .h = s->h, .channels = 3, .px = s->rgb};
	return png_write_file(&png, path);
}
