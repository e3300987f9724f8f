// Checks the AdamW and LAMB update kernels (f32) against the update formulas evaluated by hand
// in double over three steps, including weight decay, bias correction and LAMB's trust ratio.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_adamw_step, kern_lamb_step

#include <math.h>
#include <stdio.h>

enum { N = 37 };

static int run(KernCtx *c, int lamb)
{
	const int64_t sh[] = {N};
	KTensor p, g, m, v;
	if (kern_alloc(c, &p, KDT_F32, 1, sh) || kern_alloc(c, &g, KDT_F32, 1, sh) || kern_alloc(c, &m, KDT_F32, 1, sh) ||
	    kern_alloc(c, &v, KDT_F32, 1, sh))
		return 1;
	double hp[N], hm[N] = {0}, hv[N] = {0};
	kgc_fill(&p, 81, 1);
	for (int i = 0; i < N; i++)
		hp[i] = kgc_get(&p, i);
	KOptHyper h = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .weight_decay = 0.1};
	for (int step = 1; step <= 3; step++) {
		kgc_fill(&g, 90 + step, 0.5);
		h.step = step;
		int rc = lamb ? kern_lamb_step(c, &p, &g, &m, &v, &h) : kern_adamw_step(c, &p, &g, &m, &v, &h);
		if (rc)
			return 1;
		double bc1 = 1 - pow(h.beta1, step), bc2 = 1 - pow(h.beta2, step), r[N], pn = 0, rn = 0;
		for (int i = 0; i < N; i++) {
			double gi = kgc_get(&g, i);
			hm[i] = h.beta1 * hm[i] + (1 - h.beta1) * gi;
			hv[i] = h.beta2 * hv[i] + (1 - h.beta2) * gi * gi;
			if (lamb) {
				r[i] = (hm[i] / bc1) / (sqrt(hv[i] / bc2) + h.eps) + h.weight_decay * hp[i];
				pn += hp[i] * hp[i];
				rn += r[i] * r[i];
			} else {
				hp[i] = hp[i] * (1 - h.lr * h.weight_decay) - h.lr * (hm[i] / bc1) / (sqrt(hv[i] / bc2) + h.eps);
			}
		}
		if (lamb)
			for (int i = 0; i < N; i++)
				hp[i] -= h.lr * sqrt(pn) / sqrt(rn) * r[i];
	}
	double e = 0;
	for (int i = 0; i < N; i++)
		e = fmax(e, fabs(kgc_get(&p, i) - hp[i]));
	printf("%-4s %s after 3 steps: max |p - hand| = %.3g\n", e < 2e-6 ? "ok" : "FAIL", lamb ? "lamb" : "adamw", e);
	kern_free(c, &p);
	kern_free(c, &g);
	kern_free(c, &m);
	kern_free(c, &v);
	return e < 2e-6 ? 0 : 1;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	int bad = run(c, 0) | run(c, 1);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL optimizer kernels" : "PASS adamw and lamb kernels");
	return bad;
}
