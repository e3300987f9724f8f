// Contact sheets for clipdump: an RGB canvas with the clip's frames side by side and a text
// band under them (built-in 5x7 font), written as PNG with stored (uncompressed) deflate.
#ifndef TOOLS_CLIPDUMP_SHEET_H
#define TOOLS_CLIPDUMP_SHEET_H
// defines: Sheet, sheet_new, sheet_free, sheet_put_frames, sheet_text, sheet_write_png

#include <stddef.h>
#include <stdint.h>

typedef struct {
	int w, h;      // canvas size
	int text_y;    // first row of the text band
	uint8_t *rgb;  // (h, w, 3)
} Sheet;

// canvas for T frames of fw x fh and `lines` text lines; 0 or -ENOMEM
int sheet_new(Sheet *s, int frames, int fw, int fh, int lines);
void sheet_free(Sheet *s);
// frames: (T, fh, fw, 3)
void sheet_put_frames(Sheet *s, const uint8_t *frames, int T, int fw, int fh);
// writes text into the band from line `line`, wrapping; returns the next free line
int sheet_text(Sheet *s, int line, const char *text);
// 0 or -errno
int sheet_write_png(const Sheet *s, const char *path);

#endif
