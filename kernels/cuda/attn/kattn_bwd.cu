// The own attention backward, FlashAttention-2 style: the scores are recomputed from the saved lse,
// one kernel per key block makes the five tile products and dK, dV, and dQ's parts are summed after.
#include "kattn_tile.h" // defines: kattn_cp_rows, kattn_cp_vec, kattn_mma, KASmem, KASmemT, kattn_store_rows

#include <math.h>

// FlashAttention-2's backward: a block holds BN keys of one head and walks the query tiles of BM;
// per pair of tiles it computes S = Q Kᵀ, dP = dO Vᵀ (P and dS then elementwise), dV += Pᵀ dO,
// dK += dSᵀ Q and dQ's part dS K — five products. dQ sums the parts of every key block, in f32
// slots of the workspace ([b][h][slot][t][hd]), one of two ways:
// - deterministic (the default, FlashAttention-2's deterministic mode): block (split, h, b) walks the
//   key blocks split, split + S, split + 2S, ... (S splits a head) and adds each one's part into its
//   own slot: every slot element is read, added to and written by one thread of one block, in key
//   block order. A last pass adds the S slots of each element in slot order, scales and rounds once:
//   a run repeats to the bit. S = min(key blocks, ⌈min_blocks / (B·H)⌉), so there are blocks for
//   every SM; it depends on the shape only, and the bits on S.
// - atomics (KAttnOwnOpts.dq_atomic): a block per key block adds its part into one slot with f32
//   atomics, FlashAttention-2's default: the order of the adds, hence the rounding, varies per run.
// The row terms D = rowsum(dO ∘ O) come first (FlashAttention-2's preprocess), with the zeroing of
// the atomic slot.

// The block's shape per head dim: 8 warps; each product is split over the warps as a grid of
// warp tiles of 16·MT x 8·NT (WR warps down the rows); at MT 2, NT 4 one ldmatrix feeds 4 mma.
// Q, dO and their row terms are double-buffered (the next tile's cp.async runs during this one);
// P and dS go through shared memory (their transposes are the A of dV and dK), in one buffer
// where two would not fit 99 KiB (sm_86/89's limit), which costs two more barriers per tile.
template <int HD>
struct KBwd {
	static constexpr int WARPS = 8, THREADS = 32 * WARPS;
	static constexpr int BN = HD <= 64 ? 128 : 64, BM = HD <= 64 ? 64 : 32, LD = kattn_pad<HD>(),
			     LDP = kattn_pad<BN>();
	// S and dP (BM x BN), dV and dK (BN x HD), dQ's part (BM x HD): warps down the rows
	static constexpr int WR1 = 2, WR3 = HD == 128 ? 2 : 4, WR5 = HD == 32 ? 4 : 2;
	static constexpr int MT1 = BM / 16 / WR1, NT1 = BN / 8 / (WARPS / WR1);
	static constexpr int MT3 = BN / 16 / WR3, NT3 = HD / 8 / (WARPS / WR3);
	static constexpr int MT5 = BM / 16 / WR5, NT5 = HD / 8 / (WARPS / WR5);
	static constexpr bool SEP = HD != 64; // a buffer for dS of its own
	static constexpr size_t SMEM = (size_t)(2 * BN + 4 * BM) * LD * sizeof(kbf16) +
				       (size_t)(SEP ? 2 : 1) * BM * LDP * sizeof(kbf16) + 4 * BM * sizeof(float);
};

// D = rowsum(dO ∘ O) per (b, t, h) row, into (B, H, T): HD/8 lanes per row, one 16-byte load of
// each operand per lane, a fixed shuffle tree; with dqacc, the row's f32 dQ accumulator is zeroed
template <int HD>
__global__ void __launch_bounds__(256)
	kattn_dot_kernel(float *dvec, float *dqacc, const kbf16 *dout, const kbf16 *out, int T, int H, int64_t rows)
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
	if (r < rows) {
		const int h = (int)(r % H);
		const int64_t bt = r / H, row = (bt / T * H + h) * T + bt % T; // (b, h, t)
		if (gid % L == 0)
			dvec[row] = acc;
		if (dqacc) {
			float4 *z = reinterpret_cast<float4 *>(dqacc + row * HD + c);
			z[0] = z[1] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
		}
	}
}

