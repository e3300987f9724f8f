// --objective classify on K = 2 forked CPU ranks with B samples each gives the gradients of one rank
// on the concatenated 2·B batch (1e-5 relative per tensor, the tower's and the two heads'), with
// dropout before the heads (masks keyed by the rows' stream positions) and drop path (scales of the
// rows of the global batch) on and Mixup/CutMix off: timm mixes within each rank's batch (partner
// B−1−b), so a mixed K-rank batch is not the single rank's. The joint norm over tower and heads is the
// single rank's and its --clip-norm factor applies; the replicas stay bit-identical. Each step starts
// the ranks from the single rank's state before it (tower and heads: parameters, AdamW moments).
#include <math.h>   // defines: fabs, fmax
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memcmp, memcpy

#include "test_comm_util.h"    // defines: tc_run, tc_shared
#include "test_trainer_util.h" // defines: tt_step_config, tt_upload

enum { B = 3, K = 2, NS = 40, STEPS = 2, HEADS = 2 };

typedef struct {
	int single;     // one rank holds the whole K·B batch
	int64_t np, nh; // tower and heads parameters
	float row[K][STEPS][TS_NSCALARS];
	// grads (K, STEPS, np + nh) after the all-reduce; state before each step (STEPS, 3, np + nh):
	// parameters, m, v; parameters after the last step (K, np + nh)
	float data[];
} Shared;

static size_t n_of(const Shared *s)
{
	return (size_t)(s->np + s->nh);
}

static float *grads_of(Shared *s, int r, int step)
{
	return s->data + ((size_t)r * STEPS + (size_t)step) * n_of(s);
}

static float *state_of(Shared *s, int step, int which)
{
	return s->data + (size_t)K * STEPS * n_of(s) + ((size_t)step * 3 + (size_t)which) * n_of(s);
}

static float *after_of(Shared *s, int r)
{
	return s->data + (size_t)K * STEPS * n_of(s) + (size_t)STEPS * 3 * n_of(s) + (size_t)r * n_of(s);
}

static void config(TrainStepConfig *cfg, int batch)
{
	tt_step_config(cfg, FASTCLIP_V3, batch, NS);
	cfg->model.vis_layers = 2;
	cfg->classify = 1;
	cfg->cls = (ClsConfig){.n_heads = HEADS,
			       .classes = {5, 3},
			       .smoothing = 0.1,
			       .dropout = 0.5,
			       .drop_path = 0.3,
			       .drop_path_linear = 0};
	cfg->opt.layer_decay = 0.75;
	cfg->opt.clip_norm = 0.05; // below the joint norm: the factor applies to tower and heads
}

// tensors i of the step's state: the tower's (params, m, v) then the heads'
static int io(TrainStep *ts, float *host, int which, int down)
{
	ClipModel *m = ts->model;
	ClsHeads *h = ts->cls;
	KTensor *t[2][3] = {{&m->params, &ts->opt->m, &ts->opt->v}, {&h->params, &h->opt->m, &h->opt->v}};
	const size_t nb[2] = {sizeof(float) * (size_t)m->n_params, sizeof(float) * (size_t)h->n_params};
	for (int k = 0; k < 2; k++) {
		float *p = host + (k ? m->n_params : 0);
		int rc = down ? kern_download(ts->ctx, p, nb[k], t[k][which])
			      : kern_upload(ts->ctx, t[k][which], p, nb[k]);
		if (rc)
			return rc;
	}
	return 0;
}

static int rank_fn(Comm *c, void *arg)
{
	Shared *s = arg;
	const int me = comm_rank(c), Bl = s->single ? K * B : B, row0 = me * Bl;
	TrainStepConfig cfg;
	config(&cfg, Bl);
	KernCtx *ctx;
	TrainStep *ts;
	if (kern_ctx_create_cpu(&ctx, 1) < 0 || train_step_create(&ts, ctx, c, &cfg) < 0 || train_step_init(ts, 7) < 0)
		return 2;
	for (int step = 0; step < STEPS; step++) {
		for (int w = 0; w < 3; w++) // the single rank records the state, the K ranks start from it
			if (io(ts, state_of(s, step, w), w, s->single) < 0)
				return 3;
		if (train_step_after_load(ts) < 0 || tt_upload(ts, 11, step, row0) < 0)
			return 4;
		for (int b = 0; b < Bl; b++) { // every row labelled in both heads: the same mean on K ranks
			const int g = row0 + b;
			ts->stage.labels[b * RING_LABELS] = (g * 3 + step) % 5;
			ts->stage.labels[b * RING_LABELS + 1] = (g + 2 * step) % 3;
		}
		TrainStepTimes tt;
		int rows, rc = train_step_run(ts, 0, &tt);
		if (rc == 0)
			rc = train_step_read_metrics(ts, s->row[me][step], &rows);
		if (rc < 0) {
			printf("rank %d step %d: failed %d %s %s\n", me, step, rc, comm_error(c),
			       kern_error_message(ctx));
			return 5;
		}
		float *g = grads_of(s, me, step);
		if (kern_download(ctx, g, sizeof(float) * (size_t)s->np, &ts->model->grads) < 0 ||
		    kern_download(ctx, g + s->np, sizeof(float) * (size_t)s->nh, &ts->cls->grads) < 0)
			return 6;
	}
	if (io(ts, after_of(s, me), 0, 1) < 0)
		return 7;
	train_step_destroy(ts);
	kern_ctx_destroy(ctx);
	return 0;
}

