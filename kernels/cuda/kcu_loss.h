// What the CUDA backend's loss files share: the workspace carve-up, the similarity products and
// row dot products in double, and a scalar finish (all as the CPU twins compute them, in double).
#ifndef KCU_LOSS_H
#define KCU_LOSS_H
// defines: KcWs, kc_ws_take, kc_sims, kc_rowdots, kc_exp_log_s

#include "kcu_mm.h" // defines: KcMM, kc_mm_f64

// bump allocation in the stream's workspace (sized by kcu_loss_ws_bytes), 256-byte aligned pieces
struct KcWs {
	char *p;
};
static inline double *kc_ws_take(KcWs *w, size_t n)
{
	double *r = (double *)w->p;
	w->p += (n * sizeof(double) + 255) / 256 * 256;
	return r;
}

// S (R, N) = A (R, d) · Mᵀ, M (N, d), in double
int kc_sims(KcuStream *s, double *S, const KTensor *A, const KTensor *M, int R, int N, int d);
// out[r] = a_r · b_r over rows of width d, in double
int kc_rowdots(KcuStream *s, double *out, const KTensor *a, const KTensor *b, int R, int d);

// s = exp(log_s) of a (1) STAT tensor; 0 when absent (v2 needs none)
__device__ __forceinline__ double kc_exp_log_s(const float *log_s)
{
	return log_s ? exp((double)log_s[0]) : 0.0;
}

#endif