// the pieces of one (key block, query tile) step, per warp
// P and dS of the warp's S and dP tile (rows qi = w1r.., key columns w1c..): P into sP, dS into dp
// (and into sS when it has a buffer of its own); P is 0 where masked (edge: a query or key past T;
// causal: a key after its query) and where `zero` says the whole tile is
template <int MT1, int NT1, bool SEP>
__device__ __forceinline__ void kattn_bwd_p_ds(KFragC (&s)[MT1][NT1], KFragC (&dp)[MT1][NT1], kbf16 *sP, kbf16 *sS,
					       int ldp, const float *cL, const float *cD, int w1r, int w1c, int q0,
					       int k0, int T, bool edge, bool causal, bool zero, float sl2)
{
	const int lane = klane();
	KUNROLL
	for (int i = 0; i < MT1; i++) {
		KUNROLL
		for (int hh = 0; hh < 2; hh++) {
			const int qi = w1r + 16 * i + kfrag_c_row(lane, 2 * hh), q = q0 + qi;
			const float nl = -cL[qi] * KATTN_LOG2E, dd = cD[qi];
			KUNROLL
			for (int j = 0; j < NT1; j++) {
				float p[2], ds[2];
				KUNROLL
				for (int e = 0; e < 2; e++) {
					const int key = k0 + w1c + 8 * j + kfrag_c_col(lane, e);
					p[e] = zero ? 0.0f : exp2f(fmaf(s[i][j].x[2 * hh + e], sl2, nl));
					if (edge && (q >= T || key >= T || (causal && key > q)))
						p[e] = 0.0f;
					ds[e] = p[e] * (dp[i][j].x[2 * hh + e] - dd);
				}
				const int off = qi * ldp + w1c + 8 * j + kfrag_c_col(lane, 0);
				*reinterpret_cast<uint32_t *>(sP + off) = kpack_bf16x2(p[0], p[1]);
				dp[i][j].x[2 * hh] = ds[0], dp[i][j].x[2 * hh + 1] = ds[1];
				if (SEP)
					*reinterpret_cast<uint32_t *>(sS + off) = kpack_bf16x2(ds[0], ds[1]);
			}
		}
	}
}
// dS (in dp) into sS
template <int MT1, int NT1>
__device__ __forceinline__ void kattn_bwd_put_ds(const KFragC (&dp)[MT1][NT1], kbf16 *sS, int ldp, int w1r, int w1c)
{
	const int lane = klane();
	KUNROLL
	for (int i = 0; i < MT1; i++) {
		KUNROLL
		for (int hh = 0; hh < 2; hh++) {
			const int qi = w1r + 16 * i + kfrag_c_row(lane, 2 * hh);
			KUNROLL
			for (int j = 0; j < NT1; j++)
				*reinterpret_cast<uint32_t *>(sS + qi * ldp + w1c + 8 * j + kfrag_c_col(lane, 0)) =
					kpack_bf16x2(dp[i][j].x[2 * hh], dp[i][j].x[2 * hh + 1]);
		}
	}
}
// dQ's part (rows q0 + w5r.., head columns w5c..) into the slot ([t][HD] f32): atomics add, else
// the block's first key block writes and the next ones add (the same thread each time)
template <int HD, int MT5, int NT5, bool ATOMIC>
__device__ __forceinline__ void kattn_bwd_dq(const KFragC (&dq)[MT5][NT5], float *slot, int q0, int w5r, int w5c, int T,
					     bool first)
{
	const int lane = klane();
	KUNROLL
	for (int i = 0; i < MT5; i++) {
		KUNROLL
		for (int hh = 0; hh < 2; hh++) {
			const int q = q0 + w5r + 16 * i + kfrag_c_row(lane, 2 * hh);
			if (q >= T)
				continue;
			KUNROLL
			for (int j = 0; j < NT5; j++) {
				float *p = slot + (int64_t)q * HD + w5c + 8 * j + kfrag_c_col(lane, 0);
				float2 v = make_float2(dq[i][j].x[2 * hh], dq[i][j].x[2 * hh + 1]);
				if (ATOMIC) {
					katomic_add_f32_unordered(p, v.x);
					katomic_add_f32_unordered(p + 1, v.y);
					continue;
				}
				if (!first) {
					const float2 o = *reinterpret_cast<const float2 *>(p);
					v.x += o.x, v.y += o.y;
				}
				*reinterpret_cast<float2 *>(p) = v;
			}
		}
	}
}

