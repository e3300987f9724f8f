# tools/plot (issue 7): a run's curves (metrics.jsonl, eval.jsonl, ringstat.jsonl) as one PNG,
# drawn with a small palette canvas, a 5x7 font and a built-in deflate; no dependency.
LIBS += avplot
avplot_SRCS := tools/plot_png.c tools/plot_draw.c tools/plot_chart.c tools/plot_data.c
PROGS += tools/plot
tools/plot_SRCS := tools/plot.c
tools/plot_LIBS := avplot data common

TESTS += test_plot_png test_plot_data
test_plot_png_LIBS := avplot data common
test_plot_data_LIBS := avplot common
SCRIPT_TESTS += tests/test_plot_run.sh
