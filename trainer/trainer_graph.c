// The contrastive step through CUDA graphs (trainer_graph.h says what is captured and why): one
// capture pass that records the graphs without running anything, then each step the eager parts
// around the launches, the per-step values written to device memory before the update's launch.
#include "trainer_graph.h" // defines: TrainGraph, train_graph_*
#include "errbuf.h"        // defines: TRY
#include "proc_time.h"     // defines: time_mono_s

#include <errno.h>  // defines: ENOMEM, EINVAL
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: calloc, free, getenv, atoi
#include <string.h> // defines: memcpy

// the logged scalars the graphs and the exchange write, copied into the metrics block row
#define GRAPH_ROW_COLS (TS_LOG_S + 1)

struct TrainGraph {
	KGraph *fwd, *upd;
	KGraph **bwd;         // (n_groups + 1): the backward work before group k is reported (NULL: none)
	int64_t *goff, *glen; // (n_groups) the groups as the model reported them, in order
	int n_groups, cut;    // groups recorded so far in the capture pass
	int open;             // a capture is open (the capture pass)
	KTensor text;         // (B, ctx) i32: the batch's tokens, copied from the current buffer
	KTensor row;          // (TS_NSCALARS) f32: the row the graphs and the exchange write
	KTensor live;         // (KOPT_LIVE_N + KTEMP_LIVE_N) f64: the update's per-step values
	double *live_host[2]; // pinned: alternate slots, each free again once its copy ran
	KEvent *live_sent[2]; // recorded after each slot's copy
	int slot;
	size_t ws_bytes;       // the workspace the graphs point into (it moves only when it grows)
	int steps, off;        // steps seen; 1: graphs off for the rest of the run
	int captured;          // the graphs above are ready
	int64_t nodes, pieces; // the launches the graphs hold; graph launches per step
	char note[320];
	int note_new;
};

static void graphs_free(TrainGraph *g)
{
	kern_graph_destroy(g->fwd);
	kern_graph_destroy(g->upd);
	for (int k = 0; g->bwd && k <= g->n_groups; k++)
		kern_graph_destroy(g->bwd[k]);
	g->fwd = g->upd = NULL;
	g->captured = 0;
	if (g->bwd)
		memset(g->bwd, 0, sizeof(KGraph *) * (size_t)(g->n_groups + 1));
	g->nodes = g->pieces = 0;
}

void train_graph_close(TrainStep *s)
{
	TrainGraph *g = s->graph;
	if (!g)
		return;
	graphs_free(g);
	free(g->bwd);
	free(g->goff);
	free(g->glen);
	kern_free(s->ctx, &g->text);
	kern_free(s->ctx, &g->row);
	kern_free(s->ctx, &g->live);
	for (int k = 0; k < 2; k++) {
		kern_host_free(s->ctx, g->live_host[k]);
		kern_event_destroy(g->live_sent[k]);
	}
	free(g);
	s->graph = NULL;
}

static int covered(const TrainStep *s, char *why, size_t len)
{
	const char *env = getenv("KERN_CUDA_SYNC");
	const char *no = !kern_graph_supported(s->ctx)
				 ? "the backend runs every op when it is called (graphs are the CUDA backend's)"
			 : s->cls || s->mae || !s->xchg
				 ? "only the contrastive objective is captured (classify draws its Mixup on the host "
				   "each step; mae runs its own step): the step runs eagerly"
			 : env && atoi(env) ? "KERN_CUDA_SYNC=1 waits after every op"
					    : NULL;
	if (no)
		snprintf(why, len, "off: %s", no);
	return !no;
}

