// Columns of numbers from JSON-lines files (RUN_DIR/metrics.jsonl, eval.jsonl, ringstat.jsonl)
// for tools/plot: one row per line, NaN where a key is absent or null.
#ifndef TOOLS_PLOT_DATA_H
#define TOOLS_PLOT_DATA_H
// defines: PlotTable, PLOT_MAX_KEYS, plot_json_number, plot_table_read, plot_table_free, plot_table_has,
//          plot_table_keep_finite, plot_table_latest

#include <stddef.h> // defines: size_t

#define PLOT_MAX_KEYS 16

typedef struct {
	int n; // rows read
	int nk;
	double *col[PLOT_MAX_KEYS]; // (n) per key
	int bad_lines;              // lines that are not one JSON object (e.g. a half-written last line)
} PlotTable;

// The number of "key" in a one-line JSON object, or in an object nested in it (the first in the
// text wins, so keys should be unique in the line). 1 and *v: a number; 0: null or not a number
// (*v = NaN); -1: absent, or the line is not JSON before the key.
int plot_json_number(const char *line, const char *key, double *v);
// Reads every line of path; rows lacking keys[0] (the x axis) are skipped. 0, -ENOENT / -errno
// with err for an unreadable file, -ENOMEM.
int plot_table_read(const char *path, const char *const *keys, int nk, PlotTable *t, char *err, size_t errlen);
void plot_table_free(PlotTable *t);
// 1 when column k holds a finite value
int plot_table_has(const PlotTable *t, int k);
// keeps only the rows with a finite value in one of the columns first..last (drops, e.g., eval
// lines among step lines, or step lines among eval lines)
void plot_table_keep_finite(PlotTable *t, int first, int last);
// makes column 0 strictly increasing, later lines winning: a resumed run appends steps again from
// its checkpoint, and those replace the ones written after it before the restart
void plot_table_latest(PlotTable *t);

#endif
