// The training step on K = 2 and 4 forked CPU ranks with B samples each gives, for every loss,
// the parameter gradients (1e-5 relative per tensor), u/τ tables and temperature of one rank
// on the concatenated K·B batch (issue 6 done-when): the whole device-shaped step (u8 clips
// augmented on the device, the exchange, bucketed all-reduce on the comm thread, fused optimizer,
// temperature op). Each step starts the K ranks from the single rank's state before that step
// (parameters, moments, table, τ state), so float noise that Adam's normalized update amplifies
// in near-zero gradients does not compound across steps; the replicas must stay bit-identical
// to each other after every update.
#include <math.h>   // defines: fabs, fmax
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: memcmp, memcpy

#include "test_comm_util.h"    // defines: tc_run, tc_shared
#include "test_trainer_util.h" // defines: tt_step_config, tt_batch

enum { B = 2, MAXK = 4, NS = 40, STEPS = 3, NTAB = 10 };

typedef struct {
	FastclipKind kind;
	int K, single; // the global batch is K·B; single: one rank holds all of it
	int64_t np;    // parameters
	double log_s[MAXK][STEPS];
	float temp_mv[STEPS][2]; // single rank: τ state before each step
	int64_t temp_steps[STEPS];
	float tab[STEPS + 1][MAXK][NS * NTAB]; // tables (NS, width) before step t (t = STEPS: after the last)
	float data[]; // grads (MAXK, STEPS, np), params, m, v before each step (3, STEPS, np), params after (MAXK, np)
} Shared;

static float *grads_of(Shared *s, int r, int step)
{
	return s->data + ((size_t)r * STEPS + step) * (size_t)s->np;
}

// which = 0 parameters, 1 first moments, 2 second moments before step
static float *before_of(Shared *s, int which, int step)
{
	return s->data + (size_t)MAXK * STEPS * s->np + ((size_t)which * STEPS + (size_t)step) * s->np;
}

static float *params_of(Shared *s, int r)
{
	return s->data + (size_t)(MAXK + 3) * STEPS * s->np + (size_t)r * s->np;
}

// the state a step starts from: parameters, moments, table, τ state (save: device -> shared)
static int state_io(TrainStep *ts, Shared *s, int step, int save)
{
	KTensor *t[3] = {&ts->model->params, &ts->opt->m, &ts->opt->v};
	const size_t pb = sizeof(float) * (size_t)s->np;
	int rc = 0;
	for (int k = 0; k < 3 && !rc; k++)
		rc = save ? kern_download(ts->ctx, before_of(s, k, step), pb, t[k])
			  : kern_upload(ts->ctx, t[k], before_of(s, k, step), pb);
	KTensor *tab = fastclip_exchange_table(ts->xchg);
	if (!rc && tab)
		rc = save ? kern_download(ts->ctx, s->tab[step][0], kern_nbytes(tab), tab)
			  : kern_upload(ts->ctx, tab, s->tab[step][0], kern_nbytes(tab));
	if (!rc)
		rc = save ? kern_download(ts->ctx, s->temp_mv[step], sizeof s->temp_mv[step], &ts->temp_mv)
			  : kern_upload(ts->ctx, &ts->temp_mv, s->temp_mv[step], sizeof s->temp_mv[step]);
	if (save)
		s->temp_steps[step] = ts->temp_steps;
	else
		ts->temp_steps = s->temp_steps[step];
	return rc ? rc : save ? 0 : train_step_after_load(ts);
}