// Block (split, h, b): the key blocks kb = split, split + nsplit, ... of head h (atomics: nsplit
// is the number of key blocks, one each), keys [k0, k0 + BN) each. Per query tile of BM (causal:
// from the tile of the first query that sees these keys): the five products above, with
// P = 2^(S·scale·log2e − lse·log2e) masked and dS = P ∘ (dP − D). dQ's part goes to the block's
// slot, or with atomics to slot 0; dK (scaled) and dV are written after each key block.
// (one block an SM: without the bound ptxas squeezes HD 32 and 128 into 128 registers, and spills)
template <int HD, bool ATOMIC>
__global__ void __launch_bounds__(KBwd<HD>::THREADS, 1)
	kattn_bwd_kernel(kbf16 *dqkv, int acc, const kbf16 *dout, const kbf16 *qkv, const float *lse, const float *dvec,
			 float *dqp, int T, int H, int causal, float sl2, float scale)
{
	typedef KBwd<HD> C;
	constexpr int LD = C::LD, LDP = C::LDP, BN = C::BN, BM = C::BM, NT = C::THREADS, NK = HD / 16;
	constexpr int MT1 = C::MT1, NT1 = C::NT1, MT3 = C::MT3, NT3 = C::NT3, MT5 = C::MT5, NT5 = C::NT5;
	KSHARED_DYN(kbf16, sm);
	kbf16 *const sK = sm, *const sV = sK + BN * LD, *const sQ = sV + BN * LD; // sQ, sO: [2][BM][LD]
	kbf16 *const sO = sQ + 2 * BM * LD, *const sP = sO + 2 * BM * LD, *const sS = C::SEP ? sP + BM * LDP : sP;
	float *const sL = reinterpret_cast<float *>(sP + (C::SEP ? 2 : 1) * BM * LDP), *const sD = sL + 2 * BM;
	const int split = (int)blockIdx.x, nsplit = (int)gridDim.x, h = (int)blockIdx.y, b = (int)blockIdx.z;
	const int D = H * HD, nkb = (T + BN - 1) / BN, warp = (int)threadIdx.x / 32;
	const int64_t rs = 3 * (int64_t)D, bh = (int64_t)b * H + h;
	const kbf16 *base = qkv + (int64_t)b * T * rs + h * HD, *dobase = dout + (int64_t)b * T * D + h * HD;
	float *const slot = dqp + (ATOMIC ? bh : bh * nsplit + split) * T * HD; // [t][hd]
	// this warp's tiles: of S and dP (query rows w1r.., key columns w1c..), of dV and dK (key rows,
	// head columns), of dQ's part (query rows, head columns)
	const int w1r = warp / (C::WARPS / C::WR1) * 16 * MT1, w1c = warp % (C::WARPS / C::WR1) * 8 * NT1;
	const int w3r = warp / (C::WARPS / C::WR3) * 16 * MT3, w3c = warp % (C::WARPS / C::WR3) * 8 * NT3;
	const int w5r = warp / (C::WARPS / C::WR5) * 16 * MT5, w5c = warp % (C::WARPS / C::WR5) * 8 * NT5;

	for (int kb = split; kb < nkb; kb += nsplit) {
		const int k0 = kb * BN, qfirst = causal ? k0 / BM * BM : 0, ntiles = (T - qfirst + BM - 1) / BM;
		auto issue = [&](int it) { // tile it's Q, dO, lse and D rows into buffer it & 1
			const int q0 = qfirst + it * BM, bf = it & 1;
			kattn_cp_rows<HD, BM, NT>(sQ + bf * BM * LD, base, rs, q0, T);
			kattn_cp_rows<HD, BM, NT>(sO + bf * BM * LD, dobase, D, q0, T);
			kattn_cp_vec<BM, NT>(sL + bf * BM, lse + bh * T, q0, T);
			kattn_cp_vec<BM, NT>(sD + bf * BM, dvec + bh * T, q0, T);
		};
		if (kb != split)
			__syncthreads(); // every warp is done with the last key block's K, V, tiles and P, dS
		kattn_cp_rows<HD, BN, NT>(sK, base + D, rs, k0, T);
		kattn_cp_rows<HD, BN, NT>(sV, base + 2 * D, rs, k0, T);
		issue(0);
		kcp_async_commit();
		KFragC dk[MT3][NT3], dv[MT3][NT3];
		kattn_c_zero(dk);
		kattn_c_zero(dv);

		for (int it = 0; it < ntiles; it++) {
			const int q0 = qfirst + it * BM, bf = it & 1;
			// tile it is in; every warp is done with tile it - 1, so its buffers take tile it + 1
			kcp_async_wait<0>();
			__syncthreads();
			if (it + 1 < ntiles)
				issue(it + 1);
			kcp_async_commit();
			const kbf16 *cQ = sQ + bf * BM * LD, *cO = sO + bf * BM * LD;
			// S and dP; causal: a warp tile whose every key comes after its every query has P = 0
			KFragC s[MT1][NT1], dp[MT1][NT1];
			kattn_c_zero(s);
			kattn_c_zero(dp);
			const bool zero = causal && k0 + w1c > q0 + w1r + 16 * MT1 - 1;
			if (!zero) {
				kattn_mma<MT1, NT1, NK, false>(s, KASmem{cQ + w1r * LD, LD}, sK + w1c * LD, LD);
				kattn_mma<MT1, NT1, NK, false>(dp, KASmem{cO + w1r * LD, LD}, sV + w1c * LD, LD);
			}
			const bool edge = q0 + BM > T || k0 + BN > T || (causal && k0 + BN - 1 > q0);
			kattn_bwd_p_ds<MT1, NT1, C::SEP>(s, dp, sP, sS, LDP, sL + bf * BM, sD + bf * BM, w1r, w1c, q0,
							 k0, T, edge, causal, zero, sl2);
			__syncthreads();
			// dV += Pᵀ dO; dS takes P's buffer (when it has none of its own) once every warp read P
			kattn_mma<MT3, NT3, BM / 16, true>(dv, KASmemT{sP + w3r, LDP}, cO + w3c, LD);
			if (!C::SEP) {
				__syncthreads();
				kattn_bwd_put_ds(dp, sS, LDP, w1r, w1c);
				__syncthreads();
			}
			// dK += dSᵀ Q; dQ's part = dS K
			kattn_mma<MT3, NT3, BM / 16, true>(dk, KASmemT{sS + w3r, LDP}, cQ + w3c, LD);
			KFragC dq[MT5][NT5];
			kattn_c_zero(dq);
			kattn_mma<MT5, NT5, BN / 16, true>(dq, KASmem{sS + w5r * LDP, LDP}, sK + w5c, LD);
			kattn_bwd_dq<HD, MT5, NT5, ATOMIC>(dq, slot, q0, w5r, w5c, T, kb == split);
		}
		kcp_async_wait<0>(); // (an empty last group)
		const float ks[2] = {scale, scale}, one[2] = {1.0f, 1.0f};
		KUNROLL
		for (int i = 0; i < MT3; i++) {
			const int r = k0 + w3r + 16 * i;
			if (r >= T)
				break;
			kbf16 *dst = dqkv + ((int64_t)b * T + r) * rs + h * HD + w3c;
			kattn_store_rows<NT3>(dst + D, rs, dk[i], ks, T - r, acc);
			kattn_store_rows<NT3>(dst + 2 * D, rs, dv[i], one, T - r, acc);
		}
	}
}

