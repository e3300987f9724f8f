// Counter-based random numbers (Philox4x32-10) keyed by (seed, position g, stream): every
// draw is a pure function of its key and counter, so any loader or trainer reproduces it.
#ifndef STREAM_RNG_PHILOX_H
#define STREAM_RNG_PHILOX_H
// defines: rng_philox4x32, RngStream, rng_stream_init, rng_next_u32, rng_next_float, rng_next_below, rng_splitmix64, RNG_STREAM_*

#include <stdint.h>

// Named streams so the loader's crop and the trainer's augmentation never share draws.
enum {
	RNG_STREAM_CLIP_SAMPLE = 1, // frame jitter within segments
	RNG_STREAM_CROP = 2,        // random-resized-crop box and flip
	RNG_STREAM_AUGMENT = 3,     // trainer-side (GPU) augmentation
	RNG_STREAM_PERMUTE = 4,     // epoch permutation keys
	RNG_STREAM_MIXUP = 5,       // the classify objective's Mixup/CutMix draw per step (kern_cls.h)
	RNG_STREAM_DROP_PATH = 6,   // drop path's per-sample keep draws per (step, layer) (kern_cls.h)
	RNG_STREAM_MASK = 7,        // VideoMAE tube masks (kern_mae_tube_mask)
};

// One Philox4x32 block with 10 rounds: out = philox(ctr, key). Random123's constants.
void rng_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

// A sequence of draws for one (seed, g, stream): counter = (g lo, g hi, stream, block).
typedef struct {
	uint32_t key[2];
	uint32_t ctr[4];
	uint32_t buf[4];
	int used; // words of buf already handed out (4: refill)
} RngStream;

void rng_stream_init(RngStream *s, uint64_t seed, uint64_t g, uint32_t stream);
uint32_t rng_next_u32(RngStream *s);
// uniform in [0, 1) with 24 random bits (exactly representable floats)
float rng_next_float(RngStream *s);
// uniform integer in [0, n) without modulo bias; n > 0
uint32_t rng_next_below(RngStream *s, uint32_t n);

// splitmix64: the next value of a sequential generator whose state is one word (Steele et al.);
// for seeded draws made in one order on one thread (initial weights, synthetic scenes, twins)
uint64_t rng_splitmix64(uint64_t *state);

#endif
