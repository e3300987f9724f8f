// tools/plot RUN_DIR: a run's curves as one PNG (RUN_DIR/plot.png): loss, temperature, learning rate,
// throughput, data wait, held-out retrieval and classification (eval.jsonl), ring occupancy.
#include "flags.h"      // defines: FlagSpec, FLAG_AT, FlagRest, FlagTool, flags_tool
#include "log.h"        // defines: log_init, log_info, log_warnx, log_fatalx
#include "plot_chart.h" // defines: PlotSeries, PlotBox, plot_chart, plot_palette, PC_*
#include "plot_data.h"  // defines: PlotTable, plot_table_read, plot_table_has, plot_table_free
#include "plot_draw.h"  // defines: plot_text, plot_line
#include "plot_png.h"   // defines: PlotImage, plot_image_new, plot_png_write

#include <errno.h>  // defines: ENOENT
#include <math.h>   // defines: isfinite, NAN
#include <stdio.h>  // defines: printf, snprintf
#include <stdlib.h> // defines: malloc, free, strtol
#include <string.h> // defines: strcmp, strerror, strrchr

enum { PANEL_W = 560, PANEL_H = 250, MARGIN = 16, HEADER = 34, MAX_PANELS = 8, MAX_SERIES = 6 };

typedef struct {
	const char *title, *xlabel;
	PlotSeries s[MAX_SERIES];
	int ns;
	const double *xlim; // NULL: the data's own x range
} Panel;

typedef struct {
	const char *out;
	int help;
} PlotFlags;

static const FlagSpec flag_table[] = {
	{"out", FLAG_STRPTR, FLAG_AT(PlotFlags, out), 0, 0, NULL,
	 .help = "the PNG to write (default RUN_DIR/plot.png)"},
	{"help", FLAG_SWITCH, FLAG_AT(PlotFlags, help), 0, 0, "0", .help = "this text", .alias = 'h'},
};
enum { N_FLAGS = sizeof flag_table / sizeof flag_table[0] };

static const FlagTool tool = {
	"plot",
	"usage: plot RUN_DIR [--out FILE]\n"
	"Draws the run's curves into RUN_DIR/plot.png (or FILE):\n"
	"  from RUN_DIR/metrics.jsonl (required): loss (with a moving average; an --objective mae run's\n"
	"    is its reconstruction loss, recon_loss), temperature tau,\n"
	"    learning rate, throughput (samples/s), data wait and step time (s) against the step;\n"
	"  from RUN_DIR/eval.jsonl (tools/eval --append, lines with a step; without that file, the\n"
	"    same keys in metrics.jsonl): held-out R@1 both ways and text->video R@5 next to chance;\n"
	"    and from tools/eval --task classify (or probe) lines, each head's held-out top-1, the\n"
	"    (head 0, head 1) action top-1 and head 0's chance over the checkpoints' steps;\n"
	"  from RUN_DIR/ringstat.jsonl (tools/ringstat --json 1 > ...): ring occupancy and consumer\n"
	"    wait (%) against seconds since the first line.\n"
	"Panels whose numbers are absent are left out. Steps written again after a resume replace\n"
	"the earlier lines of the same steps.\n",
	flag_table, N_FLAGS};

static Panel *add_panel(Panel *p, int *n, const char *title, const char *xlabel)
{
	Panel *q = &p[(*n)++];
	memset(q, 0, sizeof *q);
	q->title = title;
	q->xlabel = xlabel;
	return q;
}

static void add_series(Panel *p, const double *x, const double *y, int n, PlotColour c, int dash, const char *label)
{
	if (p->ns < MAX_SERIES)
		p->s[p->ns++] =
			(PlotSeries){.x = x, .y = y, .n = n, .colour = (uint8_t)c, .dash = dash, .label = label};
}

