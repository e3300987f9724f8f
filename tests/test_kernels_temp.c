// Checks the temperature step op against trainer/fastclip's FastclipTemp over many steps: the
// Adam update, v3's learning rate ×1/3 once τ ≤ 0.03 (fastclip_tau_lr_rgclg), the [0, ln 100]
// clamp, the weight copy; and that a non-finite gradient latches "temp_step" and changes nothing.
#include "fastclip.h"       // defines: fastclip_config_default, fastclip_tau_lr_rgclg, FASTCLIP_LOG_S_MAX
#include "fastclip_ref.h"   // defines: FastclipTemp, fastclip_temp_step
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_temp_step

#include <errno.h>
#include <math.h>
#include <stdio.h>

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 1))
		return 1;
	FastclipConfig cfg;
	fastclip_config_default(&cfg, FASTCLIP_V3);
	cfg.lr_tau = 0.05; // large, so that τ crosses 0.03 and reaches the clamp within the run
	KTensor ls, mv, g, copy;
	if (kern_alloc(c, &ls, KDT_F32, 1, (int64_t[]){1}) || kern_alloc(c, &mv, KDT_F32, 1, (int64_t[]){2}) ||
	    kern_alloc(c, &g, KDT_F32, 1, (int64_t[]){1}) || kern_alloc(c, &copy, KDT_BF16, 1, (int64_t[]){1}))
		return 1;
	FastclipTemp t;
	fastclip_temp_init(&t, 0.05);
	t.log_s = (double)(float)t.log_s; // both start from the same f32 value
	kgc_set(&ls, 0, t.log_s);
	int bad = 0, low = 0, clamped = 0;
	double worst = 0;
	for (int s = 1; s <= 120; s++) {
		double grad = s < 90 ? -1.0 - 0.01 * s : 3.0; // pushes log s up to the clamp, then back
		double lr = fastclip_tau_lr_rgclg(&cfg, t.log_s);
		low += lr < cfg.lr_tau;
		kgc_set(&g, 0, grad);
		KTempStep h = {.lr = cfg.lr_tau,
			       .lr_low = cfg.lr_tau / 3,
			       .tau_low = 0.03,
			       .beta1 = cfg.beta1_tau,
			       .beta2 = cfg.beta2_tau,
			       .eps = cfg.eps_tau,
			       .step = s,
			       .lo = 0,
			       .hi = FASTCLIP_LOG_S_MAX};
		bad |= kern_temp_step(c, &ls, &mv, &g, NULL, &copy, &h) |
		       fastclip_temp_step(&t, (float)grad, lr, cfg.beta1_tau, cfg.beta2_tau, cfg.eps_tau);
		clamped += t.log_s == FASTCLIP_LOG_S_MAX;
		worst = fmax(worst, fabs(kgc_get(&ls, 0) - t.log_s) / t.log_s);
		bad |= kgc_get(&copy, 0) != kern_f32_from_bf16(kern_bf16_from_f32((float)kgc_get(&ls, 0)));
	}
	int ok = !bad && worst <= 1e-6 && low > 0 && clamped > 0;
	printf("%-4s 120 steps vs FastclipTemp: max rel |log s| diff %.2g; %d steps at lr/3, %d at the clamp\n",
	       ok ? "ok" : "FAIL", worst, low, clamped);
	bad = !ok;
	double before = kgc_get(&ls, 0);
	kgc_set(&g, 0, NAN);
	KTempStep h = {.lr = 1, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .step = 121, .lo = 0, .hi = 5};
	int rc = kern_temp_step(c, &ls, &mv, &g, NULL, NULL, &h), srb = kern_sync(c);
	ok = rc == 0 && srb == -ERANGE && kgc_get(&ls, 0) == before;
	printf("%-4s a NaN gradient: op %d, sync %d (%s), log s unchanged\n", ok ? "ok" : "FAIL", rc, srb,
	       kern_error_message(c));
	bad |= !ok;
	kern_error_clear(c);
	// the clip factor of kern_grad_norm scales the gradient: a step with grad g and factor 0.25 is
	// the step with grad 0.25·g (as f32)
	KTensor nc, ls2, mv2;
	if (kern_alloc(c, &nc, KDT_F32, 1, (int64_t[]){2}) || kern_alloc(c, &ls2, KDT_F32, 1, (int64_t[]){1}) ||
	    kern_alloc(c, &mv2, KDT_F32, 1, (int64_t[]){2}))
		return 1;
	kgc_set(&nc, 0, 7.0);
	kgc_set(&nc, 1, 0.25);
	kgc_set(&ls, 0, 2.5);
	kgc_set(&ls2, 0, 2.5);
	kern_zero(c, &mv);
	h = (KTempStep){
		.lr = 0.01, .lr_low = 0.01, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .step = 1, .lo = 0, .hi = 5};
	kgc_set(&g, 0, -3.0);
	rc = kern_temp_step(c, &ls, &mv, &g, &nc, NULL, &h);
	kgc_set(&g, 0, (float)(-3.0f * 0.25f));
	rc |= kern_temp_step(c, &ls2, &mv2, &g, NULL, NULL, &h) | kern_sync(c);
	ok = rc == 0 && kgc_get(&ls, 0) == kgc_get(&ls2, 0) && kgc_get(&mv, 0) == kgc_get(&mv2, 0) &&
	     kgc_get(&ls, 0) != 2.5;
	printf("%-4s the clip factor scales the gradient: log s %.9g and %.9g\n", ok ? "ok" : "FAIL", kgc_get(&ls, 0),
	       kgc_get(&ls2, 0));
	bad |= !ok;
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL temperature step" : "PASS temperature step equals FastclipTemp");
	return bad;
}
