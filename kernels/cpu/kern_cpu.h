// Internals of the CPU backend (private to kernels/cpu/): the OpenMP helper, BLAS gemm wrappers,
// the bf16 staging of op arguments, and the two instantiations (f32, f64) of the op bodies.
#ifndef KERN_CPU_H
#define KERN_CPU_H
// defines: KOMP, KCPU_ATT_TILE, KCOLS, kcpu_threads, kcpu_thread_id, kcpu_thread_count,
//          kcpu_gemm_f32, kcpu_gemm_f64, KRawOps, kcpu_ops_f32, kcpu_ops_f64, KcStage, kst_begin, kst_in,
//          kst_out, kst_end, kcpu_arena_alloc, kcpu_ld, kcpu_st, kcpu_store_grad, kcpu_load_f64,
//          kcpu_arena_reset, kcpu_*

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

// ---- the op bodies, instantiated for float and double (kern_cpu_*.inc) ----
typedef struct KRawOps {
	void (*linear_fwd)(KernCtx *c, void *out, void *pre, const void *in, const void *w, int trans_w, const void *b,
			   const void *res, KAct act, int64_t N, int IC, int OC);
	void (*linear_bwd)(KernCtx *c, void *din, int din_acc, void *dw, int dw_acc, void *db, int db_acc, void *dinb,
			   int dinb_acc, const void *dout, const void *in, const void *w, int trans_w,
			   const void *in_pre, KAct in_act, int64_t N, int IC, int OC);
	void (*layernorm_fwd)(KernCtx *c, void *out, void *mean, void *rstd, const void *in, const void *w,
			      const void *b, int64_t N, int C);
	void (*layernorm_bwd)(KernCtx *c, void *din, int din_acc, void *dw, int dw_acc, void *db, int db_acc,
			      const void *dout, const void *in, const void *w, const void *mean, const void *rstd,
			      int64_t N, int C);
	void (*add)(KernCtx *c, void *out, const void *a, const void *b, int64_t n);
	void (*patchify)(KernCtx *c, void *patches, void *img, int acc, int B, int T, int H, int W, int C, int p,
			 int backward);
	void (*vis_embed_fwd)(KernCtx *c, void *out, const void *x, const void *cls, const void *pos, const void *tpos,
			      int B, int T, int P, int D);
	void (*vis_embed_bwd)(KernCtx *c, void *dx, int dx_acc, void *dcls, int dcls_acc, void *dpos, int dpos_acc,
			      void *dtpos, int dtpos_acc, const void *dout, int B, int T, int P, int D);
	void (*tok_embed_fwd)(KernCtx *c, void *out, const int32_t *ids, const void *wte, const void *pos, int B, int L,
			      int D);
	void (*tok_embed_bwd)(KernCtx *c, void *dwte, int dwte_acc, void *dpos, int dpos_acc, const void *dout,
			      const int32_t *ids, int B, int L, int D, int64_t V, int64_t Lmax);
	void (*pool_fwd)(KernCtx *c, void *out, const void *x, const int32_t *pos, int B, int L, int D);
	void (*pool_bwd)(KernCtx *c, void *dx, int acc, const void *dout, const int32_t *pos, int B, int L, int D);
	void (*l2norm_fwd)(KernCtx *c, void *out, void *norm, const void *in, int64_t N, int C);
	void (*l2norm_bwd)(KernCtx *c, void *din, int acc, const void *dout, const void *out, const void *norm,
			   int64_t N, int C);
	size_t (*attention_ws_bytes)(KernCtx *c, int B, int T, int H, int hd);
	void (*attention_fwd)(KernCtx *c, void *out, void *lse, const void *qkv, int B, int T, int H, int hd,
			      int causal, void *ws);
	void (*attention_bwd)(KernCtx *c, void *dqkv, int acc, const void *dout, const void *qkv, const void *out,
			      const void *lse, int B, int T, int H, int hd, int causal, void *ws);
} KRawOps;

extern const KRawOps kcpu_ops_f32;
extern const KRawOps kcpu_ops_f64;

// ---- backend entries implemented outside kern_cpu.c ----
size_t kcpu_linear_ws_bytes(KernCtx *c);
int kcpu_linear(KernCtx *c, const KLinear *a, int64_t N, int IC, int OC);
int kcpu_linear_bwd(KernCtx *c, const KLinearBwd *a, int64_t N, int IC, int OC);
int kcpu_layernorm_fwd(KernCtx *c, KTensor *out, KTensor *mean, KTensor *rstd, const KTensor *in, const KTensor *w,
		       const KTensor *b, int64_t N, int C);
