// The own attention backward, FlashAttention-2 style and deterministic: the scores are recomputed
// from the saved lse; dK, dV come from one kernel per key block, dQ from one per query block.
#include "kattn_tile.h" // defines: KATTN_BM, kattn_load_rows, kattn_store_rows, kattn_check, kmma.h's fragments

#include <math.h>

// Why two kernels: FlashAttention-2 adds each (key block, query block) pair's dQ part into dQ with
// float atomics, whose order changes the rounding. Here every gradient element has one writer that
// sums in a fixed order, at the price of computing S and dP twice (7 tile GEMMs per pair, not 5).

// D = rowsum(dO ∘ O) per (b, t, h) row, into (B, H, T): HD/8 lanes per row, one 16-byte load of
// each operand per lane, a fixed shuffle tree
template <int HD>
__global__ void __launch_bounds__(256)
	kattn_dot_kernel(float *dvec, const kbf16 *dout, const kbf16 *out, int T, int H, int64_t rows)
{
	constexpr int L = HD / 8;
	const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, r = gid / L;
	const int c = 8 * (int)(gid % L);
	float acc = 0.0f;
	if (r < rows) {
		uint4 a = *reinterpret_cast<const uint4 *>(dout + r * HD + c);
		uint4 o = *reinterpret_cast<const uint4 *>(out + r * HD + c);
		const __nv_bfloat162 *a2 = reinterpret_cast<const __nv_bfloat162 *>(&a);
		const __nv_bfloat162 *o2 = reinterpret_cast<const __nv_bfloat162 *>(&o);
		for (int i = 0; i < 4; i++)
			acc += __low2float(a2[i]) * __low2float(o2[i]) + __high2float(a2[i]) * __high2float(o2[i]);
	}
	for (int off = L / 2; off > 0; off /= 2)
		acc += __shfl_xor_sync(0xffffffffu, acc, off);
	if (r < rows && gid % L == 0) {
		int h = (int)(r % H);
		int64_t bt = r / H;
		dvec[(bt / T * H + h) * T + bt % T] = acc;
	}
}

// the per-key-block kernel's query tile (HD 128: 32 queries, so its accumulators fit the registers)
template <int HD>
__host__ __device__ constexpr int kattn_bq()
{
	return HD <= 64 ? 64 : 32;
}
// HD 32 and 64 keep the warp's K and V rows as fragments in registers, HD 128 reads them from shared memory
template <int HD>
__host__ __device__ constexpr bool kattn_keep()
{
	return HD <= 64;
}