// max over tensors of max|a − b| / max|b| within the tensor (tower's specs, then the heads' at np)
static double worst_rel(const float *a, const float *b, const ParamSpec *specs, int n, int64_t off, const char **which)
{
	double worst = 0.0;
	for (int i = 0; i < n; i++) {
		double mb = 0.0, md = 0.0;
		for (int64_t j = off + specs[i].offset; j < off + specs[i].offset + specs[i].numel; j++) {
			mb = fmax(mb, fabs(b[j]));
			md = fmax(md, fabs((double)a[j] - b[j]));
		}
		const double r = md == 0.0 ? 0.0 : md / (mb + 1e-30);
		if (r > worst)
			worst = r, *which = specs[i].name;
	}
	return worst;
}

int main(void)
{
	// the layouts, from a step made only to read them
	TrainStepConfig cfg;
	config(&cfg, B);
	Comm *lc;
	KernCtx *ctx;
	TrainStep *probe;
	if (comm_local_open(&lc) < 0 || kern_ctx_create_cpu(&ctx, 1) < 0 ||
	    train_step_create(&probe, ctx, lc, &cfg) < 0)
		return 1;
	const int64_t np = probe->model->n_params, nh = probe->cls->n_params;
	const size_t bytes = sizeof(Shared) + sizeof(float) * (size_t)(K * STEPS + STEPS * 3 + K) * (size_t)(np + nh);
	Shared *ref = tc_shared(bytes), *dist = tc_shared(bytes);
	if (!ref || !dist)
		return 1;
	ref->np = dist->np = np, ref->nh = dist->nh = nh;
	ref->single = 1;
	int codes[K] = {0}, fail = 0;
	if (tc_run(1, 1 << 16, 20.0, 60.0, rank_fn, ref, codes) < 0 || codes[0]) {
		printf("single-rank run failed (exit %d)\n", codes[0]);
		return 1;
	}
	memcpy(state_of(dist, 0, 0), state_of(ref, 0, 0), sizeof(float) * (size_t)STEPS * 3 * (size_t)(np + nh));
	if (tc_run(K, 1 << 16, 20.0, 60.0, rank_fn, dist, codes) < 0)
		return 1;
	for (int r = 0; r < K; r++)
		if (codes[r]) {
			printf("rank %d exit %d\n", r, codes[r]);
			fail = 1;
		}
	for (int step = 0; step < STEPS && !fail; step++) {
		const char *wt = "-", *wh = "-";
		const float *d = grads_of(dist, 0, step), *g = grads_of(ref, 0, step);
		const double et = worst_rel(d, g, probe->model->specs, probe->model->n_specs, 0, &wt),
			     eh = worst_rel(d, g, probe->cls->specs, probe->cls->n_specs, np, &wh);
		const float *rr = ref->row[0][step];
		double loss = 0;
		for (int r = 0; r < K; r++)
			loss += dist->row[r][step][TS_LOSS] / K;
		const double en = fabs(dist->row[0][step][TS_GRAD_NORM] - rr[TS_GRAD_NORM]) / rr[TS_GRAD_NORM];
		const double el = fabs(loss - rr[TS_LOSS]) / rr[TS_LOSS];
		printf("step %d: gradient rel err tower %.3g (%s), heads %.3g (%s); joint norm %.6g (single %.6g, rel %.2g), "
		       "clip factor %.4g; loss %.6g (single %.6g)\n",
		       step, et, wt, eh, wh, dist->row[0][step][TS_GRAD_NORM], rr[TS_GRAD_NORM], en,
		       dist->row[0][step][TS_CLIP], loss, rr[TS_LOSS]);
		fail |= !(et <= 1e-5) || !(eh <= 1e-5) || !(en <= 1e-5) || !(el <= 1e-5);
		fail |= !(rr[TS_CLIP] < 1.0f); // the clip applies (--clip-norm below the joint norm)
		for (int r = 1; r < K; r++)
			if (memcmp(grads_of(dist, r, step), d, sizeof(float) * (size_t)(np + nh))) {
				printf("step %d: rank %d's averaged gradients differ from rank 0's\n", step, r);
				fail = 1;
			}
	}
	for (int r = 1; r < K && !fail; r++)
		if (memcmp(after_of(dist, r), after_of(dist, 0), sizeof(float) * (size_t)(np + nh))) {
			printf("rank %d's tower or heads differ from rank 0's after the update\n", r);
			fail = 1;
		}
	train_step_destroy(probe);
	kern_ctx_destroy(ctx);
	comm_close(lc);
	printf(fail ? "FAIL: classify on K=2 ranks differs from one rank on the concatenated batch\n"
		    : "classify: K=2 ranks give one rank's gradients (tower and heads), joint clipped norm and loss\n");
	return fail;
}
