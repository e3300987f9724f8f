// Internals of the CPU backend (private to kernels/cpu/): the OpenMP helper, BLAS gemm wrappers,
// the bf16 staging of op arguments, and the prototypes of the backend's op entries.
#ifndef KERN_CPU_H
#define KERN_CPU_H
// defines: KOMP, KCPU_ATT_TILE, KCOLS, kcpu_threads, kcpu_thread_id, kcpu_thread_count,
//          kcpu_gemm_f32, kcpu_gemm_f64, KcStage, kst_begin, kst_in, kst_out, kst_end, kcpu_arena_alloc,
//          kcpu_ld, kcpu_st, kcpu_store_grad, kcpu_load_f64, kcpu_arena_reset, kcpu_* (one per op)

#include "kern_backend.h" // defines: KBackend, struct KernCtx, kern_latch

#include <math.h>
#include <string.h>

// OpenMP pragmas vanish when the compiler has no OpenMP (the code stays correct, serial)
#ifdef _OPENMP
#define KOMP(x) _Pragma(x)
#include <omp.h>
#else
#define KOMP(x)
#endif

// query and key tile size of the attention kernel (tests use lengths that are not multiples)
#define KCPU_ATT_TILE 32
// column block of the fixed-order column sums
#define KCOLS 64

static inline int kcpu_threads(const KernCtx *c)
{
	return c->dev->nthreads > 0 ? c->dev->nthreads : 1;
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

// ---- element access by dtype (slow path: the optimizer, losses and conversions) ----
static inline double kcpu_ld(const void *p, KDtype dt, int64_t i)
{
	switch (dt) {
	case KDT_F32: return ((const float *)p)[i];
	case KDT_F64: return ((const double *)p)[i];
	case KDT_BF16: return kern_f32_from_bf16(((const uint16_t *)p)[i]);
	default: return 0;
	}
}

// stores v by the store rule of dt (f32 and bf16 round from float)
static inline void kcpu_st(void *p, KDtype dt, int64_t i, double v)
{
	switch (dt) {
	case KDT_F32: ((float *)p)[i] = (float)v; break;
	case KDT_F64: ((double *)p)[i] = v; break;
	case KDT_BF16: ((uint16_t *)p)[i] = kern_bf16_from_f32((float)v); break;
	default: break;
	}
}

// a gradient output computed in double: set, or add in the tensor's precision (f32 sum, one rounding)
void kcpu_store_grad(KernCtx *c, KGrad g, const double *src, int64_t n, double scale);
// dst (n) = the tensor's values widened to double
void kcpu_load_f64(KernCtx *c, double *dst, const KTensor *t);

// ---- bf16 staging: every op body sees one compute type (float or double) ----
// Arguments stored in another dtype (bf16 in the f32 path) are widened into scratch before the
// body runs; outputs are computed in scratch and stored once, rounded, when the op ends.
typedef struct {
	KernCtx *c;
	int f64, err, nout;
	struct {
		KTensor *t;
		void *scratch;
	} outs[8];
} KcStage;

void kst_begin(KcStage *s, KernCtx *c, KDtype cdt);
// the argument as a compute-type array (NULL stays NULL)
const void *kst_in(KcStage *s, const KTensor *t);
// an output as a compute-type array, holding the current values when acc
void *kst_out(KcStage *s, KTensor *t, int acc);
// stores staged outputs (rounded) and releases the scratch; -ENOMEM when staging failed
int kst_end(KcStage *s);
// scratch from the stream's arena, valid until kst_end (NULL when out of memory)
void *kcpu_arena_alloc(KernCtx *c, size_t bytes);
void kcpu_arena_reset(KernCtx *c);

// ---- the backend's entries, one per op of kern_ops.def (the model ops in kern_cpu_ops.c) ----
#define KOP(name, label, params, args) int kcpu_##name(KernCtx *c, KOP_LIST params);
#define KOP_OWN(ret, name, params) ret kcpu_##name params;
#include "kern_ops.def" // defines: kcpu_* (prototypes)

#endif
