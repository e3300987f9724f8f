// The CUDA backend's dense ops: the linear layer on kgemm with its epilogues (bias, GELU saving
// its input, residual; in backward the GELU-backward and bias gradients), element-wise maps
// (activations, residual add, dtype conversion) with 16-byte accesses where aligned, instantiated
// per storage type when the map's tensors share one (no branch on the dtype per element).
#include "kcu_colsum.h" // defines: kc_colsum, KcColDst
#include "kcu_mm.h"     // defines: KcMM, kc_mm, kc_mm_epi, kc_map

// the activations in f32, as the CPU twin's f32 body (kern_cpu_dense.inc)
__device__ __forceinline__ float kc_act(int a, float x)
{
	switch (a) {
	case KACT_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
	case KACT_GELU_TANH: return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
	case KACT_QUICKGELU: return x / (1.0f + expf(-1.702f * x));
	default: return x;
	}
}

__device__ __forceinline__ float kc_dact(int a, float x)
{
	switch (a) {
	case KACT_GELU: {
		float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752440f));
		float pdf = expf(-0.5f * x * x) * 0.39894228040143267794f;
		return cdf + x * pdf;
	}
	case KACT_GELU_TANH: {
		const float k = 0.79788456080286535588f, c = 0.044715f;
		float t = tanhf(k * (x + c * x * x * x));
		return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 3.0f * c * x * x);
	}
	case KACT_QUICKGELU: {
		float sg = 1.0f / (1.0f + expf(-1.702f * x));
		return sg + x * 1.702f * sg * (1.0f - sg);
	}
	default: return 1.0f;
	}
}

// In, Out: KcIn/KcOut (storage chosen at run time), or KcInT<T>/KcOutT<T> when every tensor of the
// map is stored as T
template <class In, class Out>
struct MapArgs {
	int op, act;
	Out out;
	In a, b;
	In bias; // p not NULL: a + bias[i % cols] is the value mapped (a bias epilogue)
	int64_t cols;
	Out keep; // p not NULL: also receives that value (the pre-activation of a fused GELU)
};

template <class In, class Out>
__device__ __forceinline__ float map_one(const MapArgs<In, Out> &m, float x, float y)
{
	switch (m.op) {
	case KC_MAP_ADD: return x + y;
	case KC_MAP_ACT: return kc_act(m.act, x);
	case KC_MAP_DACT: return x * kc_dact(m.act, y);
	default: return x;
	}
}

// V elements per thread and step: 8 (16-byte accesses) or 1; out may be a or b (same index)
template <int V, class In, class Out>
__global__ void __launch_bounds__(KC_THREADS) map_kernel(MapArgs<In, Out> m, int64_t n)
{
	const bool two = m.op == KC_MAP_ADD || m.op == KC_MAP_DACT;
	const int64_t step = (int64_t)gridDim.x * KC_THREADS * V;
	for (int64_t i = ((int64_t)blockIdx.x * KC_THREADS + threadIdx.x) * V; i < n; i += step) {
		float x[V], y[V];
		kc_ldv<V>(m.a, i, x);
		if (two)
			kc_ldv<V>(m.b, i, y);
		else
			for (int k = 0; k < V; k++)
				y[k] = 0.0f;
		if (m.bias.p) { // V == 8 only where cols % 8 == 0: a group never wraps a row
			const int64_t c0 = i % m.cols;
			for (int k = 0; k < V; k++)
				x[k] += kc_ld(m.bias, c0 + k);
		}
		if (m.keep.p)
			kc_stv<V>(m.keep, i, x);
		for (int k = 0; k < V; k++)
			x[k] = map_one(m, x[k], two ? y[k] : 0.0f);
		kc_stv<V>(m.out, i, x);
	}
}

template <class In, class Out>
static int map_launch(KcuStream *s, const MapArgs<In, Out> &m, int64_t n, bool vec)
{
	const cudaStream_t st = (cudaStream_t)s->stream;
	if (vec)
		return KLAUNCH(&s->err, (map_kernel<8, In, Out>), kc_grid(n, 8 * KC_THREADS), KC_THREADS, 0, st, m, n);
	return KLAUNCH(&s->err, (map_kernel<1, In, Out>), kc_grid(n, KC_THREADS), KC_THREADS, 0, st, m, n);
}

// the map with every tensor in the typed form of T
template <class T>
static MapArgs<KcInT<T>, KcOutT<T>> typed(const MapArgs<KcIn, KcOut> &m)
{
	return {m.op,
		m.act,
		KcOutT<T>{(T *)m.out.p},
		KcInT<T>{(const T *)m.a.p},
		KcInT<T>{(const T *)m.b.p},
		KcInT<T>{(const T *)m.bias.p},
		m.cols,
		KcOutT<T>{(T *)m.keep.p}};
}

