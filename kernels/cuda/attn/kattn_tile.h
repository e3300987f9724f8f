// Pieces the own attention kernels share: block geometry, shared-memory tiles of one head's rows,
// the per-lane store of a warp's accumulators, and the host-side checks of a launch.
#ifndef KATTN_TILE_H
#define KATTN_TILE_H
// defines: KATTN_BM, KATTN_THREADS, KATTN_LOG2E, KATTN_LN2, kattn_ld, kattn_load_rows, kattn_store_rows,
//          kattn_fetch_rows, kattn_put_rows, kattn_afrag, kattn_mma_abt, kattn_mma_pm, kattn_check,
//          kattn_smem_optin

#include "kattn.h" // defines: KErr
#include "kmma.h"  // defines: KFragC, klane, kfrag_c_row, kfrag_c_col, kpack_bf16x2, kld_bf16x2

#include <errno.h>

typedef __nv_bfloat16 kbf16;

// A block is 4 warps; each warp owns 16 rows (queries or keys) of a 64-row block.
#define KATTN_BM 64
#define KATTN_THREADS 128
#define KATTN_LOG2E 1.4426950408889634f
#define KATTN_LN2 0.6931471805599453f

// shared rows are padded by 16 bytes: ldmatrix's eight row addresses then fall in distinct banks
// and stay 16-byte aligned
template <int HD>
__host__ __device__ constexpr int kattn_ld()
{
	return HD + 8;
}

// rows [r0, r0 + ROWS) of one head (row r at src + r·stride, HD contiguous bf16) into a padded
// shared tile; rows at or past T are zeros, so masked keys carry no NaN into P·V
template <int HD, int ROWS>
__device__ __forceinline__ void kattn_load_rows(kbf16 *tile, const kbf16 *src, int64_t stride, int r0, int T)
{
	constexpr int CH = HD / 8; // 16-byte chunks per row
	for (int i = threadIdx.x; i < ROWS * CH; i += KATTN_THREADS) {
		int r = i / CH, c = 8 * (i % CH);
		uint4 v = make_uint4(0, 0, 0, 0);
		if (r0 + r < T)
			v = *reinterpret_cast<const uint4 *>(src + (int64_t)(r0 + r) * stride + c);
		*reinterpret_cast<uint4 *>(tile + r * kattn_ld<HD>() + c) = v;
	}
}

// The same rows in two halves, so that a tile's global loads are in flight while the block computes
// on the previous one: fetch into registers (this thread's 16-byte chunks), later put them into
// the shared tile (after the barrier that frees it).
template <int HD, int ROWS>
__host__ __device__ constexpr int kattn_chunks()
{
	return ROWS * HD / 8 / KATTN_THREADS;
}
template <int HD, int ROWS>
__device__ __forceinline__ void kattn_fetch_rows(uint4 *regs, const kbf16 *src, int64_t stride, int r0, int T)
{
	constexpr int CH = HD / 8;
	static_assert(ROWS * CH % KATTN_THREADS == 0, "whole chunks per thread");
	for (int j = 0; j < kattn_chunks<HD, ROWS>(); j++) {
		int i = (int)threadIdx.x + j * KATTN_THREADS, r = i / CH, c = 8 * (i % CH);
		regs[j] = r0 + r < T ? *reinterpret_cast<const uint4 *>(src + (int64_t)(r0 + r) * stride + c)
				     : make_uint4(0, 0, 0, 0);
	}
}
template <int HD, int ROWS>
__device__ __forceinline__ void kattn_put_rows(kbf16 *tile, const uint4 *regs)
{
	constexpr int CH = HD / 8;
	for (int j = 0; j < kattn_chunks<HD, ROWS>(); j++) {
		int i = (int)threadIdx.x + j * KATTN_THREADS;
		*reinterpret_cast<uint4 *>(tile + (i / CH) * kattn_ld<HD>() + 8 * (i % CH)) = regs[j];
	}
}

// ---- the two tile products every kernel here is made of (per warp, f32 accumulators) ----
// A fragments of a warp's 16 rows: held in registers, or read from its shared rows at need
template <int HD>
__device__ __forceinline__ KFragA kattn_afrag(const KFragA *a, int k)
{
	return a[k];
}
template <int HD>
__device__ __forceinline__ KFragA kattn_afrag(const kbf16 *rows, int k)
{
	KFragA f;
	kfrag_load_a(f, rows + 16 * k, kattn_ld<HD>());
	return f;
}
// s (16 x 16·NJ) += A (16 x HD) · Mᵀ, M a shared tile of 16·NJ rows x HD: S = Q Kᵀ, dP = dO Vᵀ
template <int HD, int NJ, class Src>
__device__ __forceinline__ void kattn_mma_abt(KFragC *s, Src a, const kbf16 *m)
{
	constexpr int LD = kattn_ld<HD>();
	for (int k = 0; k < HD / 16; k++) {
		KFragA f = kattn_afrag<HD>(a, k);
		for (int j = 0; j < NJ; j++) {
			KFragB b[2];
			kfrag_load_b2_nk(b, m + 16 * j * LD + 16 * k, LD);
			kmma_bf16(s[2 * j], f, b[0], s[2 * j]);
			kmma_bf16(s[2 * j + 1], f, b[1], s[2 * j + 1]);
		}
	}
}
// acc (16 x HD) += P (16 x 16·NP, accumulators rounded to bf16 as A fragments) · M, M a shared
// tile of 16·NP rows x HD: O += P V, dV += Pᵀ dO, dK += dSᵀ Q, dQ += dS K
template <int HD, int NP>
__device__ __forceinline__ void kattn_mma_pm(KFragC *acc, const KFragC *p, const kbf16 *m)
{
	constexpr int LD = kattn_ld<HD>();
	for (int kk = 0; kk < NP; kk++) {
		KFragA pa;
		kfrag_c_to_a(pa, p[2 * kk], p[2 * kk + 1]);
		for (int j = 0; j < HD / 16; j++) {
			KFragB b[2];
			kfrag_load_b2_kn(b, m + 16 * kk * LD + 16 * j, LD);
			kmma_bf16(acc[2 * j], pa, b[0], acc[2 * j]);
			kmma_bf16(acc[2 * j + 1], pa, b[1], acc[2 * j + 1]);
		}
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
	for (int j = 0; j < N; j++)
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
