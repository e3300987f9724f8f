// cuDNN's fused flash attention graphs through the backend API (cudnn-frontend is not used): the
// operation graphs its SDPA nodes build, on strides that read the packed qkv with no transposes.
#include "kattn_cudnn_graph.h" // defines: Graph, U_*, kcg_*

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

// The graphs are the ones cudnn-frontend's SDPA nodes (scaled_dot_product_flash_attention.h,
// CompositeSDPANode / CompositeSDPABackwardNode, composite softmax and diagonal-band mask) hand to
// cuDNN's fusion engines, which recognise that pattern:
//   forward  S = Q·Kᵀ (f32) · scale; causal: S = select(row ≥ col, S, −inf); M = max_row S;
//            E = exp(S − M); L = Σ_row E; Stats = M + log L; P = E / L (bf16); O = P·V
//   backward Dsum = Σ_row dO∘O; S as above (with −Stats before the mask); P = exp(S);
//            dV = Pᵀ·dO; dP = dO·Vᵀ; dS = P∘(dP − Dsum)·scale; dK = dSᵀ·Q; dQacc (f32) = dS·K; dQ = dQacc
//   deterministic backward (KC_BWD_DET): dQ = dS·K with no f32 accumulator — the graph the frontend
//            builds for SDPA_backward_attributes.set_deterministic_algorithm(true) on Hopper (its
//            "dP workspace" implementation: dS kept in cuDNN's workspace, dQ from it in a pass of its
//            own, no atomics), and for a dBias
// Layouts: Q, K, V are (B, H, T, hd) views of qkv (B, T, 3·D) with strides (T·3D, hd, 3D, 1) at
// offsets 0, D, 2D (Kᵀ and Vᵀ swap the last two); O, dO (T·D, hd, D, 1); Stats (B, H, T, 1)
// f32 with strides (H·T, T, 1, 1) is the contract's lse exactly (no conversion); dQ, dK, dV are
// the same views of dqkv. Dsum and dQacc live in the workspace ahead of cuDNN's own.

// ---- the graph builder ----
static void g_fail(Graph *g, cudnnStatus_t s, const char *what)
{
	if (g->rc)
		return;
	char last[160] = "";
	cudnnGetLastErrorString(last, sizeof last);
	g->rc = s / 1000 == 3 ? -ENOTSUP : s / 1000 == 2 ? -ENOTSUP : -EIO;
	snprintf(g->why, sizeof g->why, "%s: %s%s%s", what, cudnnGetErrorString(s), last[0] ? ": " : "", last);
}

static cudnnBackendDescriptor_t g_new(Graph *g, cudnnBackendDescriptorType_t t)
{
	cudnnBackendDescriptor_t d = NULL;
	if (g->rc)
		return NULL;
	if (g->nd == KC_MAX_DESC) {
		g->rc = -ENOMEM;
		snprintf(g->why, sizeof g->why, "more than %d descriptors", KC_MAX_DESC);
		return NULL;
	}
	cudnnStatus_t s = cudnnBackendCreateDescriptor(t, &d);
	if (s != CUDNN_STATUS_SUCCESS) {
		g_fail(g, s, "cudnnBackendCreateDescriptor");
		return NULL;
	}
	return g->d[g->nd++] = d;
}

static void g_set(Graph *g, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t,
		  int64_t n, const void *v)
{
	if (g->rc)
		return;
	cudnnStatus_t s = cudnnBackendSetAttribute(d, a, t, n, v);
	if (s != CUDNN_STATUS_SUCCESS) {
		char what[64];
		snprintf(what, sizeof what, "attribute %d", (int)a);
		g_fail(g, s, what);
	}
}

static void g_fin(Graph *g, cudnnBackendDescriptor_t d, const char *what)
{
	if (g->rc)
		return;
	cudnnStatus_t s = cudnnBackendFinalize(d);
	if (s != CUDNN_STATUS_SUCCESS)
		g_fail(g, s, what);
}

