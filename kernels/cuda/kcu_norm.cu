// The CUDA backend's row normalizations: layernorm forward and backward (the input gradient one
// warp per row, the weight and bias gradients as fixed-order column sums) and the L2 norm. Each
// kernel is instantiated per storage type (In, Out: KcInT/KcOutT of float or bf16 when the op's
// tensors share one, KcIn/KcOut for mixed storage), so no load or store branches on the dtype.
#include "kcu_colsum.h" // defines: kc_colsum, KcColDst

enum { ROWS = KC_THREADS / 32 }; // one warp per row

// Every lane walks the row's columns lane·V, lane·V + 32·V, ...; a warp is either wholly inside
// the matrix or wholly past it, so its collectives always have 32 lanes.
template <int V, class In, class Out>
__global__ void __launch_bounds__(KC_THREADS)
	ln_fwd_kernel(Out out, float *mean, float *rstd, In in, In w, In b, int64_t N, int C)
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

template <class In, class Out>
static int ln_fwd(KcuStream *s, Out out, float *mp, float *rp, In in, In w, In b, int64_t N, int C, bool vec)
{
	const unsigned grid = (unsigned)((N + ROWS - 1) / ROWS);
	const cudaStream_t st = (cudaStream_t)s->stream;
	if (vec)
		return KLAUNCH(&s->err, (ln_fwd_kernel<8, In, Out>), grid, KC_THREADS, 0, st, out, mp, rp, in, w, b, N,
			       C);
	return KLAUNCH(&s->err, (ln_fwd_kernel<1, In, Out>), grid, KC_THREADS, 0, st, out, mp, rp, in, w, b, N, C);
}

int kcu_layernorm_fwd(KcuStream *s, KTensor *out, KTensor *mean, KTensor *rstd, const KTensor *in, const KTensor *w,
		      const KTensor *b, int64_t N, int C)
{
	if (N == 0)
		return 0;
	float *mp = (float *)mean->data, *rp = (float *)rstd->data;
	const bool vec = kc_vec_ok(C, {out->data, in->data, w->data, b->data});
	switch (kc_same_dt({out, in, w, b})) {
	case KC_BF16:
		return ln_fwd(s, kc_outt<bf16>(out), mp, rp, kc_int<bf16>(in), kc_int<bf16>(w), kc_int<bf16>(b), N, C,
			      vec);
	case KC_F32:
		return ln_fwd(s, kc_outt<float>(out), mp, rp, kc_int<float>(in), kc_int<float>(w), kc_int<float>(b), N,
			      C, vec);
	default: return ln_fwd(s, kc_out(out), mp, rp, kc_in(in), kc_in(w), kc_in(b), N, C, vec);
	}
}

