// The trainer's classify step (trainer/trainer_step.c with --objective classify: u8 upload, device
// augmentation, Mixup/CutMix, the video tower with drop path, dropout and two linear heads, the
// soft-target CE, the joint clipped norm over tower and heads, both AdamW updates) on the CUDA backend
// against the CPU backend: three steps with bf16 activations, the logged scalars and the tower's and
// heads' updates held against the CPU's f32 run as closely as the CPU's own bf16 run is, two CUDA runs
// bit for bit. In the shim (make test) and, as test_kcuda_classify_gpu, on a device (make test-gpu).
// CLASSIFY_STEPS=N runs N steps and prints the per-step losses (the figures for a longer comparison).
#include "kcu_twin.h"          // defines: KtEnv, kt_*
#include "test_trainer_util.h" // defines: tt_step_config, tt_upload, comm_local_open

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXSTEPS = 64, B = 4 };
static int steps = 3;

typedef struct {
	float rows[MAXSTEPS][TS_NSCALARS];
	float *init, *master; // tower then heads: the f32 master weights after init, then their update
	int64_t n, nt;        // all, the tower's
} Run;

static const char *const names[TS_NSCALARS] = {[TS_LOSS] = "loss",           [TS_GRAD_NORM] = "joint norm",
					       [TS_CLIP] = "clip factor",    [TS_CLS_LOSS] = "head 0",
					       [TS_CLS_LOSS + 1] = "head 1", [TS_CLS_TOP1] = "top1 0",
					       [TS_CLS_TOP1 + 1] = "top1 1"};

static void config(TrainStepConfig *cfg, KDtype act)
{
	tt_step_config(cfg, FASTCLIP_V3, B, 16);
	cfg->model.vis_width = cfg->model.txt_width = 128; // two heads of 64: the head dims the CUDA attention has
	cfg->model.vis_layers = 2;
	cfg->model.embed_dim = 32;
	cfg->classify = 1;
	cfg->cls = (ClsConfig){.n_heads = 2,
			       .classes = {7, 3},
			       .mixup = 0.8,
			       .cutmix = 1.0,
			       .smoothing = 0.1,
			       .dropout = 0.5,
			       .drop_path = 0.1};
	cfg->opt.layer_decay = 0.75;
	cfg->opt.clip_norm = 0.5; // the clip factor reaches both updates
	cfg->act = act;
}

static int download(KernCtx *ctx, TrainStep *ts, float *host)
{
	int rc = kern_download(ctx, host, sizeof(float) * (size_t)ts->model->n_params, &ts->model->params);
	return rc ? rc
		  : kern_download(ctx, host + ts->model->n_params, sizeof(float) * (size_t)ts->cls->n_params,
				  &ts->cls->params);
}

static int train(KBackendKind be, KDtype act, uint64_t seed, Run *r)
{
	TrainStepConfig cfg;
	config(&cfg, act);
	Comm *comm = NULL;
	KernCtx *ctx = NULL;
	TrainStep *ts = NULL;
	KCtxOptions o = {.backend = be, .threads = 1, .attention = KERN_ATTN_OWN};
	int rc = comm_local_open(&comm);
	rc = rc ? rc : kern_ctx_create(&ctx, &o);
	rc = rc ? rc : train_step_create(&ts, ctx, comm, &cfg);
	rc = rc ? rc : train_step_init(ts, seed);
	if (!rc) {
		r->nt = ts->model->n_params, r->n = r->nt + ts->cls->n_params;
		r->init = malloc(sizeof(float) * (size_t)r->n), r->master = malloc(sizeof(float) * (size_t)r->n);
		rc = r->init && r->master ? download(ctx, ts, r->init) : -ENOMEM;
	}
	for (int s = 0; s < steps && !rc; s++) {
		TrainStepTimes t;
		int rows;
		rc = tt_upload(ts, seed, s, 0);
		for (int b = 0; b < B; b++) { // labels from the sample: head 1 missing on one row
			ts->stage.labels[b * RING_LABELS] = (int32_t)((seed + (uint64_t)(s * B + b) * 5) % 7);
			ts->stage.labels[b * RING_LABELS + 1] = b == 1 ? -1 : (int32_t)((uint64_t)(s + b) % 3);
		}
		rc = rc ? rc : train_step_run(ts, 0, &t);
		rc = rc ? rc : train_step_read_metrics(ts, r->rows[s], &rows);
	}
	if (!rc) // the update of the steps: master - init
		rc = download(ctx, ts, r->master);
	for (int64_t i = 0; !rc && i < r->n; i++)
		r->master[i] -= r->init[i];
	if (rc)
		printf("     %s step: %d (%s)\n", be == KERN_BACKEND_CUDA ? "CUDA" : "CPU", rc,
		       ctx ? kern_error_message(ctx) : "no context");
	if (ts)
		train_step_destroy(ts);
	if (ctx)
		kern_ctx_destroy(ctx);
	if (comm)
		comm_close(comm);
	return rc;
}

static double rel(const float *ref, const float *x, int64_t n)
{
	double num = 0, den = 0;
	for (int64_t i = 0; i < n; i++)
		num += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]), den += (double)ref[i] * ref[i];
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

