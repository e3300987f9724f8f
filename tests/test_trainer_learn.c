// Optimisation works through the whole step for every loss: on one fixed synthetic batch, a
// few steps of the single-rank trainer step lower the batch's InfoNCE and never produce a
// non-finite value. Not a threshold on learning quality, just that the gradients descend.
#include <math.h>   // defines: isfinite, exp
#include <stdio.h>  // defines: printf
#include <stdlib.h> // defines: malloc, free

#include "test_trainer_util.h"  // defines: tt_step_config, tt_batch
#include "trainer_comm_local.h" // defines: trainer_comm_local_open

enum { B = 8, NS = 16, STEPS = 12 };

static int run(FastclipKind kind)
{
	TrainStepConfig cfg;
	tt_step_config(&cfg, kind, B, NS);
	cfg.opt.lr = 2e-3;
	cfg.opt.weight_decay = 0.0;
	Comm *c;
	KernCtx *ctx;
	TrainStep *ts;
	if (trainer_comm_local_open(&c) < 0 || kern_ctx_create_cpu(&ctx, 1) < 0 || train_step_create(&ts, ctx, c, &cfg) < 0 ||
	    train_step_init(ts, 3) < 0)
		return 1;
	const ModelConfig *m = &cfg.model;
	const int64_t per = (int64_t)m->frames * m->image_size * m->image_size * 3;
	float *video = malloc(sizeof(float) * (size_t)(per * B));
	int32_t *text = malloc(sizeof(int32_t) * (size_t)B * m->ctx_len);
	int64_t ids[B];
	KTensor tv, tt;
	if (!video || !text || kern_alloc(ctx, &tv, KDT_F32, 5, (int64_t[]){ B, m->frames, m->image_size, m->image_size, 3 }) < 0 ||
	    kern_alloc(ctx, &tt, KDT_I32, 2, (int64_t[]){ B, m->ctx_len }) < 0)
		return 1;
	tt_batch(m, 5, 0, 0, B, video, text, ids, NS);
	if (kern_upload(ctx, &tv, video, kern_nbytes(&tv)) < 0 || kern_upload(ctx, &tt, text, kern_nbytes(&tt)) < 0)
		return 1;
	double first = 0.0, last = 0.0;
	int fail = 0;
	for (int step = 0; step < STEPS && !fail; step++) {
		TrainStepStats st;
		int rc = train_step_run(ts, &tv, &tt, ids, step / 4, &st);
		if (rc < 0 || !isfinite(st.loss) || !isfinite(st.nce) || !isfinite(st.log_s)) {
			printf("%s step %d: rc %d loss %g nce %g log s %g\n", fastclip_kind_name(kind), step, rc, st.loss, st.nce,
			       st.log_s);
			fail = 1;
		}
		if (step == 0)
			first = st.nce;
		last = st.nce;
	}
	if (!fail && !(last < first)) {
		printf("%s: batch InfoNCE did not decrease: %.4f -> %.4f\n", fastclip_kind_name(kind), first, last);
		fail = 1;
	}
	printf("%-12s batch InfoNCE %.4f -> %.4f over %d steps, τ %.4f%s\n", fastclip_kind_name(kind), first, last, STEPS,
	       exp(-ts->temp.log_s), fail ? "  FAIL" : "");
	kern_free(ctx, &tv);
	kern_free(ctx, &tt);
	free(video);
	free(text);
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
