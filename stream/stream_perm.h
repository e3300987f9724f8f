// The deterministic sample stream: global position g -> (epoch, sample index) through a keyed
// bijection of [0, n) per epoch (Feistel network with cycle walking). Loader and trainer share it.
#ifndef STREAM_STREAM_PERM_H
#define STREAM_STREAM_PERM_H
// defines: StreamPos, stream_permute, stream_unpermute, stream_position, stream_node_position

#include <stdint.h>

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
