// tools/plot's canvas: an 8-bit palette image, written through the tools' one PNG writer
// (tools/png_write.c) as an indexed-colour PNG.
#include "plot_png.h" // defines: PlotImage, plot_image_new, plot_image_free, plot_png_write

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memset

#include "png_write.h" // defines: PngImage, png_write_file

int plot_image_new(PlotImage *im, int w, int h)
{
	memset(im, 0, sizeof *im);
	if (w <= 0 || h <= 0 || w > 65536 || h > 65536)
		return -EINVAL;
	if (!(im->px = calloc((size_t)w * h, 1)))
		return -ENOMEM;
	im->w = w;
	im->h = h;
	return 0;
}

void plot_image_free(PlotImage *im)
{
	free(im->px);
	im->px = NULL;
}

int plot_png_write(const PlotImage *im, const char *path)
{
	if (im->n_colours < 1 || im->n_colours > PLOT_MAX_COLOURS)
		return -EINVAL;
	PngImage png = {.w = im->w,
			.h = im->h,
			.channels = 1,
			.px = im->px,
			.palette = im->palette,
			.n_colours = im->n_colours};
	return png_write_file(&png, path);
}
