// LAMB gives a tensor without weight decay a trust ratio of 1 (FastCLIP src/training/optimizer.py:
// the ratio ||p||/||r|| only where the group's weight decay is not 0), so such a tensor moves by
// lr·mhat/(sqrt(vhat)+eps) exactly as Adam would, while a decayed one is scaled by its ratio.
#include "kern_gradcheck.h" // defines: kgc_fill, kgc_get
#include "model.h"          // defines: Optimizer

#include <math.h>
#include <stdio.h>

int main(void)
{
	KernCtx *ctx;
	if (kern_ctx_create_cpu(&ctx, 1))
		return 1;
	// "w" (3, 4) decayed, "emb" (2, 4) not: both 2-D, so only the flag tells them apart
	ParamSpec sp[2] = {
		{.name = "w", .ndim = 2, .shape = {3, 4}, .offset = 0, .numel = 12},
		{.name = "emb", .ndim = 2, .shape = {2, 4}, .offset = 12, .numel = 8, .flags = PARAM_NO_DECAY}};
	OptConfig c;
	optim_config_default(&c);
	c.kind = OPT_LAMB, c.lr = 0.01, c.total_steps = 10, c.weight_decay = 0.1;
	Optimizer *o;
	KTensor p, g;
	int64_t n = 20;
	if (optim_create(&o, ctx, &c, sp, 2, n) || kern_alloc(ctx, &p, KDT_F32, 1, &n) ||
	    kern_alloc(ctx, &g, KDT_F32, 1, &n))
		return 1;
	kgc_fill(&p, 1, 5.0); // ||p|| far from ||r||, so a trust ratio would show
	kgc_fill(&g, 2, 0.3);
	double p0[20], g0[20];
	for (int i = 0; i < 20; i++)
		p0[i] = kgc_get(&p, i), g0[i] = kgc_get(&g, i);
	if (optim_step(o, &p, NULL, &g))
		return 1;
	double lr = optim_lr(&c, 0), e_free = 0, pn = 0, rn = 0, r[12];
	for (int i = 0; i < 20; i++) {
		double mh = g0[i], vh = g0[i] * g0[i]; // first step: bias-corrected moments are g and g²
		double u = mh / (sqrt(vh) + c.eps);
		if (i >= 12) {
			e_free = fmax(e_free, fabs(kgc_get(&p, i) - (p0[i] - lr * u)));
		} else {
			r[i] = u + c.weight_decay * p0[i];
			pn += p0[i] * p0[i], rn += r[i] * r[i];
		}
	}
	double trust = sqrt(pn) / sqrt(rn), e_dec = 0;
	for (int i = 0; i < 12; i++)
		e_dec = fmax(e_dec, fabs(kgc_get(&p, i) - (p0[i] - lr * trust * r[i])));
	int bad = !(e_free < 1e-6) || !(e_dec < 1e-6) || !(fabs(trust - 1) > 0.5);
	printf("no-decay tensor vs trust 1: %.3g; decayed tensor vs trust %.3f: %.3g\n", e_free, trust, e_dec);
	optim_destroy(o);
	kern_ctx_destroy(ctx);
	printf("%s\n", bad ? "FAIL LAMB trust ratio" : "PASS LAMB trust ratio 1 without weight decay");
	return bad;
}
