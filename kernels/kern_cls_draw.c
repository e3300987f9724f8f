// Host-side draws of the classification fine-tuning ops: timm's per-batch Mixup/CutMix parameters
// (Beta from two Marsaglia–Tsang Gamma draws) and drop path's per-sample scales, from the counter RNG.
#include "kern_cls.h" // defines: KMixupSpec, KMixup, RngStream, rng_*, RNG_STREAM_MIXUP, RNG_STREAM_DROP_PATH

#include <errno.h>
#include <math.h>

// uniform in (0, 1) from 53 bits of two words: never 0, so its log is finite
static double uniform53(RngStream *s)
{
	const uint64_t hi = rng_next_u32(s) >> 5, lo = rng_next_u32(s) >> 6; // 27 + 26 bits
	return ((double)(hi << 26 | lo) + 0.5) / 9007199254740992.0;
}

// a standard normal by Box–Muller (the cosine branch only: one normal per two uniforms)
static double normal(RngStream *s)
{
	const double u = uniform53(s), v = uniform53(s);
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

// Γ(a, 1) by Marsaglia and Tsang (2000) for a >= 1; a < 1 as Γ(a + 1)·U^(1/a)
static double gamma_draw(RngStream *s, double a)
{
	if (a < 1.0) {
		const double g = gamma_draw(s, a + 1.0);
		return g * pow(uniform53(s), 1.0 / a);
	}
	const double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
	for (;;) {
		const double x = normal(s), t = 1.0 + c * x;
		if (t <= 0.0)
			continue;
		const double v = t * t * t, u = uniform53(s);
		if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
			return d * v;
	}
}

double kern_beta_draw(RngStream *s, double alpha, double beta)
{
	const double x = gamma_draw(s, alpha), y = gamma_draw(s, beta);
	return x / (x + y);
}

static int clip(int v, int hi)
{
	return v < 0 ? 0 : v > hi ? hi : v;
}

// timm's rand_bbox (margin 0) and the lam of the box's true area (correct_lam)
static void cutmix_box(KMixup *m, RngStream *s, double lam, int H, int W)
{
	const double r = sqrt(1.0 - lam);
	const int ch = (int)(H * r), cw = (int)(W * r);
	const int cy = (int)rng_next_below(s, (uint32_t)H), cx = (int)rng_next_below(s, (uint32_t)W);
	m->y0 = clip(cy - ch / 2, H), m->y1 = clip(cy + ch / 2, H);
	m->x0 = clip(cx - cw / 2, W), m->x1 = clip(cx + cw / 2, W);
	m->lam = 1.0 - (double)(m->y1 - m->y0) * (m->x1 - m->x0) / ((double)H * W);
}

int kern_mixup_draw(KMixup *out, const KMixupSpec *spec, uint64_t seed, uint64_t step, int H, int W)
{
	if (!out || !spec || !(spec->mixup_alpha >= 0) || !(spec->cutmix_alpha >= 0) || !(spec->switch_prob >= 0) ||
	    !(spec->switch_prob <= 1) || H < 1 || W < 1)
		return -EINVAL;
	*out = (KMixup){.cutmix = 0, .lam = 1.0};
	const int mix = spec->mixup_alpha > 0, cut = spec->cutmix_alpha > 0;
	if (!mix && !cut)
		return 0;
	RngStream s;
	rng_stream_init(&s, seed, step, RNG_STREAM_MIXUP);
	int use_cut = cut && !mix;
	if (mix && cut)
		use_cut = uniform53(&s) < spec->switch_prob;
	const double a = use_cut ? spec->cutmix_alpha : spec->mixup_alpha;
	const double lam = kern_beta_draw(&s, a, a);
	out->cutmix = use_cut;
	out->lam = lam;
	if (use_cut)
		cutmix_box(out, &s, lam, H, W);
	return 0;
}

int kern_drop_path_scales(float *s, int B, double rate, uint64_t seed, uint64_t step, int layer)
{
	if (!s || B < 1 || B > (1 << 18) || !(rate >= 0) || !(rate <= 1) || layer < 0 || layer >= (1 << 16))
		return -EINVAL;
	const double keep = 1.0 - rate;
	const float kept = keep > 0 ? (float)(1.0 / keep) : 0.0f;
	const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	uint32_t w[4] = {0};
	for (int b = 0; b < B; b++) {
		if (rate == 0) {
			s[b] = 1.0f;
			continue;
		}
		if (b % 4 == 0) {
			const uint32_t ctr[4] = {(uint32_t)step, (uint32_t)(step >> 32), RNG_STREAM_DROP_PATH,
						 (uint32_t)layer << 16 | (uint32_t)(b / 4)};
			rng_philox4x32(ctr, key, w);
		}
		const double u = (double)(w[b % 4] >> 8) / 16777216.0;
		s[b] = u < keep ? kept : 0.0f;
	}
	return 0;
}
