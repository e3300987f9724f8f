// The execution shim's example kernels: small real kernels in the project's CUDA dialect that
// show its pieces in use and are checked in the shim (make test) and on a device (make test-gpu).
#ifndef KEX_H
#define KEX_H
// defines: kex_blocksum_partials, kex_blocksum, kex_softmax_rows, kex_mma_gemm

#include "kcuda.h" // defines: KErr, cudaStream_t

#include <stddef.h>

// out[0] = sum of x[0..n) in f32, in an order fixed by n alone (two passes over per-block
// partials), so every run and every schedule gives the same bits. partials: kex_blocksum_partials(n) floats.
size_t kex_blocksum_partials(size_t n);
int kex_blocksum(KErr *e, float *out, const float *x, size_t n, float *partials, cudaStream_t s);

// y (rows x cols, bf16) = softmax of each row of x (bf16), computed in f32: one block per row,
// 16-byte loads when cols is a multiple of 8 and the rows are 16-byte aligned
int kex_softmax_rows(KErr *e, __nv_bfloat16 *y, const __nv_bfloat16 *x, int rows, int cols, cudaStream_t s);

// c (M x N, f32, row-major) = a (M x K, bf16, row-major) b^T, b (N x K, bf16, row-major) as a
// linear layer's weight: tensor cores through kmma.h, 64 x 64 tiles, 4 warps. K % 8 == 0.
int kex_mma_gemm(KErr *e, float *c, const __nv_bfloat16 *a, const __nv_bfloat16 *b, int M, int N, int K,
		 cudaStream_t s);

#endif
