// --grad-checkpoint: with per-block recomputation the model's gradients (every parameter, logit_scale
// included) and loss are the same bits as without it, in fp32 and bf16 on the CPU backend, for
// towers of 3 blocks (two recomputed, the last one kept); it holds fewer activation bytes, and
// clip_model_bytes counts exactly what creating the model allocates.
#include "testutil.h" // defines: EXPECT, test_failures
#include "model.h"    // defines: ClipModel, clip_model_create_opts, clip_model_bytes, model_synth_batch

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3 };

// one InfoNCE step from fixed weights and batch: the gradients and the loss
static float *grads_of(KernCtx *c, const ModelConfig *cfg, KDtype dt, int ckpt, double *loss, size_t *live)
{
	ClipModel *m;
	KTensor video, text;
	const int64_t sv[] = {B, cfg->frames, cfg->image_size, cfg->image_size, 3}, st[] = {B, cfg->ctx_len};
	ClipModelOpts o = {.grad_checkpoint = ckpt};
	KMemInfo before, after;
	kern_ctx_memory(c, &before);
	if (clip_model_create_opts(&m, c, cfg, B, dt, &o))
		return NULL;
	kern_ctx_memory(c, &after);
	*live = after.tensor_bytes - before.tensor_bytes;
	if (model_init_params(c, cfg, &m->params, 5) || clip_model_sync_weights(m) ||
	    kern_alloc(c, &video, KDT_F32, 5, sv) || kern_alloc(c, &text, KDT_I32, 2, st) ||
	    model_synth_batch(c, cfg, 3, 1, 16, &video, &text) || clip_model_infonce_step(m, &video, &text, loss))
		return NULL;
	size_t nb = kern_nbytes(&m->grads);
	float *g = malloc(nb);
	if (!g || kern_download(c, g, nb, &m->grads))
		return NULL;
	kern_free(c, &video);
	kern_free(c, &text);
	clip_model_destroy(m);
	return g;
}

int main(void)
{
	ModelConfig cfg;
	model_config_preset(&cfg, "tiny");
	cfg.vocab = 300;
	cfg.vis_layers = 3;
	cfg.txt_layers = 3;
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	int64_t n;
	int ns;
	model_layout(&cfg, NULL, &ns, &n);
	const KDtype dts[] = {KDT_F32, KDT_BF16};
	for (int k = 0; k < 2; k++) {
		double l0, l1;
		size_t live0, live1;
		float *g0 = grads_of(c, &cfg, dts[k], 0, &l0, &live0), *g1 = grads_of(c, &cfg, dts[k], 1, &l1, &live1);
		if (!g0 || !g1) {
			fprintf(stderr, "a model step failed\n");
			return 1;
		}
		int64_t diff = 0;
		for (int64_t i = 0; i < n; i++)
			diff += memcmp(&g0[i], &g1[i], sizeof(float)) != 0;
		EXPECT(diff == 0 && l0 == l1, "%s: %lld of %lld gradients differ, loss %.9g vs %.9g",
		       kern_dtype_name(dts[k]), (long long)diff, (long long)n, l0, l1);
		ClipModelBytes b0, b1;
		clip_model_bytes(c, &cfg, B, dts[k], &(ClipModelOpts){0}, &b0);
		clip_model_bytes(c, &cfg, B, dts[k], &(ClipModelOpts){.grad_checkpoint = 1}, &b1);
		EXPECT(b0.params + b0.activations == live0 && b1.params + b1.activations == live1,
		       "%s: counted %zu / %zu bytes, allocated %zu / %zu", kern_dtype_name(dts[k]),
		       b0.params + b0.activations, b1.params + b1.activations, live0, live1);
		EXPECT(b1.activations < b0.activations && b1.params == b0.params,
		       "%s: checkpointing holds %zu activation "
		       "bytes, without %zu",
		       kern_dtype_name(dts[k]), b1.activations, b0.activations);
		printf("%s: gradients bit-identical with --grad-checkpoint; activations %zu -> %zu bytes\n",
		       kern_dtype_name(dts[k]), b0.activations, b1.activations);
		free(g0);
		free(g1);
	}
	kern_ctx_destroy(c);
	return test_failures ? 1 : 0;
}
