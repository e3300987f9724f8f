// tools/plot's panels: the legend never covers a line (the plot area of a panel is the same
// pixel for pixel with and without labels, even for a line through the top-right corner where
// a legend used to sit), and a lone point (one evaluation) gets a marker and its value.
#include "../tools/plot_chart.h" // defines: plot_chart, plot_palette, PlotSeries, PlotBox, PC_*
#include "../tools/plot_png.h"   // defines: PlotImage, plot_image_new, plot_image_free
#include "testutil.h"            // defines: CHECK

#include <stdio.h>  // defines: printf
#include <string.h> // defines: memcmp

static int count(const PlotImage *im, int y0, int y1, uint8_t c)
{
	int n = 0;
	for (int y = y0; y < y1; y++)
		for (int x = 0; x < im->w; x++)
			n += im->px[(size_t)y * im->w + x] == c;
	return n;
}

int main(void)
{
	double x[50], up[50], flat[50];
	for (int i = 0; i < 50; i++) {
		x[i] = i;
		up[i] = i * i; // ends in the top-right corner
		flat[i] = 100;
	}
	PlotBox box = {0, 0, 560, 260};
	PlotImage a, b;
	CHECK(plot_image_new(&a, 560, 260) == 0 && plot_image_new(&b, 560, 260) == 0);
	plot_palette(&a);
	plot_palette(&b);
	PlotSeries labelled[2] = {{x, up, 50, PC_BLUE, 0, "rising to the corner"}, {x, flat, 50, PC_RED, 3, "flat"}};
	PlotSeries bare[2] = {{x, up, 50, PC_BLUE, 0, NULL}, {x, flat, 50, PC_RED, 3, NULL}};
	plot_chart(&a, box, "loss", "step", labelled, 2, NULL);
	plot_chart(&b, box, "loss", "step", bare, 2, NULL);
	const int plot_top = 24; // below the header row
	CHECK(!memcmp(a.px + (size_t)plot_top * a.w, b.px + (size_t)plot_top * b.w, (size_t)(a.h - plot_top) * a.w));
	CHECK(count(&a, 0, plot_top, PC_TEXT) > count(&b, 0, plot_top, PC_TEXT)); // the legend is in the header
	CHECK(count(&a, 0, plot_top, PC_BLUE) > 0 && count(&a, 0, plot_top, PC_RED) > 0);

	// one evaluation: a 5x5 marker and its value in the series' colour
	double ex = 49, ey = 0.3, cx = 49, cy = 0.025, lim[2] = {0, 49};
	PlotSeries one[2] = {{&ex, &ey, 1, PC_GREEN, 0, "t2v R@1"}, {&cx, &cy, 1, PC_GREY, 3, "chance"}};
	PlotImage c;
	CHECK(plot_image_new(&c, 560, 260) == 0);
	plot_palette(&c);
	plot_chart(&c, box, "held-out", "step", one, 2, lim);
	int green = count(&c, plot_top, c.h, PC_GREEN), grey = count(&c, plot_top, c.h, PC_GREY);
	CHECK(green >= 25 + 10 && grey >= 25 + 10); // marker, plus the digits of its value
	printf("legend outside the plot area; a lone evaluation: %d and %d pixels\n", green, grey);
	plot_image_free(&a);
	plot_image_free(&b);
	plot_image_free(&c);
	return 0;
}
