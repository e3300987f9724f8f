// tools/plot's image: an 8-bit palette canvas and a dependency-free PNG writer (indexed colour,
// zlib stream of fixed-Huffman deflate blocks with run matches, so plots stay small).
#ifndef TOOLS_PLOT_PNG_H
#define TOOLS_PLOT_PNG_H
// defines: PlotImage, PLOT_MAX_COLOURS, plot_image_new, plot_image_free, plot_png_write, plot_deflate

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint8_t

#define PLOT_MAX_COLOURS 16

typedef struct {
	int w, h;
	uint8_t *px;                          // (h, w) palette indices
	uint8_t palette[PLOT_MAX_COLOURS][3]; // RGB
	int n_colours;
} PlotImage;

// w x h filled with colour 0; the palette is the caller's to fill. 0, -EINVAL or -ENOMEM
int plot_image_new(PlotImage *im, int w, int h);
void plot_image_free(PlotImage *im);
// writes path through path.tmp + rename; 0 or -errno
int plot_png_write(const PlotImage *im, const char *path);
// zlib stream (RFC 1950/1951, fixed Huffman) of in[0..n) into *out (malloc'd), *out_n bytes
int plot_deflate(const uint8_t *in, size_t n, int row_len, uint8_t **out, size_t *out_n);

#endif
