// The one public header of libstream: the counter-based RNG (Philox4x32-10) and the per-epoch
// keyed permutation, which turn (seed, stream position g) into a sample and its random parameters.
#ifndef STREAM_STREAM_H
#define STREAM_STREAM_H
// defines: rng_philox4x32, RngStream, rng_stream_init, rng_next_u32, rng_next_float, rng_next_below,
//          rng_splitmix64, RNG_STREAM_*, StreamPos, stream_permute, stream_unpermute, stream_position,
//          stream_node_position

#include <stdint.h>

// ---- the RNG (rng_philox) ----
// Counter-based random numbers (Philox4x32-10) keyed by (seed, position g, stream): every
// draw is a pure function of its key and counter, so any loader or trainer reproduces it.

// Named streams so the loader's crop and the trainer's augmentation never share draws.
enum {
	RNG_STREAM_CLIP_SAMPLE = 1, // frame jitter within segments
	RNG_STREAM_CROP = 2,        // random-resized-crop box and flip
	RNG_STREAM_AUGMENT = 3,     // trainer-side (GPU) augmentation
	RNG_STREAM_PERMUTE = 4,     // epoch permutation keys
	RNG_STREAM_MIXUP = 5,       // the classify objective's Mixup/CutMix draw per step (kern_cls.h)
	RNG_STREAM_DROP_PATH = 6,   // drop path's per-sample keep draws per (step, layer) (kern_cls.h)
	RNG_STREAM_MASK = 7,        // VideoMAE tube masks (kern_mae_tube_mask)
	RNG_STREAM_DROPOUT = 8,     // classify's dropout before the heads, per (g, element) (kern_dropout)
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

// ---- the epoch permutation (stream_perm) ----
// The deterministic sample stream: global position g -> (epoch, sample index) through a keyed
// bijection of [0, n) per epoch (Feistel network with cycle walking). Loader and trainer share it.

typedef struct {
	uint64_t epoch;  // g / n
	uint64_t offset; // g mod n: place within the epoch
	uint64_t sample; // manifest sample index: permutation of offset
} StreamPos;

// The epoch's permutation of [0, n) keyed by (seed, epoch); i < n, n >= 1.
uint64_t stream_permute(uint64_t seed, uint64_t epoch, uint64_t i, uint64_t n);
// Its inverse: stream_unpermute(seed, epoch, stream_permute(seed, epoch, i, n), n) == i.
uint64_t stream_unpermute(uint64_t seed, uint64_t epoch, uint64_t j, uint64_t n);
// Position g of a dataset of n samples: epoch g / n, sample = permute(g mod n). shuffle 0
// keeps dataset order (eval). Returns -EINVAL when n == 0.
int stream_position(uint64_t seed, uint64_t g, uint64_t n, int shuffle, StreamPos *out);

// Across machines each machine's ring carries its own ranks' share of the global stream: ring
// position p of node n (of nodes machines, L = ranks of each ring) is global position
// g = (p / L)·L·nodes + n·L + p mod L, so global rank g mod (L·nodes) = n·L + (p mod L) and the
// data is the one-machine stream whatever the machine count. nodes 1: g = p.
uint64_t stream_node_position(uint64_t p, uint32_t ring_ranks, uint32_t node, uint32_t nodes);

#endif
