// Speed of the execution shim: fiber switches per second, a 128-thread block through many
// barriers, warp shuffles and mma.sync, in order and shuffled; the last line is the summary.
#include "kemu_test.h" // defines: kt_dev_alloc
#include "kmma.h"      // defines: kmma_bf16

#include <time.h>

static double now()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

__global__ void k_barriers(float *out, int n)
{
	__shared__ float s[2][128]; // two buffers: one barrier per iteration, no write over a neighbour's read
	float v = (float)threadIdx.x;
	for (int i = 0; i < n; i++) {
		s[i & 1][threadIdx.x] = v;
		__syncthreads();
		v += s[i & 1][(threadIdx.x + 1) % 128];
	}
	out[blockIdx.x * 128 + threadIdx.x] = v;
}

__global__ void k_shuffles(float *out, int n)
{
	float v = (float)threadIdx.x;
	for (int i = 0; i < n; i++)
		v += __shfl_xor_sync(0xffffffffu, v, i % 31 + 1) * 0.5f;
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void k_mma(float *out, int n)
{
	KFragA a = {{0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u}};
	KFragB b = {{0x3f803f80u, 0x3f803f80u}};
	KFragC c;
	kfrag_c_zero(c);
	for (int i = 0; i < n; i++)
		kmma_bf16(c, a, b, c);
	out[threadIdx.x] = c.x[0];
}

__global__ void k_no_barrier(float *out)
{
	out[blockIdx.x * blockDim.x + threadIdx.x] = (float)threadIdx.x;
}

struct Run {
	double secs;
	uint64_t switches;
};

template <class F>
static Run measure(F launch)
{
	uint64_t s0 = kemu_switch_count();
	double t0 = now();
	launch();
	return {now() - t0, kemu_switch_count() - s0};
}

int main()
{
	float *d = kt_dev_alloc<float>(1 << 20);
	const int nb = 2000, blocks = 4, nsh = 4000, nmma = 2000, nblocks = 4096;
	double rate[2] = {0, 0};
	for (int shuffle = 0; shuffle < 2; shuffle++) {
		kemu_config(shuffle, 1);
		const char *mode = shuffle ? "shuffled" : "in order";
		Run r = measure([&] { KLAUNCH(NULL, k_barriers, blocks, 128, 0, 0, d, nb); });
		rate[shuffle] = (double)r.switches / r.secs;
		printf("%-8s: %d blocks x 128 threads x %d __syncthreads: %.3f s, %.1f M fiber switches/s, %.0f ns per "
		       "thread per barrier, %.1f us per block-wide barrier\n",
		       mode, blocks, nb, r.secs, rate[shuffle] / 1e6, r.secs / ((double)blocks * 128 * nb) * 1e9,
		       r.secs / ((double)blocks * nb) * 1e6);
		r = measure([&] { KLAUNCH(NULL, k_shuffles, 1, 256, 0, 0, d, nsh); });
		printf("%-8s: __shfl_xor_sync: %.2f M warp shuffles/s (%.0f ns per lane)\n", mode,
		       8.0 * nsh / r.secs / 1e6, r.secs / (256.0 * nsh) * 1e9);
		r = measure([&] { KLAUNCH(NULL, k_mma, 1, 32, 0, 0, d, nmma); });
		printf("%-8s: mma.sync m16n8k16: %.0f k warp-mma/s (%.2f GFLOP/s)\n", mode, nmma / r.secs / 1e3,
		       2.0 * 16 * 8 * 16 * nmma / r.secs / 1e9);
		r = measure([&] { KLAUNCH(NULL, k_no_barrier, nblocks, 256, 0, 0, d); });
		printf("%-8s: %d blocks x 256 threads without barriers: %.0f ns per thread (fiber start and end)\n",
		       mode, nblocks, r.secs / ((double)nblocks * 256) * 1e9);
	}
	printf("kemu: %.1f M fiber switches/s in order, %.1f M/s shuffled (fiber switch: %s)\n", rate[0] / 1e6,
	       rate[1] / 1e6, kemu_switch_name());
	cuda_check(cudaFree(d));
	return 0;
}
