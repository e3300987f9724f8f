// The own attention forward, FlashAttention-2 style: one block per 128 queries of one head walks
// the key tiles with an online softmax on tensor cores, so no T x T matrix exists; lse is saved.
#include "kattn_tile.h" // defines: kattn_cp_rows, kattn_mma, KAReg, KAAcc, kattn_store_rows, kattn_check

#include <math.h>

// The block's shape per head dim. 4 warps of 32 query rows (two m16 tiles, so one ldmatrix of K or
// V feeds 4 mma) where the registers allow, HD <= 64; at HD 128 (O alone is 128 registers at 32
// rows) 16 rows a warp. Tiles of 64 keys (32 at HD 128: two blocks an SM fit 164 KiB), double-
// buffered: the next one travels by cp.async while this one is used. Q stays in registers; where
// its shared rows are as large as a K, V buffer they hold the second one.
template <int HD>
struct KFwd {
	static constexpr int WARPS = 4, THREADS = 32 * WARPS, MT = HD <= 64 ? 2 : 1, BM = 16 * MT * WARPS;
	static constexpr int BN = HD <= 64 ? 64 : 32, LD = kattn_pad<HD>();
	static constexpr bool QREG = true, ALIAS = QREG && 2 * BN <= BM;
	static constexpr size_t SMEM = (size_t)(BM + (ALIAS ? 1 : 2) * 2 * BN) * LD * sizeof(kbf16);
};

// Block (qb, h, b): queries [q0, q0 + BM) of head h, warp w its 16·MT rows. Per key tile of BN:
// S = Q Kᵀ (16·MT x BN per warp, f32 in registers), masked (keys past T; causal: keys after the
// query), in the log2 domain; m = running row max over the quad; P = 2^(S − m); O and l rescaled
// by 2^(m_old − m); O += P V with P rounded to bf16 as the next mma's A fragment (KAAcc).
// Key 0 is in the first tile for every row, so m is finite from then on.
template <int HD>
__global__ void __launch_bounds__(KFwd<HD>::THREADS)
	kattn_fwd_kernel(kbf16 *out, float *lse, const kbf16 *qkv, int T, int H, int causal, float sl2)
{
	typedef KFwd<HD> C;
	constexpr int LD = C::LD, NK = HD / 16, NO = HD / 8, MT = C::MT, BM = C::BM, BN = C::BN, NS = BN / 8;
	constexpr int NT = C::THREADS, WR = 16 * MT;
	KSHARED_DYN(kbf16, sm);
	kbf16 *const sQ = sm, *const buf0 = sm + BM * LD, *const buf1 = C::ALIAS ? sm : buf0 + 2 * BN * LD;
	// the last query blocks have the most keys under a causal mask: they start first
	const int qb = (int)(gridDim.x - 1 - blockIdx.x), h = (int)blockIdx.y, b = (int)blockIdx.z;
	const int D = H * HD, q0 = qb * BM, warp = (int)threadIdx.x / 32, lane = klane(), r0 = q0 + warp * WR;
	const int64_t rs = 3 * (int64_t)D;
	const kbf16 *base = qkv + (int64_t)b * T * rs + h * HD;
	const int kend = causal ? min(T, q0 + BM) : T, ntiles = (kend + BN - 1) / BN;

	kattn_cp_rows<HD, BM, NT>(sQ, base, rs, q0, T);
	kattn_cp_rows<HD, BN, NT>(buf0, base + D, rs, 0, T);
	kattn_cp_rows<HD, BN, NT>(buf0 + BN * LD, base + 2 * D, rs, 0, T);
	kcp_async_commit();
	KFragA qf[C::QREG ? MT * NK : 1];
	if (C::QREG) {
		kcp_async_wait<0>();
		__syncthreads();
		KUNROLL
		for (int i = 0; i < MT; i++) {
			KUNROLL
			for (int k = 0; k < NK; k++)
				kfrag_load_a(qf[i * NK + k], sQ + (warp * WR + 16 * i) * LD + 16 * k, LD);
		}
	}
	float m[MT][2], l[MT][2];
	KFragC o[MT][NO];
	kattn_c_zero(o);
	KUNROLL
	for (int i = 0; i < MT; i++)
		m[i][0] = m[i][1] = -INFINITY, l[i][0] = l[i][1] = 0.0f;

	for (int it = 0; it < ntiles; it++) {
		const int k0 = it * BN;
		// tile it is in; every warp is done with tile it - 1 (and with Q's shared rows), so its
		// buffer takes tile it + 1
		kcp_async_wait<0>();
		__syncthreads();
		const kbf16 *sK = it & 1 ? buf1 : buf0, *sV = sK + BN * LD;
		if (it + 1 < ntiles) {
			kbf16 *nb = it & 1 ? buf0 : buf1;
			kattn_cp_rows<HD, BN, NT>(nb, base + D, rs, k0 + BN, T);
			kattn_cp_rows<HD, BN, NT>(nb + BN * LD, base + 2 * D, rs, k0 + BN, T);
		}
		kcp_async_commit();
		// a warp whose rows are all past T, or (causal) all before this tile's first key, skips it
		if (r0 >= T || (causal && k0 > r0 + WR - 1))
			continue;
		KFragC s[MT][NS];
		kattn_c_zero(s);
		if (C::QREG)
			kattn_mma<MT, NS, NK, false>(s, KAReg{qf, NK}, sK, LD);
		else
			kattn_mma<MT, NS, NK, false>(s, KASmem{sQ + warp * WR * LD, LD}, sK, LD);
		const bool edge = k0 + BN > T || (causal && k0 + BN - 1 > r0);
		KUNROLL
		for (int i = 0; i < MT; i++) {
			KUNROLL
			for (int j = 0; j < NS; j++) {
				KUNROLL
				for (int e = 0; e < 4; e++) {
					float x = s[i][j].x[e] * sl2;
					if (edge) {
						int key = k0 + 8 * j + kfrag_c_col(lane, e),
						    q = r0 + 16 * i + kfrag_c_row(lane, e);
						if (key >= T || (causal && key > q))
							x = -INFINITY;
					}
					s[i][j].x[e] = x;
				}
			}
		}
		KUNROLL
		for (int i = 0; i < MT; i++) {
			KUNROLL
			for (int hh = 0; hh < 2; hh++) { // fragment rows g and g + 8
				float mx = -INFINITY;
				KUNROLL
				for (int j = 0; j < NS; j++)
					mx = fmaxf(mx, fmaxf(s[i][j].x[2 * hh], s[i][j].x[2 * hh + 1]));
				const float mnew = fmaxf(m[i][hh], kquad_max(mx));
				const float ref = mnew == -INFINITY ? 0.0f : mnew; // every key masked so far
				const float corr = exp2f(m[i][hh] - ref);
				m[i][hh] = mnew;
				l[i][hh] *= corr; // this lane's part of the row sum; the quad adds them at the end
				KUNROLL
				for (int j = 0; j < NO; j++)
					o[i][j].x[2 * hh] *= corr, o[i][j].x[2 * hh + 1] *= corr;
				KUNROLL
				for (int j = 0; j < NS; j++) {
					KUNROLL
					for (int e = 0; e < 2; e++) {
						const float p = exp2f(s[i][j].x[2 * hh + e] - ref);
						s[i][j].x[2 * hh + e] = p;
						l[i][hh] += p;
					}
				}
			}
		}
		kattn_mma<MT, NO, NS / 2, true>(o, KAAcc{&s[0][0], NS}, sV, LD);
	}
	kcp_async_wait<0>(); // (an empty last group)

	KUNROLL
	for (int i = 0; i < MT; i++) {
		const int r = r0 + 16 * i;
		if (r >= T)
			break;
		float inv[2];
		KUNROLL
		for (int hh = 0; hh < 2; hh++) {
			l[i][hh] = kquad_sum(l[i][hh]);
			inv[hh] = 1.0f / l[i][hh];
		}
		kattn_store_rows<NO>(out + ((int64_t)b * T + r) * D + h * HD, D, o[i], inv, T - r, 0);
		if (lane % 4 == 0) {
			KUNROLL
			for (int hh = 0; hh < 2; hh++) {
				const int q = r + kfrag_c_row(lane, 2 * hh);
				if (q < T)
					lse[((int64_t)b * H + h) * T + q] = (m[i][hh] + log2f(l[i][hh])) * KATTN_LN2;
			}
		}
	}
}

