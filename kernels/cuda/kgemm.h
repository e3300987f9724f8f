// The CUDA backend's one GEMM call, with cuBLASLt's semantics: column-major operands, op(A) and
// op(B), leading dimensions, bf16 or f32 in, f32 accumulate, and the fused epilogues.
#ifndef KGEMM_H
#define KGEMM_H
// defines: KGemm, KgType, KgOp, KgEpi, KgCall, kgemm_create, kgemm_destroy, kgemm, kgemm_ref, kgemm_check,
//          kgcall_from_row_major, kgemm_epi_name, kgemm_gelu, kgemm_dgelu

#include "kcheck.h" // defines: KErr

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { KGEMM_F32 = 0, KGEMM_BF16 = 1 } KgType;
typedef enum { KGEMM_N = 0, KGEMM_T = 1 } KgOp;

// With x = alpha * op(A) op(B) + (accumulate ? Cin : 0), computed in f32, the result D written
// over C is (m < M indexes rows of D, n < N its columns; gelu is GELU's tanh approximation, the
// form cuBLASLt's epilogue is taken to compute (PyTorch fuses only approximate='tanh' into it;
// test_kgemm_gpu holds cuBLASLt against it on a device), KACT_GELU_TANH of kern_ops.h):
typedef enum {
	KGEMM_EPI_NONE,          // D = x
	KGEMM_EPI_BIAS,          // D = x + bias[m]
	KGEMM_EPI_GELU,          // D = gelu(x)
	KGEMM_EPI_GELU_BIAS,     // D = gelu(x + bias[m])
	KGEMM_EPI_GELU_AUX,      // D = gelu(x), aux = x (the pre-activation, for backward)
	KGEMM_EPI_GELU_AUX_BIAS, // D = gelu(x + bias[m]), aux = x + bias[m]
	KGEMM_EPI_DGELU,         // D = x * gelu'(aux)
	KGEMM_EPI_DGELU_BGRAD,   // D = x * gelu'(aux), bias[m] = sum over n of D
	KGEMM_EPI_BGRADA,        // D = x, bias[m] = sum over k of op(A)[m][k]
	KGEMM_EPI_BGRADB,        // D = x, bias[n] = sum over k of op(B)[k][n]
	KGEMM_EPI_COUNT
} KgEpi;

// One call, column-major as cuBLAS: element (r, c) of a matrix with leading dimension ld is at
// [r + c * ld]. A is M x K after op (stored M x K for KGEMM_N, K x M for KGEMM_T), B is K x N after op,
// C is M x N. A row-major caller converts with kgcall_from_row_major.
typedef struct KgCall {
	KgOp opA, opB;
	int M, N, K;
	const void *A;
	int lda;
	const void *B;
	int ldb;
	void *C; // written with D
	int ldc;
	const void *Cin; // read when accumulate, in C's type and layout (ldc); NULL: C itself
	KgType ab, c;    // A and B share a type (bf16 or f32); C's: bf16 or f32 (f32 in needs f32 out)
	KgEpi epi;
	void *bias; // BIAS kinds: M values read; BGRAD kinds: M (or N for BGRADB) values written
	KgType bias_type;
	void *aux; // GELU_AUX kinds: written; DGELU kinds: read. M x N of type c, leading dimension ldaux
	int ldaux; // >= M and a multiple of 8 (cuBLASLt's rule)
	float alpha;
	int accumulate; // 1: D = x + Cin (beta 1); 0: Cin is not read (beta 0)
} KgCall;

typedef struct KGemm KGemm;

// A handle with one workspace of ws_bytes (0: 32 MiB, what cuBLASLt advises for Hopper) and
// a cache of descriptors and algorithms per shape. Under the shim: the reference below.
int kgemm_create(KGemm **out, size_t ws_bytes, KErr *e);
void kgemm_destroy(KGemm *g);
// Queues the GEMM on `stream` (a cudaStream_t; void * keeps this header free of CUDA's). 0 or
// -errno: -EINVAL for an inconsistent call, -ENOTSUP for what cuBLASLt cannot do, with the
// reason latched in e.
int kgemm(KGemm *g, void *stream, const KgCall *c, KErr *e);

// The checks every implementation makes before computing
int kgemm_check(const KgCall *c, KErr *e);
// The reference: the same semantics on host memory, products exact and sums in double in k
// order, the epilogue in double, one rounding to each output's type.
int kgemm_ref(const KgCall *c, KErr *e);

// A row-major caller describes row-major C (M x N) = op(A) op(B) with row-major operands and
// leading dimensions (elements per row). This turns it into the column-major call computing
// the same memory: C^T = op(B)^T op(A)^T, so A and B, M and N, BGRADA and BGRADB trade places
// and the bias runs along the row-major C's columns (a linear layer's output features).
void kgcall_from_row_major(KgCall *c);

const char *kgemm_epi_name(KgEpi epi);
// GELU's tanh approximation and its derivative, in double
double kgemm_gelu(double x);
double kgemm_dgelu(double x);

#ifdef __cplusplus
}
#endif

#endif