// dQ = scale · Σ slots in slot order (under a causal mask only the slots whose first key block
// reached the row: s <= t / causal_bn), rounded once into dqkv's q rows (acc: added there in f32):
// 4 elements a thread, rows (b, t, h)
template <int HD>
__global__ void __launch_bounds__(256) kattn_dq_sum_kernel(kbf16 *dqkv, int acc, const float *dqp, int parts, int T,
							   int H, int causal_bn, int64_t rows, float scale)
{
	constexpr int L = HD / 4;
	const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, r = gid / L;
	if (r >= rows)
		return;
	const int c = 4 * (int)(gid % L), h = (int)(r % H);
	const int64_t bt = r / H, b = bt / T, t = bt % T;
	const int last = causal_bn ? min(parts - 1, (int)(t / causal_bn)) : parts - 1;
	const float *p = dqp + ((b * H + h) * parts * T + t) * HD + c;
	float4 s = *reinterpret_cast<const float4 *>(p);
	for (int k = 1; k <= last; k++) {
		const float4 v = *reinterpret_cast<const float4 *>(p + (int64_t)k * T * HD);
		s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
	}
	s.x *= scale, s.y *= scale, s.z *= scale, s.w *= scale;
	kbf16 *d = dqkv + bt * 3 * (int64_t)H * HD + h * HD + c;
	uint2 *d2 = reinterpret_cast<uint2 *>(d);
	if (acc) {
		const uint2 old = *d2; // a bf16 is the high half of its f32
		s.x += __uint_as_float(old.x << 16), s.y += __uint_as_float(old.x & 0xffff0000u);
		s.z += __uint_as_float(old.y << 16), s.w += __uint_as_float(old.y & 0xffff0000u);
	}
	*d2 = make_uint2(kpack_bf16x2(s.x, s.y), kpack_bf16x2(s.z, s.w));
}

