// The epoch permutation is a bijection of [0, n) for many n (powers of two, primes, 1, 2,
// odd sizes), its inverse undoes it, and different epochs or seeds give different orders.
#include "stream.h"   // defines: stream_permute, stream_unpermute
#include "testutil.h" // defines: CHECK

static void check_n(uint64_t seed, uint64_t epoch, uint64_t n)
{
	unsigned char *seen = calloc(n, 1);
	CHECK(seen);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t j = stream_permute(seed, epoch, i, n);
		CHECK(j < n);
		CHECK(!seen[j]);
		seen[j] = 1;
		CHECK(stream_unpermute(seed, epoch, j, n) == i);
	}
	free(seen);
}

int main(void)
{
	const uint64_t sizes[] = {1, 2, 3, 4, 5, 7, 16, 17, 100, 255, 256, 257, 1000, 4093, 65536, 100003};
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (uint64_t e = 0; e < 3; e++)
			check_n(12345, e, sizes[k]);
	// large n: spot-check inverse and range
	uint64_t big = 10000000019ull;
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t j = stream_permute(1, 0, i * 9999991, big);
		CHECK(j < big && stream_unpermute(1, 0, j, big) == i * 9999991);
	}
	// epochs and seeds shuffle differently; a permutation is not the identity
	int diff_e = 0, diff_s = 0, fixed = 0;
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t a = stream_permute(5, 0, i, 1000);
		diff_e += a != stream_permute(5, 1, i, 1000);
		diff_s += a != stream_permute(6, 0, i, 1000);
		fixed += a == i;
	}
	printf("differ across epochs %d/1000, seeds %d/1000, fixed points %d\n", diff_e, diff_s, fixed);
	CHECK(diff_e > 950 && diff_s > 950 && fixed < 20);
	return 0;
}