void kcg_free(Graph *g)
{
	while (g->nd > 0)
		cudnnBackendDestroyDescriptor(g->d[--g->nd]);
	g->nops = 0;
}

static cudnnBackendDescriptor_t g_desc(Graph *g, int64_t id, cudnnDataType_t dt, const int64_t dims[4],
				       const int64_t strides[4], bool virt, bool byval)
{
	cudnnBackendDescriptor_t t = g_new(g, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
	int64_t align = 16;
	g_set(g, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
	g_set(g, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
	g_set(g, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
	g_set(g, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id);
	g_set(g, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
	g_set(g, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
	if (byval)
		g_set(g, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byval);
	g_fin(g, t, "tensor");
	return t;
}

// a 4-d tensor: uid 0 makes a virtual one with a fresh id
static cudnnBackendDescriptor_t g_tensor(Graph *g, int64_t uid, cudnnDataType_t dt, const int64_t dims[4],
					 const int64_t strides[4])
{
	return g_desc(g, uid ? uid : g->uid++, dt, dims, strides, uid == 0, false);
}

// a scalar passed by value at execution (a host pointer in the variant pack)
static cudnnBackendDescriptor_t g_scalar(Graph *g, int64_t uid, cudnnDataType_t dt)
{
	static const int64_t one[4] = {1, 1, 1, 1};
	return g_desc(g, uid, dt, one, one, false, true);
}

static void g_op(Graph *g, cudnnBackendDescriptor_t op, const char *what)
{
	g_fin(g, op, what);
	if (!g->rc && g->nops < KC_MAX_OPS)
		g->ops[g->nops++] = op;
	else if (!g->rc)
		g->rc = -ENOMEM, snprintf(g->why, sizeof g->why, "more than %d operations", KC_MAX_OPS);
}

// y = mode(x, b, t) computed in prec; axis >= 0 for GEN_INDEX. Returns y.
static cudnnBackendDescriptor_t g_pw(Graph *g, cudnnPointwiseMode_t mode, cudnnDataType_t prec,
				     cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
				     cudnnBackendDescriptor_t y, int64_t axis)
{
	cudnnBackendDescriptor_t pw = g_new(g, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
	g_set(g, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
	g_set(g, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
	if (axis >= 0)
		g_set(g, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
	g_fin(g, pw, "pointwise descriptor");
	cudnnBackendDescriptor_t op = g_new(g, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
	float one = 1.0f;
	g_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
	g_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
	if (b)
		g_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
	if (t)
		g_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t);
	g_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
	g_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
	g_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
	g_op(g, op, "pointwise operation");
	return y;
}

// c = a·b in f32 over the last two dims; m, n, k: override tensors (sequence lengths) or NULL
static void g_matmul(Graph *g, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c,
		     cudnnBackendDescriptor_t m, cudnnBackendDescriptor_t n, cudnnBackendDescriptor_t k)
{
	cudnnBackendDescriptor_t mm = g_new(g, CUDNN_BACKEND_MATMUL_DESCRIPTOR);
	cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
	g_set(g, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
	g_fin(g, mm, "matmul descriptor");
	cudnnBackendDescriptor_t op = g_new(g, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
	g_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
	g_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
	g_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c);
	g_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm);
	if (m)
		g_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &m);
	if (n)
		g_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n);
	if (k)
		g_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &k);
	g_op(g, op, "matmul operation");
}

static void g_reduce(Graph *g, cudnnReduceTensorOp_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y,
		     int ver)
{
	cudnnBackendDescriptor_t r = g_new(g, CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
	cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
	g_set(g, r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
	g_set(g, r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
#if CUDNN_VERSION >= 91100
	bool det = false; // the frontend's default, stated where the library knows the attribute
	if (ver >= 91100)
		g_set(g, r, CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, CUDNN_TYPE_BOOLEAN, 1, &det);
#else
	(void)ver;
#endif
	g_fin(g, r, "reduction descriptor");
	cudnnBackendDescriptor_t op = g_new(g, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
	g_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &r);
	g_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
	g_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
	g_op(g, op, "reduction operation");
}

static void g_reshape(Graph *g, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
	cudnnBackendDescriptor_t op = g_new(g, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
	g_set(g, op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
	g_set(g, op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
	g_op(g, op, "reshape operation");
}

// ---- the SDPA graphs ----
typedef struct {
	int64_t B, H, T, hd, D;
	int64_t dq[4], sq[4], dkt[4], skt[4], so[4], dss[4], sss[4], dst[4], sst[4];
} Dims;

static Dims dims_of(int B, int T, int H, int hd)
{
	int64_t D = (int64_t)H * hd, R = 3 * D;
	Dims d = {B,
		  H,
		  T,
		  hd,
		  D,
		  {B, H, T, hd},
		  {T * R, hd, R, 1}, // Q, K, V (and dQ, dK, dV) in the packed rows
		  {B, H, hd, T},
		  {T * R, hd, 1, R}, // Kᵀ, Vᵀ: the same memory, last two dims swapped
		  {T * D, hd, D, 1}, // O, dO in (B, T, D)
		  {B, H, T, T},
		  {(int64_t)H * T * T, (int64_t)T * T, T, 1}, // scores (virtual)
		  {B, H, T, 1},
		  {(int64_t)H * T, T, 1, 1}}; // row statistics
	return d;
}

// S with −inf (cuDNN < 9.10: the lowest float, as the frontend does) where the key is after the
// query: GEN_INDEX rows and columns, row ≥ col, select
static cudnnBackendDescriptor_t g_causal(Graph *g, const Dims *d, cudnnBackendDescriptor_t s,
					 cudnnBackendDescriptor_t neginf)
{
	cudnnBackendDescriptor_t row = g_tensor(g, 0, CUDNN_DATA_INT32, d->dss, d->sss);
	cudnnBackendDescriptor_t col = g_tensor(g, 0, CUDNN_DATA_INT32, d->dss, d->sss);
	cudnnBackendDescriptor_t keep = g_tensor(g, 0, CUDNN_DATA_BOOLEAN, d->dss, d->sss);
	// the indices computed in the graph's compute type (f32) into int32, as the frontend's mask does
	g_pw(g, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, s, NULL, NULL, row, 2);
	g_pw(g, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, s, NULL, NULL, col, 3);
	g_pw(g, CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, col, NULL, keep, -1);
	return g_pw(g, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, s, neginf, keep,
		    g_tensor(g, 0, CUDNN_DATA_FLOAT, d->dss, d->sss), -1);
}

// the padding mask (row < seq_q and col < seq_kv) the frontend adds for cuDNN <= 9.15.0 backward
static cudnnBackendDescriptor_t g_padding(Graph *g, const Dims *d, cudnnBackendDescriptor_t s,
					  cudnnBackendDescriptor_t seqq, cudnnBackendDescriptor_t seqkv,
					  cudnnBackendDescriptor_t neginf)
{
	cudnnBackendDescriptor_t t[5];
	for (int i = 0; i < 5; i++)
		t[i] = g_tensor(g, 0, i < 2 ? CUDNN_DATA_INT32 : CUDNN_DATA_BOOLEAN, d->dss, d->sss);
	g_pw(g, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, s, NULL, NULL, t[0], 2);
	g_pw(g, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, s, NULL, NULL, t[1], 3);
	g_pw(g, CUDNN_POINTWISE_CMP_LT, CUDNN_DATA_BOOLEAN, t[0], seqq, NULL, t[2], -1);
	g_pw(g, CUDNN_POINTWISE_CMP_LT, CUDNN_DATA_BOOLEAN, t[1], seqkv, NULL, t[3], -1);
	g_pw(g, CUDNN_POINTWISE_LOGICAL_AND, CUDNN_DATA_BOOLEAN, t[2], t[3], NULL, t[4], -1);
	return g_pw(g, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, s, neginf, t[4],
		    g_tensor(g, 0, CUDNN_DATA_FLOAT, d->dss, d->sss), -1);
}

#define VT(dt, dims, strides) g_tensor(g, 0, (dt), (dims), (strides))
#define F32 CUDNN_DATA_FLOAT
#define BF16 CUDNN_DATA_BFLOAT16

static void graph_fwd(Graph *g, const Dims *d, int causal, int ver)
{
	cudnnBackendDescriptor_t q = g_tensor(g, U_Q, BF16, d->dq, d->sq), kt = g_tensor(g, U_K, BF16, d->dkt, d->skt);
	cudnnBackendDescriptor_t v = g_tensor(g, U_V, BF16, d->dq, d->sq), o = g_tensor(g, U_O, BF16, d->dq, d->so);
	cudnnBackendDescriptor_t stats = g_tensor(g, U_STATS, F32, d->dst, d->sst);
	cudnnBackendDescriptor_t scale = g_scalar(g, U_SCALE, F32), neginf = causal ? g_scalar(g, U_NEGINF, F32) : NULL;
	cudnnBackendDescriptor_t s = VT(F32, d->dss, d->sss);
	g_matmul(g, q, kt, s, NULL, NULL, NULL);
	s = g_pw(g, CUDNN_POINTWISE_MUL, F32, s, scale, NULL, VT(F32, d->dss, d->sss), -1);
	if (causal)
		s = g_causal(g, d, s, neginf);
	cudnnBackendDescriptor_t m = VT(F32, d->dst, d->sst), l = VT(F32, d->dst, d->sst);
	g_reduce(g, CUDNN_REDUCE_TENSOR_MAX, s, m, ver);
	cudnnBackendDescriptor_t x = g_pw(g, CUDNN_POINTWISE_SUB, F32, s, m, NULL, VT(F32, d->dss, d->sss), -1);
	cudnnBackendDescriptor_t e = g_pw(g, CUDNN_POINTWISE_EXP, F32, x, NULL, NULL, VT(F32, d->dss, d->sss), -1);
	g_reduce(g, CUDNN_REDUCE_TENSOR_ADD, e, l, ver);
	cudnnBackendDescriptor_t lg = g_pw(g, CUDNN_POINTWISE_LOG, F32, l, NULL, NULL, VT(F32, d->dst, d->sst), -1);
	g_pw(g, CUDNN_POINTWISE_ADD, F32, m, lg, NULL, stats, -1);
	cudnnBackendDescriptor_t p = g_pw(g, CUDNN_POINTWISE_DIV, F32, e, l, NULL, VT(BF16, d->dss, d->sss), -1);
	g_matmul(g, p, v, o, NULL, NULL, NULL);
}

static void graph_bwd(Graph *g, const Dims *d, int causal, int ver, int pad, int det)
{
	const int64_t dt4[4] = {d->B, d->H, d->T, d->hd}, st4[4] = {d->H * d->T * d->hd, d->T * d->hd, d->H * d->hd, 1};
	const int64_t sacc[4] = {d->H * d->T * d->hd, d->T * d->hd, d->hd, 1};
	const int64_t dtr[4] = {d->B, d->H, d->T, d->T}, str[4] = {d->T * d->T * d->H, d->T * d->T, 1, d->T};
	const int64_t dseq[4] = {d->B, 1, 1, 1}, sseq[4] = {1, 1, 1, 1};
	cudnnBackendDescriptor_t q = g_tensor(g, U_Q, BF16, d->dq, d->sq), kt = g_tensor(g, U_K, BF16, d->dkt, d->skt);
	cudnnBackendDescriptor_t vt = g_tensor(g, U_V, BF16, d->dkt, d->skt), o = g_tensor(g, U_O, BF16, d->dq, d->so);
	cudnnBackendDescriptor_t dout = g_tensor(g, U_DO, BF16, d->dq, d->so);
	cudnnBackendDescriptor_t stats = g_tensor(g, U_STATS, F32, d->dst, d->sst);
	cudnnBackendDescriptor_t dq = g_tensor(g, U_DQ, BF16, d->dq, d->sq), dk = g_tensor(g, U_DK, BF16, d->dq, d->sq);
	cudnnBackendDescriptor_t dv = g_tensor(g, U_DV, BF16, d->dq, d->sq);
	cudnnBackendDescriptor_t dsum = g_tensor(g, U_DSUM, F32, d->dst, d->sst);
	cudnnBackendDescriptor_t dqacc = det ? NULL : g_tensor(g, U_DQACC, F32, d->dq, sacc);
	cudnnBackendDescriptor_t scale = g_scalar(g, U_SCALE, F32), one = g_scalar(g, U_ONE, F32);
	cudnnBackendDescriptor_t neginf = causal || pad ? g_scalar(g, U_NEGINF, F32) : NULL;
	cudnnBackendDescriptor_t seqq = pad ? g_tensor(g, U_SEQQ, CUDNN_DATA_INT32, dseq, sseq) : NULL;
	cudnnBackendDescriptor_t seqkv = pad ? g_tensor(g, U_SEQKV, CUDNN_DATA_INT32, dseq, sseq) : NULL;

	// Dsum = Σ_row dO∘O, kept in the workspace
	cudnnBackendDescriptor_t t = g_pw(g, CUDNN_POINTWISE_MUL, F32, dout, o, NULL, VT(F32, dt4, st4), -1);
	cudnnBackendDescriptor_t r = VT(F32, d->dst, d->sst);
	g_reduce(g, CUDNN_REDUCE_TENSOR_ADD, t, r, ver);
	g_pw(g, CUDNN_POINTWISE_MUL, F32, r, one, NULL, dsum, -1);
	// P recomputed from Stats
	cudnnBackendDescriptor_t s = VT(F32, d->dss, d->sss);
	g_matmul(g, q, kt, s, seqq, seqkv, NULL);
	s = g_pw(g, CUDNN_POINTWISE_MUL, F32, s, scale, NULL, VT(F32, d->dss, d->sss), -1);
	if (pad)
		s = g_padding(g, d, s, seqq, seqkv, neginf);
	s = g_pw(g, CUDNN_POINTWISE_SUB, F32, s, stats, NULL, VT(F32, d->dss, d->sss), -1);
	if (pad && ver < 91000)
		s = g_padding(g, d, s, seqq, seqkv, neginf);
	if (causal)
		s = g_causal(g, d, s, neginf);
	cudnnBackendDescriptor_t p = g_pw(g, CUDNN_POINTWISE_EXP, F32, s, NULL, NULL, VT(F32, d->dss, d->sss), -1);
	// dV = Pᵀ·dO
	cudnnBackendDescriptor_t pt = VT(BF16, dtr, str);
	g_reshape(g, p, pt);
	g_matmul(g, pt, dout, dv, seqkv, NULL, seqq);
	// dS = P∘(dO·Vᵀ − Dsum)·scale
	cudnnBackendDescriptor_t dp = VT(F32, d->dss, d->sss);
	g_matmul(g, dout, vt, dp, seqq, seqkv, NULL);
	dp = g_pw(g, CUDNN_POINTWISE_SUB, F32, dp, dsum, NULL, VT(F32, d->dss, d->sss), -1);
	dp = g_pw(g, CUDNN_POINTWISE_MUL, F32, dp, p, NULL, VT(F32, d->dss, d->sss), -1);
	cudnnBackendDescriptor_t ds = g_pw(g, CUDNN_POINTWISE_MUL, F32, dp, scale, NULL, VT(F32, d->dss, d->sss), -1);
	// dK = dSᵀ·Q
	cudnnBackendDescriptor_t dst_ = VT(BF16, dtr, str);
	g_reshape(g, ds, dst_);
	g_matmul(g, dst_, q, dk, seqkv, NULL, seqq);
	// dQ = dS·K (K: Kᵀ reshaped back; a virtual f32 as the frontend's), through the f32 accumulator
	// unless deterministic
	cudnnBackendDescriptor_t k = VT(F32, d->dq, d->sq);
	g_reshape(g, kt, k);
	if (det) {
		g_matmul(g, ds, k, dq, seqq, NULL, seqkv);
		return;
	}
	g_matmul(g, ds, k, dqacc, seqq, NULL, seqkv);
	g_pw(g, CUDNN_POINTWISE_IDENTITY, F32, dqacc, NULL, NULL, dq, -1);
}

int kcg_sdpa(Graph *g, int bwd, int B, int T, int H, int hd, int causal, int pad, int ver)
{
	memset(g, 0, sizeof *g);
	g->uid = U_VIRTUAL;
	Dims d = dims_of(B, T, H, hd);
	if (bwd)
		graph_bwd(g, &d, causal, ver, pad, bwd == KC_BWD_DET);
	else
		graph_fwd(g, &d, causal, ver);
	return g->rc;
}

cudnnBackendDescriptor_t kcg_plan(Graph *g, cudnnHandle_t h)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" // the handle attributes work in every 9.x
	cudnnBackendDescriptor_t og = g_new(g, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	g_set(g, og, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, g->nops, g->ops);
	g_set(g, og, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
	g_fin(g, og, "operation graph");
	cudnnBackendDescriptor_t heur = g_new(g, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
	cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
	g_set(g, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &og);
	g_set(g, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
	g_fin(g, heur, "engine heuristics");
	int64_t n = 0;
	if (!g->rc) {
		cudnnStatus_t s = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
							   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL);
		if (s != CUDNN_STATUS_SUCCESS)
			g_fail(g, s, "heuristics results");
	}
	if (n > 8)
		n = 8;
	cudnnBackendDescriptor_t cfg[8];
	for (int64_t i = 0; i < n; i++)
		cfg[i] = g_new(g, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
	if (!g->rc && n > 0) {
		cudnnStatus_t s = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
							   CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n, cfg);
		if (s != CUDNN_STATUS_SUCCESS)
			g_fail(g, s, "heuristics results");
	}
	if (!g->rc && n == 0)
		g->rc = -ENOTSUP, snprintf(g->why, sizeof g->why, "cuDNN's heuristics offer no engine for this graph");
	for (int64_t i = 0; i < n && !g->rc; i++) {
		cudnnBackendDescriptor_t plan = g_new(g, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
		g_set(g, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
		g_set(g, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[i]);
		g_fin(g, plan, "execution plan");
		if (!g->rc)
			return plan;
		if (i + 1 < n) // the next configuration may finalize where this one did not
			g->rc = 0;
	}
	return NULL;
#pragma GCC diagnostic pop
}

// Builds the operations of one graph and finalizes each, then the operation graph without a
// handle: no device needed, so make test checks every descriptor, attribute and shape on any
// machine with cuDNN. 0, or -errno with the failing step in why.
int kc_attn_graph_check(int bwd, int B, int T, int H, int hd, int causal, int pad, int ver, int *nops, char *why,
			size_t len)
{
	Graph g;
	kcg_sdpa(&g, bwd, B, T, H, hd, causal, pad, ver);
	cudnnBackendDescriptor_t og = g_new(&g, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	g_set(&g, og, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, g.nops, g.ops);
	g_fin(&g, og, "operation graph");
	*nops = g.nops;
	snprintf(why, len, "%s", g.why);
	int rc = g.rc;
	kcg_free(&g);
	return rc;
}