// din = rstd · (dy·w − mean(dy·w) − x̂ · mean(dy·w·x̂)), written or added
template <int V, class In, class Out>
__global__ void __launch_bounds__(KC_THREADS)
	ln_bwd_kernel(Out din, int acc, In dout, In in, In w, const float *mean, const float *rstd, int64_t N, int C)
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
			kc_ldv<V>(kc_in_of(din), base + c, old);
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
template <class In>
struct LnParamSrc {
	static constexpr int NOUT = 2;
	static constexpr bool VEC8 = true;
	In dout, in;
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

template <class In, class Out>
static int ln_bwd_din(KcuStream *s, Out din, int acc, In dout, In in, In w, const float *mp, const float *rp, int64_t N,
		      int C, bool vec)
{
	const unsigned grid = (unsigned)((N + ROWS - 1) / ROWS);
	const cudaStream_t st = (cudaStream_t)s->stream;
	if (vec)
		return KLAUNCH(&s->err, (ln_bwd_kernel<8, In, Out>), grid, KC_THREADS, 0, st, din, acc, dout, in, w, mp,
			       rp, N, C);
	return KLAUNCH(&s->err, (ln_bwd_kernel<1, In, Out>), grid, KC_THREADS, 0, st, din, acc, dout, in, w, mp, rp, N,
		       C);
}

int kcu_layernorm_bwd(KcuStream *s, KGrad din, KGrad dw, KGrad db, const KTensor *dout, const KTensor *in,
		      const KTensor *w, const KTensor *mean, const KTensor *rstd, int64_t N, int C)
{
	const float *mp = (const float *)mean->data, *rp = (const float *)rstd->data;
	if (din.t && N > 0) {
		const bool vec = kc_vec_ok(C, {din.t->data, dout->data, in->data, w->data});
		switch (kc_same_dt({din.t, dout, in, w})) {
		case KC_BF16:
			KC_TRY(ln_bwd_din(s, kc_outt<bf16>(din.t), din.acc, kc_int<bf16>(dout), kc_int<bf16>(in),
					  kc_int<bf16>(w), mp, rp, N, C, vec));
			break;
		case KC_F32:
			KC_TRY(ln_bwd_din(s, kc_outt<float>(din.t), din.acc, kc_int<float>(dout), kc_int<float>(in),
					  kc_int<float>(w), mp, rp, N, C, vec));
			break;
		default:
			KC_TRY(ln_bwd_din(s, kc_grad(din), din.acc, kc_in(dout), kc_in(in), kc_in(w), mp, rp, N, C,
					  vec));
		}
	}
	if (!dw.t && !db.t)
		return 0;
	KcColDst d = {};
	d.t[0] = kc_grad(dw), d.acc[0] = dw.acc, d.t[1] = kc_grad(db), d.acc[1] = db.acc;
	switch (kc_same_dt({dout, in})) {
	case KC_BF16:
		return kc_colsum(s, LnParamSrc<KcInT<bf16>>{kc_int<bf16>(dout), kc_int<bf16>(in), mp, rp, C}, 1, N, C,
				 d);
	case KC_F32:
		return kc_colsum(s, LnParamSrc<KcInT<float>>{kc_int<float>(dout), kc_int<float>(in), mp, rp, C}, 1, N,
				 C, d);
	default: return kc_colsum(s, LnParamSrc<KcIn>{kc_in(dout), kc_in(in), mp, rp, C}, 1, N, C, d);
	}
}

// ---- L2 norm: out = x / max(‖x‖, 1e-12) per row, the norm saved ----
template <class In, class Out>
__global__ void __launch_bounds__(KC_THREADS) l2_fwd_kernel(Out out, float *norm, In in, int64_t N, int C)
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
template <class In, class Out>
__global__ void __launch_bounds__(KC_THREADS)
	l2_bwd_kernel(Out din, int acc, In dout, In out, const float *norm, int64_t N, int C)
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

template <class In, class Out>
static int l2_fwd(KcuStream *s, Out out, float *norm, In in, int64_t N, int C)
{
	return KLAUNCH(&s->err, (l2_fwd_kernel<In, Out>), (unsigned)((N + ROWS - 1) / ROWS), KC_THREADS, 0,
		       (cudaStream_t)s->stream, out, norm, in, N, C);
}

int kcu_l2norm_fwd(KcuStream *s, KTensor *out, KTensor *norm, const KTensor *in, int64_t N, int C)
{
	if (N == 0)
		return 0;
	float *np = (float *)norm->data;
	switch (kc_same_dt({out, in})) {
	case KC_BF16: return l2_fwd(s, kc_outt<bf16>(out), np, kc_int<bf16>(in), N, C);
	case KC_F32: return l2_fwd(s, kc_outt<float>(out), np, kc_int<float>(in), N, C);
	default: return l2_fwd(s, kc_out(out), np, kc_in(in), N, C);
	}
}

template <class In, class Out>
static int l2_bwd(KcuStream *s, Out din, int acc, In dout, In out, const float *norm, int64_t N, int C)
{
	return KLAUNCH(&s->err, (l2_bwd_kernel<In, Out>), (unsigned)((N + ROWS - 1) / ROWS), KC_THREADS, 0,
		       (cudaStream_t)s->stream, din, acc, dout, out, norm, N, C);
}

int kcu_l2norm_bwd(KcuStream *s, KGrad din, const KTensor *dout, const KTensor *out, const KTensor *norm, int64_t N,
		   int C)
{
	if (!din.t || N == 0)
		return 0;
	const float *np = (const float *)norm->data;
	switch (kc_same_dt({din.t, dout, out})) {
	case KC_BF16: return l2_bwd(s, kc_outt<bf16>(din.t), din.acc, kc_int<bf16>(dout), kc_int<bf16>(out), np, N, C);
	case KC_F32:
		return l2_bwd(s, kc_outt<float>(din.t), din.acc, kc_int<float>(dout), kc_int<float>(out), np, N, C);
	default: return l2_bwd(s, kc_grad(din), din.acc, kc_in(dout), kc_in(out), np, N, C);
	}
}
