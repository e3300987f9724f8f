// The CUDA backend's OpenCLIP loss, logged metrics and temperature step, in double as the CPU
// twins (kern_cpu_loss.c): similarity products by the own tiled kernel, one block per row for the
// softmax pieces, feature gradients as products of the coefficient matrices, scalars summed by one
// block in a fixed order. The pieces that read or write features are instantiated per storage
// type (KcInT/KcOutT), the similarity products' operand loads too (kc_mm_f64).
#include "kcu_loss.h" // defines: KcWs, kc_sims, kc_rowdots

size_t kcu_loss_ws_bytes(int B, int N, int d)
{
	size_t doubles = 6 * (size_t)B * N + 2 * (size_t)N * d + 2 * (size_t)B * d + 8 * ((size_t)B + N) + 64;
	return doubles * sizeof(double) + 32 * 256; // each piece rounded up to 256 bytes
}

int kc_sims(KcuStream *s, double *S, const KTensor *A, const KTensor *M, int R, int N, int d)
{
	KcMM m = {};
	m.ta = 0, m.tb = 1, m.M = R, m.N = N, m.K = d, m.A = kc_in(A), m.lda = d, m.B = kc_in(M), m.ldb = d;
	m.C = kc_f64out(S), m.ldc = N, m.alpha = 1.0f;
	return kc_mm_f64(s, m);
}

template <class In>
__global__ void KC_BOUNDS_F64 rowdot_kernel(double *out, In a, In b, int R, int d)
{
	const int lane = (int)threadIdx.x % 32, r = (int)blockIdx.x * (KC_THREADS / 32) + (int)threadIdx.x / 32;
	if (r >= R)
		return;
	double acc = 0.0;
	for (int k = lane; k < d; k += 32)
		acc += kc_ldd(a, (int64_t)r * d + k) * kc_ldd(b, (int64_t)r * d + k);
	acc = kc_warp_sumd(acc);
	if (lane == 0)
		out[r] = acc;
}

template <class In>
static int rowdots(KcuStream *s, double *out, In a, In b, int R, int d)
{
	return KLAUNCH(&s->err, (rowdot_kernel<In>), (unsigned)((R + 7) / 8), KC_THREADS, 0, (cudaStream_t)s->stream,
		       out, a, b, R, d);
}

int kc_rowdots(KcuStream *s, double *out, const KTensor *a, const KTensor *b, int R, int d)
{
	switch (kc_same_dt({a, b})) {
	case KC_BF16: return rowdots(s, out, kc_int<bf16>(a), kc_int<bf16>(b), R, d);
	case KC_F32: return rowdots(s, out, kc_int<float>(a), kc_int<float>(b), R, d);
	default: return rowdots(s, out, kc_in(a), kc_in(b), R, d);
	}
}

// ---- OpenCLIP's ClipLoss over the gathered batch ----
// block (i, side): the cross-entropy row of anchor i against the N gathered rows: P = dloss/dlogit
// (weighted), the row's loss and Σ P·logit (its part of dloss/dlog_s)
__global__ void KC_BOUNDS_F64 ce_rows_kernel(const double *S1, const double *S2, double *P1, double *P2, double *rowL,
					     double *rowQ, const float *log_s, int N, int off, double wgt)
{
	__shared__ double red[KC_THREADS / 32];
	const int i = (int)blockIdx.x, side = (int)blockIdx.y, label = off + i;
	const double *S = (side ? S2 : S1) + (size_t)i * N;
	double *P = (side ? P2 : P1) + (size_t)i * N;
	const double sc = kc_exp_log_s(log_s);
	double mx = -INFINITY, se = 0.0, q = 0.0;
	for (int j = (int)threadIdx.x; j < N; j += KC_THREADS)
		mx = fmax(mx, sc * S[j]);
	mx = kc_block_maxd(mx, red);
	for (int j = (int)threadIdx.x; j < N; j += KC_THREADS)
		se += exp(sc * S[j] - mx);
	const double lse = mx + log(kc_block_sumd(se, red));
	for (int j = (int)threadIdx.x; j < N; j += KC_THREADS) {
		double logit = sc * S[j], p = (exp(logit - lse) - (j == label ? 1.0 : 0.0)) * wgt;
		P[j] = p;
		q += p * logit;
	}
	q = kc_block_sumd(q, red);
	if (threadIdx.x == 0)
		rowL[2 * i + side] = (lse - sc * S[label]) * wgt, rowQ[2 * i + side] = q;
}