// exponential moving average skipping NaN (for noisy per-step losses)
static double *ema(const double *y, int n, double alpha)
{
	double *o = malloc(sizeof *o * (size_t)(n ? n : 1)), m = NAN;
	if (!o)
		log_fatalx("out of memory");
	for (int i = 0; i < n; i++) {
		if (isfinite(y[i]))
			m = isfinite(m) ? m + alpha * (y[i] - m) : y[i];
		o[i] = m;
	}
	return o;
}

static double *scaled(const double *y, int n, double s, double offset)
{
	double *o = malloc(sizeof *o * (size_t)(n ? n : 1));
	if (!o)
		log_fatalx("out of memory");
	for (int i = 0; i < n; i++)
		o[i] = (y[i] + offset) * s;
	return o;
}

// the columns plot reads from each file
enum { M_STEP, M_LOSS, M_TAU, M_LR, M_SPS, M_WAIT, M_STEP_S, M_RECON, M_N };
enum { E_STEP, E_T2V1, E_V2T1, E_T2V5, E_V2T5, E_C1, E_C5, E_N };
enum { R_TIME, R_OCC, R_CWAIT, R_N };
enum { C_STEP, C_TOP1_0, C_TOP1_1, C_ACTION, C_CHANCE_0, C_CHANCE_1, C_N };

// RUN/metrics.jsonl (required, with at least one step), the eval results (RUN/eval.jsonl, else
// the same keys in the metrics lines: retrieval into e, tools/eval --task classify|probe into c)
// and RUN/ringstat.jsonl (may be absent: no rows)
static void read_tables(const char *run, PlotTable *m, PlotTable *e, PlotTable *c, PlotTable *r)
{
	static const char *mkeys[M_N] = {"step",          "loss",        "tau",    "lr",
					 "samples_per_s", "data_wait_s", "step_s", "recon_loss"};
	static const char *ekeys[E_N] = {"step", "t2v_r1", "v2t_r1", "t2v_r5", "v2t_r5", "chance_r1", "chance_r5"};
	static const char *rkeys[R_N] = {"time", "occupancy_pct", "consumer_wait_pct"};
	static const char *ckeys[C_N] = {"step",        "head0_top1",        "head1_top1",
					 "action_top1", "head0_chance_top1", "head1_chance_top1"};
	char path[4200], err[4400];
	snprintf(path, sizeof path, "%s/metrics.jsonl", run);
	int rc = plot_table_read(path, mkeys, M_N, m, err, sizeof err);
	if (rc == -ENOENT)
		log_fatalx("%s: no such file: is %s a run directory the trainer has written to?", path, run);
	if (rc)
		log_fatalx("%s", err);
	if (!m->n)
		log_fatalx("%s holds no metrics lines yet (the trainer writes one per step%s)", path,
			   m->bad_lines ? "; the lines there are not JSON objects with a step" : "");
	const int lines = m->n;
	plot_table_keep_finite(m, M_LOSS, M_STEP_S); // lines of eval results only are not steps
	plot_table_latest(m);
	if (!m->n)
		log_fatalx("%s has %d lines but none of loss, tau, lr, samples_per_s, data_wait_s, step_s", path,
			   lines);
	if (m->bad_lines)
		log_warnx("%s: %d line(s) are not JSON objects (skipped)", path, m->bad_lines);

	snprintf(path, sizeof path, "%s/eval.jsonl", run);
	if ((rc = plot_table_read(path, ekeys, E_N, e, err, sizeof err)) && rc != -ENOENT)
		log_fatalx("%s", err);
	if (rc == -ENOENT) // a trainer may write its eval results into the metrics lines instead
		snprintf(path, sizeof path, "%s/metrics.jsonl", run);
	if ((rc == -ENOENT && (rc = plot_table_read(path, ekeys, E_N, e, err, sizeof err))) ||
	    (rc = plot_table_read(path, ckeys, C_N, c, err, sizeof err)))
		log_fatalx("%s", err);
	plot_table_keep_finite(e, E_T2V1, E_V2T1);
	plot_table_latest(e);
	plot_table_keep_finite(c, C_TOP1_0, C_TOP1_0); // classification lines only
	plot_table_latest(c);

	snprintf(path, sizeof path, "%s/ringstat.jsonl", run);
	if ((rc = plot_table_read(path, rkeys, R_N, r, err, sizeof err)) && rc != -ENOENT)
		log_fatalx("%s", err);
}

