// Checks the host draws of the classify objective (kern_cls.h): the Mixup/CutMix draw is a pure
// function of (seed, step), switches to cutmix at switch_prob, its lam follows Beta(α, α) (mean and
// variance over many steps), a cutmix box lies in the frame and its lam is exactly 1 − area/(H·W);
// Beta itself at an asymmetric (α, β); drop path's scales (rate 0, 1, keep fraction, determinism).
#include "kern_cls.h" // defines: kern_mixup_draw, kern_beta_draw, kern_drop_path_scales, KMixupSpec

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { STEPS = 20000, H = 224, W = 224 };
// statistical tolerances, all over STEPS draws of a fixed seed (so deterministic): about 4 standard
// errors of each estimate (Beta(0.8, 0.8): sd 0.31, so the mean's SE over ~10^4 draws is 0.003)
#define TOL_FRACTION 0.015 // cutmix share vs switch_prob 0.5 (SE 0.0035)
#define TOL_MEAN 0.013     // mean lam of mixup draws vs 1/2
#define TOL_VAR 0.008      // its variance vs 1/(4(2α + 1)) (SE ~0.0015)
#define TOL_BETA25 0.005   // mean of Beta(2, 5) vs 2/7 over STEPS draws (SE 0.0011)

static int check_mixup(void)
{
	const KMixupSpec avion = {.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .switch_prob = 0.5};
	int bad = 0, ncut = 0, nmix = 0;
	double s1 = 0, s2 = 0;
	for (int step = 0; step < STEPS; step++) {
		KMixup m, again;
		bad |= kern_mixup_draw(&m, &avion, 7, (uint64_t)step, H, W) ||
		       kern_mixup_draw(&again, &avion, 7, (uint64_t)step, H, W);
		bad |= memcmp(&m, &again, sizeof m) != 0; // deterministic in (seed, step)
		if (m.cutmix) {
			ncut++;
			const double area = (double)(m.y1 - m.y0) * (m.x1 - m.x0);
			bad |= !(0 <= m.y0 && m.y0 <= m.y1 && m.y1 <= H && 0 <= m.x0 && m.x0 <= m.x1 && m.x1 <= W);
			bad |= m.lam != 1.0 - area / ((double)H * W); // correct_lam: exactly the box's share
		} else {
			nmix++;
			s1 += m.lam, s2 += m.lam * m.lam;
			bad |= !(m.lam > 0 && m.lam < 1);
		}
	}
	const double frac = (double)ncut / STEPS, mean = s1 / nmix, var = s2 / nmix - mean * mean;
	const double want_var = 1.0 / (4 * (2 * 0.8 + 1));
	bad |= !(fabs(frac - 0.5) < TOL_FRACTION) || !(fabs(mean - 0.5) < TOL_MEAN) ||
	       !(fabs(var - want_var) < TOL_VAR);
	printf("mixup draw: cutmix share %.4f, mixup lam mean %.4f var %.4f (Beta(0.8): 0.5, %.4f) %s\n", frac, mean,
	       var, want_var, bad ? "FAIL" : "ok");
	KMixup a, b, d;
	bad |= kern_mixup_draw(&a, &avion, 7, 1, H, W) || kern_mixup_draw(&b, &avion, 8, 1, H, W) ||
	       kern_mixup_draw(&d, &avion, 7, 2, H, W);
	bad |= a.lam == b.lam || a.lam == d.lam; // another seed or step draws another lam
	const KMixupSpec off = {0}, cut_only = {.cutmix_alpha = 1.0};
	bad |= kern_mixup_draw(&a, &off, 7, 1, H, W) || a.cutmix || a.lam != 1;
	bad |= kern_mixup_draw(&a, &cut_only, 7, 1, H, W) || !a.cutmix;
	bad |= kern_mixup_draw(&a, &(KMixupSpec){.mixup_alpha = -1}, 7, 1, H, W) != -EINVAL;
	bad |= kern_mixup_draw(&a, &(KMixupSpec){.mixup_alpha = 1, .switch_prob = 2}, 7, 1, H, W) != -EINVAL;
	return bad;
}

static int check_beta(void)
{
	RngStream s;
	rng_stream_init(&s, 11, 0, RNG_STREAM_MIXUP);
	double sum = 0;
	for (int i = 0; i < STEPS; i++)
		sum += kern_beta_draw(&s, 2, 5);
	const double mean = sum / STEPS;
	int bad = !(fabs(mean - 2.0 / 7) < TOL_BETA25);
	printf("Beta(2, 5) mean %.4f (2/7 = %.4f) %s\n", mean, 2.0 / 7, bad ? "FAIL" : "ok");
	return bad;
}

static int check_drop_path(void)
{
	enum { NB = 4096 };
	static float s[NB], t[NB];
	int bad = kern_drop_path_scales(s, NB, 0, 1, 5, 3) != 0;
	for (int b = 0; b < NB; b++)
		bad |= s[b] != 1.0f;
	bad |= kern_drop_path_scales(s, NB, 1, 1, 5, 3) != 0;
	for (int b = 0; b < NB; b++)
		bad |= s[b] != 0.0f;
	bad |= kern_drop_path_scales(s, NB, 0.1, 1, 5, 3) || kern_drop_path_scales(t, NB, 0.1, 1, 5, 3);
	bad |= memcmp(s, t, sizeof s) != 0;
	int kept = 0;
	for (int b = 0; b < NB; b++) {
		bad |= s[b] != 0.0f && s[b] != (float)(1 / 0.9);
		kept += s[b] != 0;
	}
	bad |= kern_drop_path_scales(t, NB, 0.1, 1, 5, 4) != 0;
	bad |= !memcmp(s, t, sizeof s);                 // another layer, another pattern
	bad |= !(fabs((double)kept / NB - 0.9) < 0.02); // SE 0.0047
	bad |= kern_drop_path_scales(s, NB, 1.5, 1, 5, 3) != -EINVAL ||
	       kern_drop_path_scales(s, NB, 0.1, 1, 5, 1 << 16) != -EINVAL;
	printf("drop path scales: keep share %.4f of 0.9, rate 0 and 1, determinism, layers %s\n", (double)kept / NB,
	       bad ? "FAIL" : "ok");
	return bad;
}

int main(void)
{
	int bad = check_mixup() | check_beta() | check_drop_path();
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}
