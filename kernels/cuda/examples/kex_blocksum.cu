// Example kernel: a deterministic sum of a float array. Each block reduces a fixed chunk with
// float4 loads, warp shuffles and one shared-memory step; a second launch sums the partials.
#include "kex.h" // defines: kex_blocksum, kex_blocksum_partials

#include <errno.h>

enum { THREADS = 256, CHUNK = THREADS * 4 * 4 }; // each thread reads 4 float4 per chunk

// the warp's values summed in butterfly order: every lane holds the same bits
__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

// block b sums x[b*CHUNK, (b+1)*CHUNK) (clipped to n) into part[b]
__global__ void __launch_bounds__(THREADS) kex_blocksum_pass(float *part, const float *x, size_t n)
{
	__shared__ float warp_part[THREADS / 32];
	size_t base = (size_t)blockIdx.x * CHUNK;
	float v = 0.0f;
	bool vec = ((uintptr_t)x % 16) == 0;
	for (int i = 0; i < 4; i++) {
		size_t at = base + 4 * ((size_t)i * THREADS + threadIdx.x);
		if (vec && at + 4 <= n) {
			float4 f = *reinterpret_cast<const float4 *>(x + at);
			v += (f.x + f.y) + (f.z + f.w);
		} else {
			for (size_t j = at; j < at + 4 && j < n; j++)
				v += x[j];
		}
	}
	v = warp_sum(v);
	if (threadIdx.x % 32 == 0)
		warp_part[threadIdx.x / 32] = v;
	__syncthreads();
	if (threadIdx.x < 32) {
		v = threadIdx.x < THREADS / 32 ? warp_part[threadIdx.x] : 0.0f;
		v = warp_sum(v);
		if (threadIdx.x == 0)
			part[blockIdx.x] = v;
	}
}

static size_t level(size_t n)
{
	return (n + CHUNK - 1) / CHUNK;
}

// every level's partials get their own slots: a pass never overwrites what another block reads
size_t kex_blocksum_partials(size_t n)
{
	size_t total = 0;
	for (n = level(n); n > 1; n = level(n))
		total += n;
	return total;
}

int kex_blocksum(KErr *e, float *out, const float *x, size_t n, float *partials, cudaStream_t s)
{
	if (n == 0)
		return kerr_set(e, -EINVAL, "kex_blocksum: empty input");
	if (level(n) > 0x7fffffff)
		return kerr_set(e, -EINVAL, "kex_blocksum: %zu elements is too many", n);
	// pass after pass until one value is left: the tree depends on n alone
	int rc = 0;
	for (size_t blocks = level(n); !rc; blocks = level(n)) {
		float *dst = blocks == 1 ? out : partials;
		rc = KLAUNCH(e, kex_blocksum_pass, (unsigned)blocks, THREADS, 0, s, dst, x, n);
		if (blocks == 1)
			break;
		x = partials;
		n = blocks;
		partials += blocks;
	}
	return rc;
}
