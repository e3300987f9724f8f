// Text for the tools' pictures (tools/plot, tools/clipdump): one built-in 5x7 bitmap font and,
// when the build has FreeType, any TrueType/OpenType font with full UTF-8 captions.
#ifndef TOOLS_TEXT_FONT_H
#define TOOLS_TEXT_FONT_H
// defines: TextFont, TextPutFn, text_font_bitmap, text_font_open, text_font_close,
//          text_font_line_height, text_font_name, text_width, text_draw, text_utf8_next,
//          TEXT_FONT_DEFAULT

#include <stdint.h> // defines: uint8_t, uint32_t

// the font clipdump asks for unless told (--font, $AVCLIP_FONT): Debian's fonts-dejavu-core
#define TEXT_FONT_DEFAULT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

typedef struct TextFont TextFont;
// called for every pixel a glyph covers, coverage 1..255 (the bitmap font: always 255)
typedef void (*TextPutFn)(void *ctx, int x, int y, uint8_t coverage);

// The built-in font: digits, letters (lower case drawn as upper case), common punctuation, and
// a box for any other code point; each font pixel is scale x scale, a cell 6 x 8 times scale
// (scale 1..4). A static object: never fails, never closed.
TextFont *text_font_bitmap(int scale);
// A TrueType/OpenType file (NULL: $AVCLIP_FONT, else TEXT_FONT_DEFAULT) at px pixels per em.
// -ENOTSUP: this build has no FreeType; -ENOENT: no such file; -EINVAL: FreeType cannot use it.
int text_font_open(TextFont **out, const char *path, int px);
void text_font_close(TextFont *f); // NULL and bitmap fonts: nothing to do
int text_font_line_height(const TextFont *f);
// "DejaVuSans.ttf 13 px" or "built-in 5x7 bitmap"
const char *text_font_name(const TextFont *f);
// pixels the UTF-8 string s advances
int text_width(TextFont *f, const char *s);
// draws s with the top-left of its line box at (x, y); returns the x after it
int text_draw(TextFont *f, int x, int y, const char *s, TextPutFn put, void *ctx);
// the next code point of UTF-8 text, advancing *s; a malformed sequence is U+FFFD for one byte
uint32_t text_utf8_next(const char **s);

#endif
