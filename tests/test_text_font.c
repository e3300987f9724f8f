// tools/text_font: UTF-8 decoding (malformed bytes become U+FFFD one byte at a time), the bitmap
// font (known glyphs, a box for anything else, widths), and with FreeType a real font drawing
// non-ASCII captions as distinct anti-aliased glyphs; missing and unreadable font files fail
// with -ENOENT and -EINVAL.
#include "../tools/text_font.h" // defines: text_font_bitmap, text_font_open, text_draw, text_utf8_next
#include "testutil.h"           // defines: CHECK

#include <errno.h>  // defines: ENOENT, EINVAL, ENOTSUP
#include <stdio.h>  // defines: printf
#include <string.h> // defines: memset, memcmp

#define W 200
#define H 40

typedef struct {
	uint8_t px[H][W];
	int count;
} Canvas;

static void put(void *ctx, int x, int y, uint8_t a)
{
	Canvas *c = ctx;
	CHECK(x >= 0 && x < W && y >= 0 && y < H); // a glyph stays in its line box
	if (!c->px[y][x])
		c->count++;
	c->px[y][x] = a;
}

static int draw(TextFont *f, const char *s, Canvas *c)
{
	memset(c, 0, sizeof *c);
	return text_draw(f, 2, 2, s, put, c);
}

int main(int argc, char **argv)
{
	(void)argc;
	// decoding
	const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e";
	CHECK(text_utf8_next(&s) == 'a');
	CHECK(text_utf8_next(&s) == 0xe9);
	CHECK(text_utf8_next(&s) == 0x20ac);
	CHECK(text_utf8_next(&s) == 0x1d11e);
	CHECK(*s == 0);
	const char *bad[] = {"\xff", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80", "\x80"};
	for (int i = 0; i < 5; i++) {
		const char *p = bad[i];
		CHECK(text_utf8_next(&p) == 0xfffd);
		CHECK(p == bad[i] + 1);
	}

	// the bitmap font: 'A' has 18 pixels in 5x7, an unknown code point is the 20-pixel box,
	// lower case is drawn as upper case, a cell is 6 pixels wide times the scale
	TextFont *b = text_font_bitmap(1);
	Canvas c, d;
	CHECK(draw(b, "A", &c) == 2 + 6 && c.count == 18);
	CHECK(draw(b, "a", &d) == 8 && !memcmp(&c, &d, sizeof c));
	CHECK(draw(b, "\xd0\x96", &c) == 8 && c.count == 20); // Ж: one box for two bytes
	CHECK(text_width(b, "ab c") == 24 && text_width(text_font_bitmap(2), "ab") == 24);
	CHECK(text_font_line_height(b) == 10);

	// a real font through FreeType
	TextFont *f;
	int rc = text_font_open(&f, "/nonexistent/font.ttf", 13);
#if HAVE_FREETYPE
	CHECK(rc == -ENOENT);
	CHECK(text_font_open(&f, argv[0], 13) == -EINVAL); // this program is no font
	rc = text_font_open(&f, NULL, 13);
	if (rc == -ENOENT) {
		printf("skip: FreeType is built in but %s is missing (apt install fonts-dejavu-core)\n",
		       TEXT_FONT_DEFAULT);
		return 77;
	}
	CHECK(rc == 0);
	Canvas e, z;
	CHECK(draw(f, "\xc3\xa9", &e) > 2 && e.count > 10); // é
	CHECK(draw(f, "\xd0\x96", &z) > 2 && z.count > 10); // Ж
	CHECK(memcmp(&e, &z, sizeof e) != 0);
	int partial = 0;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			partial += z.px[y][x] > 0 && z.px[y][x] < 255;
	CHECK(partial > 0); // anti-aliased
	CHECK(text_width(f, "caf\xc3\xa9") > text_width(f, "caf"));
	CHECK(text_font_line_height(f) >= 13);
	printf("FreeType font %s: e-acute %d px, Zhe %d px; bitmap fallback draws a box per code point\n",
	       text_font_name(f), e.count, z.count);
	text_font_close(f);
#else
	(void)argv;
	CHECK(rc == -ENOTSUP || rc == -ENOENT);
	printf("no FreeType in this build: the bitmap font only\n");
#endif
	return 0;
}