// the storage every present tensor of the map shares (KC_F32, KC_BF16), else -1
static int map_dt(const MapArgs<KcIn, KcOut> &m)
{
	const int dts[5] = {m.out.p ? m.out.dt : -2, m.a.p ? m.a.dt : -2, m.b.p ? m.b.dt : -2,
			    m.bias.p ? m.bias.dt : -2, m.keep.p ? m.keep.dt : -2};
	int dt = -2;
	for (int d : dts)
		if (d != -2) {
			if (d == KC_F64 || (dt != -2 && d != dt))
				return -1;
			dt = d;
		}
	return dt;
}

static int map_ex(KcuStream *s, const MapArgs<KcIn, KcOut> &m, int64_t n)
{
	if (n == 0)
		return 0;
	const bool vec = kc_vec_ok(n, {m.out.p, m.a.p, m.b.p, m.keep.p}) && (!m.bias.p || m.cols % 8 == 0);
	switch (map_dt(m)) {
	case KC_BF16: return map_launch(s, typed<bf16>(m), n, vec);
	case KC_F32: return map_launch(s, typed<float>(m), n, vec);
	default: return map_launch(s, m, n, vec);
	}
}

int kc_map(KcuStream *s, int op, int act, KcOut out, KcIn a, KcIn b, int64_t n)
{
	MapArgs<KcIn, KcOut> m = {op, act, out, a, b, KcIn{nullptr, 0}, 1, KcOut{nullptr, 0}};
	return map_ex(s, m, n);
}

int kc_map_bias(KcuStream *s, KcOut out, KcIn a, KcIn bias, int64_t cols, int64_t n)
{
	MapArgs<KcIn, KcOut> m = {KC_MAP_COPY, 0, out, a, KcIn{nullptr, 0}, bias, cols, KcOut{nullptr, 0}};
	return map_ex(s, m, n);
}

int kcu_convert(KcuStream *s, KTensor *dst, const KTensor *src)
{
	if (dst->dtype == KDT_F64 || src->dtype == KDT_F64)
		return -ENOTSUP; // the f64 path is the CPU backend's
	if (dst->dtype == src->dtype)
		return cuda_try(&s->err, cudaMemcpyAsync(dst->data, src->data, kern_nbytes(src),
							 cudaMemcpyDeviceToDevice, (cudaStream_t)s->stream));
	return kc_map(s, KC_MAP_COPY, 0, kc_out(dst), kc_in(src), KcIn{nullptr, 0}, kern_numel(src));
}

int kcu_add(KcuStream *s, KTensor *out, const KTensor *a, const KTensor *b, int64_t n)
{
	return kc_map(s, KC_MAP_ADD, 0, kc_out(out), kc_in(a), kc_in(b), n);
}

// ---- the linear layer ----
int kcu_linear(KcuStream *s, const KLinear *a, int64_t N, int IC, int OC)
{
	KcMM m = {};
	m.ta = 0, m.tb = a->trans_w, m.M = N, m.N = OC, m.K = IC;
	m.A = kc_in(a->in), m.lda = IC, m.B = kc_in(a->w), m.ldb = a->trans_w ? IC : OC;
	m.ldc = OC, m.alpha = 1.0f, m.bias = kc_in(a->bias);
	if (a->act == KACT_NONE) { // residual add: the product reads the residual in C's place, beta 1
		m.C = kc_out(a->out);
		if (a->residual && a->residual->dtype == a->out->dtype)
			m.Cin = kc_in(a->residual), m.accumulate = 1;
		else if (a->residual) { // another dtype: converted into out first
			KC_TRY(kcu_convert(s, a->out, a->residual));
			m.accumulate = 1;
		}
		return kc_mm(s, m);
	}
	if (a->act == KACT_GELU_TANH) { // cuBLASLt's GELU epilogue, the pre-activation kept as aux
		m.C = kc_out(a->out);
		KgEpi epi = a->pre ? (a->bias ? KGEMM_EPI_GELU_AUX_BIAS : KGEMM_EPI_GELU_AUX)
				   : (a->bias ? KGEMM_EPI_GELU_BIAS : KGEMM_EPI_GELU);
		int rc = kc_mm_epi(s, m, epi, kc_out(a->pre), KcOut{nullptr, 0});
		if (rc != -ENOTSUP)
			return rc;
	}
	// exact GELU and QuickGELU are no cuBLASLt epilogue: one product with the bias epilogue into pre
	// (stored in its dtype), then one pass act(pre) from the stored value (in place without pre)
	KTensor *pre = a->pre ? a->pre : a->out;
	m.C = kc_out(pre);
	KC_TRY(kc_mm(s, m));
	return kc_map(s, KC_MAP_ACT, a->act, kc_out(a->out), kc_in(pre), KcIn{nullptr, 0}, N * OC);
}

// d(pre) = din · act'(in_pre), written over din, and its column sums: one pass
template <class In, class Out>
struct DactSrc {
	static constexpr int NOUT = 1;
	Out din;
	In pre;
	int act, C;
	__device__ void at(int, int64_t m, int col, float *v) const
	{
		int64_t i = m * C + col;
		v[0] = kc_ldo(din, i) * kc_dact(act, kc_ld(pre, i));
		kc_st(din, i, v[0]);
	}
};