// Block (kb, h, b): keys [k0, k0 + 64) of head h, warp w its 16 keys. Per query tile of BQ (causal:
// from the first query that sees these keys): Sᵀ = K Qᵀ; Pᵀ = 2^(Sᵀ·scale·log2e − lse·log2e) (lse +inf
// past T: P 0); dV += Pᵀ dO; dPᵀ = V dOᵀ; dSᵀ = Pᵀ ∘ (dPᵀ − D); dK += dSᵀ Q; dK scaled at the end.
template <int HD>
__global__ void __launch_bounds__(KATTN_THREADS)
	kattn_dkdv_kernel(kbf16 *dqkv, int acc, const kbf16 *dout, const kbf16 *qkv, const float *lse,
			  const float *dvec, int T, int H, int causal, float sl2, float scale)
{
	constexpr int LD = kattn_ld<HD>(), NK = HD / 16, NO = HD / 8, BQ = kattn_bq<HD>(), NQ = BQ / 8;
	constexpr bool KEEP = kattn_keep<HD>();
	KSHARED_DYN(kbf16, sm);
	kbf16 *sK = sm, *sV = sK + KATTN_BM * LD, *sQ = sV + KATTN_BM * LD, *sO = sQ + BQ * LD;
	float *sL = reinterpret_cast<float *>(sO + BQ * LD), *sD = sL + BQ;
	// key block 0 meets every query under a causal mask: the first blocks start first
	const int k0 = (int)blockIdx.x * KATTN_BM, h = (int)blockIdx.y, b = (int)blockIdx.z;
	const int D = H * HD, warp = (int)threadIdx.x / 32, lane = klane();
	const int64_t rs = 3 * (int64_t)D, bh = (int64_t)b * H + h;
	const kbf16 *base = qkv + (int64_t)b * T * rs + h * HD, *dobase = dout + (int64_t)b * T * D + h * HD;
	const kbf16 *wK = sK + warp * 16 * LD, *wV = sV + warp * 16 * LD;

	kattn_load_rows<HD, KATTN_BM>(sK, base + D, rs, k0, T);
	kattn_load_rows<HD, KATTN_BM>(sV, base + 2 * D, rs, k0, T);
	__syncthreads();
	KFragA kf[NK], vf[NK];
	if (KEEP)
		for (int k = 0; k < NK; k++) {
			kfrag_load_a(kf[k], wK + 16 * k, LD);
			kfrag_load_a(vf[k], wV + 16 * k, LD);
		}
	KFragC dk[NO], dv[NO];
	for (int j = 0; j < NO; j++)
		kfrag_c_zero(dk[j]), kfrag_c_zero(dv[j]);

	for (int q0 = causal ? k0 : 0; q0 < T; q0 += BQ) {
		__syncthreads(); // the previous tile is read
		kattn_load_rows<HD, BQ>(sQ, base, rs, q0, T);
		kattn_load_rows<HD, BQ>(sO, dobase, D, q0, T);
		for (int i = (int)threadIdx.x; i < BQ; i += KATTN_THREADS) {
			bool in = q0 + i < T;
			sL[i] = in ? lse[bh * T + q0 + i] * KATTN_LOG2E : INFINITY;
			sD[i] = in ? dvec[bh * T + q0 + i] : 0.0f;
		}
		__syncthreads();
		KFragC s[NQ], dp[NQ];
		for (int j = 0; j < NQ; j++)
			kfrag_c_zero(s[j]), kfrag_c_zero(dp[j]);
		if (KEEP)
			kattn_mma_abt<HD, NQ / 2>(s, (const KFragA *)kf, sQ);
		else
			kattn_mma_abt<HD, NQ / 2>(s, wK, sQ);
		const bool diag = causal && q0 < k0 + KATTN_BM;
		for (int j = 0; j < NQ; j++)
			for (int i = 0; i < 4; i++) {
				int qi = 8 * j + kfrag_c_col(lane, i), key = k0 + warp * 16 + kfrag_c_row(lane, i);
				float p = exp2f(s[j].x[i] * sl2 - sL[qi]);
				s[j].x[i] = diag && q0 + qi < key ? 0.0f : p;
			}
		kattn_mma_pm<HD, NQ / 2>(dv, s, sO);
		if (KEEP)
			kattn_mma_abt<HD, NQ / 2>(dp, (const KFragA *)vf, sO);
		else
			kattn_mma_abt<HD, NQ / 2>(dp, wV, sO);
		for (int j = 0; j < NQ; j++)
			for (int i = 0; i < 4; i++)
				s[j].x[i] *= dp[j].x[i] - sD[8 * j + kfrag_c_col(lane, i)];
		kattn_mma_pm<HD, NQ / 2>(dk, s, sQ);
	}
	const int r0 = k0 + warp * 16;
	const float ks[2] = {scale, scale}, one[2] = {1.0f, 1.0f};
	kbf16 *dst = dqkv + ((int64_t)b * T + r0) * rs + h * HD;
	kattn_store_rows<NO>(dst + D, rs, dk, ks, T - r0, acc);
	kattn_store_rows<NO>(dst + 2 * D, rs, dv, one, T - r0, acc);
}

// the per-query-block kernel's key tile (HD 128: 32 keys)
template <int HD>
__host__ __device__ constexpr int kattn_bk()
{
	return HD <= 64 ? 64 : 32;
}

