// Checks optimizer steps over a parameter table against hand-computed double-precision
// updates: weight decay only on the decayed group, global-norm clipping, the LR schedule,
// LAMB's per-tensor trust ratio (1 where there is no decay, as upstream); and that a non-finite
// gradient latches an error and leaves the parameters alone.
#include "kern_gradcheck.h" // defines: kgc_fill, kgc_get, kgc_set
#include "model.h"          // defines: Optimizer

#include <errno.h>
#include <math.h>
#include <stdio.h>

enum { N = 30 };

static int run(KernCtx *ctx, OptKind kind)
{
	// tensor "w" (4, 5) is decayed; "b" (10) is 1-D and not
	ParamSpec sp[2] = {{.name = "w", .ndim = 2, .shape = {4, 5}, .offset = 0, .numel = 20},
			   {.name = "b", .ndim = 1, .shape = {10}, .offset = 20, .numel = 10, .flags = PARAM_NO_DECAY}};
	OptConfig c;
	optim_config_default(&c);
	c.kind = kind, c.lr = 0.05, c.lr_min = 0.001, c.warmup_steps = 2, c.total_steps = 6, c.weight_decay = 0.2;
	c.clip_norm = 1.0;
	Optimizer *o;
	KTensor p, g;
	int64_t n = N;
	if (optim_create(&o, ctx, &c, sp, 2, N) || kern_alloc(ctx, &p, KDT_F32, 1, &n) ||
	    kern_alloc(ctx, &g, KDT_F32, 1, &n))
		return 1;
	kgc_fill(&p, 3, 1);
	double hp[N], hm[N] = {0}, hv[N] = {0};
	for (int i = 0; i < N; i++)
		hp[i] = kgc_get(&p, i);
	int clipped = 0;
	for (int64_t t = 0; t < 6; t++) {
		kgc_fill(&g, 10 + (uint64_t)t, t % 2 ? 2.0 : 0.1); // odd steps exceed the clip norm
		double hg[N], ss = 0, norm;
		for (int i = 0; i < N; i++) {
			hg[i] = kgc_get(&g, i);
			ss += hg[i] * hg[i];
		}
		if (sqrt(ss) > c.clip_norm) {
			clipped++;
			for (int i = 0; i < N; i++)
				hg[i] = (float)(hg[i] * (c.clip_norm / (sqrt(ss) + 1e-6)));
		}
		float nc[2];
		if (optim_step(o, &p, NULL, &g) || kern_download(ctx, nc, sizeof nc, &o->norm_clip))
			return 1;
		norm = nc[0];
		if (fabs(norm - sqrt(ss)) > 1e-6 * sqrt(ss))
			return 1;
		double lr = optim_lr(&c, t), bc1 = 1 - pow(c.beta1, (double)t + 1),
		       bc2 = 1 - pow(c.beta2, (double)t + 1);
		for (int k = 0; k < 2; k++) {
			double wd = k == 0 ? c.weight_decay : 0, r[N], pn = 0, rn = 0;
			for (int64_t i = sp[k].offset; i < sp[k].offset + sp[k].numel; i++) {
				hm[i] = c.beta1 * hm[i] + (1 - c.beta1) * hg[i];
				hv[i] = c.beta2 * hv[i] + (1 - c.beta2) * hg[i] * hg[i];
				double u = (hm[i] / bc1) / (sqrt(hv[i] / bc2) + c.eps);
				if (kind == OPT_ADAMW) {
					hp[i] = hp[i] * (1 - lr * wd) - lr * u;
				} else {
					r[i] = u + wd * hp[i];
					pn += hp[i] * hp[i];
					rn += r[i] * r[i];
				}
			}
			if (kind == OPT_LAMB) // trust ratio 1 without weight decay (FastCLIP optimizer.py)
				for (int64_t i = sp[k].offset; i < sp[k].offset + sp[k].numel; i++)
					hp[i] -= lr * (wd != 0 ? sqrt(pn) / sqrt(rn) : 1.0) * r[i];
		}
	}
	double e = 0;
	for (int i = 0; i < N; i++)
		e = fmax(e, fabs(kgc_get(&p, i) - hp[i]));
	int bad = !(e < 3e-6) || clipped != 3;
	printf("%-4s %s: 6 steps (%d clipped), max |p - hand| %.3g\n", bad ? "FAIL" : "ok",
	       kind == OPT_LAMB ? "lamb " : "adamw", clipped, e);
	// a NaN gradient: the update is queued, the device latches -ERANGE, the parameters stay
	double before = kgc_get(&p, 7);
	kgc_set(&g, 3, NAN);
	int rc = optim_step(o, &p, NULL, &g), srb = kern_sync(ctx);
	if (rc != 0 || srb != -ERANGE || kgc_get(&p, 7) != before) {
		printf("FAIL NaN gradient: step %d, sync %d (%s)\n", rc, srb, kern_error_message(ctx));
		bad = 1;
	}
	kern_error_clear(ctx);
	optim_destroy(o);
	kern_free(ctx, &p);
	kern_free(ctx, &g);
	return bad;
}

int main(void)
{
	KernCtx *ctx;
	if (kern_ctx_create_cpu(&ctx, 2))
		return 1;
	int bad = run(ctx, OPT_ADAMW) | run(ctx, OPT_LAMB);
	kern_ctx_destroy(ctx);
	printf("%s\n", bad ? "FAIL optimizer steps" : "PASS optimizer steps with groups, clipping and schedule");
	return bad;
}
