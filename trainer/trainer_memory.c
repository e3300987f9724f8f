// The step's device memory, counted before it is allocated (see trainer_memory.h): the model by
// clip_model_bytes (its own allocation code, run without allocating), the rest from the shapes
// train_step_create, fastclip_exchange_create and trainer_run allocate.
#include "trainer_memory.h" // defines: TrainerMemory, ...

#include <errno.h> // defines: EINVAL

// the batch buffers (two, for double buffering), ids and positions, the loss exchange, τ, metrics
static size_t data_bytes(const TrainStepConfig *c, int world)
{
	const size_t B = (size_t)c->batch, N = (size_t)world * B, d = (size_t)c->model.embed_dim;
	const size_t S = (size_t)c->model.image_size, act = kern_dtype_size(c->act);
	size_t b = 2 * B * ((size_t)c->model.frames * S * S * 3 + sizeof(int32_t) * (size_t)c->model.ctx_len);
	b += 2 * B * sizeof(int64_t); // ids, pos
	if (c->mae)                   // no features leave the rank: its model holds the rest (masks, target)
		return b + 2 * sizeof(float) + 2 * (size_t)c->log_every * TS_NSCALARS * sizeof(float);
	b += 2 * N * d * act + 2 * B * d * sizeof(float); // E1, E2; de1, de2
	if (!fastclip_uses_table(c->loss.kind)) {
		b += 2 * N * d * sizeof(float); // dE1, dE2
	} else {
		const int v = (int)fastclip_fcco_params(&c->loss, 0).version;
		const size_t w = (size_t)fastclip_pack_width(c->loss.kind),
			     tw = (size_t)kern_fcco_table_width((KFccoVersion)v);
		b += N * sizeof(int64_t) + (B + N) * w * sizeof(float) + (size_t)c->dataset_size * tw * sizeof(float);
	}
	return b + 2 * sizeof(float) +
	       2 * (size_t)c->log_every * TS_NSCALARS * sizeof(float); // temp_mv, 2 metrics blocks
}

int trainer_memory_plan(KernCtx *ctx, const TrainStepConfig *c, int world, TrainerMemory *out)
{
	if (!ctx || !c || !out || world < 1 || c->batch < 1)
		return -EINVAL;
	ClipModelBytes mb;
	ClipModelOpts o = {.grad_checkpoint = c->grad_checkpoint};
	int rc = c->mae ? mae_model_bytes(ctx, &c->model, &c->mae_cfg, c->batch, c->act, &o, &mb)
			: clip_model_bytes(ctx, &c->model, c->batch, c->act, &o, &mb);
	if (rc < 0)
		return rc;
	int64_t n;
	int ns;
	if (c->mae)
		mae_layout(&c->model, &c->mae_cfg, NULL, &ns, &n, NULL);
	else
		model_layout(&c->model, NULL, &ns, &n);
	size_t ws = kern_loss_ws_bytes(ctx, c->batch, world * c->batch, c->model.embed_dim);
	*out = (TrainerMemory){.params = mb.params,
			       .optimizer = 2 * sizeof(float) * (size_t)n + 2 * sizeof(float),
			       .activations = mb.activations,
			       .workspace = mb.workspace > ws ? mb.workspace : ws,
			       .data = data_bytes(c, world)};
	out->total = out->params + out->optimizer + out->activations + out->workspace + out->data;
	return 0;
}

int trainer_memory_fit(KernCtx *ctx, const TrainStepConfig *cfg, int world, size_t budget, int *batch)
{
	TrainStepConfig c = *cfg;
	TrainerMemory m;
	int lo = 0, hi = cfg->batch; // plan(lo) fits (0: vacuously), the answer is in [lo, hi]
	while (lo < hi) {
		c.batch = lo + (hi - lo + 1) / 2;
		int rc = trainer_memory_plan(ctx, &c, world, &m);
		if (rc < 0)
			return rc;
		if (m.total <= budget)
			lo = c.batch;
		else
			hi = c.batch - 1;
	}
	*batch = lo;
	return 0;
}