// Block (qb, h, b): queries [q0, q0 + 64), warp w its 16. Per key tile of BK up to the diagonal:
// S = Q Kᵀ; P = 2^(S·scale·log2e − lse·log2e), masked; dP = dO Vᵀ; dS = P ∘ (dP − D); dQ += dS K.
template <int HD>
__global__ void __launch_bounds__(KATTN_THREADS)
	kattn_dq_kernel(kbf16 *dqkv, int acc, const kbf16 *dout, const kbf16 *qkv, const float *lse, const float *dvec,
			int T, int H, int causal, float sl2, float scale)
{
	constexpr int LD = kattn_ld<HD>(), NK = HD / 16, NO = HD / 8, BK = kattn_bk<HD>(), NS = BK / 8;
	KSHARED_DYN(kbf16, sm);
	kbf16 *sQ = sm, *sO = sQ + KATTN_BM * LD, *sK = sO + KATTN_BM * LD, *sV = sK + BK * LD;
	const int qb = (int)(gridDim.x - 1 - blockIdx.x), h = (int)blockIdx.y, b = (int)blockIdx.z;
	const int D = H * HD, q0 = qb * KATTN_BM, warp = (int)threadIdx.x / 32, lane = klane();
	const int64_t rs = 3 * (int64_t)D, bh = (int64_t)b * H + h;
	const kbf16 *base = qkv + (int64_t)b * T * rs + h * HD;

	kattn_load_rows<HD, KATTN_BM>(sQ, base, rs, q0, T);
	kattn_load_rows<HD, KATTN_BM>(sO, dout + (int64_t)b * T * D + h * HD, D, q0, T);
	__syncthreads();
	KFragA qf[NK], of[NK];
	for (int k = 0; k < NK; k++) {
		kfrag_load_a(qf[k], sQ + warp * 16 * LD + 16 * k, LD);
		kfrag_load_a(of[k], sO + warp * 16 * LD + 16 * k, LD);
	}
	float l2[2], dd[2];
	for (int hh = 0; hh < 2; hh++) {
		int r = q0 + warp * 16 + kfrag_c_row(lane, 2 * hh);
		l2[hh] = r < T ? lse[bh * T + r] * KATTN_LOG2E : INFINITY;
		dd[hh] = r < T ? dvec[bh * T + r] : 0.0f;
	}
	KFragC dq[NO];
	for (int j = 0; j < NO; j++)
		kfrag_c_zero(dq[j]);

	const int kend = causal ? min(T, q0 + KATTN_BM) : T;
	for (int k0 = 0; k0 < kend; k0 += BK) {
		__syncthreads();
		kattn_load_rows<HD, BK>(sK, base + D, rs, k0, T);
		kattn_load_rows<HD, BK>(sV, base + 2 * D, rs, k0, T);
		__syncthreads();
		KFragC s[NS], dp[NS];
		for (int j = 0; j < NS; j++)
			kfrag_c_zero(s[j]), kfrag_c_zero(dp[j]);
		kattn_mma_abt<HD, NS / 2>(s, (const KFragA *)qf, sK);
		kattn_mma_abt<HD, NS / 2>(dp, (const KFragA *)of, sV);
		const bool edge = k0 + BK > T || (causal && k0 + BK > q0 + warp * 16);
		for (int j = 0; j < NS; j++)
			for (int i = 0; i < 4; i++) {
				int hh = i / 2, key = k0 + 8 * j + kfrag_c_col(lane, i);
				int q = q0 + warp * 16 + kfrag_c_row(lane, i);
				float p = exp2f(s[j].x[i] * sl2 - l2[hh]);
				if (edge && (key >= T || (causal && key > q)))
					p = 0.0f;
				s[j].x[i] = p * (dp[j].x[i] - dd[hh]);
			}
		kattn_mma_pm<HD, NS / 2>(dq, s, sK);
	}
	const int r0 = q0 + warp * 16;
	const float qs[2] = {scale, scale};
	kattn_store_rows<NO>(dqkv + ((int64_t)b * T + r0) * rs + h * HD, rs, dq, qs, T - r0, acc);
}