// dE[j] = s · (G[j] + H[j − off] on this rank's rows), stored by the gradient rule
template <class Out>
__global__ void KC_BOUNDS_F64 feat_grad_kernel(Out dE, int acc, const double *G, const double *H, const float *log_s,
					       int N, int B, int d, int off)
{
	const double sc = kc_exp_log_s(log_s);
	const int64_t n = (int64_t)N * d, step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step) {
		const int j = (int)(e / d), k = (int)(e % d);
		double v = G[e];
		if (H && j >= off && j < off + B)
			v += H[(int64_t)(j - off) * d + k];
		kc_st_acc(dE, e, (float)(sc * v), acc);
	}
}

// the loss and dloss/dlog_s: Σ over the rows' values in a fixed order, by one block
__global__ void KC_BOUNDS_F64 ce_finish_kernel(float *loss, KcOut dls, int dls_acc, const double *rowL,
					       const double *rowQ, int n)
{
	__shared__ double red[KC_THREADS / 32];
	double l = 0.0, q = 0.0;
	for (int i = (int)threadIdx.x; i < n; i += KC_THREADS)
		l += rowL[i], q += rowQ[i];
	l = kc_block_sumd(l, red);
	q = kc_block_sumd(q, red);
	if (threadIdx.x != 0)
		return;
	loss[0] = (float)l;
	if (dls.p)
		kc_st_acc(dls, 0, (float)q, dls_acc);
}

// row-major product helper: C (M, N) double = op(A) op(B)
static int prod(KcuStream *s, double *C, int M, int N, int K, int ta, KcIn A, int lda, KcIn B, int ldb, int acc)
{
	KcMM m = {};
	m.ta = ta, m.tb = 0, m.M = M, m.N = N, m.K = K, m.A = A, m.lda = lda, m.B = B, m.ldb = ldb;
	m.C = kc_f64out(C), m.ldc = N, m.alpha = 1.0f, m.accumulate = acc;
	return kc_mm_f64(s, m);
}

int kcu_infonce(KcuStream *s, const KContrastBatch *b, KTensor *loss, KGrad dE1, KGrad dE2, KGrad dlog_s, int B, int N,
		int d)
{
	KcWs w = {(char *)s->ws};
	double *S1 = kc_ws_take(&w, (size_t)B * N), *S2 = kc_ws_take(&w, (size_t)B * N);
	double *P1 = kc_ws_take(&w, (size_t)B * N), *P2 = kc_ws_take(&w, (size_t)B * N);
	double *G = kc_ws_take(&w, (size_t)N * d), *H = kc_ws_take(&w, (size_t)B * d);
	double *rowL = kc_ws_take(&w, 2 * (size_t)B), *rowQ = kc_ws_take(&w, 2 * (size_t)B);
	const cudaStream_t st = (cudaStream_t)s->stream;
	const float *ls = (const float *)b->log_s->data;
	KC_TRY(kc_sims(s, S1, b->e1, b->E2, B, N, d));
	KC_TRY(kc_sims(s, S2, b->e2, b->E1, B, N, d));
	KC_TRY(KLAUNCH(&s->err, ce_rows_kernel, dim3((unsigned)B, 2), KC_THREADS, 0, st, S1, S2, P1, P2, rowL, rowQ, ls,
		       N, b->offset, 0.5 / B));
	// dE1 = s·(P2ᵀ e2 + P1 E2 on own rows); dE2 = s·(P1ᵀ e1 + P2 E1 on own rows)
	struct {
		KGrad g;
		const double *Pn, *Pa;
		const KTensor *e, *E;
	} sides[2] = {{dE1, P2, P1, b->e2, b->E2}, {dE2, P1, P2, b->e1, b->E1}};
	for (int k = 0; k < 2; k++) {
		if (!sides[k].g.t)
			continue;
		KC_TRY(prod(s, G, N, d, B, 1, kc_f64in(sides[k].Pn), N, kc_in(sides[k].e), d, 0));
		KC_TRY(prod(s, H, B, d, N, 0, kc_f64in(sides[k].Pa), N, kc_in(sides[k].E), d, 0));
		const unsigned grid = kc_grid((int64_t)N * d, KC_THREADS);
		const KGrad g = sides[k].g;
		if (g.t->dtype == KDT_BF16)
			KC_TRY(KLAUNCH(&s->err, feat_grad_kernel<KcOutT<bf16>>, grid, KC_THREADS, 0, st,
				       kc_outt<bf16>(g.t), g.acc, G, H, ls, N, B, d, b->offset));
		else if (g.t->dtype == KDT_F32)
			KC_TRY(KLAUNCH(&s->err, feat_grad_kernel<KcOutT<float>>, grid, KC_THREADS, 0, st,
				       kc_outt<float>(g.t), g.acc, G, H, ls, N, B, d, b->offset));
		else
			KC_TRY(KLAUNCH(&s->err, feat_grad_kernel<KcOut>, grid, KC_THREADS, 0, st, kc_grad(g), g.acc, G,
				       H, ls, N, B, d, b->offset));
	}
	return KLAUNCH(&s->err, ce_finish_kernel, 1, KC_THREADS, 0, st, (float *)loss->data, kc_grad(dlog_s),
		       dlog_s.acc, rowL, rowQ, 2 * B);
}

