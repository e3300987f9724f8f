// Checks layer-wise lr decay (OptConfig.layer_decay, BEiT/AVION fine-tuning): each tensor's layer
// id from its open_clip name, and one AdamW step moving each tensor by lr·decay^(L + 1 − id)
// (the first step's update is lr·g/(|g| + eps) ≈ ±lr); decay 1 or 0 puts no scale on any segment.
#include "kern_gradcheck.h" // defines: kgc_get, kgc_set
#include "model.h"          // defines: Optimizer, optim_create, optim_step, optim_layer_id

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { NT = 6 };
static const ParamSpec specs[NT] = {
	{.name = "visual.conv1.weight", .ndim = 1, .shape = {4}, .offset = 0, .numel = 4},
	{.name = "visual.class_embedding", .ndim = 1, .shape = {2}, .offset = 4, .numel = 2},
	{.name = "visual.transformer.resblocks.0.attn.in_proj_weight",
	 .ndim = 1,
	 .shape = {3},
	 .offset = 6,
	 .numel = 3},
	{.name = "visual.transformer.resblocks.1.mlp.c_fc.weight", .ndim = 1, .shape = {3}, .offset = 9, .numel = 3},
	{.name = "visual.ln_post.weight", .ndim = 1, .shape = {2}, .offset = 12, .numel = 2},
	{.name = "visual.proj", .ndim = 1, .shape = {2}, .offset = 14, .numel = 2},
};
static const int want_id[NT] = {0, 0, 1, 2, 3, 3}; // L = 2 blocks
#define NP 16

// one step from p = 0 with gradients ±1; the largest |Δp / (lr·decay^(L+1−id)) − 1|
static double step_error(KernCtx *c, double decay, int *scaled_segs)
{
	OptConfig oc;
	optim_config_default(&oc);
	oc.lr = 1e-2, oc.total_steps = 1000, oc.eps = 1e-12, oc.layer_decay = decay;
	Optimizer *o;
	KTensor p, g;
	const int64_t n = NP;
	if (optim_create(&o, c, &oc, specs, NT, NP) || kern_alloc(c, &p, KDT_F32, 1, &n) ||
	    kern_alloc(c, &g, KDT_F32, 1, &n))
		return INFINITY;
	for (int i = 0; i < NP; i++)
		kgc_set(&g, i, i % 2 ? 1 : -1);
	*scaled_segs = 0;
	for (int i = 0; i < NT; i++)
		*scaled_segs += (o->segs[i].flags & KSEG_LR_SCALE) != 0;
	double err = optim_step(o, &p, NULL, &g) || kern_sync(c) ? INFINITY : 0;
	const double lr = optim_lr(&oc, 0);
	for (int t = 0; t < NT; t++) {
		const double scale = decay == 1 || decay == 0 ? 1 : pow(decay, 3 - want_id[t]);
		for (int64_t i = specs[t].offset; i < specs[t].offset + specs[t].numel; i++)
			err = fmax(err, fabs(fabs(kgc_get(&p, i)) / (lr * scale) - 1));
	}
	optim_destroy(o);
	kern_free(c, &p), kern_free(c, &g);
	return err;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 1))
		return 1;
	int bad = 0;
	for (int t = 0; t < NT; t++)
		bad |= optim_layer_id(specs[t].name, 2) != want_id[t];
	bad |= optim_layer_id("text_projection", 2) != 3 || optim_layer_id("visual.ln_pre.bias", 2) != 0;
	printf("layer ids: %s\n", bad ? "FAIL" : "ok");
	const double decays[] = {0.65, 0.5, 1, 0};
	for (int k = 0; k < 4; k++) {
		int scaled = -1;
		const double e = step_error(c, decays[k], &scaled);
		const int want_scaled = decays[k] == 1 || decays[k] == 0 ? 0 : NT;
		// the f32 roundings of the step, √(1−β2^t) and √v (measured 8.4e-7); a wrong scale is off by ≥ 0.35
		const int fail = !(e < 2e-6) || scaled != want_scaled;
		printf("decay %.2f: |dp| vs lr*decay^(L+1-id) worst %.2g, %d segments scaled: %s\n", decays[k], e,
		       scaled, fail ? "FAIL" : "ok");
		bad |= fail;
	}
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}