int train_graph_open(TrainStep *s, char *why, size_t len)
{
	if (!covered(s, why, len))
		return 0;
	TrainGraph *g = calloc(1, sizeof *g);
	if (!g)
		return -ENOMEM;
	s->graph = g;
	ClipModel *m = s->model;
	g->n_groups = m->n_groups;
	g->bwd = calloc((size_t)g->n_groups + 1, sizeof(KGraph *));
	g->goff = calloc((size_t)g->n_groups, sizeof(int64_t));
	g->glen = calloc((size_t)g->n_groups, sizeof(int64_t));
	int rc = g->bwd && g->goff && g->glen ? 0 : -ENOMEM;
	rc = rc ? rc : kern_alloc(s->ctx, &g->text, KDT_I32, s->text.ndim, s->text.shape);
	rc = rc ? rc : kern_alloc(s->ctx, &g->row, KDT_F32, 1, (const int64_t[]){TS_NSCALARS});
	rc = rc ? rc : kern_alloc(s->ctx, &g->live, KDT_F64, 1, (const int64_t[]){KOPT_LIVE_N + KTEMP_LIVE_N});
	for (int k = 0; k < 2 && !rc; k++) {
		rc = kern_host_alloc(s->ctx, (void **)&g->live_host[k], sizeof(double) * (KOPT_LIVE_N + KTEMP_LIVE_N));
		rc = rc ? rc : kern_event_create(s->ctx, &g->live_sent[k]);
	}
	if (rc) {
		train_graph_close(s);
		return rc;
	}
	snprintf(why, len, "on: the first step eager, the second captures");
	return 1;
}

// ---- the capture pass ----
static int begin(TrainStep *s)
{
	TrainGraph *g = s->graph;
	int rc = kern_graph_begin(s->ctx, g->note, sizeof g->note);
	g->open = rc == 0;
	return rc;
}

static int end(TrainStep *s, KGraph **out)
{
	TrainGraph *g = s->graph;
	g->open = 0;
	int rc = kern_graph_end(s->ctx, out, g->note, sizeof g->note);
	if (rc)
		return rc;
	if (kern_graph_nodes(*out) == 0) { // nothing to launch
		kern_graph_destroy(*out);
		*out = NULL;
		return 0;
	}
	g->nodes += kern_graph_nodes(*out);
	g->pieces++;
	return 0;
}

// the model reports gradient group (offset, length): the piece before it ends here, so that the
// group's bucket all-reduce can start between its launch and the next (the replay's hook call)
static int cut(void *arg, int64_t offset, int64_t length)
{
	TrainStep *s = arg;
	TrainGraph *g = s->graph;
	if (g->cut >= g->n_groups)
		return -EINVAL;
	g->goff[g->cut] = offset;
	g->glen[g->cut] = length;
	TRY(end(s, &g->bwd[g->cut]));
	g->cut++;
	return begin(s);
}

// the view of row's k-th to (k+n-1)-th scalars
static int cols(KTensor *v, KTensor *row, int k, int n)
{
	return kern_view(v, row, k, 1, (const int64_t[]){n});
}

static int capture_update(TrainStep *s)
{
	TrainGraph *g = s->graph;
	ClipModel *m = s->model;
	KernCtx *c = s->ctx;
	const int baked = s->cfg.graph_plant == TS_PLANT_BAKED; // a planted bug: per-step values as arguments
	KTensor olive, tlive, pair, one;
	TRY(kern_view(&olive, &g->live, 0, 1, (const int64_t[]){KOPT_LIVE_N}));
	TRY(kern_view(&tlive, &g->live, KOPT_LIVE_N, 1, (const int64_t[]){KTEMP_LIVE_N}));
	TRY(begin(s));
	TRY(optim_step_live(s->opt, &m->params, m->dt != m->pdt ? &m->weights : NULL, &m->grads,
			    baked ? NULL : &olive));
	const FastclipConfig *lc = &s->cfg.loss;
	if (fastclip_learns_global_tau(lc->kind)) { // trainer_step.c's temperature(), its values live
		KTempStep h = fastclip_temp_hyper(lc, train_step_tau_lr(s, s->opt->step - 1), s->temp_steps + 1);
		h.live = baked ? NULL : &tlive;
		TRY(kern_temp_step(c, &m->log_s, &s->temp_mv, &m->g.logit_scale, &s->opt->norm_clip,
				   m->dt != m->pdt ? &m->w.logit_scale : NULL, &h));
	}
	TRY(cols(&pair, &g->row, TS_GRAD_NORM, 2));
	TRY(kern_copy(c, &pair, &s->opt->norm_clip));
	TRY(cols(&one, &g->row, TS_LOG_S, 1));
	TRY(kern_copy(c, &one, &m->log_s));
	if (s->cfg.graph_plant == TS_PLANT_WAIT) // a planted bug: a host wait the capture cannot hold
		TRY(kern_stream_sync(c));
	return end(s, &g->upd);
}

