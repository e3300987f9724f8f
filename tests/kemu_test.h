// Helpers for the kernel tests that build twice from one .cu file: with g++ for the execution
// shim (make test) and with nvcc for a device (make test-gpu, exit 77 without a GPU).
#ifndef KEMU_TEST_H
#define KEMU_TEST_H
// defines: kt_setup, kt_seed, kt_rand, kt_uniform, kt_fail, KT_CHECK, kt_dev_alloc, kt_upload, kt_download,
//          kt_rel_l2, kt_bf16_bits, kt_bits_bf16, KT_ON_DEVICE

#include "kcuda.h"     // defines: the dialect, KLAUNCH, cuda_check
#include "test_seed.h" // defines: test_seed

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#if defined(KEMU)
#define KT_ON_DEVICE 0
#else
#define KT_ON_DEVICE 1
#endif

static int kt_failures;
static uint64_t kt_rng_state;

// A failed check prints and counts; main returns kt_failures != 0 at the end.
#define KT_CHECK(cond, ...)                                                                                            \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                       \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fputc('\n', stderr);                                                                           \
			kt_failures++;                                                                                 \
		}                                                                                                      \
	} while (0)

static inline uint64_t kt_rand()
{
	uint64_t z = (kt_rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static inline float kt_uniform(float lo, float hi)
{
	return lo + (hi - lo) * (float)(kt_rand() >> 40) / (float)(1 << 24);
}

// Inputs from the test's seed (test_seed.h: fixed per test, KT_SEED=N or random for others); in
// the shim also the thread order between barriers is shuffled with that seed. On a build for a device, no GPU means skip (77).
static inline uint64_t kt_setup(const char *name)
{
	uint64_t seed = test_seed(name);
	kt_rng_state = seed;
	printf("%s: seed %llu (KT_SEED=%llu reproduces this run)\n", name, (unsigned long long)seed,
	       (unsigned long long)seed);
#if defined(KEMU)
	kemu_config(1, seed);
#else
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		printf("no CUDA device: skipped\n");
		exit(77);
	}
#endif
	return seed;
}

static inline int kt_finish(const char *name)
{
	printf("%s: %s\n", name, kt_failures ? "FAILED" : "ok");
	return kt_failures ? 1 : 0;
}

template <class T>
static inline T *kt_dev_alloc(size_t n)
{
	T *p = NULL;
	cuda_check(cudaMalloc((void **)&p, n * sizeof(T) + 16));
	cuda_check(cudaMemset(p, 0xff, n * sizeof(T) + 16)); // poisoned: NaN for floats
	return p;
}
template <class T>
static inline void kt_upload(T *dev, const std::vector<T> &host)
{
	cuda_check(cudaMemcpy(dev, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}
template <class T>
static inline std::vector<T> kt_download(const T *dev, size_t n)
{
	std::vector<T> host(n);
	cuda_check(cudaDeviceSynchronize());
	cuda_check(cudaMemcpy(host.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost));
	return host;
}

// ||got - want|| / ||want|| (NaN when either holds a NaN)
static inline double kt_rel_l2(const float *got, const float *want, size_t n)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)got[i] - (double)want[i];
		num += d * d;
		den += (double)want[i] * (double)want[i];
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

static inline uint16_t kt_bf16_bits(__nv_bfloat16 b)
{
	__nv_bfloat16_raw r = b;
	return r.x;
}
static inline __nv_bfloat16 kt_bits_bf16(uint16_t u)
{
	__nv_bfloat16_raw r;
	r.x = u;
	return __nv_bfloat16(r);
}

#endif