// ---- logged metrics: symmetric InfoNCE and top-1 accuracy of the local batch ----
// block i: row i and column i of sim (B, B); the row's first maximum decides the hit
__global__ void KC_BOUNDS_F64 metrics_rows_kernel(const double *sim, const float *log_s, int B, double *lrow,
						  double *lcol, double *hit)
{
	__shared__ double red[KC_THREADS / 32];
	__shared__ int at[KC_THREADS / 32];
	const int i = (int)blockIdx.x, lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
	const double sc = kc_exp_log_s(log_s);
	double mr = -INFINITY, mc = -INFINITY;
	int best = B;
	for (int j = (int)threadIdx.x; j < B; j += KC_THREADS) {
		if (sim[(size_t)i * B + j] > mr)
			mr = sim[(size_t)i * B + j], best = j;
		mc = fmax(mc, sim[(size_t)j * B + i]);
	}
	for (int o = 16; o > 0; o /= 2) { // the larger value, the earlier column on ties
		double om = __shfl_xor_sync(0xffffffffu, mr, o);
		int ob = __shfl_xor_sync(0xffffffffu, best, o);
		if (om > mr || (om == mr && ob < best))
			mr = om, best = ob;
	}
	if (lane == 0)
		red[warp] = mr, at[warp] = best;
	__syncthreads();
	mr = red[0], best = at[0];
	for (int k = 1; k < KC_THREADS / 32; k++)
		if (red[k] > mr || (red[k] == mr && at[k] < best))
			mr = red[k], best = at[k];
	__syncthreads();
	mc = kc_block_maxd(mc, red);
	double sr = 0.0, scol = 0.0;
	for (int j = (int)threadIdx.x; j < B; j += KC_THREADS) {
		sr += exp(sc * (sim[(size_t)i * B + j] - mr));
		scol += exp(sc * (sim[(size_t)j * B + i] - mc));
	}
	sr = kc_block_sumd(sr, red);
	scol = kc_block_sumd(scol, red);
	if (threadIdx.x == 0) {
		const double dii = sim[(size_t)i * B + i];
		lrow[i] = sc * (mr - dii) + log(sr);
		lcol[i] = sc * (mc - dii) + log(scol);
		hit[i] = best == i ? 1.0 : 0.0;
	}
}

__global__ void KC_BOUNDS_F64 metrics_finish_kernel(float *metrics, const double *lrow, const double *lcol,
						    const double *hit, int B)
{
	__shared__ double red[KC_THREADS / 32];
	double a = 0.0, c = 0.0, h = 0.0;
	for (int i = (int)threadIdx.x; i < B; i += KC_THREADS)
		a += lrow[i], c += lcol[i], h += hit[i];
	a = kc_block_sumd(a, red);
	c = kc_block_sumd(c, red);
	h = kc_block_sumd(h, red);
	if (threadIdx.x == 0)
		metrics[0] = (float)(0.5 * (a + c) / B), metrics[1] = (float)(h / B);
}

