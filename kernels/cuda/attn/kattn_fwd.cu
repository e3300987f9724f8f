// The own attention forward, FlashAttention-2 style: one block per 64 queries of one head walks
// the key tiles with an online softmax on tensor cores, so no T x T matrix exists; lse is saved.
#include "kattn_tile.h" // defines: KATTN_BM, kattn_load_rows, kattn_store_rows, kattn_check, kmma.h's fragments

#include <math.h>

// Block (qb, h, b): queries [q0, q0 + 64) of head h, warp w its 16 rows. Per key tile of 64:
// S = Q Kᵀ (16 x 64 per warp, f32 in registers), masked (keys past T; causal: keys after the
// query), in the log2 domain; m = running row max over the quad; P = 2^(S − m); O and l rescaled
// by 2^(m_old − m); O += P V with P rounded to bf16 as the next mma's A fragment (kfrag_c_to_a).
// Key 0 is in the first tile for every row, so m is finite from then on.
template <int HD>
__global__ void __launch_bounds__(KATTN_THREADS)
	kattn_fwd_kernel(kbf16 *out, float *lse, const kbf16 *qkv, int T, int H, int causal, float sl2)
{
	constexpr int LD = kattn_ld<HD>(), NK = HD / 16, NO = HD / 8;
	KSHARED_DYN(kbf16, sm);
	kbf16 *sQ = sm, *sK = sQ + KATTN_BM * LD, *sV = sK + KATTN_BM * LD;
	// the last query blocks have the most keys under a causal mask: they start first
	const int qb = (int)(gridDim.x - 1 - blockIdx.x), h = (int)blockIdx.y, b = (int)blockIdx.z;
	const int D = H * HD, q0 = qb * KATTN_BM, warp = (int)threadIdx.x / 32, lane = klane();
	const int64_t rs = 3 * (int64_t)D;
	const kbf16 *base = qkv + (int64_t)b * T * rs + h * HD;

	kattn_load_rows<HD, KATTN_BM>(sQ, base, rs, q0, T);
	__syncthreads();
	KFragA qf[NK];
	for (int k = 0; k < NK; k++)
		kfrag_load_a(qf[k], sQ + warp * 16 * LD + 16 * k, LD);
	float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
	KFragC o[NO];
	for (int j = 0; j < NO; j++)
		kfrag_c_zero(o[j]);

	// HD 64: the next K, V tile travels into registers while this one is used (32 registers)
	constexpr bool PF = HD == 64;
	constexpr int NCH = PF ? kattn_chunks<HD, KATTN_BM>() : 1;
	uint4 pk[NCH], pv[NCH];
	const int kend = causal ? min(T, q0 + KATTN_BM) : T;
	if (PF) {
		kattn_fetch_rows<HD, KATTN_BM>(pk, base + D, rs, 0, T);
		kattn_fetch_rows<HD, KATTN_BM>(pv, base + 2 * D, rs, 0, T);
	}
	for (int k0 = 0; k0 < kend; k0 += KATTN_BM) {
		__syncthreads(); // the previous tile's K and V are read
		if (PF) {
			kattn_put_rows<HD, KATTN_BM>(sK, pk);
			kattn_put_rows<HD, KATTN_BM>(sV, pv);
		} else {
			kattn_load_rows<HD, KATTN_BM>(sK, base + D, rs, k0, T);
			kattn_load_rows<HD, KATTN_BM>(sV, base + 2 * D, rs, k0, T);
		}
		__syncthreads();
		if (PF && k0 + KATTN_BM < kend) {
			kattn_fetch_rows<HD, KATTN_BM>(pk, base + D, rs, k0 + KATTN_BM, T);
			kattn_fetch_rows<HD, KATTN_BM>(pv, base + 2 * D, rs, k0 + KATTN_BM, T);
		}
		KFragC s[8];
		for (int j = 0; j < 8; j++)
			kfrag_c_zero(s[j]);
		kattn_mma_abt<HD, 4>(s, (const KFragA *)qf, sK);
		const bool edge = k0 + KATTN_BM > T || (causal && k0 + KATTN_BM > q0 + warp * 16);
		for (int j = 0; j < 8; j++)
			for (int i = 0; i < 4; i++) {
				float x = s[j].x[i] * sl2;
				if (edge) {
					int key = k0 + 8 * j + kfrag_c_col(lane, i),
					    q = q0 + warp * 16 + kfrag_c_row(lane, i);
					if (key >= T || (causal && key > q))
						x = -INFINITY;
				}
				s[j].x[i] = x;
			}
		for (int hh = 0; hh < 2; hh++) { // fragment rows g and g + 8
			float mx = -INFINITY;
			for (int j = 0; j < 8; j++)
				mx = fmaxf(mx, fmaxf(s[j].x[2 * hh], s[j].x[2 * hh + 1]));
			float mnew = fmaxf(m[hh], kquad_max(mx));
			float ref = mnew == -INFINITY ? 0.0f : mnew; // a row with every key masked so far
			float corr = exp2f(m[hh] - ref);
			m[hh] = mnew;
			l[hh] *= corr; // this lane's part of the row sum; the quad adds them at the end
			for (int j = 0; j < NO; j++)
				o[j].x[2 * hh] *= corr, o[j].x[2 * hh + 1] *= corr;
			for (int j = 0; j < 8; j++)
				for (int e = 0; e < 2; e++) {
					float p = exp2f(s[j].x[2 * hh + e] - ref);
					s[j].x[2 * hh + e] = p;
					l[hh] += p;
				}
		}
		kattn_mma_pm<HD, 4>(o, s, sV);
	}

	float inv[2];
	for (int hh = 0; hh < 2; hh++) {
		l[hh] = kquad_sum(l[hh]);
		inv[hh] = 1.0f / l[hh];
	}
	const int r0 = q0 + warp * 16;
	kattn_store_rows<NO>(out + ((int64_t)b * T + r0) * D + h * HD, D, o, inv, T - r0, 0);
	if (lane % 4 == 0)
		for (int hh = 0; hh < 2; hh++) {
			int r = r0 + kfrag_c_row(lane, 2 * hh);
			if (r < T)
				lse[((int64_t)b * H + h) * T + r] = (m[hh] + log2f(l[hh])) * KATTN_LN2;
		}
}

template <int HD>
static int launch_fwd(KErr *e, kbf16 *out, float *lse, const kbf16 *qkv, int B, int T, int H, int causal,
		      cudaStream_t s)
{
	const size_t smem = (size_t)3 * KATTN_BM * kattn_ld<HD>() * sizeof(kbf16);
	int rc = kattn_smem_optin(e, kattn_fwd_kernel<HD>, smem);
	if (rc < 0)
		return rc;
	dim3 grid((unsigned)((T + KATTN_BM - 1) / KATTN_BM), (unsigned)H, (unsigned)B);
	float sl2 = KATTN_LOG2E / sqrtf((float)HD);
	return KLAUNCH(e, kattn_fwd_kernel<HD>, grid, KATTN_THREADS, smem, s, out, lse, qkv, T, H, causal, sl2);
}

extern "C" int kattn_own_supports(int B, int T, int H, int hd)
{
	// grid: y = heads, z = batch (65535 each); T·3·D fits the int64 offsets, T the int row indices
	return (hd == 32 || hd == 64 || hd == 128) && B >= 1 && B <= 65535 && H >= 1 && H <= 65535 && T >= 1 &&
	       T <= (1 << 30) / KATTN_BM * KATTN_BM;
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
