// Pieces the own attention kernels share: padded shared-memory tiles filled by cp.async, a warp's
// tile of a product on tensor cores, the per-lane store of accumulators, and the launch checks.
#ifndef KATTN_TILE_H
#define KATTN_TILE_H
// defines: kbf16, KATTN_LOG2E, KATTN_LN2, kattn_pad, kattn_cp_rows, kattn_cp_vec, KASmem, KASmemT, KAReg, KAAcc,
//          kattn_mma, kattn_c_zero, kattn_store_rows, kattn_check, kattn_smem_optin

#include "kattn.h" // defines: KErr, kattn_own_supports
#include "kmma.h"  // defines: KFragA/B/C, klane, kfrag_*, kmma_bf16, kcp_async_*, kpack_bf16x2, kld_bf16x2

#include <errno.h>

typedef __nv_bfloat16 kbf16;

#define KATTN_LOG2E 1.4426950408889634f
#define KATTN_LN2 0.6931471805599453f

// a shared tile's row of W bf16 is padded by 16 bytes: ldmatrix's eight row addresses then fall in
// distinct banks and stay 16-byte aligned
template <int W>
__host__ __device__ constexpr int kattn_pad()
{
	return W + 8;
}

// cp.async of rows [r0, r0 + ROWS) of one head (row r at src + r·stride, W contiguous bf16) into a
// padded shared tile by the block's NT threads; rows at or past T arrive as zeros (nothing is read),
// so masked keys carry no NaN into P·V. The caller commits and waits.
template <int W, int ROWS, int NT>
__device__ __forceinline__ void kattn_cp_rows(kbf16 *tile, const kbf16 *src, int64_t stride, int r0, int T)
{
	constexpr int CH = W / 8; // 16-byte chunks per row
	static_assert(ROWS * CH % NT == 0, "whole chunks per thread");
	KUNROLL
	for (int j = 0; j < ROWS * CH / NT; j++) {
		const int i = (int)threadIdx.x + j * NT, r = i / CH, c = 8 * (i % CH);
		const bool in = r0 + r < T;
		kcp_async_16(tile + r * kattn_pad<W>() + c, in ? src + (int64_t)(r0 + r) * stride + c : src, in);
	}
}
// cp.async of n f32 [r0, r0 + n) of a row vector (zeros at or past T), 4 bytes a thread
template <int N, int NT>
__device__ __forceinline__ void kattn_cp_vec(float *dst, const float *src, int r0, int T)
{
	for (int i = (int)threadIdx.x; i < N; i += NT)
		kcp_async_4(dst + i, r0 + i < T ? src + r0 + i : src, r0 + i < T);
}

