// FNV-1a, the one string hash of the tree: hash-table slots, file names of keyed caches, the init
// stream of a tensor's name, a job's token, a file's check value. Not for anything an adversary
// chooses to collide (it is not keyed).
#ifndef COMMON_HASH_FNV_H
#define COMMON_HASH_FNV_H
// defines: FNV1A64_BASIS, FNV1A64_BASIS_VOCAB, fnv1a64, fnv1a64_more, fnv1a64_str

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t

// FNV-1a 64's offset basis (Fowler, Noll, Vo)
#define FNV1A64_BASIS 0xcbf29ce484222325ull
// The basis the vocabulary identity (bpe_vocab_hash) and the tokenizer's tables have always used:
// 1469598103934665603, a digit short of the standard 14695981039346656037. Manifests and
// checkpoints record that identity, so it keeps this basis; nothing new should use it.
#define FNV1A64_BASIS_VOCAB 1469598103934665603ull

// (inline, so a test program or a library with no other tie to common/ uses it without linking)

// FNV-1a 64 of p[0..n) continued from h (h = FNV1A64_BASIS to start)
static inline uint64_t fnv1a64_more(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

// FNV-1a 64 of p[0..n) from the standard basis
static inline uint64_t fnv1a64(const void *p, size_t n)
{
	return fnv1a64_more(FNV1A64_BASIS, p, n);
}

// FNV-1a 64 of a NUL-terminated string from the standard basis
static inline uint64_t fnv1a64_str(const char *s)
{
	uint64_t h = FNV1A64_BASIS;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

#endif
