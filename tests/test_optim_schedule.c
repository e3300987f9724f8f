// Checks the LR schedule: linear warmup to the peak, cosine down to lr_min at total_steps,
// lr_min afterwards; and that bad optimizer settings are refused.
#include "model.h" // defines: optim_lr, optim_create

#include <errno.h>
#include <math.h>
#include <stdio.h>

static int near(const char *what, double got, double want)
{
	int ok = fabs(got - want) <= 1e-15 + 1e-12 * fabs(want);
	printf("%-4s %-34s %.15g (want %.15g)\n", ok ? "ok" : "FAIL", what, got, want);
	return !ok;
}

int main(void)
{
	OptConfig c;
	optim_config_default(&c);
	c.lr = 1e-3, c.lr_min = 1e-5, c.warmup_steps = 10, c.total_steps = 110;
	int bad = 0;
	bad |= near("step 0 (first warmup update)", optim_lr(&c, 0), 1e-4);
	bad |= near("step 4", optim_lr(&c, 4), 5e-4);
	bad |= near("step 9 (last warmup update)", optim_lr(&c, 9), 1e-3);
	bad |= near("step 10 (cosine start)", optim_lr(&c, 10), 1e-3);
	bad |= near("step 60 (cosine middle)", optim_lr(&c, 60), 1e-5 + 0.5 * (1e-3 - 1e-5));
	bad |= near("step 85 (cosine 3/4)", optim_lr(&c, 85), 1e-5 + 0.5 * (1e-3 - 1e-5) * (1 + cos(M_PI * 0.75)));
	bad |= near("step 110 (end)", optim_lr(&c, 110), 1e-5);
	bad |= near("step 500 (after the end)", optim_lr(&c, 500), 1e-5);
	c.warmup_steps = 0;
	bad |= near("no warmup: step 0", optim_lr(&c, 0), 1e-3);

	KernCtx *ctx;
	if (kern_ctx_create_cpu(&ctx, 1))
		return 1;
	Optimizer *o;
	ParamSpec s = {.name = "x", .ndim = 1, .shape = {4}, .numel = 4};
	OptConfig b = c;
	b.beta2 = 1.0;
	bad |= optim_create(&o, ctx, &b, &s, 1, 4) != -EINVAL;
	b = c;
	b.eps = 0;
	bad |= optim_create(&o, ctx, &b, &s, 1, 4) != -EINVAL;
	b = c;
	b.lr = -1;
	bad |= optim_create(&o, ctx, &b, &s, 1, 4) != -EINVAL;
	kern_ctx_destroy(ctx);
	printf("%s\n", bad ? "FAIL LR schedule / settings" : "PASS LR schedule and settings checks");
	return bad;
}