// plain rows of an (M, C) matrix (8 columns at once when aligned: 16-byte loads)
template <class In>
struct RowSrc {
	static constexpr int NOUT = 1;
	static constexpr bool VEC8 = true;
	In x;
	int C;
	__device__ void at(int, int64_t m, int col, float *v) const { v[0] = kc_ld(x, m * C + col); }
	__device__ void at8(int, int64_t m, int col, float v[][8]) const { kc_ld8(x, m * C + col, v[0]); }
	bool aligned() const { return kc_vec_ok(C, {x.p}); }
};

static KcColDst col_dst(KGrad g)
{
	KcColDst d = {};
	d.t[0] = kc_grad(g), d.acc[0] = g.acc, d.gstride = 0;
	return d;
}

static int linear_din(KcuStream *s, const KLinearBwd *a, int64_t N, int IC, int OC)
{
	KcMM m = {};
	m.ta = 0, m.tb = !a->trans_w, m.M = N, m.N = IC, m.K = OC;
	m.A = kc_in(a->dout), m.lda = OC, m.B = kc_in(a->w), m.ldb = a->trans_w ? IC : OC;
	m.C = kc_grad(a->din), m.ldc = IC, m.alpha = 1.0f, m.accumulate = a->din.acc;
	if (a->in_act == KACT_NONE)
		return kc_mm(s, m);
	// GELU-backward epilogue (din is KG_SET here); cuBLASLt's writes its bias gradient, never adds
	const KcIn pre = kc_in(a->in_pre);
	if (a->in_act == KACT_GELU_TANH && !(a->din_bias.t && a->din_bias.acc)) {
		KgEpi epi = a->din_bias.t ? KGEMM_EPI_DGELU_BGRAD : KGEMM_EPI_DGELU;
		int rc = kc_mm_epi(s, m, epi, KcOut{(void *)pre.p, pre.dt}, kc_grad(a->din_bias));
		if (rc != -ENOTSUP)
			return rc;
	}
	// the product in din itself (stored in its dtype), then act' in place and the column sums: one pass
	KC_TRY(kc_mm(s, m));
	if (!a->din_bias.t)
		return kc_map(s, KC_MAP_DACT, a->in_act, m.C, KcIn{m.C.p, m.C.dt}, pre, N * IC);
	const KcColDst d = col_dst(a->din_bias);
	if (m.C.dt == pre.dt && pre.dt == KC_BF16)
		return kc_colsum(
			s, DactSrc<KcInT<bf16>, KcOutT<bf16>>{{(bf16 *)m.C.p}, {(const bf16 *)pre.p}, a->in_act, IC}, 1,
			N, IC, d);
	if (m.C.dt == pre.dt && pre.dt == KC_F32)
		return kc_colsum(
			s,
			DactSrc<KcInT<float>, KcOutT<float>>{{(float *)m.C.p}, {(const float *)pre.p}, a->in_act, IC},
			1, N, IC, d);
	return kc_colsum(s, DactSrc<KcIn, KcOut>{m.C, pre, a->in_act, IC}, 1, N, IC, d);
}

int kcu_linear_bwd(KcuStream *s, const KLinearBwd *a, int64_t N, int IC, int OC)
{
	if (a->din.t)
		KC_TRY(linear_din(s, a, N, IC, OC));
	int dbias_done = !a->dbias.t;
	if (a->dw.t) {
		KcMM m = {};
		m.ta = 1, m.tb = 0, m.K = N, m.alpha = 1.0f, m.accumulate = a->dw.acc, m.C = kc_grad(a->dw);
		if (a->trans_w) // dW (OC, IC) = doutᵀ · in
			m.M = OC, m.N = IC, m.A = kc_in(a->dout), m.lda = OC, m.B = kc_in(a->in), m.ldb = IC,
			m.ldc = IC;
		else // dW (IC, OC) = inᵀ · dout
			m.M = IC, m.N = OC, m.A = kc_in(a->in), m.lda = IC, m.B = kc_in(a->dout), m.ldb = OC,
			m.ldc = OC;
		int rc = -ENOTSUP;
		if (a->dbias.t && !a->dbias.acc) // the bias-gradient epilogue sums dout's rows (column-major: A or B)
			rc = kc_mm_epi(s, m, a->trans_w ? KGEMM_EPI_BGRADB : KGEMM_EPI_BGRADA, KcOut{nullptr, 0},
				       kc_grad(a->dbias));
		if (rc == 0)
			dbias_done = 1;
		else if (rc == -ENOTSUP)
			KC_TRY(kc_mm(s, m));
		else
			return rc;
	}
	if (dbias_done)
		return 0;
	switch (kc_same_dt({a->dout})) {
	case KC_BF16: return kc_colsum(s, RowSrc<KcInT<bf16>>{kc_int<bf16>(a->dout), OC}, 1, N, OC, col_dst(a->dbias));
	case KC_F32: return kc_colsum(s, RowSrc<KcInT<float>>{kc_int<float>(a->dout), OC}, 1, N, OC, col_dst(a->dbias));
	default: return kc_colsum(s, RowSrc<KcIn>{kc_in(a->dout), OC}, 1, N, OC, col_dst(a->dbias));
	}
}
