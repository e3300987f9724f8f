// Checks the tiled attention forward (f32) against a naive softmax(QK^T/sqrt(d))V computed in
// double with the full T x T matrix, with and without the causal mask, for lengths that are
// and are not multiples of the tile size; and the f32 backward against the f64 one.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_attention_*

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

// out (T, hd) and lse (T) of one (batch, head) pair, naive
static void naive(const KTensor *qkv, int b, int h, int T, int H, int hd, int causal, double *out, double *lse)
{
	int Dm = H * hd;
	double *s = malloc(sizeof(double) * (size_t)T * T);
	for (int i = 0; i < T; i++) {
		double mx = -INFINITY, sum = 0;
		for (int j = 0; j < T; j++) {
			double d = 0;
			for (int k = 0; k < hd; k++)
				d += kgc_get(qkv, ((int64_t)b * T + i) * 3 * Dm + h * hd + k) *
				     kgc_get(qkv, ((int64_t)b * T + j) * 3 * Dm + Dm + h * hd + k);
			s[i * T + j] = (causal && j > i) ? -INFINITY : d / sqrt(hd);
			if (s[i * T + j] > mx)
				mx = s[i * T + j];
		}
		for (int j = 0; j < T; j++)
			sum += exp(s[i * T + j] - mx);
		lse[i] = mx + log(sum);
		for (int k = 0; k < hd; k++) {
			double o = 0;
			for (int j = 0; j < T; j++)
				o += exp(s[i * T + j] - lse[i]) *
				     kgc_get(qkv, ((int64_t)b * T + j) * 3 * Dm + 2 * Dm + h * hd + k);
			out[i * hd + k] = o;
		}
	}
	free(s);
}

static int run(KernCtx *c, int T, int causal)
{
	const int B = 2, H = 3, hd = 8, Dm = H * hd;
	const int64_t sq[] = {B, T, 3 * Dm}, so[] = {B, T, Dm}, sl[] = {B, H, T};
	KTensor q32, q64, o32, o64, l32, l64, r32, r64, d32, d64;
	if (kern_ctx_reserve_workspace(c, kern_attention_ws_bytes(c, KDT_F64, B, T, H, hd)))
		return 1;
	if (kern_alloc(c, &q64, KDT_F64, 3, sq) || kern_alloc(c, &q32, KDT_F32, 3, sq) ||
	    kern_alloc(c, &o32, KDT_F32, 3, so) || kern_alloc(c, &o64, KDT_F64, 3, so) ||
	    kern_alloc(c, &r32, KDT_F32, 3, so) || kern_alloc(c, &r64, KDT_F64, 3, so) ||
	    kern_alloc(c, &l32, KDT_F32, 3, sl) || kern_alloc(c, &l64, KDT_F64, 3, sl) ||
	    kern_alloc(c, &d32, KDT_F32, 3, sq) || kern_alloc(c, &d64, KDT_F64, 3, sq))
		return 1;
	kgc_fill(&q64, 60 + T, 2.0);
	kgc_fill(&r64, 61 + T, 1.0);
	kern_convert(c, &q32, &q64);
	kern_convert(c, &r32, &r64);
	int bad = kern_attention_fwd(c, &o32, &l32, &q32, H, causal) != 0;
	bad |= kern_attention_fwd(c, &o64, &l64, &q64, H, causal) != 0;
	double *no = malloc(sizeof(double) * (size_t)T * hd), *nl = malloc(sizeof(double) * (size_t)T);
	double eo = 0, el = 0, e64 = 0;
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++) {
			naive(&q64, b, h, T, H, hd, causal, no, nl);
			for (int i = 0; i < T; i++) {
				for (int k = 0; k < hd; k++) {
					int64_t at = ((int64_t)b * T + i) * Dm + h * hd + k;
					eo = fmax(eo, fabs(kgc_get(&o32, at) - no[i * hd + k]));
					e64 = fmax(e64, fabs(kgc_get(&o64, at) - no[i * hd + k]));
				}
				el = fmax(el, fabs(kgc_get(&l32, ((int64_t)b * H + h) * T + i) - nl[i]));
			}
		}
	bad |= kern_attention_bwd(c, KG_SET(&d32), &r32, &q32, &o32, &l32, H, causal) != 0;
	bad |= kern_attention_bwd(c, KG_SET(&d64), &r64, &q64, &o64, &l64, H, causal) != 0;
	double ed = kgc_maxdiff(&d32, &d64);
	int ok = !bad && eo < 2e-6 && el < 2e-6 && e64 < 1e-12 && ed < 2e-5;
	printf("%-4s T=%3d causal=%d  |out-naive| f32 %.2g f64 %.2g  |lse-naive| %.2g  dqkv f32 vs f64 %.2g\n",
	       ok ? "ok" : "FAIL", T, causal, eo, e64, el, ed);
	free(no);
	free(nl);
	KTensor *all[] = {&q32, &q64, &o32, &o64, &l32, &l64, &r32, &r64, &d32, &d64};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		kern_free(c, all[i]);
	return ok ? 0 : 1;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	const int lens[] = {1, 5, 31, 32, 33, 64, 77, 100};
	int bad = 0;
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
		for (int causal = 0; causal < 2; causal++)
			bad |= run(c, lens[i], causal);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL attention vs naive softmax(QK^T)V" : "PASS attention vs naive softmax(QK^T)V");
	return bad;
}
