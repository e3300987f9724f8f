// Optimisation works through the whole step for every loss: on one fixed synthetic batch
// (uploaded once, re-used by every step), a few steps of the single-rank trainer step lower the
// batch's InfoNCE and never produce a non-finite value; the scalars come back in one read-back.
// Not a threshold on learning quality, just that the gradients descend.
#include <math.h>  // defines: isfinite, exp
#include <stdio.h> // defines: printf

#include "test_trainer_util.h" // defines: tt_step_config, tt_upload

enum { B = 8, NS = 16, STEPS = 12 };

static int run(FastclipKind kind)
{
	TrainStepConfig cfg;
	tt_step_config(&cfg, kind, B, NS);
	cfg.opt.lr = 2e-3;
	cfg.opt.weight_decay = 0.0;
	cfg.log_every = STEPS; // one read-back for the whole run
	Comm *c;
	KernCtx *ctx;
	TrainStep *ts;
	if (comm_local_open(&c) < 0 || kern_ctx_create_cpu(&ctx, 1) < 0 || train_step_create(&ts, ctx, c, &cfg) < 0 ||
	    train_step_init(ts, 3) < 0 || tt_upload(ts, 5, 0, 0) < 0)
		return 1;
	int fail = 0;
	for (int step = 0; step < STEPS && !fail; step++) {
		TrainStepTimes tt;
		int rc = train_step_run(ts, step / 4, &tt);
		if (rc < 0) {
			printf("%s step %d: rc %d (%s)\n", fastclip_kind_name(kind), step, rc, kern_error_message(ctx));
			fail = 1;
		}
	}
	float rows[STEPS][TS_NSCALARS];
	int n = 0;
	if (!fail && (train_step_read_metrics(ts, &rows[0][0], &n) < 0 || n != STEPS))
		fail = 1;
	for (int step = 0; step < n && !fail; step++) {
		const float *r = rows[step];
		if (!isfinite(r[TS_LOSS]) || !isfinite(r[TS_NCE]) || !isfinite(r[TS_LOG_S])) {
			printf("%s step %d: loss %g nce %g log s %g\n", fastclip_kind_name(kind), step, r[TS_LOSS],
			       r[TS_NCE], r[TS_LOG_S]);
			fail = 1;
		}
	}
	double first = n ? rows[0][TS_NCE] : 0, last = n ? rows[n - 1][TS_NCE] : 0;
	if (!fail && !(last < first)) {
		printf("%s: batch InfoNCE did not decrease: %.4f -> %.4f\n", fastclip_kind_name(kind), first, last);
		fail = 1;
	}
	printf("%-12s batch InfoNCE %.4f -> %.4f over %d steps, τ %.4f%s\n", fastclip_kind_name(kind), first, last,
	       STEPS, n ? exp(-rows[n - 1][TS_LOG_S]) : 0.0, fail ? "  FAIL" : "");
	train_step_destroy(ts);
	kern_ctx_destroy(ctx);
	comm_close(c);
	return fail;
}

int main(void)
{
	int fail = 0;
	for (int k = 0; k < FASTCLIP_NKINDS; k++)
		fail |= run((FastclipKind)k);
	printf(fail ? "FAIL: a loss does not descend on a fixed batch\n" : "every loss lowers the batch InfoNCE\n");
	return fail;
}
