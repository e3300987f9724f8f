# tools/plot (issue 7): a run's curves (metrics.jsonl, eval.jsonl, ringstat.jsonl) as one PNG,
# drawn with a small palette canvas, the tools' 5x7 bitmap font (text_font.c) and a built-in deflate.
tools_SRCS += tools/plot_png.c tools/plot_draw.c tools/plot_chart.c tools/plot_data.c
PROGS += tools/plot
tools/plot_SRCS := tools/plot.c
tools/plot_LIBS := tools tools data common

TESTS += test_plot_png test_plot_data test_plot_legend
test_plot_png_LIBS := tools tools data common
test_plot_data_LIBS := tools tools common
test_plot_legend_LIBS := tools tools data common
SCRIPT_TESTS += tests/test_plot_run.sh
