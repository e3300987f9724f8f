// Keyed bijection on [0, n): a balanced 6-round Feistel network over the smallest even-bit
// domain 2^(2h) >= n, its round function one Philox block; values >= n walk the cycle again.
#include "stream.h" // defines: stream_permute, stream_unpermute, stream_position, rng_philox4x32, RNG_STREAM_PERMUTE

#include <errno.h>

#define FEISTEL_ROUNDS 6

static int half_bits(uint64_t n)
{
	int h = 1;
	while (h < 32 && ((uint64_t)1 << (2 * h)) < n)
		h++;
	return h;
}

static uint32_t round_fn(uint64_t seed, uint64_t epoch, int round, uint32_t x, uint32_t mask)
{
	uint32_t ctr[4] = {x, (uint32_t)round, (uint32_t)epoch, (uint32_t)(epoch >> 32) ^ RNG_STREAM_PERMUTE};
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	uint32_t out[4];
	rng_philox4x32(ctr, key, out);
	return out[0] & mask;
}

static uint64_t feistel(uint64_t seed, uint64_t epoch, uint64_t v, int h, int inverse)
{
	uint32_t mask = h == 32 ? 0xFFFFFFFFu : (((uint32_t)1 << h) - 1);
	uint32_t l = (uint32_t)(v >> h) & mask, r = (uint32_t)v & mask;
	if (!inverse) {
		for (int k = 0; k < FEISTEL_ROUNDS; k++) {
			uint32_t t = l ^ round_fn(seed, epoch, k, r, mask);
			l = r;
			r = t;
		}
	} else {
		for (int k = FEISTEL_ROUNDS - 1; k >= 0; k--) {
			uint32_t t = r ^ round_fn(seed, epoch, k, l, mask);
			r = l;
			l = t;
		}
	}
	return (uint64_t)l << h | r;
}

uint64_t stream_permute(uint64_t seed, uint64_t epoch, uint64_t i, uint64_t n)
{
	if (n <= 1)
		return 0;
	int h = half_bits(n);
	uint64_t v = i;
	do
		v = feistel(seed, epoch, v, h, 0);
	while (v >= n);
	return v;
}

uint64_t stream_unpermute(uint64_t seed, uint64_t epoch, uint64_t j, uint64_t n)
{
	if (n <= 1)
		return 0;
	int h = half_bits(n);
	uint64_t v = j;
	do
		v = feistel(seed, epoch, v, h, 1);
	while (v >= n);
	return v;
}

int stream_position(uint64_t seed, uint64_t g, uint64_t n, int shuffle, StreamPos *out)
{
	if (n == 0)
		return -EINVAL;
	out->epoch = g / n;
	out->offset = g % n;
	out->sample = shuffle ? stream_permute(seed, out->epoch, out->offset, n) : out->offset;
	return 0;
}

uint64_t stream_node_position(uint64_t p, uint32_t ring_ranks, uint32_t node, uint32_t nodes)
{
	if (nodes <= 1 || ring_ranks == 0)
		return p;
	return (p / ring_ranks) * ring_ranks * nodes + (uint64_t)node * ring_ranks + p % ring_ranks;
}