// ---- the workspace: D (B·H·T f32), then dQ's slots (B·H·nsplit·T·hd f32; atomics: one a head) ----
static size_t kattn_align256(size_t n)
{
	return (n + 255) & ~(size_t)255;
}
static int kattn_bn(int hd)
{
	return hd == 32 ? KBwd<32>::BN : hd == 64 ? KBwd<64>::BN : KBwd<128>::BN;
}
// the splits of a head's key blocks (deterministic): enough blocks for min_blocks, a shape's function
static int kattn_nsplit(int B, int T, int H, int hd, const KAttnOwnOpts *o)
{
	const int64_t nkb = (T + kattn_bn(hd) - 1) / kattn_bn(hd), bh = (int64_t)B * H;
	const int64_t want = o && o->min_blocks > 0 ? o->min_blocks : KATTN_BWD_MIN_BLOCKS;
	const int64_t n = (want + bh - 1) / bh;
	return (int)(n < 1 ? 1 : n > nkb ? nkb : n);
}

template <int HD>
static int launch_bwd(KErr *e, kbf16 *dqkv, int acc, const kbf16 *dout, const kbf16 *qkv, const kbf16 *out,
		      const float *lse, float *dvec, float *dqp, int nsplit, int B, int T, int H, int causal,
		      int atomic, cudaStream_t s)
{
	typedef KBwd<HD> C;
	const int64_t rows = (int64_t)B * T * H;
	const int64_t dot_threads = rows * (HD / 8);
	int rc = KLAUNCH(e, kattn_dot_kernel<HD>, (unsigned)((dot_threads + 255) / 256), 256, 0, s, dvec,
			 atomic ? dqp : (float *)NULL, dout, out, T, H, rows);
	if (rc < 0)
		return rc;
	const float scale = 1.0f / sqrtf((float)HD), sl2 = scale * KATTN_LOG2E;
	const unsigned nkb = (unsigned)((T + C::BN - 1) / C::BN);
	const dim3 grid(atomic ? nkb : (unsigned)nsplit, (unsigned)H, (unsigned)B);
	if (atomic)
		rc = kattn_smem_optin(e, kattn_bwd_kernel<HD, true>, C::SMEM);
	else
		rc = kattn_smem_optin(e, kattn_bwd_kernel<HD, false>, C::SMEM);
	if (rc < 0)
		return rc;
	if (atomic)
		rc = KLAUNCH(e, (kattn_bwd_kernel<HD, true>), grid, C::THREADS, C::SMEM, s, dqkv, acc, dout, qkv, lse,
			     dvec, dqp, T, H, causal, sl2, scale);
	else
		rc = KLAUNCH(e, (kattn_bwd_kernel<HD, false>), grid, C::THREADS, C::SMEM, s, dqkv, acc, dout, qkv, lse,
			     dvec, dqp, T, H, causal, sl2, scale);
	if (rc < 0)
		return rc;
	return KLAUNCH(e, kattn_dq_sum_kernel<HD>, (unsigned)((rows * (HD / 4) + 255) / 256), 256, 0, s, dqkv, acc, dqp,
		       atomic ? 1 : nsplit, T, H, atomic || !causal ? 0 : C::BN, rows, scale);
}