template <int HD>
static int launch_bwd(KErr *e, kbf16 *dqkv, int acc, const kbf16 *dout, const kbf16 *qkv, const kbf16 *out,
		      const float *lse, float *dvec, int B, int T, int H, int causal, cudaStream_t s)
{
	const int64_t rows = (int64_t)B * T * H;
	const int64_t dot_threads = rows * (HD / 8);
	int rc = KLAUNCH(e, kattn_dot_kernel<HD>, (unsigned)((dot_threads + 255) / 256), 256, 0, s, dvec, dout, out, T,
			 H, rows);
	if (rc < 0)
		return rc;
	const float scale = 1.0f / sqrtf((float)HD), sl2 = scale * KATTN_LOG2E;
	const unsigned nb = (unsigned)((T + KATTN_BM - 1) / KATTN_BM);
	const size_t ld = kattn_ld<HD>(), fb = sizeof(float);
	const size_t smem_kv = (2 * KATTN_BM + 2 * kattn_bq<HD>()) * ld * sizeof(kbf16) + 2 * kattn_bq<HD>() * fb;
	const size_t smem_q = (2 * KATTN_BM + 2 * kattn_bk<HD>()) * ld * sizeof(kbf16);
	if ((rc = kattn_smem_optin(e, kattn_dkdv_kernel<HD>, smem_kv)) < 0 ||
	    (rc = kattn_smem_optin(e, kattn_dq_kernel<HD>, smem_q)) < 0)
		return rc;
	dim3 grid(nb, (unsigned)H, (unsigned)B);
	rc = KLAUNCH(e, kattn_dkdv_kernel<HD>, grid, KATTN_THREADS, smem_kv, s, dqkv, acc, dout, qkv, lse, dvec, T, H,
		     causal, sl2, scale);
	if (rc < 0)
		return rc;
	return KLAUNCH(e, kattn_dq_kernel<HD>, grid, KATTN_THREADS, smem_q, s, dqkv, acc, dout, qkv, lse, dvec, T, H,
		       causal, sl2, scale);
}

extern "C" size_t kattn_own_ws_bytes(int B, int T, int H, int hd)
{
	(void)hd;
	return B > 0 && T > 0 && H > 0 ? (size_t)B * T * H * sizeof(float) : 0;
}

extern "C" int kattn_own_bwd(KErr *e, void *dqkv, int acc, const void *dout, const void *qkv, const void *out,
			     const float *lse, int B, int T, int H, int hd, int causal, void *ws, size_t ws_bytes,
			     cudaStream_t s)
{
	const void *ptrs[] = {dqkv, dout, qkv, out, lse, ws};
	int rc = kattn_check(e, "kattn_own_bwd", B, T, H, hd, ptrs, 6);
	if (rc < 0)
		return rc;
	if (ws_bytes < kattn_own_ws_bytes(B, T, H, hd))
		return kerr_set(e, -ENOSPC, "kattn_own_bwd: workspace %zu bytes, %zu needed", ws_bytes,
				kattn_own_ws_bytes(B, T, H, hd));
	kbf16 *d = static_cast<kbf16 *>(dqkv);
	const kbf16 *dy = static_cast<const kbf16 *>(dout), *x = static_cast<const kbf16 *>(qkv),
		    *y = static_cast<const kbf16 *>(out);
	float *dvec = static_cast<float *>(ws);
	causal = causal != 0, acc = acc != 0;
	switch (hd) {
	case 32: return launch_bwd<32>(e, d, acc, dy, x, y, lse, dvec, B, T, H, causal, s);
	case 64: return launch_bwd<64>(e, d, acc, dy, x, y, lse, dvec, B, T, H, causal, s);
	default: return launch_bwd<128>(e, d, acc, dy, x, y, lse, dvec, B, T, H, causal, s);
	}
}
