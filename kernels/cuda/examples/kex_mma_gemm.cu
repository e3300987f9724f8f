// Example kernel: a tiled tensor-core GEMM through kmma.h. 16-byte loads fill shared-memory
// tiles, ldmatrix reads fragments out of them, mma.sync accumulates in f32.
#include "kex.h"  // defines: kex_mma_gemm
#include "kmma.h" // defines: KFragA, KFragB, KFragC, kmma_bf16, kfrag_load_a, kfrag_load_b2_nk

#include <errno.h>

enum {
	BM = 64,
	BN = 64,
	BK = 32,      // block tile
	LDS = BK + 8, // shared rows padded by 16 bytes: ldmatrix rows stay 16-byte aligned
	WARPS = 4,
	THREADS = 32 * WARPS,
};

// rows [row0, row0 + 64) x columns [k0, k0 + 32) of a row-major matrix into a padded tile; rows
// or columns past the matrix are zeros (K % 8 == 0, so 8 columns are all in or all out)
__device__ __forceinline__ void load_tile(__nv_bfloat16 *tile, const __nv_bfloat16 *m, int rows, int K, int row0,
					  int k0)
{
	for (int i = threadIdx.x; i < BM * BK / 8; i += THREADS) {
		int r = i / (BK / 8), c = 8 * (i % (BK / 8));
		uint4 v = make_uint4(0, 0, 0, 0);
		if (row0 + r < rows && k0 + c < K)
			v = *reinterpret_cast<const uint4 *>(m + (size_t)(row0 + r) * K + k0 + c);
		*reinterpret_cast<uint4 *>(tile + r * LDS + c) = v;
	}
}

// block (bx, by) computes c[by*64.., bx*64..]; warp w its 32 x 32 quarter (2 x 4 mma tiles)
__global__ void __launch_bounds__(THREADS)
	kex_mma_gemm_kernel(float *c, const __nv_bfloat16 *a, const __nv_bfloat16 *b, int M, int N, int K)
{
	__shared__ __align__(16) __nv_bfloat16 as[BM * LDS];
	__shared__ __align__(16) __nv_bfloat16 bs[BN * LDS];
	const int warp = threadIdx.x / 32, wm = 32 * (warp / 2), wn = 32 * (warp % 2);
	const int m0 = BM * blockIdx.y, n0 = BN * blockIdx.x;
	KFragC acc[2][4];
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			kfrag_c_zero(acc[i][j]);
	for (int k0 = 0; k0 < K; k0 += BK) {
		load_tile(as, a, M, K, m0, k0);
		load_tile(bs, b, N, K, n0, k0);
		__syncthreads();
		for (int kk = 0; kk < BK; kk += 16) {
			KFragA fa[2];
			KFragB fb[4];
			for (int i = 0; i < 2; i++)
				kfrag_load_a(fa[i], as + (wm + 16 * i) * LDS + kk, LDS);
			for (int j = 0; j < 2; j++)
				kfrag_load_b2_nk(&fb[2 * j], bs + (wn + 16 * j) * LDS + kk, LDS);
			for (int i = 0; i < 2; i++)
				for (int j = 0; j < 4; j++)
					kmma_bf16(acc[i][j], fa[i], fb[j], acc[i][j]);
		}
		__syncthreads(); // the next tiles overwrite these
	}
	const int lane = klane();
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			for (int v = 0; v < 4; v++) {
				int r = m0 + wm + 16 * i + kfrag_c_row(lane, v),
				    col = n0 + wn + 8 * j + kfrag_c_col(lane, v);
				if (r < M && col < N)
					c[(size_t)r * N + col] = acc[i][j].x[v];
			}
}

int kex_mma_gemm(KErr *e, float *c, const __nv_bfloat16 *a, const __nv_bfloat16 *b, int M, int N, int K, cudaStream_t s)
{
	if (M < 1 || N < 1 || K < 8 || K % 8 || (uintptr_t)a % 16 || (uintptr_t)b % 16)
		return kerr_set(e, -EINVAL,
				"kex_mma_gemm: M %d N %d K %d (K a multiple of 8, operands 16-byte aligned)", M, N, K);
	dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
	if (grid.y > 65535)
		return kerr_set(e, -EINVAL, "kex_mma_gemm: M %d is too large", M);
	return KLAUNCH(e, kex_mma_gemm_kernel, grid, THREADS, 0, s, c, a, b, M, N, K);
}