int kcpu_layernorm_bwd(KernCtx *c, KGrad din, KGrad dw, KGrad db, const KTensor *dout, const KTensor *in,
		       const KTensor *w, const KTensor *mean, const KTensor *rstd, int64_t N, int C);
int kcpu_add(KernCtx *c, KTensor *out, const KTensor *a, const KTensor *b, int64_t n);
int kcpu_augment(KernCtx *c, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip,
		 int patch);
int kcpu_patchify(KernCtx *c, KTensor *patches, KGrad dimg, const KTensor *img, int patch);
int kcpu_vis_embed_fwd(KernCtx *c, KTensor *out, const KTensor *x, const KTensor *cls, const KTensor *pos,
		       const KTensor *tpos, int B, int T, int P, int D);
int kcpu_vis_embed_bwd(KernCtx *c, KGrad dx, KGrad dcls, KGrad dpos, KGrad dtpos, const KTensor *dout, int B, int T,
		       int P, int D);
int kcpu_tok_embed_fwd(KernCtx *c, KTensor *out, const KTensor *ids, const KTensor *wte, const KTensor *pos);
int kcpu_tok_embed_bwd(KernCtx *c, KGrad dwte, KGrad dpos, const KTensor *dout, const KTensor *ids);
int kcpu_argmax_rows(KernCtx *c, KTensor *pos, const KTensor *ids);
int kcpu_pool_fwd(KernCtx *c, KTensor *out, const KTensor *x, const KTensor *pos);
int kcpu_pool_bwd(KernCtx *c, KGrad dx, const KTensor *dout, const KTensor *pos);
int kcpu_l2norm_fwd(KernCtx *c, KTensor *out, KTensor *norm, const KTensor *in, int64_t N, int C);
int kcpu_l2norm_bwd(KernCtx *c, KGrad din, const KTensor *dout, const KTensor *out, const KTensor *norm, int64_t N,
		    int C);
size_t kcpu_attention_ws_bytes(KernCtx *c, KDtype dt, int B, int T, int H, int hd);
int kcpu_attention_fwd(KernCtx *c, KTensor *out, KTensor *lse, const KTensor *qkv, int B, int T, int H, int hd,
		       int causal);
int kcpu_attention_bwd(KernCtx *c, KGrad dqkv, const KTensor *dout, const KTensor *qkv, const KTensor *out,
		       const KTensor *lse, int B, int T, int H, int hd, int causal);
size_t kcpu_loss_ws_bytes(KernCtx *c, int B, int N, int d);
int kcpu_infonce(KernCtx *c, const KContrastBatch *b, KTensor *loss, KGrad dE1, KGrad dE2, KGrad dlog_s, int B, int N,
		 int d);
int kcpu_fcco_local(KernCtx *c, const KContrastBatch *b, const KTensor *ids, const KTensor *table, const KFccoParams *p,
		    KTensor *pack, int B, int N, int d);
int kcpu_fcco_scatter(KernCtx *c, KTensor *table, const KTensor *ids_all, const KTensor *pack_all, int w);
int kcpu_fcco_surrogate(KernCtx *c, const KContrastBatch *b, const KTensor *pack, const KTensor *pack_all,
			const KFccoParams *p, KTensor *loss, KGrad de1, KGrad de2, KGrad dlog_s, int B, int N, int d);
int kcpu_clip_metrics(KernCtx *c, KTensor *metrics, const KTensor *e1, const KTensor *e2, const KTensor *log_s, int B,
		      int d);
int kcpu_temp_step(KernCtx *c, KTensor *log_s, KTensor *mv, const KTensor *grad, const KTensor *norm_clip,
		   KTensor *copy, const KTempStep *h);
int kcpu_opt_plan_open(KOptPlan *p);
void kcpu_opt_plan_close(KOptPlan *p);
int kcpu_grad_norm(KernCtx *c, const KOptPlan *p, KTensor *norm_clip, const KTensor *grads, double clip_norm);
int kcpu_optimizer(KernCtx *c, const KOptPlan *p, const KOptHyper *h, KTensor *master, KTensor *copy,
		   const KTensor *grads, KTensor *m, KTensor *v, const KTensor *norm_clip);

#endif
