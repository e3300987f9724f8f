// The CUDA backend's row normalizations: layernorm forward and backward (the input gradient one
// warp per row, the weight and bias gradients as fixed-order column sums) and the L2 norm.
#include "kcu_colsum.h" // defines: kc_colsum, KcColDst

enum { ROWS = KC_THREADS / 32 }; // one warp per row

// Every lane walks the row's columns lane·V, lane·V + 32·V, ...; a warp is either wholly inside
// the matrix or wholly past it, so its collectives always have 32 lanes.
template <int V>
__global__ void __launch_bounds__(KC_THREADS)
	ln_fwd_kernel(KcOut out, float *mean, float *rstd, KcIn in, KcIn w, KcIn b, int64_t N, int C)
{
	const int lane = (int)threadIdx.x % 32;
	const int64_t row = (int64_t)blockIdx.x * ROWS + threadIdx.x / 32, base = row * C;
	if (row >= N)
		return;
	float x[V], sum = 0.0f;
	for (int c = lane * V; c < C; c += 32 * V) {
		kc_ldv<V>(in, base + c, x);
		for (int k = 0; k < V; k++)
			sum += x[k];
	}
	const float m = kc_warp_sum(sum) / (float)C;
	float var = 0.0f;
	for (int c = lane * V; c < C; c += 32 * V) {
		kc_ldv<V>(in, base + c, x);
		for (int k = 0; k < V; k++)
			var += (x[k] - m) * (x[k] - m);
	}
	const float s = 1.0f / sqrtf(kc_warp_sum(var) / (float)C + 1e-5f);
	for (int c = lane * V; c < C; c += 32 * V) {
		float wv[V], bv[V];
		kc_ldv<V>(in, base + c, x);
		kc_ldv<V>(w, c, wv);
		kc_ldv<V>(b, c, bv);
		for (int k = 0; k < V; k++)
			x[k] = (x[k] - m) * s * wv[k] + bv[k];
		kc_stv<V>(out, base + c, x);
	}
	if (lane == 0)
		mean[row] = m, rstd[row] = s;
}

int kcu_layernorm_fwd(KcuStream *s, KTensor *out, KTensor *mean, KTensor *rstd, const KTensor *in, const KTensor *w,
		      const KTensor *b, int64_t N, int C)
{
	const unsigned grid = (unsigned)((N + ROWS - 1) / ROWS);
	const cudaStream_t st = (cudaStream_t)s->stream;
	if (N == 0)
		return 0;
	float *mp = (float *)mean->data, *rp = (float *)rstd->data;
	if (kc_vec_ok(C, {out->data, in->data, w->data, b->data}))
		return KLAUNCH(&s->err, ln_fwd_kernel<8>, grid, KC_THREADS, 0, st, kc_out(out), mp, rp, kc_in(in),
			       kc_in(w), kc_in(b), N, C);
	return KLAUNCH(&s->err, ln_fwd_kernel<1>, grid, KC_THREADS, 0, st, kc_out(out), mp, rp, kc_in(in), kc_in(w),
		       kc_in(b), N, C);
}

// din = rstd · (dy·w − mean(dy·w) − x̂ · mean(dy·w·x̂)), written or added
template <int V>
__global__ void __launch_bounds__(KC_THREADS) ln_bwd_kernel(KcOut din, int acc, KcIn dout, KcIn in, KcIn w,
							    const float *mean, const float *rstd, int64_t N, int C)
{
	const int lane = (int)threadIdx.x % 32;
	const int64_t row = (int64_t)blockIdx.x * ROWS + threadIdx.x / 32, base = row * C;
	if (row >= N)
		return;
	const float m = mean[row], s = rstd[row];
	float x[V], dy[V], wv[V], a = 0.0f, bs = 0.0f;
	for (int c = lane * V; c < C; c += 32 * V) {
		kc_ldv<V>(in, base + c, x);
		kc_ldv<V>(dout, base + c, dy);
		kc_ldv<V>(w, c, wv);
		for (int k = 0; k < V; k++) {
			float dn = dy[k] * wv[k];
			a += dn;
			bs += dn * (x[k] - m) * s;
		}
	}
	a = kc_warp_sum(a) / (float)C;
	bs = kc_warp_sum(bs) / (float)C;
	for (int c = lane * V; c < C; c += 32 * V) {
		float g[V], old[V];
		kc_ldv<V>(in, base + c, x);
		kc_ldv<V>(dout, base + c, dy);
		kc_ldv<V>(w, c, wv);
		if (acc)
			kc_ldv<V>(KcIn{din.p, din.dt}, base + c, old);
		for (int k = 0; k < V; k++) {
			float xh = (x[k] - m) * s;
			g[k] = s * (dy[k] * wv[k] - a - xh * bs);
			if (acc)
				g[k] += old[k];
		}
		kc_stv<V>(din, base + c, g);
	}
}