static int rank_fn(Comm *c, void *arg)
{
	Shared *s = arg;
	const int me = comm_rank(c), Bl = s->single ? s->K * B : B, row0 = me * Bl;
	TrainStepConfig cfg;
	tt_step_config(&cfg, s->kind, Bl, NS);
	KernCtx *ctx;
	TrainStep *ts;
	if (kern_ctx_create_cpu(&ctx, 1) < 0 || train_step_create(&ts, ctx, c, &cfg) < 0 || train_step_init(ts, 7) < 0)
		return 2;
	const size_t pbytes = sizeof(float) * (size_t)s->np;
	for (int step = 0; step < STEPS; step++) {
		if (state_io(ts, s, step, s->single) < 0) // the single rank records, the K ranks start from it
			return 4;
		if (tt_upload(ts, 11, step, row0) < 0)
			return 4;
		TrainStepTimes tt;
		float row[TS_NSCALARS];
		int rows, rc = train_step_run(ts, step, &tt);
		if (rc == 0)
			rc = train_step_read_metrics(ts, row, &rows);
		if (rc < 0) {
			printf("rank %d step %d: failed %d %s %s\n", me, step, rc, comm_error(c),
			       kern_error_message(ctx));
			return 5;
		}
		// the optimizer reads the averaged gradients and leaves them in place
		if (kern_download(ctx, grads_of(s, me, step), pbytes, &ts->model->grads) < 0)
			return 6;
		s->log_s[me][step] = row[TS_LOG_S];
		// the tables after this step: the single rank's become the next step's start
		KTensor *tab = fastclip_exchange_table(ts->xchg);
		if (tab && (s->single || step == STEPS - 1) &&
		    kern_download(ctx, s->tab[s->single ? step + 1 : STEPS][me], kern_nbytes(tab), tab) < 0)
			return 7;
		if (!s->single && step == STEPS - 1 &&
		    kern_download(ctx, params_of(s, me), pbytes, &ts->model->params) < 0)
			return 8;
	}
	train_step_destroy(ts);
	kern_ctx_destroy(ctx);
	return 0;
}

// max over tensors of max|a−b| / max|b| within the tensor; *which names the worst
static double worst_rel(const float *a, const float *b, const ParamSpec *specs, int n, const char **which)
{
	double worst = 0.0;
	for (int i = 0; i < n; i++) {
		double mb = 0.0, md = 0.0;
		for (int64_t j = specs[i].offset; j < specs[i].offset + specs[i].numel; j++) {
			mb = fmax(mb, fabs(b[j]));
			md = fmax(md, fabs((double)a[j] - b[j]));
		}
		double r = md == 0.0 ? 0.0 : md / (mb + 1e-30);
		if (r > worst) {
			worst = r;
			*which = specs[i].name;
		}
	}
	return worst;
}