template <int HD>
static int launch_fwd(KErr *e, kbf16 *out, float *lse, const kbf16 *qkv, int B, int T, int H, int causal,
		      cudaStream_t s)
{
	typedef KFwd<HD> C;
	int rc = kattn_smem_optin(e, kattn_fwd_kernel<HD>, C::SMEM);
	if (rc < 0)
		return rc;
	dim3 grid((unsigned)((T + C::BM - 1) / C::BM), (unsigned)H, (unsigned)B);
	float sl2 = KATTN_LOG2E / sqrtf((float)HD);
	return KLAUNCH(e, kattn_fwd_kernel<HD>, grid, C::THREADS, C::SMEM, s, out, lse, qkv, T, H, causal, sl2);
}

extern "C" int kattn_own_supports(int B, int T, int H, int hd)
{
	// grid: y = heads, z = batch (65535 each); T·3·D fits the int64 offsets, T the int row indices
	return (hd == 32 || hd == 64 || hd == 128) && B >= 1 && B <= 65535 && H >= 1 && H <= 65535 && T >= 1 &&
	       T <= (1 << 30);
}

extern "C" int kattn_own_fwd(KErr *e, void *out, float *lse, const void *qkv, int B, int T, int H, int hd, int causal,
			     cudaStream_t s)
{
	const void *ptrs[] = {out, lse, qkv};
	int rc = kattn_check(e, "kattn_own_fwd", B, T, H, hd, ptrs, 3);
	if (rc < 0)
		return rc;
	kbf16 *o = static_cast<kbf16 *>(out);
	const kbf16 *x = static_cast<const kbf16 *>(qkv);
	switch (hd) {
	case 32: return launch_fwd<32>(e, o, lse, x, B, T, H, causal != 0, s);
	case 64: return launch_fwd<64>(e, o, lse, x, B, T, H, causal != 0, s);
	default: return launch_fwd<128>(e, o, lse, x, B, T, H, causal != 0, s);
	}
}