// dw and db: the column sums of dy·x̂ and dy (8 columns at once when aligned: 16-byte loads)
struct LnParamSrc {
	static constexpr int NOUT = 2;
	static constexpr bool VEC8 = true;
	KcIn dout, in;
	const float *mean, *rstd;
	int C;
	__device__ void at(int, int64_t m, int col, float *v) const
	{
		float dy = kc_ld(dout, m * C + col);
		v[0] = dy * (kc_ld(in, m * C + col) - mean[m]) * rstd[m];
		v[1] = dy;
	}
	__device__ void at8(int, int64_t m, int col, float v[][8]) const
	{
		float dy[8], x[8];
		kc_ld8(dout, m * C + col, dy);
		kc_ld8(in, m * C + col, x);
		const float mu = mean[m], rs = rstd[m];
		for (int k = 0; k < 8; k++)
			v[0][k] = dy[k] * (x[k] - mu) * rs, v[1][k] = dy[k];
	}
	bool aligned() const { return kc_vec_ok(C, {dout.p, in.p}); }
};

int kcu_layernorm_bwd(KcuStream *s, KGrad din, KGrad dw, KGrad db, const KTensor *dout, const KTensor *in,
		      const KTensor *w, const KTensor *mean, const KTensor *rstd, int64_t N, int C)
{
	const float *mp = (const float *)mean->data, *rp = (const float *)rstd->data;
	const cudaStream_t st = (cudaStream_t)s->stream;
	if (din.t && N > 0) {
		const unsigned grid = (unsigned)((N + ROWS - 1) / ROWS);
		if (kc_vec_ok(C, {din.t->data, dout->data, in->data, w->data}))
			KC_TRY(KLAUNCH(&s->err, ln_bwd_kernel<8>, grid, KC_THREADS, 0, st, kc_grad(din), din.acc,
				       kc_in(dout), kc_in(in), kc_in(w), mp, rp, N, C));
		else
			KC_TRY(KLAUNCH(&s->err, ln_bwd_kernel<1>, grid, KC_THREADS, 0, st, kc_grad(din), din.acc,
				       kc_in(dout), kc_in(in), kc_in(w), mp, rp, N, C));
	}
	if (!dw.t && !db.t)
		return 0;
	KcColDst d = {};
	d.t[0] = kc_grad(dw), d.acc[0] = dw.acc, d.t[1] = kc_grad(db), d.acc[1] = db.acc;
	LnParamSrc src = {kc_in(dout), kc_in(in), mp, rp, C};
	return kc_colsum(s, src, 1, N, C, d);
}

// ---- L2 norm: out = x / max(‖x‖, 1e-12) per row, the norm saved ----
__global__ void __launch_bounds__(KC_THREADS) l2_fwd_kernel(KcOut out, float *norm, KcIn in, int64_t N, int C)
{
	const int lane = (int)threadIdx.x % 32;
	const int64_t row = (int64_t)blockIdx.x * ROWS + threadIdx.x / 32, base = row * C;
	if (row >= N)
		return;
	float ss = 0.0f;
	for (int c = lane; c < C; c += 32) {
		float x = kc_ld(in, base + c);
		ss += x * x;
	}
	float nr = fmaxf(sqrtf(kc_warp_sum(ss)), 1e-12f);
	for (int c = lane; c < C; c += 32)
		kc_st(out, base + c, kc_ld(in, base + c) / nr);
	if (lane == 0)
		norm[row] = nr;
}

// din = (dout − out · (out·dout)) / norm
__global__ void __launch_bounds__(KC_THREADS)
	l2_bwd_kernel(KcOut din, int acc, KcIn dout, KcIn out, const float *norm, int64_t N, int C)
{
	const int lane = (int)threadIdx.x % 32;
	const int64_t row = (int64_t)blockIdx.x * ROWS + threadIdx.x / 32, base = row * C;
	if (row >= N)
		return;
	float d = 0.0f;
	for (int c = lane; c < C; c += 32)
		d += kc_ld(out, base + c) * kc_ld(dout, base + c);
	d = kc_warp_sum(d);
	for (int c = lane; c < C; c += 32)
		kc_st_acc(din, base + c, (kc_ld(dout, base + c) - kc_ld(out, base + c) * d) / norm[row], acc);
}

int kcu_l2norm_fwd(KcuStream *s, KTensor *out, KTensor *norm, const KTensor *in, int64_t N, int C)
{
	if (N == 0)
		return 0;
	return KLAUNCH(&s->err, l2_fwd_kernel, (unsigned)((N + ROWS - 1) / ROWS), KC_THREADS, 0,
		       (cudaStream_t)s->stream, kc_out(out), (float *)norm->data, kc_in(in), N, C);
}

int kcu_l2norm_bwd(KcuStream *s, KGrad din, const KTensor *dout, const KTensor *out, const KTensor *norm, int64_t N,
		   int C)
{
	if (!din.t || N == 0)
		return 0;
	return KLAUNCH(&s->err, l2_bwd_kernel, (unsigned)((N + ROWS - 1) / ROWS), KC_THREADS, 0,
		       (cudaStream_t)s->stream, kc_grad(din), din.acc, kc_in(dout), kc_in(out),
		       (const float *)norm->data, N, C);
}
