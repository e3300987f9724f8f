// The CPU twins of the ops that read u8 clips: augment (CLIP-normalized values, flipped per clip by
// the counter RNG, written straight in the patch or tubelet order the embedding reads, one pass) and
// VideoMAE's normalized-pixel target of the masked tubelets (the same flip).
#include "kern_cpu.h" // defines: kcpu_st, KOMP, kcpu_arena_alloc, kcpu_arena_reset, kern_latch
#include "stream.h"   // defines: rng_philox4x32, RNG_STREAM_AUGMENT

#include <errno.h>

// OpenAI CLIP's normalization (open_clip OPENAI_DATASET_MEAN / _STD), as its host twin tests/ref/augment_ref.c
static const double clip_mean[3] = {0.48145466, 0.4578275, 0.40821073};
static const double clip_std[3] = {0.26862954, 0.26130258, 0.27577711};

_Static_assert(RNG_STREAM_AUGMENT == 3, "the contract names stream 3 for the augmentation flip");

// bit 0 of the first word of Philox4x32-10 at counter {g, RNG_STREAM_AUGMENT, 0}, key seed
static int flips(uint64_t seed, uint64_t g)
{
	const uint32_t ctr[4] = {(uint32_t)g, (uint32_t)(g >> 32), RNG_STREAM_AUGMENT, 0};
	const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	uint32_t out[4];
	rng_philox4x32(ctr, key, out);
	return (int)(out[0] & 1u);
}

int kcpu_augment(KernCtx *c, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip, int patch)
{
	return kcpu_augment_tubelet(c, out, clips, pos, seed, flip, patch, 1);
}

// token t'·P + q of clip b holds its tt frames from t'·tt: element ((ch·tt + dt)·p + i)·p + j
int kcpu_augment_tubelet(KernCtx *c, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip,
			 int patch, int tubelet)
{
	float lut[3][256];
	for (int ch = 0; ch < 3; ch++)
		for (int v = 0; v < 256; v++)
			lut[ch][v] = (float)((v / 255.0 - clip_mean[ch]) / clip_std[ch]);
	const int64_t B = clips->shape[0], T = clips->shape[1], H = clips->shape[2], W = clips->shape[3];
	const int p = patch, tt = tubelet, gw = (int)(W / p), P = (int)(H / p) * gw, K = 3 * tt * p * p;
	const int64_t Tp = T / tt;
	const uint8_t *px = clips->data;
	const int64_t *g = pos->data;
	void *o = out->data;
	KDtype dt = out->dtype;
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static) collapse(2)")
	for (int64_t bs = 0; bs < B * Tp; bs++) // slice bs = b·T' + t'
		for (int q = 0; q < P; q++) {
			int64_t b = bs / Tp;
			int mirror = flip && flips(seed, (uint64_t)g[b]);
			int py = q / gw, qx = q % gw;
			int64_t row = (bs * P + q) * K; // (B, T'·P, K): tubelet q of slice bs
			for (int d = 0; d < tt; d++)
				for (int i = 0; i < p; i++) {
					const int64_t frame = bs * tt + d; // b·T + t'·tt + d
					const uint8_t *line = px + ((frame * H + (int64_t)py * p + i) * W) * 3;
					for (int j = 0; j < p; j++) {
						int64_t x = (int64_t)qx * p + j;
						const uint8_t *pix = line + (mirror ? W - 1 - x : x) * 3;
						for (int ch = 0; ch < 3; ch++)
							kcpu_st(o, dt, row + ((ch * tt + d) * p + i) * p + j,
								lut[ch][pix[ch]]);
					}
				}
		}
	return 0;
}

// VideoMAE's normalized-pixel target of one channel of one tubelet: the K pixel values, their exact
// integer sums and every later step in double (kern_ops.h, kern_mae_target)
static void norm_pix(float *dst, const uint8_t *v, int K)
{
	int64_t S = 0, S2 = 0;
	for (int k = 0; k < K; k++)
		S += v[k], S2 += (int64_t)v[k] * v[k];
	const double mean = (double)S / (255.0 * K);
	const double sd = sqrt((double)(K * S2 - S * S) / ((double)K * (K - 1) * 65025.0));
	for (int k = 0; k < K; k++)
		dst[(int64_t)k * 3] = (float)((v[k] / 255.0 - mean) / (sd + 1e-6));
}

// one thread per masked token: its tubelet's pixels per channel in (dt, i, j) order, then normalized
int kcpu_mae_target(KernCtx *c, KTensor *out, const KTensor *clips, const KTensor *pos, const KTensor *mask_idx,
		    uint64_t seed, int flip, int patch, int tubelet)
{
	const int64_t B = clips->shape[0], T = clips->shape[1], H = clips->shape[2], W = clips->shape[3];
	const int p = patch, tt = tubelet, gw = (int)(W / p), P = (int)(H / p) * gw, K = tt * p * p;
	const int64_t Nm = mask_idx->shape[1], N = T / tt * P;
	const int32_t *idx = mask_idx->data;
	for (int64_t i = 0; i < B * Nm; i++)
		if (idx[i] < 0 || idx[i] >= N || (i % Nm && idx[i] <= idx[i - 1])) {
			kern_latch(c, -ERANGE, "mae_target",
				   "index %d at [%lld] is outside [0, %lld) or not above the one before it", idx[i],
				   (long long)i, (long long)N);
			return 0;
		}
	uint8_t *vals = kcpu_arena_alloc(c, (size_t)B * Nm * K * 3);
	if (!vals)
		return -ENOMEM;
	const uint8_t *px = clips->data;
	const int64_t *g = pos->data;
	float *o = out->data;
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int64_t r = 0; r < B * Nm; r++) {
		const int64_t b = r / Nm, n = idx[r], tp = n / P;
		const int q = (int)(n % P), py = q / gw, qx = q % gw;
		const int mirror = flip && flips(seed, (uint64_t)g[b]);
		uint8_t *v = vals + r * K * 3; // (c, k)
		for (int d = 0; d < tt; d++)
			for (int i = 0; i < p; i++)
				for (int j = 0; j < p; j++) {
					const int64_t x = (int64_t)qx * p + j, k = ((int64_t)d * p + i) * p + j;
					const uint8_t *pix =
						px + (((b * T + tp * tt + d) * H + (int64_t)py * p + i) * W +
						      (mirror ? W - 1 - x : x)) *
							     3;
					for (int ch = 0; ch < 3; ch++)
						v[ch * K + k] = pix[ch];
				}
		for (int ch = 0; ch < 3; ch++)
			norm_pix(o + r * K * 3 + ch, v + ch * K, K);
	}
	kcpu_arena_reset(c);
	return 0;
}
