// tools/plot's image: an 8-bit palette canvas, written as an indexed-colour PNG by the tools'
// one PNG writer (png_write.h).
#ifndef TOOLS_PLOT_PNG_H
#define TOOLS_PLOT_PNG_H
// defines: PlotImage, PLOT_MAX_COLOURS, plot_image_new, plot_image_free, plot_png_write

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

#endif