extern "C" size_t kattn_own_ws_bytes_opts(int B, int T, int H, int hd, const KAttnOwnOpts *o)
{
	if (B <= 0 || T <= 0 || H <= 0 || (hd != 32 && hd != 64 && hd != 128))
		return 0;
	const size_t slots = o && o->dq_atomic ? 1 : (size_t)kattn_nsplit(B, T, H, hd, o);
	return kattn_align256((size_t)B * T * H * sizeof(float)) + slots * B * H * T * hd * sizeof(float);
}

extern "C" size_t kattn_own_ws_bytes(int B, int T, int H, int hd)
{
	return kattn_own_ws_bytes_opts(B, T, H, hd, NULL);
}

extern "C" int kattn_own_bwd_opts(KErr *e, void *dqkv, int acc, const void *dout, const void *qkv, const void *out,
				  const float *lse, int B, int T, int H, int hd, int causal, void *ws, size_t ws_bytes,
				  const KAttnOwnOpts *o, cudaStream_t s)
{
	const void *ptrs[] = {dqkv, dout, qkv, out, lse, ws};
	int rc = kattn_check(e, "kattn_own_bwd", B, T, H, hd, ptrs, 6);
	if (rc < 0)
		return rc;
	if (o && o->min_blocks < 0)
		return kerr_set(e, -EINVAL, "kattn_own_bwd: min_blocks %d (0: the default, %d)", o->min_blocks,
				KATTN_BWD_MIN_BLOCKS);
	const size_t need = kattn_own_ws_bytes_opts(B, T, H, hd, o);
	const int atomic = o && o->dq_atomic;
	if (ws_bytes < need)
		return kerr_set(e, -ENOSPC, "kattn_own_bwd: workspace %zu bytes, %zu needed%s", ws_bytes, need,
				atomic ? " (dQ by atomics)" : "");
	kbf16 *d = static_cast<kbf16 *>(dqkv);
	const kbf16 *dy = static_cast<const kbf16 *>(dout), *x = static_cast<const kbf16 *>(qkv),
		    *y = static_cast<const kbf16 *>(out);
	float *dvec = static_cast<float *>(ws);
	float *dqp = reinterpret_cast<float *>(static_cast<char *>(ws) + kattn_align256((size_t)B * T * H * 4));
	const int ns = kattn_nsplit(B, T, H, hd, o);
	causal = causal != 0, acc = acc != 0;
	switch (hd) {
	case 32: return launch_bwd<32>(e, d, acc, dy, x, y, lse, dvec, dqp, ns, B, T, H, causal, atomic, s);
	case 64: return launch_bwd<64>(e, d, acc, dy, x, y, lse, dvec, dqp, ns, B, T, H, causal, atomic, s);
	default: return launch_bwd<128>(e, d, acc, dy, x, y, lse, dvec, dqp, ns, B, T, H, causal, atomic, s);
	}
}

extern "C" int kattn_own_bwd(KErr *e, void *dqkv, int acc, const void *dout, const void *qkv, const void *out,
			     const float *lse, int B, int T, int H, int hd, int causal, void *ws, size_t ws_bytes,
			     cudaStream_t s)
{
	return kattn_own_bwd_opts(e, dqkv, acc, dout, qkv, out, lse, B, T, H, hd, causal, ws, ws_bytes, NULL, s);
}