int main(int argc, char **argv)
{
	log_init("plot", LOG_INFO);
	PlotFlags fl = {0};
	const char *pos[1];
	FlagRest rest = {.pos = pos, .max_pos = 1};
	flags_tool(&tool, &fl, argc, argv, &rest);
	const char *run = rest.n_pos ? pos[0] : NULL, *out = fl.out;
	if (!run)
		log_fatalx("usage: plot RUN_DIR [--out FILE] (see --help)");
	char outp[4200];
	snprintf(outp, sizeof outp, "%s/plot.png", run);
	if (!out)
		out = outp;

	PlotTable m, e, c, r;
	read_tables(run, &m, &e, &c, &r);
	int rc;

	Panel panels[MAX_PANELS];
	int np = 0;
	const double steps[2] = {m.col[M_STEP][0], m.col[M_STEP][m.n - 1]};
	double *x = m.col[M_STEP], *smooth = NULL, *ev[4] = {0}, *cv[4] = {0}, *rt = NULL;
	if (plot_table_has(&m, M_LOSS)) { // an mae run's loss is the reconstruction MSE (recon_loss)
		Panel *p = add_panel(
			panels, &np,
			plot_table_has(&m, M_RECON) ? "RECONSTRUCTION LOSS (MSE OF MASKED TUBELETS)" : "LOSS", "STEP");
		add_series(p, x, m.col[M_LOSS], m.n, PC_BLUE, 0, m.n >= 20 ? "PER STEP" : NULL);
		if (m.n >= 20) {
			smooth = ema(m.col[M_LOSS], m.n, 2.0 / (1 + m.n / 20.0));
			add_series(p, x, smooth, m.n, PC_RED, 0, "MOVING AVERAGE");
		}
	}
	if (plot_table_has(&m, M_TAU))
		add_series(add_panel(panels, &np, "TEMPERATURE TAU", "STEP"), x, m.col[M_TAU], m.n, PC_PURPLE, 0, NULL);
	if (plot_table_has(&m, M_LR))
		add_series(add_panel(panels, &np, "LEARNING RATE", "STEP"), x, m.col[M_LR], m.n, PC_GREEN, 0, NULL);
	if (plot_table_has(&m, M_SPS))
		add_series(add_panel(panels, &np, "THROUGHPUT (SAMPLES/S)", "STEP"), x, m.col[M_SPS], m.n, PC_BLUE, 0,
			   NULL);
	if (plot_table_has(&m, M_WAIT) || plot_table_has(&m, M_STEP_S)) {
		Panel *p = add_panel(panels, &np, "DATA WAIT AND STEP TIME (S)", "STEP");
		add_series(p, x, m.col[M_WAIT], m.n, PC_ORANGE, 0, "DATA WAIT");
		add_series(p, x, m.col[M_STEP_S], m.n, PC_GREY, 0, "STEP");
	}
	if (e.n && (plot_table_has(&e, E_T2V1) || plot_table_has(&e, E_V2T1))) {
		Panel *p = add_panel(panels, &np, "HELD-OUT RETRIEVAL (%)", "STEP");
		const int ks[4] = {E_T2V1, E_V2T1, E_T2V5, E_C1};
		for (int k = 0; k < 4; k++)
			ev[k] = scaled(e.col[ks[k]], e.n, 100, 0);
		add_series(p, e.col[E_STEP], ev[0], e.n, PC_BLUE, 0, "T2V R@1");
		add_series(p, e.col[E_STEP], ev[1], e.n, PC_RED, 0, "V2T R@1");
		add_series(p, e.col[E_STEP], ev[2], e.n, PC_GREEN, 0, "T2V R@5");
		add_series(p, e.col[E_STEP], ev[3], e.n, PC_GREY, 4, "CHANCE R@1");
		p->xlim = steps; // on the run's step axis, so a few evals line up with the curves above
	}
	if (c.n) { // tools/eval --task classify (or probe) --append RUN/eval.jsonl over the checkpoints
		Panel *p = add_panel(panels, &np, "HELD-OUT CLASSIFICATION TOP-1 (%)", "STEP");
		const int ks[4] = {C_TOP1_0, C_TOP1_1, C_ACTION, C_CHANCE_0};
		static const char *const label[4] = {"HEAD 0", "HEAD 1", "ACTION", "CHANCE 0"};
		static const PlotColour colour[4] = {PC_BLUE, PC_RED, PC_GREEN, PC_GREY};
		for (int k = 0; k < 4; k++) {
			cv[k] = scaled(c.col[ks[k]], c.n, 100, 0);
			if (plot_table_has(&c, ks[k]))
				add_series(p, c.col[C_STEP], cv[k], c.n, colour[k], k == 3 ? 4 : 0, label[k]);
		}
		p->xlim = steps;
	}
	if (r.n && plot_table_has(&r, R_OCC)) {
		Panel *p = add_panel(panels, &np, "RING OCCUPANCY AND CONSUMER WAIT (%)", "SECONDS");
		rt = scaled(r.col[R_TIME], r.n, 1, -r.col[R_TIME][0]);
		add_series(p, rt, r.col[R_OCC], r.n, PC_BLUE, 0, "READY SLOTS");
		add_series(p, rt, r.col[R_CWAIT], r.n, PC_ORANGE, 0, "TRAINER WAIT");
	}
	if (!np)
		log_fatalx("%s/metrics.jsonl: nothing to draw", run);

	const int cols = np > 1 ? 2 : 1, rows = (np + cols - 1) / cols;
	PlotImage im;
	if (plot_image_new(&im, MARGIN + cols * (PANEL_W + MARGIN), HEADER + rows * (PANEL_H + MARGIN)))
		log_fatalx("out of memory for the picture");
	plot_palette(&im);
	const char *name = strrchr(run, '/') && strrchr(run, '/')[1] ? strrchr(run, '/') + 1 : run;
	char head[512];
	snprintf(head, sizeof head, "RUN %.200s: STEPS %.0f TO %.0f%s", name, m.col[M_STEP][0], m.col[M_STEP][m.n - 1],
		 e.n || c.n ? "" : "  (NO EVAL YET)");
	plot_text(&im, MARGIN, 10, head, PC_TEXT, 2);
	for (int i = 0; i < np; i++) {
		PlotBox b = {MARGIN + (i % cols) * (PANEL_W + MARGIN), HEADER + (i / cols) * (PANEL_H + MARGIN),
			     PANEL_W, PANEL_H};
		plot_chart(&im, b, panels[i].title, panels[i].xlabel, panels[i].s, panels[i].ns, panels[i].xlim);
	}
	if ((rc = plot_png_write(&im, out)))
		log_fatalx("writing %s: %s", out, strerror(-rc));
	log_info("wrote %s (%dx%d, %d panels from %d steps%s%s)", out, im.w, im.h, np, m.n, e.n || c.n ? ", eval" : "",
		 r.n ? ", ringstat" : "");
	plot_image_free(&im);
	free(smooth);
	free(rt);
	for (int k = 0; k < 4; k++) {
		free(ev[k]);
		free(cv[k]);
	}
	plot_table_free(&m);
	plot_table_free(&e);
	plot_table_free(&c);
	plot_table_free(&r);
	return 0;
}
