// The seed of a randomized test. Without KT_SEED it is fixed per test (a hash of the test's
// name), so make test gives the same verdict on every run and every machine; KT_SEED=N runs seed
// N (the seed a failing run printed), KT_SEED=random draws one from the clock, which is how
// make test-seeds sweeps the shim tests over fresh inputs and thread orders.
#ifndef TEST_SEED_H
#define TEST_SEED_H
// defines: test_seed

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t test_seed(const char *name)
{
	const char *s = getenv("KT_SEED");
	if (s && strcmp(s, "random") == 0)
		return (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20) ^ ((uint64_t)(uintptr_t)&s << 7);
	if (s && *s)
		return strtoull(s, NULL, 0);
	// FNV-1a of the name (common/hash_fnv.h's, written out: the shim tests that include this
	// header build with kernels/ and tests/ on their include path only)
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return h;
}

#endif