// test_kcuda_train's rule: the CUDA run at most KT_TRAIN_RATIO times as far from the f32 run as the
// CPU's bf16 run (the tower's update: over seeds 1-30 in the shim cuda 3.0e-2 on average, at most
// 3.5e-2, cpu 2.9e-2 / 3.2e-2, ratio at most 1.17), or, for what has a long tail on both backends,
// within a named tolerance of about twice the worst either reached. The heads' update is 1290 values
// that three AdamW steps normalise (a near-zero gradient's update is its sign): cuda 3.7e-2 on
// average, at most 1.05e-1, cpu 4.1e-2 / 1.14e-1, and a ratio of up to 4.2 on a seed where the CPU's
// run was lucky (seed 2: cuda 2.2e-2, cpu 5.3e-3). Logged scalars over seeds 1-30, worst (cuda, cpu):
// loss 1.1e-3, 9.3e-4; head 0 6.7e-4, 7.6e-4; head 1 2.3e-3, 2.0e-3; joint norm 1.7e-3, 1.7e-3;
// clip factor 1.8e-3, 1.6e-3.
#define KT_TRAIN_RATIO 2.0
#define KT_TOL_HEADS_UPDATE 0.25
static const double scalar_tol[TS_NSCALARS] = {
	[TS_LOSS] = 3e-3, [TS_GRAD_NORM] = 4e-3, [TS_CLIP] = 4e-3, [TS_CLS_LOSS] = 2e-3, [TS_CLS_LOSS + 1] = 5e-3};

// tol 0: by the ratio alone
static void as_close(KtEnv *e, const char *name, double tol, const float *ref, const float *cpu, const float *dev,
		     int64_t n)
{
	double ec = rel(ref, cpu, n), ed = rel(ref, dev, n);
	if (tol > 0)
		kt_check(e, ec <= tol && (ed <= tol || ed <= KT_TRAIN_RATIO * ec),
			 "bf16 %-14s vs f32: cuda %.3e, cpu %.3e (tol %.2g, or at most %.1f x cpu)", name, ed, ec, tol,
			 KT_TRAIN_RATIO);
	else
		kt_check(e, ed <= KT_TRAIN_RATIO * ec,
			 "bf16 %-14s vs f32: cuda %.3e, cpu %.3e (ratio %.2f, at most %.1f)", name, ed, ec, ed / ec,
			 KT_TRAIN_RATIO);
}

static void scalar_close(KtEnv *e, int k, const float *ref, const float *cpu, const float *dev)
{
	double ec = rel(ref, cpu, steps), ed = rel(ref, dev, steps);
	kt_check(e, ec <= scalar_tol[k] && (ed <= scalar_tol[k] || ed <= KT_TRAIN_RATIO * ec),
		 "bf16 %-14s vs f32: cuda %.3e, cpu %.3e (tol %.1e, or at most %.1f x cpu)", names[k], ed, ec,
		 scalar_tol[k], KT_TRAIN_RATIO);
}

int main(void)
{
	const char *ns = getenv("CLASSIFY_STEPS");
	if (ns && atoi(ns) > 0)
		steps = atoi(ns) < MAXSTEPS ? atoi(ns) : MAXSTEPS;
	KtEnv e;
	kt_setup(&e, "test_kcuda_classify");
	const uint64_t seed = kt_rand(&e) % 1000000;
	Run ref = {0}, cb = {0}, d1 = {0}, d2 = {0};
	int rc = train(KERN_BACKEND_CPU, KDT_F32, seed, &ref);
	rc = rc ? rc : train(KERN_BACKEND_CPU, KDT_BF16, seed, &cb);
	kt_check(&e, rc == 0, "the CPU steps (f32, bf16): %d", rc);
	int r1 = train(KERN_BACKEND_CUDA, KDT_BF16, seed, &d1);
	kt_reschedule(&e, e.seed + 1); // the shim: another order of threads and blocks
	int r2 = train(KERN_BACKEND_CUDA, KDT_BF16, seed, &d2);
	kt_check(&e, r1 == 0 && r2 == 0, "the CUDA steps: %d, %d", r1, r2);
	if (!rc && !r1 && !r2) {
		printf("-- the classify step, %d steps of B=%d, two heads, mixup/cutmix, dropout 0.5, drop path 0.1, "
		       "bf16 activations\n",
		       steps, B);
		for (int s = 0; s < steps; s++)
			printf("   step %d loss: f32 %.5f, cpu bf16 %.5f, cuda bf16 %.5f; joint norm %.5f %.5f %.5f\n",
			       s + 1, ref.rows[s][TS_LOSS], cb.rows[s][TS_LOSS], d1.rows[s][TS_LOSS],
			       ref.rows[s][TS_GRAD_NORM], cb.rows[s][TS_GRAD_NORM], d1.rows[s][TS_GRAD_NORM]);
		const int ks[] = {TS_LOSS, TS_CLS_LOSS, TS_CLS_LOSS + 1, TS_GRAD_NORM, TS_CLIP};
		for (int i = 0; i < 5; i++) {
			float a[MAXSTEPS], c[MAXSTEPS], d[MAXSTEPS];
			for (int s = 0; s < steps; s++)
				a[s] = ref.rows[s][ks[i]], c[s] = cb.rows[s][ks[i]], d[s] = d1.rows[s][ks[i]];
			scalar_close(&e, ks[i], a, c, d);
		}
		as_close(&e, "tower update", 0, ref.master, cb.master, d1.master, ref.nt);
		as_close(&e, "heads' update", KT_TOL_HEADS_UPDATE, ref.master + ref.nt, cb.master + cb.nt,
			 d1.master + d1.nt, ref.n - ref.nt);
		kt_check(&e, ref.rows[0][TS_CLIP] < 1.0f, "the clip factor applies (%.3g) to tower and heads",
			 ref.rows[0][TS_CLIP]);
		kt_check(&e,
			 !memcmp(d1.rows, d2.rows, sizeof d1.rows) &&
				 !memcmp(d1.master, d2.master, sizeof(float) * (size_t)d1.n),
			 "two CUDA runs: the same scalars and weights, bit for bit");
	}
	Run *all[] = {&ref, &cb, &d1, &d2};
	for (int i = 0; i < 4; i++)
		free(all[i]->init), free(all[i]->master);
	return kt_finish(&e);
}
