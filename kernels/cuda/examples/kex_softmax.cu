// Example kernel: softmax over the rows of a bf16 matrix, computed in f32, one block per row:
// 16-byte loads of 8 bf16, block reductions from warp shuffles and a shared-memory step.
#include "kex.h" // defines: kex_softmax_rows

#include <errno.h>
#include <string.h>

enum { THREADS = 256, WARPS = THREADS / 32 };

struct MaxOp {
	__device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
	__device__ float operator()(float a, float b) const { return a + b; }
};

// the block's values combined in a fixed order; every thread gets the result
template <class Op>
__device__ float block_reduce(float v, float identity, float *scratch, Op op)
{
	for (int o = 16; o > 0; o /= 2)
		v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
	if (threadIdx.x % 32 == 0)
		scratch[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < WARPS ? scratch[threadIdx.x % 32] : identity;
	for (int o = 16; o > 0; o /= 2)
		v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
	__syncthreads(); // scratch is reused by the next reduction
	return v;
}

__device__ __forceinline__ float bf16_lo(uint32_t u)
{
	return __uint_as_float(u << 16);
}
__device__ __forceinline__ float bf16_hi(uint32_t u)
{
	return __uint_as_float(u & 0xffff0000u);
}
__device__ __forceinline__ uint32_t bf16_pack(float lo, float hi)
{
	__nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
	uint32_t r;
	memcpy(&r, &h, sizeof r);
	return r;
}

// 8 consecutive values of the row from element j (vec: one 16-byte load)
__device__ __forceinline__ void load8(float v[8], const __nv_bfloat16 *row, int j, int cols, bool vec)
{
	if (vec) {
		uint4 q = *reinterpret_cast<const uint4 *>(row + j);
		uint32_t w[4] = {q.x, q.y, q.z, q.w};
		for (int i = 0; i < 4; i++)
			v[2 * i] = bf16_lo(w[i]), v[2 * i + 1] = bf16_hi(w[i]);
	} else {
		for (int i = 0; i < 8; i++)
			v[i] = j + i < cols ? __bfloat162float(row[j + i]) : -INFINITY;
	}
}

__global__ void __launch_bounds__(THREADS) kex_softmax_kernel(__nv_bfloat16 *y, const __nv_bfloat16 *x, int cols)
{
	__shared__ float scratch[WARPS];
	const __nv_bfloat16 *row = x + (size_t)blockIdx.x * cols;
	__nv_bfloat16 *out = y + (size_t)blockIdx.x * cols;
	bool vec = cols % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0;
	float v[8], m = -INFINITY, sum = 0.0f;
	for (int j = 8 * threadIdx.x; j < cols; j += 8 * THREADS) {
		load8(v, row, j, cols, vec);
		for (int i = 0; i < 8; i++)
			m = fmaxf(m, v[i]);
	}
	m = block_reduce(m, -INFINITY, scratch, MaxOp());
	for (int j = 8 * threadIdx.x; j < cols; j += 8 * THREADS) {
		load8(v, row, j, cols, vec);
		for (int i = 0; i < 8; i++)
			sum += j + i < cols ? __expf(v[i] - m) : 0.0f;
	}
	float inv = 1.0f / block_reduce(sum, 0.0f, scratch, SumOp());
	for (int j = 8 * threadIdx.x; j < cols; j += 8 * THREADS) {
		load8(v, row, j, cols, vec);
		if (vec) {
			uint4 q;
			q.x = bf16_pack(__expf(v[0] - m) * inv, __expf(v[1] - m) * inv);
			q.y = bf16_pack(__expf(v[2] - m) * inv, __expf(v[3] - m) * inv);
			q.z = bf16_pack(__expf(v[4] - m) * inv, __expf(v[5] - m) * inv);
			q.w = bf16_pack(__expf(v[6] - m) * inv, __expf(v[7] - m) * inv);
			*reinterpret_cast<uint4 *>(out + j) = q;
		} else {
			for (int i = 0; i < 8 && j + i < cols; i++)
				out[j + i] = __float2bfloat16(__expf(v[i] - m) * inv);
		}
	}
}

int kex_softmax_rows(KErr *e, __nv_bfloat16 *y, const __nv_bfloat16 *x, int rows, int cols, cudaStream_t s)
{
	if (rows < 1 || cols < 1 || rows > 0x7fffffff)
		return kerr_set(e, -EINVAL, "kex_softmax_rows: %d x %d", rows, cols);
	return KLAUNCH(e, kex_softmax_kernel, rows, THREADS, 0, s, y, x, cols);
}