// ---- a warp's tile of a product: C (16·MT x 8·NT) += A (16·MT x 16·KS) · B (16·KS x 8·NT) ----
// Per k step the warp loads MT A fragments and NT/2 ldmatrix.x4 pairs of B fragments and issues
// MT·NT mma: each A fragment feeds NT of them and each B pair 2·MT (4 and 4 at MT 2, NT 4).
// Where A comes from (kattn_afrag):
struct KASmem { // shared, stored M x K row-major (Q, dO, dS by query rows)
	const kbf16 *p;
	int ld;
};
struct KASmemT { // shared, its transpose stored: K x M row-major (Pᵀ, dSᵀ from P, dS by query rows)
	const kbf16 *p;
	int ld;
};
struct KAReg { // fragments in registers, [m tile][k step] with KS k steps (Q held by its warp)
	const KFragA *f;
	int ks;
};
struct KAAcc {           // accumulators of a previous product, [m tile][8-column group] with NC groups, rounded
	const KFragC *c; // to bf16 (P of P·V stays in registers)
	int nc;
};
__device__ __forceinline__ void kattn_afrag(KFragA &f, const KASmem &a, int i, int ks)
{
	kfrag_load_a(f, a.p + 16 * i * a.ld + 16 * ks, a.ld);
}
__device__ __forceinline__ void kattn_afrag(KFragA &f, const KASmemT &a, int i, int ks)
{
	kfrag_load_a_trans(f, a.p + 16 * ks * a.ld + 16 * i, a.ld);
}
__device__ __forceinline__ void kattn_afrag(KFragA &f, const KAReg &a, int i, int ks)
{
	f = a.f[i * a.ks + ks];
}
__device__ __forceinline__ void kattn_afrag(KFragA &f, const KAAcc &a, int i, int ks)
{
	kfrag_c_to_a(f, a.c[i * a.nc + 2 * ks], a.c[i * a.nc + 2 * ks + 1]);
}
// B: KN (true) stored K x N row-major (V of P·V, dO, Q, K of dS·K), else N x K (K of Q·Kᵀ, V of dO·Vᵀ)
template <int MT, int NT, int KS, bool KN, class A>
__device__ __forceinline__ void kattn_mma(KFragC (&c)[MT][NT], const A &a, const kbf16 *b, int ldb)
{
	static_assert(NT % 2 == 0, "B fragments come in ldmatrix.x4 pairs");
	KUNROLL
	for (int ks = 0; ks < KS; ks++) {
		KFragA fa[MT];
		KUNROLL
		for (int i = 0; i < MT; i++)
			kattn_afrag(fa[i], a, i, ks);
		KUNROLL
		for (int j = 0; j < NT / 2; j++) {
			KFragB fb[2];
			if (KN)
				kfrag_load_b2_kn(fb, b + 16 * ks * ldb + 16 * j, ldb);
			else
				kfrag_load_b2_nk(fb, b + 16 * j * ldb + 16 * ks, ldb);
			KUNROLL
			for (int i = 0; i < MT; i++) {
				kmma_bf16(c[i][2 * j], fa[i], fb[0], c[i][2 * j]);
				kmma_bf16(c[i][2 * j + 1], fa[i], fb[1], c[i][2 * j + 1]);
			}
		}
	}
}
template <int MT, int NT>
__device__ __forceinline__ void kattn_c_zero(KFragC (&c)[MT][NT])
{
	KUNROLL
	for (int i = 0; i < MT; i++) {
		KUNROLL
		for (int j = 0; j < NT; j++)
			kfrag_c_zero(c[i][j]);
	}
}

// A warp's 16 x (8·N) accumulators, row i scaled by mul[i / 8 of the fragment row], to bf16 rows
// dst + r·stride for the rows r < rows (of the warp's 16); acc: added to what is there, in f32,
// rounded once. Each element has exactly this one writer. Pairs are 4-byte aligned (dst is, by
// kattn_check's 16 bytes, and stride and the column are even), so each is one 4-byte access.
template <int N>
__device__ __forceinline__ void kattn_store_rows(kbf16 *dst, int64_t stride, const KFragC *c, const float mul[2],
						 int rows, int acc)
{
	const int lane = klane();
	KUNROLL
	for (int j = 0; j < N; j++) {
		KUNROLL
		for (int hh = 0; hh < 2; hh++) {
			int r = kfrag_c_row(lane, 2 * hh);
			if (r >= rows)
				continue;
			kbf16 *p = dst + (int64_t)r * stride + 8 * j + kfrag_c_col(lane, 0);
			float a = c[j].x[2 * hh] * mul[hh], b = c[j].x[2 * hh + 1] * mul[hh];
			if (acc) {
				uint32_t old = kld_bf16x2(p); // a bf16 is the high half of its f32
				a += __uint_as_float(old << 16);
				b += __uint_as_float(old & 0xffff0000u);
			}
			*reinterpret_cast<uint32_t *>(p) = kpack_bf16x2(a, b); // one 4-byte store (see above)
		}
	}
}

// the arguments every entry point checks: shape, 16-byte alignment of the device pointers
static inline int kattn_check(KErr *e, const char *fn, int B, int T, int H, int hd, const void *const *ptrs, int n)
{
	if (!kattn_own_supports(B, T, H, hd))
		return kerr_set(
			e, hd == 32 || hd == 64 || hd == 128 ? -EINVAL : -ENOTSUP,
			"%s: B %d T %d H %d hd %d (the own kernel: hd 32, 64 or 128, 1 <= B, H <= 65535, T >= 1)", fn,
			B, T, H, hd);
	for (int i = 0; i < n; i++)
		if (!ptrs[i] || (uintptr_t)ptrs[i] % 16)
			return kerr_set(e, -EINVAL, "%s: argument %d is NULL or not 16-byte aligned", fn, i);
	return 0;
}

// kernels with more than 48 KiB of dynamic shared memory must say so once before their launch
template <class K>
static inline int kattn_smem_optin(KErr *e, K *kernel, size_t bytes)
{
	if (bytes <= 48 * 1024)
		return 0;
	return cuda_try(e, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
}

#endif
