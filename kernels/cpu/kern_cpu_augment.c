// The CPU twin of the augment op: u8 clips -> CLIP-normalized values, flipped per clip by the
// counter RNG, written straight in the patch order the patch embedding reads (one pass).
#include "kern_cpu.h"   // defines: kcpu_st, KOMP
#include "rng_philox.h" // defines: rng_philox4x32, RNG_STREAM_AUGMENT

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
	float lut[3][256];
	for (int ch = 0; ch < 3; ch++)
		for (int v = 0; v < 256; v++)
			lut[ch][v] = (float)((v / 255.0 - clip_mean[ch]) / clip_std[ch]);
	const int64_t B = clips->shape[0], T = clips->shape[1], H = clips->shape[2], W = clips->shape[3];
	const int p = patch, gw = (int)(W / p), P = (int)(H / p) * gw, K = 3 * p * p;
	const uint8_t *px = clips->data;
	const int64_t *g = pos->data;
	void *o = out->data;
	KDtype dt = out->dtype;
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static) collapse(2)")
	for (int64_t bt = 0; bt < B * T; bt++)
		for (int q = 0; q < P; q++) {
			int64_t b = bt / T;
			int mirror = flip && flips(seed, (uint64_t)g[b]);
			int py = q / gw, qx = q % gw;
			int64_t row = (bt * P + q) * K; // (B, T·P, K): patch q of frame bt
			for (int i = 0; i < p; i++) {
				const uint8_t *line = px + ((bt * H + (int64_t)py * p + i) * W) * 3;
				for (int j = 0; j < p; j++) {
					int64_t x = (int64_t)qx * p + j;
					const uint8_t *pix = line + (mirror ? W - 1 - x : x) * 3;
					for (int ch = 0; ch < 3; ch++)
						kcpu_st(o, dt, row + (ch * p + i) * p + j, lut[ch][pix[ch]]);
				}
			}
		}
	return 0;
}