int kcu_clip_metrics(KcuStream *s, KTensor *metrics, const KTensor *e1, const KTensor *e2, const KTensor *log_s, int B,
		     int d)
{
	KcWs w = {(char *)s->ws};
	double *sim = kc_ws_take(&w, (size_t)B * B), *lrow = kc_ws_take(&w, (size_t)B);
	double *lcol = kc_ws_take(&w, (size_t)B), *hit = kc_ws_take(&w, (size_t)B);
	const cudaStream_t st = (cudaStream_t)s->stream;
	const float *ls = (const float *)log_s->data;
	KC_TRY(kc_sims(s, sim, e1, e2, B, B, d));
	KC_TRY(KLAUNCH(&s->err, metrics_rows_kernel, (unsigned)B, KC_THREADS, 0, st, sim, ls, B, lrow, lcol, hit));
	return KLAUNCH(&s->err, metrics_finish_kernel, 1, KC_THREADS, 0, st, (float *)metrics->data, lrow, lcol, hit,
		       B);
}

// ---- Adam on the global temperature: one thread, double arithmetic as FastclipTemp ----
struct TempArgs {
	double lr, lr_low, tau_low, b1, b2, eps, bc1, bc2, lo, hi;
};

// g = grad · the clip factor norm_clip[1] (when given), an f32 product as kern_optimizer forms the
// model's clipped gradients: FastCLIP clips τ's gradient with theirs
// live (a graph replays the step): kern_temp_live's values in device memory, in place of h's
__global__ void temp_kernel(float *log_s, float *mv, KcIn grad, KcIn norm_clip, KcOut copy, TempArgs h,
			    const double *live, unsigned long long *errs)
{
	if (live) {
		h.lr = live[KTEMP_LIVE_LR];
		h.lr_low = live[KTEMP_LIVE_LR_LOW];
		h.bc1 = live[KTEMP_LIVE_BC1];
		h.bc2 = live[KTEMP_LIVE_BC2];
	}
	float gf = kc_ld(grad, 0);
	if (norm_clip.p)
		gf *= kc_ld(norm_clip, 1);
	if (!isfinite(gf)) {
		kc_report(errs, KCU_E_TEMP_STEP, 0, __float_as_uint(gf));
		return;
	}
	const double g = gf;
	double ls = log_s[0], m = mv[0], v = mv[1];
	const double lr = exp(-ls) <= h.tau_low ? h.lr_low : h.lr;
	m = h.b1 * m + (1.0 - h.b1) * g;
	v = h.b2 * v + (1.0 - h.b2) * g * g;
	const double denom = sqrt(v) / sqrt(h.bc2) + h.eps;
	ls = ls - lr / h.bc1 * m / denom;
	ls = ls < h.lo ? h.lo : ls > h.hi ? h.hi : ls;
	mv[0] = (float)m, mv[1] = (float)v, log_s[0] = (float)ls;
	if (copy.p)
		kc_std(copy, 0, ls);
}

int kcu_temp_step(KcuStream *s, KTensor *log_s, KTensor *mv, const KTensor *grad, const KTensor *norm_clip,
		  KTensor *copy, const KTempStep *h)
{
	double v[KTEMP_LIVE_N];
	kern_temp_live(h, v);
	TempArgs a = {v[KTEMP_LIVE_LR], v[KTEMP_LIVE_LR_LOW], h->tau_low,        h->beta1, h->beta2,
		      h->eps,           v[KTEMP_LIVE_BC1],    v[KTEMP_LIVE_BC2], h->lo,    h->hi};
	return KLAUNCH(&s->err, temp_kernel, 1, 1, 0, (cudaStream_t)s->stream, (float *)log_s->data, (float *)mv->data,
		       kc_in(grad), kc_in(norm_clip), kc_out(copy), a,
		       h->live ? (const double *)h->live->data : nullptr, s->errs);
}