static int capture_all(TrainStep *s)
{
	TrainGraph *g = s->graph;
	ClipModel *m = s->model;
	KTensor pair;
	TRY(begin(s));
	TRY(clip_model_forward_patches(m, &m->patches, &g->text));
	TRY(cols(&pair, &g->row, TS_NCE, 2));
	TRY(kern_clip_metrics(s->ctx, &pair, &m->vfeat, &m->tfeat, &m->log_s));
	TRY(end(s, &g->fwd));
	TRY(begin(s));
	g->cut = 0;
	ClipGradReadyFn hook = m->hook;
	void *arg = m->hook_arg;
	clip_model_set_grad_hook(m, cut, s);
	int rc = clip_model_backward(m, fastclip_exchange_de1(s->xchg), fastclip_exchange_de2(s->xchg));
	clip_model_set_grad_hook(m, hook, arg);
	TRY(rc);
	TRY(g->cut == g->n_groups ? end(s, &g->bwd[g->n_groups]) : -EINVAL);
	return capture_update(s);
}

// records every graph, running nothing; on failure nothing is left (not even the host state the
// captured ops moved) and graphs are off with the reason in the note
static int capture(TrainStep *s)
{
	TrainGraph *g = s->graph;
	const int64_t opt_step = s->opt->step, temp_steps = s->temp_steps;
	g->note[0] = 0;
	int rc = capture_all(s);
	s->opt->step = opt_step; // the capture queued nothing: the replay advances them
	s->temp_steps = temp_steps;
	if (g->open) { // an op failed with the capture open: close it, its message wins
		KGraph *x = NULL;
		char why[sizeof g->note] = "";
		g->open = 0;
		int re = kern_graph_end(s->ctx, &x, why, sizeof why);
		kern_graph_destroy(x);
		if (re && why[0])
			memcpy(g->note, why, sizeof why);
	}
	if (rc) {
		char why[sizeof g->note];
		memcpy(why, g->note, sizeof why);
		graphs_free(g);
		g->off = 1;
		snprintf(g->note, sizeof g->note, "cuda graph: the capture failed (%s): every step runs eagerly",
			 why[0] ? why : "no reason given");
		g->note_new = 1;
		return rc;
	}
	g->ws_bytes = kern_ctx_workspace_bytes(s->ctx);
	g->captured = 1;
	snprintf(g->note, sizeof g->note,
		 "cuda graph: captured %lld launches into %lld graphs (forward, backward in %lld pieces cut where "
		 "its %d gradient groups are reported, update); eager each step: augment, the tokens' copy, the "
		 "loss's exchange, the bucket waits, the per-step values' upload, the metrics row's copy",
		 (long long)g->nodes, (long long)g->pieces, (long long)g->pieces - (g->fwd != NULL) - (g->upd != NULL),
		 g->n_groups);
	g->note_new = 1;
	return 0;
}

int train_graph_take(TrainStep *s)
{
	TrainGraph *g = s->graph;
	if (!g || g->off || g->steps++ == 0)
		return 0;
	if (g->captured && kern_ctx_workspace_bytes(s->ctx) != g->ws_bytes)
		graphs_free(g); // the workspace moved: the graphs point into the old one
	if (!g->captured && capture(s) < 0)
		return 0;
	return 1;
}

