// Internals shared by the CPU backend's files: OpenMP pragma helper, BLAS gemm wrappers
// and the two raw-op tables (f32 production, f64 for finite-difference tests).
#ifndef KERN_CPU_H
#define KERN_CPU_H
// defines: KOMP, kcpu_threads, kcpu_thread_id, kcpu_thread_count, kcpu_gemm_f32, kcpu_gemm_f64, kcpu_ops_f32, kcpu_ops_f64, KCPU_ATT_TILE

#include "kern_backend.h" // defines: KRawOps, struct KernCtx

// OpenMP pragmas vanish when the compiler has no OpenMP (the code stays correct, serial)
#ifdef _OPENMP
#define KOMP(x) _Pragma(x)
#else
#define KOMP(x)
#endif

// query and key tile size of the attention kernel (tests use lengths that are not multiples)
#define KCPU_ATT_TILE 32

#ifdef _OPENMP
#include <omp.h>
#endif

static inline int kcpu_threads(const KernCtx *c)
{
	return c->nthreads > 0 ? c->nthreads : 1;
}

// inside a parallel region: this thread's number and the team size
static inline int kcpu_thread_id(void)
{
#ifdef _OPENMP
	return omp_get_thread_num();
#else
	return 0;
#endif
}

static inline int kcpu_thread_count(void)
{
#ifdef _OPENMP
	return omp_get_num_threads();
#else
	return 1;
#endif
}

// row-major C (M, N) = alpha * op(A) (M, K) @ op(B) (K, N) + beta * C; ta/tb: 1 = transposed
void kcpu_gemm_f32(KernCtx *c, int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
		   const float *B, int ldb, float beta, float *C, int ldc);
void kcpu_gemm_f64(KernCtx *c, int ta, int tb, int M, int N, int K, double alpha, const double *A, int lda,
		   const double *B, int ldb, double beta, double *C, int ldc);

extern const KRawOps kcpu_ops_f32;
extern const KRawOps kcpu_ops_f64;

#endif
