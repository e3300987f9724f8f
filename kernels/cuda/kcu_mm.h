// Matrix products of the CUDA backend in row-major terms: through kgemm (cuBLASLt, or the shim's
// reference) whenever cuBLASLt takes the types, else an own tiled kernel with the same meaning.
#ifndef KCU_MM_H
#define KCU_MM_H
// defines: KcMM, kc_mm, kc_mm_own, kc_mm_epi, kc_mm_f64, kc_map, kc_map_bias, KC_MAP_*

#include "kcu_dev.h" // defines: KcIn, KcOut

// row-major C (M, N) = alpha · op(A) op(B) [+ Cin when accumulate] [+ bias[n], one per column]
//   op(A)[m][k] = ta ? A[k·lda + m] : A[m·lda + k];  op(B)[k][n] = tb ? B[n·ldb + k] : B[k·ldb + n]
struct KcMM {
	int ta, tb;
	int64_t M, N, K;
	KcIn A;
	int64_t lda;
	KcIn B;
	int64_t ldb;
	KcOut C;
	int64_t ldc;
	KcIn Cin;  // p NULL: C itself; else read in C's place (C's dtype and ldc): a residual, no copy first
	KcIn bias; // p NULL: none
	float alpha;
	int accumulate;
};

// f32 accumulation: cuBLASLt when it takes the types (A and B alike, f32 or bf16; not f32 into
// bf16), else the own kernel (a fallback for mixed storage; slow but exact in its order)
int kc_mm(KcuStream *s, const KcMM &m);
// the own kernel kc_mm falls back to, called directly (its test): mma.sync tiles for bf16
// operands, f32 scalar tiles in k order otherwise
int kc_mm_own(KcuStream *s, const KcMM &m);
// One fused cuBLASLt epilogue (column-major meaning, kgemm.h) on the product: GELU_AUX(_BIAS),
// GELU(_BIAS), DGELU(_BGRAD), BGRADA/B. aux: the pre-activation, laid out like C; grad: the bias
// gradient written by BGRAD kinds. -ENOTSUP (nothing queued, no error latched) when cuBLASLt cannot
// do it for these types and shapes: the caller then runs the product and an own kernel.
int kc_mm_epi(KcuStream *s, const KcMM &m, KgEpi epi, KcOut aux, KcOut grad);
// double accumulation and a double (or f32/bf16) result: the loss ops' similarity products
int kc_mm_f64(KcuStream *s, const KcMM &m);

// element-wise maps over n elements: out = a, a + b, act(a), or a · act'(b) (the GELU backward)
enum { KC_MAP_COPY = 0, KC_MAP_ADD, KC_MAP_ACT, KC_MAP_DACT };
int kc_map(KcuStream *s, int op, int act, KcOut out, KcIn a, KcIn b, int64_t n);
// out = a + bias[i % cols] over n elements (rows of cols): a bias added after the product
int kc_map_bias(KcuStream *s, KcOut out, KcIn a, KcIn bias, int64_t cols, int64_t n);

#endif