int train_graph_note(TrainStep *s, char *buf, size_t len)
{
	TrainGraph *g = s->graph;
	if (!g || !g->note_new)
		return 0;
	g->note_new = 0;
	snprintf(buf, len, "%s", g->note);
	return g->off ? 2 : 1;
}

// ---- a step ----
static int launch(TrainStep *s, const KGraph *x)
{
	return x ? kern_graph_launch(s->ctx, x) : 0;
}

// the update's per-step values, into a pinned slot whose previous copy has run, then to the device
static int send_live(TrainStep *s)
{
	TrainGraph *g = s->graph;
	const int k = g->slot;
	g->slot ^= 1;
	int q = kern_event_query(g->live_sent[k]);
	TRY(q < 0 ? q : q == 0 ? kern_event_sync(g->live_sent[k]) : 0);
	double *v = g->live_host[k];
	optim_live(s->opt, v);
	const FastclipConfig *lc = &s->cfg.loss;
	const KTempStep h = fastclip_temp_hyper(lc, train_step_tau_lr(s, s->opt->step), s->temp_steps + 1);
	kern_temp_live(&h, v + KOPT_LIVE_N);
	TRY(kern_upload_async(s->ctx, &g->live, v, kern_nbytes(&g->live)));
	return kern_event_record(g->live_sent[k], s->ctx);
}

int train_graph_run(TrainStep *s, KTensor *row, int epoch, TrainStepTimes *t)
{
	TrainGraph *g = s->graph;
	ClipModel *m = s->model;
	KernCtx *c = s->ctx;
	KTensor loss, dst, src;
	double t0 = time_mono_s();
	TRY(train_step_mark(s, TS_PH_AUGMENT));
	TRY(kern_augment_tubelet(c, &m->patches, &s->clips, &s->pos, s->cfg.data_seed, s->cfg.flip, s->cfg.model.patch,
				 s->cfg.model.tubelet));
	TRY(kern_copy(c, &g->text, &s->text));
	double t1 = time_mono_s();
	TRY(train_step_mark(s, TS_PH_FORWARD));
	TRY(launch(s, g->fwd));
	double t2 = time_mono_s();
	TRY(train_step_mark(s, TS_PH_EXCHANGE));
	TRY(cols(&loss, &g->row, TS_LOSS, 1));
	TRY(fastclip_exchange_run(s->xchg, c, &m->vfeat, &m->tfeat, &s->ids, &m->log_s, epoch, &loss,
				  &m->g.logit_scale));
	double t3 = time_mono_s();
	TRY(train_step_mark(s, TS_PH_BACKWARD));
	for (int k = 0; k <= g->n_groups; k++) {
		TRY(launch(s, g->bwd[k]));
		if (k < g->n_groups && m->hook) // the group is final: its bucket's all-reduce may start
			TRY(m->hook(m->hook_arg, g->goff[k], g->glen[k]));
	}
	double t4 = time_mono_s();
	TRY(train_step_mark(s, TS_PH_ALLREDUCE));
	TRY(comm_buckets_finish(s->buckets, c));
	double t5 = time_mono_s();
	TRY(train_step_mark(s, TS_PH_UPDATE));
	const double lr = optim_lr(&s->opt->cfg, s->opt->step), lr_tau = train_step_tau_lr(s, s->opt->step);
	TRY(send_live(s));
	TRY(launch(s, g->upd));
	s->opt->step++; // what optim_step and the temperature step count when they run eagerly
	if (fastclip_learns_global_tau(s->cfg.loss.kind))
		s->temp_steps++;
	TRY(cols(&dst, row, 0, GRAPH_ROW_COLS));
	TRY(cols(&src, &g->row, 0, GRAPH_ROW_COLS));
	TRY(kern_copy(c, &dst, &src));
	TRY(train_step_mark(s, TS_NPHASES));
	s->rows++;
	double t6 = time_mono_s();
	*t = train_step_times(lr, lr_tau, (const double[]){t0, t1, t2, t3, t4, t5, t6});
	return 0;
}
