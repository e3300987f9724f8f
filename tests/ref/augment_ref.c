// Normalize + flip on the CPU (the GPU backend does the same in a kernel): per-channel lookup
// tables of the 256 normalized values, one pass over the clip, mirrored rows where flipped.
#include "augment_ref.h" // defines: trainer_augment_batch, trainer_augment_flips

#include <stddef.h> // defines: size_t

#include "stream.h" // defines: rng_stream_init, rng_next_u32, RNG_STREAM_AUGMENT

// OpenAI CLIP's normalization (open_clip OPENAI_DATASET_MEAN / _STD)
static const double clip_mean[3] = {0.48145466, 0.4578275, 0.40821073};
static const double clip_std[3] = {0.26862954, 0.26130258, 0.27577711};

int trainer_augment_flips(uint64_t seed, uint64_t g)
{
	RngStream s;
	rng_stream_init(&s, seed, g, RNG_STREAM_AUGMENT);
	return (int)(rng_next_u32(&s) & 1u);
}

void trainer_augment_batch(const uint8_t *clips, int B, int T, int H, int W, const uint64_t *pos, uint64_t seed,
			   int flip, float *out)
{
	float lut[3][256];
	for (int c = 0; c < 3; c++)
		for (int v = 0; v < 256; v++)
			lut[c][v] = (float)((v / 255.0 - clip_mean[c]) / clip_std[c]);
	const size_t row = (size_t)W * 3;
	for (int b = 0; b < B; b++) {
		int mirror = flip && trainer_augment_flips(seed, pos[b]);
		for (size_t r = 0; r < (size_t)T * H; r++) {
			const uint8_t *src = clips + ((size_t)b * T * H + r) * row;
			float *dst = out + ((size_t)b * T * H + r) * row;
			for (int x = 0; x < W; x++) {
				const uint8_t *px = src + (size_t)(mirror ? W - 1 - x : x) * 3;
				for (int c = 0; c < 3; c++)
					dst[(size_t)x * 3 + c] = lut[c][px[c]];
			}
		}
	}
}