static int check(FastclipKind kind, int K, const ParamSpec *specs, int nspecs, int64_t np)
{
	size_t bytes = sizeof(Shared) + sizeof(float) * ((size_t)(MAXK + 3) * STEPS + MAXK) * (size_t)np;
	Shared *ref = tc_shared(bytes), *dist = tc_shared(bytes);
	if (!ref || !dist)
		return 1;
	ref->kind = dist->kind = kind;
	ref->K = dist->K = K;
	ref->np = dist->np = np;
	ref->single = 1;
	int codes[MAXK] = {0};
	if (tc_run(1, 1 << 16, 20.0, 40.0, rank_fn, ref, codes) < 0 || codes[0]) {
		printf("%s: single-rank run failed (exit %d)\n", fastclip_kind_name(kind), codes[0]);
		return 1;
	}
	memcpy(dist->temp_mv, ref->temp_mv, sizeof(ref->temp_mv));
	memcpy(dist->temp_steps, ref->temp_steps, sizeof(ref->temp_steps));
	memcpy(dist->tab, ref->tab, sizeof(ref->tab));
	memcpy(before_of(dist, 0, 0), before_of(ref, 0, 0), sizeof(float) * 3 * STEPS * (size_t)np);
	if (tc_run(K, 1 << 16, 20.0, 40.0, rank_fn, dist, codes) < 0)
		return 1;
	int fail = 0;
	for (int r = 0; r < K; r++)
		if (codes[r]) {
			printf("%s K=%d: rank %d exit %d\n", fastclip_kind_name(kind), K, r, codes[r]);
			fail = 1;
		}
	if (fail)
		return 1;
	double worst = 0.0;
	const char *which = "-";
	for (int step = 0; step < STEPS; step++) {
		for (int r = 1; r < K; r++)
			if (memcmp(grads_of(dist, r, step), grads_of(dist, 0, step), sizeof(float) * (size_t)np)) {
				printf("%s K=%d step %d: rank %d's averaged gradients differ from rank 0's\n",
				       fastclip_kind_name(kind), K, step, r);
				fail = 1;
			}
		const char *w = "-";
		double e = worst_rel(grads_of(dist, 0, step), grads_of(ref, 0, step), specs, nspecs, &w);
		printf("  %s K=%d step %d: gradient rel err %.3g (%s)\n", fastclip_kind_name(kind), K, step, e, w);
		if (e > worst) {
			worst = e;
			which = w;
		}
		for (int r = 0; r < K; r++)
			if (fabs(dist->log_s[r][step] - ref->log_s[0][step]) > 1e-6 * fabs(ref->log_s[0][step])) {
				printf("%s K=%d step %d rank %d: log s %.9g, single rank %.9g\n",
				       fastclip_kind_name(kind), K, step, r, dist->log_s[r][step], ref->log_s[0][step]);
				fail = 1;
			}
	}
	if (worst > 1e-5) {
		printf("%s K=%d: parameter gradients differ from the single-rank batch: %.3g in %s\n",
		       fastclip_kind_name(kind), K, worst, which);
		fail = 1;
	}
	for (int r = 1; r < K; r++)
		if (memcmp(params_of(dist, r), params_of(dist, 0), sizeof(float) * (size_t)np)) {
			printf("%s K=%d: rank %d's parameters differ from rank 0's after the update\n",
			       fastclip_kind_name(kind), K, r);
			fail = 1;
		}
	// tables after the last step, from the same tables before it: per table max|a−b| / max|b|,
	// as for the gradients (v2's bounds are scaled differences of dot products, so a relative
	// error per element would measure the cancellation, not the step)
	int ntab = kind == FASTCLIP_OPENCLIP ? 0 : kind == FASTCLIP_V2 ? NTAB : 2;
	for (int r = 0; r < K; r++)
		for (int k = 0; k < ntab; k++) {
			double mb = 0.0, md = 0.0;
			int at = 0;
			for (int i = 0; i < NS; i++) {
				float a = dist->tab[STEPS][r][i * ntab + k], b = ref->tab[STEPS][0][i * ntab + k];
				mb = fmax(mb, fabs(b));
				if (fabs(a - b) > md) {
					md = fabs(a - b);
					at = i;
				}
			}
			if (md > 1e-5 * mb) {
				printf("%s K=%d rank %d: table column %d[%d] %.9g, single rank %.9g (column max %.3g)\n",
				       fastclip_kind_name(kind), K, r, k, at, dist->tab[STEPS][r][at * ntab + k],
				       ref->tab[STEPS][0][at * ntab + k], mb);
				fail = 1;
			}
		}
	printf("%-12s K=%d: worst gradient rel err %.3g (%s), log s %.6f%s\n", fastclip_kind_name(kind), K, worst,
	       which, dist->log_s[0][STEPS - 1], fail ? "  FAIL" : "");
	munmap(ref, bytes);
	munmap(dist, bytes);
	return fail;
}

int main(void)
{
	TrainStepConfig cfg;
	tt_step_config(&cfg, FASTCLIP_V3, B, NS);
	int nspecs;
	int64_t np;
	if (model_layout(&cfg.model, NULL, &nspecs, &np) < 0)
		return 1;
	ParamSpec *specs = calloc((size_t)nspecs, sizeof(*specs));
	if (!specs || model_layout(&cfg.model, specs, &nspecs, &np) < 0)
		return 1;
	int fail = 0;
	for (int kind = 0; kind < FASTCLIP_NKINDS; kind++)
		for (int K = 2; K <= MAXK; K += 2)
			fail |= check((FastclipKind)kind, K, specs, nspecs, np);
	free(specs);
	printf(fail ? "FAIL: the K-rank training step differs from the single-rank batch\n"
		    : "every loss: K=2,4 ranks give the single-rank gradients, tables and temperature\n");
	return fail;
}
