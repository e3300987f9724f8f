// The memory plan before a step is built: for every loss and --objective mae, with and without
// --grad-checkpoint, the planned tensors are exactly the bytes train_step_create and the second batch
// buffer allocate on the CPU backend, the workspace is what the stream reserves; and
// trainer_memory_fit names the largest batch within a budget (the next one does not fit). mae's
// encoder activations are its visible tokens': a higher mask ratio plans less.
#include <stdio.h>  // defines: printf, fprintf
#include <stdlib.h> // defines: exit

#include "testutil.h"          // defines: EXPECT, test_failures
#include "test_trainer_util.h" // defines: tt_step_config
#include "trainer_memory.h"    // defines: trainer_memory_plan, trainer_memory_fit

static void check(FastclipKind kind, int ckpt, int mae)
{
	TrainStepConfig cfg;
	tt_step_config(&cfg, kind, 5, 40);
	cfg.model.vis_layers = cfg.model.txt_layers = 2;
	if ((cfg.mae = mae)) // 2 slices of 4 tubelets; 0.5 masks 2 of each
		mae_config_preset(&cfg.mae_cfg, &cfg.model, "tiny"), cfg.mae_cfg.mask_ratio = 0.5;
	cfg.grad_checkpoint = ckpt;
	cfg.log_every = 3;
	KernCtx *ctx;
	Comm *comm;
	if (kern_ctx_create_cpu(&ctx, 1) || comm_local_open(&comm)) {
		fprintf(stderr, "setup failed\n");
		exit(1);
	}
	TrainerMemory plan;
	EXPECT(trainer_memory_plan(ctx, &cfg, 1, &plan) == 0, "plan");
	KMemInfo m0, m1;
	kern_ctx_memory(ctx, &m0);
	TrainStep *ts;
	KTensor clips2, text2;
	int rc = train_step_create(&ts, ctx, comm, &cfg);
	if (!rc)
		rc = kern_alloc(ctx, &clips2, KDT_U8, ts->clips.ndim, ts->clips.shape) |
		     kern_alloc(ctx, &text2, KDT_I32, ts->text.ndim, ts->text.shape);
	EXPECT(rc == 0, "train_step_create: %d", rc);
	kern_ctx_memory(ctx, &m1);
	const size_t tensors = plan.params + plan.optimizer + plan.activations + plan.data;
	const char *what = mae ? "mae" : fastclip_kind_name(kind);
	EXPECT(m1.tensor_bytes - m0.tensor_bytes == tensors, "%s ckpt %d: planned %zu tensor bytes, allocated %zu",
	       what, ckpt, tensors, m1.tensor_bytes - m0.tensor_bytes);
	EXPECT(kern_ctx_workspace_bytes(ctx) == plan.workspace, "%s ckpt %d: workspace planned %zu, reserved %zu", what,
	       ckpt, plan.workspace, kern_ctx_workspace_bytes(ctx));
	if (!rc) {
		kern_free(ctx, &clips2);
		kern_free(ctx, &text2);
		train_step_destroy(ts);
	}
	// the fit: a budget just enough for batch 4 gives 4 whatever batch was asked for
	TrainerMemory p4, p5;
	TrainStepConfig c4 = cfg, big = cfg;
	c4.batch = 4;
	big.batch = 1000;
	trainer_memory_plan(ctx, &c4, 1, &p4);
	c4.batch = 5;
	trainer_memory_plan(ctx, &c4, 1, &p5);
	int fit = -1;
	EXPECT(trainer_memory_fit(ctx, &big, 1, p4.total, &fit) == 0 && fit == 4 && p5.total > p4.total,
	       "fit in %zu bytes: %d, want 4", p4.total, fit);
	EXPECT(trainer_memory_fit(ctx, &big, 1, 100, &fit) == 0 && fit == 0, "nothing fits in 100 bytes: got %d", fit);
	comm_close(comm);
	kern_ctx_destroy(ctx);
}

int main(void)
{
	for (int ckpt = 0; ckpt < 2; ckpt++) {
		for (int k = 0; k < FASTCLIP_NKINDS; k++)
			check((FastclipKind)k, ckpt, 0);
		check(FASTCLIP_V3, ckpt, 1);
	}
	TrainStepConfig c;
	TrainerMemory lo, hi;
	KernCtx *ctx;
	tt_step_config(&c, FASTCLIP_V3, 5, 40);
	c.mae = 1;
	mae_config_preset(&c.mae_cfg, &c.model, "tiny");
	c.model.patch = 4; // tubelets of 2x4x4: a visible token's encoder activations outweigh a masked one's head
	kern_ctx_create_cpu(&ctx, 1);
	c.mae_cfg.mask_ratio = 0.25;
	trainer_memory_plan(ctx, &c, 1, &lo);
	c.mae_cfg.mask_ratio = 0.75;
	trainer_memory_plan(ctx, &c, 1, &hi);
	EXPECT(hi.activations < lo.activations && hi.params == lo.params,
	       "mae: mask ratio 0.75 plans %zu activation bytes, 0.25 %zu", hi.activations, lo.activations);
	kern_ctx_destroy(ctx);
	if (test_failures)
		return 1;
	printf("memory plan = allocation for every loss and mae, with and without --grad-checkpoint; the fit is the "
	       "largest batch; mae plans its visible tokens\n");
	return 0;
}
