// One panel of tools/plot: frame, title, axes with round-number ticks, grid, series as polylines
// (NaN values leave gaps) and a legend.
#ifndef TOOLS_PLOT_CHART_H
#define TOOLS_PLOT_CHART_H
// defines: PlotSeries, PlotBox, PlotColour, plot_palette, plot_chart, plot_ticks

#include <stdint.h> // defines: uint8_t

#include "plot_png.h" // defines: PlotImage

// palette indices plot_palette installs
typedef enum {
	PC_BG,
	PC_TEXT,
	PC_GRID,
	PC_AXIS,
	PC_BLUE,
	PC_RED,
	PC_GREEN,
	PC_ORANGE,
	PC_PURPLE,
	PC_GREY,
	PC_COUNT
} PlotColour;

typedef struct {
	const double *x, *y; // (n)
	int n;
	uint8_t colour;
	int dash;          // 0 solid
	const char *label; // legend text, NULL for none
} PlotSeries;

typedef struct {
	int x, y, w, h;
} PlotBox;

void plot_palette(PlotImage *im);
// draws the panel; a panel whose series hold no finite point says "no data" instead. xlim: NULL
// for the data's x range, else {lo, hi} widened to the data (e.g. the run's steps for sparse evals)
void plot_chart(PlotImage *im, PlotBox box, const char *title, const char *xlabel, const PlotSeries *s, int ns,
		const double *xlim);
// round-number ticks covering [lo, hi]: first tick, step and count (<= max)
void plot_ticks(double lo, double hi, int max, double *first, double *step, int *count);

#endif
