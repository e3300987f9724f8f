// Contact-sheet canvas: rows of frames with word-wrapped UTF-8 text under each (the tools' text
// renderer), and a dependency-free PNG writer: stored deflate blocks, Adler-32, CRC-32 per chunk.
#include "clipdump_sheet.h" // defines: sheet_new, sheet_put_frames, sheet_text, sheet_write_png

#include "manifest_format.h" // defines: manifest_crc32 (IEEE CRC-32, as PNG uses)

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

void sheet_put_frames(Sheet *s, int row, const uint8_t *frames, int T, int fw, int fh)
{
	uint8_t *top = s->rgb + (size_t)row * s->row_h * s->w * 3;
	for (int t = 0; t < T && (t + 1) * fw <= s->w; t++)
		for (int y = 0; y < fh; y++)
			memcpy(top + ((size_t)y * s->w + (size_t)t * fw) * 3, frames + (((size_t)t * fh + y) * fw) * 3,
			       (size_t)fw * 3);
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
	Ink k = { s, row * s->row_h, (row + 1) * s->row_h };
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

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static int put_chunk(FILE *f, const char *type, const uint8_t *data, size_t n)
{
	uint8_t hdr[8];
	be32(hdr, (uint32_t)n);
	memcpy(hdr + 4, type, 4);
	uint32_t crc = manifest_crc32(0, hdr + 4, 4);
	crc = manifest_crc32(crc, data, n);
	uint8_t tail[4];
	be32(tail, crc);
	// IEND has no data: fwrite's buffer must not be NULL even for zero bytes (UBSan: nonnull)
	return fwrite(hdr, 1, 8, f) == 8 && (!n || fwrite(data, 1, n, f) == n) && fwrite(tail, 1, 4, f) == 4 ? 0 : -EIO;
}

int sheet_write_png(const Sheet *s, const char *path)
{
	size_t row = (size_t)s->w * 3 + 1, raw_n = row * s->h;
	size_t blocks = (raw_n + 65534) / 65535;
	size_t z_n = 2 + raw_n + 5 * blocks + 4;
	uint8_t *z = malloc(z_n);
	if (!z)
		return -ENOMEM;
	// zlib stream of stored blocks over the filtered rows (filter 0 = none)
	size_t o = 0, done = 0;
	z[o++] = 0x78;
	z[o++] = 0x01;
	uint32_t a = 1, b = 0;
	size_t y = 0, x = 0; // position in the virtual raw stream
	while (done < raw_n) {
		size_t n = raw_n - done < 65535 ? raw_n - done : 65535;
		z[o++] = done + n == raw_n;
		z[o++] = (uint8_t)n;
		z[o++] = (uint8_t)(n >> 8);
		z[o++] = (uint8_t)~n;
		z[o++] = (uint8_t)(~n >> 8);
		for (size_t i = 0; i < n; i++) {
			uint8_t v = x == 0 ? 0 : s->rgb[y * (size_t)s->w * 3 + x - 1];
			if (++x == row) {
				x = 0;
				y++;
			}
			z[o++] = v;
			a = (a + v) % 65521;
			b = (b + a) % 65521;
		}
		done += n;
	}
	be32(z + o, b << 16 | a);
	o += 4;
	FILE *f = fopen(path, "wb");
	if (!f) {
		int e = -errno;
		free(z);
		return e;
	}
	uint8_t ihdr[13];
	be32(ihdr, (uint32_t)s->w);
	be32(ihdr + 4, (uint32_t)s->h);
	ihdr[8] = 8;  // bit depth
	ihdr[9] = 2;  // colour type: RGB
	ihdr[10] = ihdr[11] = ihdr[12] = 0;
	int rc = fwrite("\x89PNG\r\n\x1a\n", 1, 8, f) == 8 ? 0 : -EIO;
	if (!rc)
		rc = put_chunk(f, "IHDR", ihdr, 13);
	if (!rc)
		rc = put_chunk(f, "IDAT", z, o);
	if (!rc)
		rc = put_chunk(f, "IEND", NULL, 0);
	if (fclose(f) != 0 && !rc)
		rc = -EIO;
	free(z);
	return rc;
}
