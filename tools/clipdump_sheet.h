// Contact sheets for clipdump: an RGB canvas of one or more rows, each a clip's frames side by
// side with a text band under them (UTF-8, in a TextFont), written as PNG (png_write.h).
#ifndef TOOLS_CLIPDUMP_SHEET_H
#define TOOLS_CLIPDUMP_SHEET_H
// defines: Sheet, sheet_new, sheet_free, sheet_put_frames, sheet_text, sheet_write_png

#include <stddef.h>
#include <stdint.h>

#include "text_font.h" // defines: TextFont

typedef struct {
	int w, h;       // canvas size
	int rows;       // clips, one row each
	int row_h, fh;  // a row's height; its frames' height
	int lines;      // text lines under each row's frames
	TextFont *font; // not owned
	uint8_t *rgb;   // (h, w, 3)
} Sheet;

// canvas for `rows` clips of T frames of fw x fh, each with `lines` text lines; 0 or -ENOMEM
int sheet_new(Sheet *s, int rows, int frames, int fw, int fh, int lines, TextFont *font);
void sheet_free(Sheet *s);
// frames: (T, fh, fw, 3) into row `row`, each pixel a scale x scale block (the sheet was made
// for frames of fw*scale x fh*scale)
void sheet_put_frames(Sheet *s, int row, const uint8_t *frames, int T, int fw, int fh, int scale);
// writes UTF-8 text into row `row`'s band from line `line`, wrapping at spaces (a word wider than
// the sheet at characters) and at '\n'; returns the next free line
int sheet_text(Sheet *s, int row, int line, const char *text);
// through path.tmp + rename; 0 or -errno
int sheet_write_png(const Sheet *s, const char *path);

#endif
