// Drawing primitives of tools/plot on a PlotImage: filled rectangles, lines, 5x7 bitmap text.
#ifndef TOOLS_PLOT_DRAW_H
#define TOOLS_PLOT_DRAW_H
// defines: plot_rect, plot_line, plot_text, plot_text_width

#include <stdint.h> // defines: uint8_t

#include "plot_png.h" // defines: PlotImage

// everything clips to the image
void plot_rect(PlotImage *im, int x, int y, int w, int h, uint8_t colour);
// dash 0: solid; else dash pixels on, dash off
void plot_line(PlotImage *im, int x0, int y0, int x1, int y1, uint8_t colour, int dash);
// top-left at (x, y), each font pixel scale x scale; a glyph cell is 6 x 8 (times scale)
void plot_text(PlotImage *im, int x, int y, const char *s, uint8_t colour, int scale);
int plot_text_width(const char *s, int scale);

#endif
