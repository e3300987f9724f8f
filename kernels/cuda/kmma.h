// Tensor-core fragments for own kernels: mma.sync m16n8k16 (bf16 in, f32 accumulate) and
// ldmatrix, their per-lane layouts as helpers, and the pieces a FlashAttention-2 kernel needs
// (cp.async into shared memory, an f32 atomic add for a caller that gives up reproducibility).
#ifndef KMMA_H
#define KMMA_H
// defines: KFragA, KFragB, KFragC, klane, kfrag_a_row/col, kfrag_b_k/n, kfrag_c_row/col, kpack_bf16x2,
//          kmma_bf16, kldmatrix_x1/x2/x4[_trans], kfrag_load_a, kfrag_load_a_trans, kfrag_load_b_nk,
//          kfrag_load_b_kn, kfrag_load_b2_nk, kfrag_load_b2_kn, kfrag_load_a_direct, kfrag_load_b_nk_direct,
//          kfrag_load_b_kn_direct, kfrag_c_zero, kfrag_c_store, kfrag_c_to_a, kquad_max, kquad_sum,
//          kcp_async_16, kcp_async_4, kcp_async_commit, kcp_async_wait, katomic_add_f32_unordered

#include "kcuda.h" // defines: the dialect, KEMU_SITE_PARAMS
#if defined(KEMU)
#include "emu/kemu_async.h" // defines: kemu::async_*, kemu::atomic_add_f32_unordered
#endif

#include <stdint.h>
#include <string.h>

// One warp-wide mma.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point
// type"). With g = lane / 4 (groupID) and t = lane % 4 (threadID_in_group):
//   A, 16x16 (M x K, ".row"): 4 registers of two bf16; element i (0..7, register i/2, low half
//      first) is at row g + 8*((i>>1)&1), column 2t + (i&1) + 8*(i>>2);
//   B, 16x8 (K x N, ".col"): 2 registers; element i (0..3) at k = 2t + (i&1) + 8*(i>>1), n = g;
//   C and D, 16x8 f32: element i (0..3) at row g + 8*(i>>1), column 2t + (i&1).
// So a row of an accumulator lives in the 4 lanes of a quad (lanes 4g..4g+3): kquad_max/sum
// reduce it (FlashAttention's online softmax), and two accumulators side by side are exactly the
// A fragment of the next mma (kfrag_c_to_a: P of P V stays in registers).
struct KFragA {
	uint32_t x[4];
};
struct KFragB {
	uint32_t x[2];
};
struct KFragC {
	float x[4];
};

__device__ __forceinline__ int klane()
{
	return (int)((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31);
}
__device__ __forceinline__ int kfrag_a_row(int lane, int i)
{
	return lane / 4 + 8 * ((i >> 1) & 1);
}
__device__ __forceinline__ int kfrag_a_col(int lane, int i)
{
	return 2 * (lane % 4) + (i & 1) + 8 * (i >> 2);
}
__device__ __forceinline__ int kfrag_b_k(int lane, int i)
{
	return 2 * (lane % 4) + (i & 1) + 8 * (i >> 1);
}
__device__ __forceinline__ int kfrag_b_n(int lane, int i)
{
	(void)i; // every element of a lane is in column g
	return lane / 4;
}
__device__ __forceinline__ int kfrag_c_row(int lane, int i)
{
	return lane / 4 + 8 * (i >> 1);
}
__device__ __forceinline__ int kfrag_c_col(int lane, int i)
{
	return 2 * (lane % 4) + (i & 1);
}

// two floats -> one .bf16x2 register, `lo` in the low half, each rounded to nearest even
__device__ __forceinline__ uint32_t kpack_bf16x2(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	uint32_t r;
	memcpy(&r, &v, sizeof r);
	return r;
}

// d = a b + c over the warp: every lane passes its fragments (d may be c)
__device__ __forceinline__ void kmma_bf16(KFragC &d, const KFragA &a, const KFragB &b, const KFragC &c KEMU_SITE_PARAMS)
{
#if defined(KEMU)
	kemu::mma_bf16_16816(d.x, a.x, b.x, c.x KEMU_SITE_ARGS);
#else
	asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
	    "{%10,%11,%12,%13};\n"
	    : "=f"(d.x[0]), "=f"(d.x[1]), "=f"(d.x[2]), "=f"(d.x[3])
	    : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "r"(b.x[0]), "r"(b.x[1]), "f"(c.x[0]), "f"(c.x[1]),
	      "f"(c.x[2]), "f"(c.x[3]));
#endif
}

// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: lanes 8j..8j+7 pass the addresses of
// rows 0..7 of matrix j (16-byte aligned, in shared memory; the other lanes' are ignored);
// register j receives matrix j's elements (lane/4, 2(lane%4)) and (lane/4, 2(lane%4)+1), or with
// .trans (2(lane%4), lane/4) and (2(lane%4)+1, lane/4).
#if defined(KEMU)
#define KLDMATRIX(name, n, trans, regs, outs)                                                                          \
	__device__ __forceinline__ void name(uint32_t *r, const void *row KEMU_SITE_PARAMS)                            \
	{                                                                                                              \
		kemu::ldmatrix(r, n, trans, row KEMU_SITE_ARGS);                                                       \
	}
#else
#define KLDMATRIX(name, n, trans, regs, outs)                                                                          \
	__device__ __forceinline__ void name(uint32_t *r, const void *row)                                             \
	{                                                                                                              \
		unsigned a = (unsigned)__cvta_generic_to_shared(row);                                                  \
		asm volatile("ldmatrix.sync.aligned.m8n8.x" #n trans ".shared.b16 " regs ", [%" #n "];\n"              \
			     : outs                                                                                    \
			     : "r"(a));                                                                                \
	}
#endif
#define KLDM_R1 "{%0}"
#define KLDM_R2 "{%0,%1}"
#define KLDM_R4 "{%0,%1,%2,%3}"
#define KLDM_O1 "=r"(r[0])
#define KLDM_O2 "=r"(r[0]), "=r"(r[1])
#define KLDM_O4 "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
#if defined(KEMU)
KLDMATRIX(kldmatrix_x1, 1, false, , )
KLDMATRIX(kldmatrix_x2, 2, false, , )
KLDMATRIX(kldmatrix_x4, 4, false, , )
KLDMATRIX(kldmatrix_x1_trans, 1, true, , )
KLDMATRIX(kldmatrix_x2_trans, 2, true, , )
KLDMATRIX(kldmatrix_x4_trans, 4, true, , )
#else
KLDMATRIX(kldmatrix_x1, 1, "", KLDM_R1, KLDM_O1)
KLDMATRIX(kldmatrix_x2, 2, "", KLDM_R2, KLDM_O2)
KLDMATRIX(kldmatrix_x4, 4, "", KLDM_R4, KLDM_O4)
KLDMATRIX(kldmatrix_x1_trans, 1, ".trans", KLDM_R1, KLDM_O1)
KLDMATRIX(kldmatrix_x2_trans, 2, ".trans", KLDM_R2, KLDM_O2)
KLDMATRIX(kldmatrix_x4_trans, 4, ".trans", KLDM_R4, KLDM_O4)
#endif
#undef KLDMATRIX

// ---- fragments from bf16 tiles in shared memory (rows of ld elements, ld*2 a multiple of 16) ----
// A of the 16x16 tile at s, row-major M x K (Q in Q K^T)
__device__ __forceinline__ void kfrag_load_a(KFragA &a, const __nv_bfloat16 *s, int ld KEMU_SITE_PARAMS)
{
	int l = klane();
	kldmatrix_x4(a.x, s + (l % 16) * ld + (l / 16) * 8 KEMU_SITE_ARGS);
}
// A of the 16x16 tile whose transpose is at s: stored K x M row-major (Pᵀ of Pᵀ dO from P stored
// by query rows): ldmatrix .trans, matrix j from stored rows 8(j/2).., columns 8(j%2)..
__device__ __forceinline__ void kfrag_load_a_trans(KFragA &a, const __nv_bfloat16 *s, int ld KEMU_SITE_PARAMS)
{
	int l = klane();
	kldmatrix_x4_trans(a.x, s + ((l / 16) * 8 + l % 8) * ld + ((l / 8) % 2) * 8 KEMU_SITE_ARGS);
}
// B (16x8, K x N) of an N x K tile stored row-major, 8 rows of 16 (K of Q K^T, a weight W[n][k])
__device__ __forceinline__ void kfrag_load_b_nk(KFragB &b, const __nv_bfloat16 *s, int ld KEMU_SITE_PARAMS)
{
	int l = klane();
	kldmatrix_x2(b.x, s + (l % 8) * ld + ((l / 8) % 2) * 8 KEMU_SITE_ARGS);
}
// B (16x8, K x N) of a K x N tile stored row-major, 16 rows of 8 (V of P V)
__device__ __forceinline__ void kfrag_load_b_kn(KFragB &b, const __nv_bfloat16 *s, int ld KEMU_SITE_PARAMS)
{
	int l = klane();
	kldmatrix_x2_trans(b.x, s + (l % 16) * ld KEMU_SITE_ARGS);
}
// two B fragments at once (n 0..7 and 8..15) of a 16 (N) x 16 (K) tile stored row-major
__device__ __forceinline__ void kfrag_load_b2_nk(KFragB b[2], const __nv_bfloat16 *s, int ld KEMU_SITE_PARAMS)
{
	int l = klane();
	uint32_t r[4];
	kldmatrix_x4(r, s + (l % 8 + 8 * (l / 16)) * ld + ((l / 8) % 2) * 8 KEMU_SITE_ARGS);
	b[0].x[0] = r[0], b[0].x[1] = r[1], b[1].x[0] = r[2], b[1].x[1] = r[3];
}
// two B fragments at once (n 0..7 and 8..15) of a 16 (K) x 16 (N) tile stored row-major
__device__ __forceinline__ void kfrag_load_b2_kn(KFragB b[2], const __nv_bfloat16 *s, int ld KEMU_SITE_PARAMS)
{
	int l = klane();
	uint32_t r[4];
	kldmatrix_x4_trans(r, s + (l % 16) * ld + (l / 16) * 8 KEMU_SITE_ARGS);
	b[0].x[0] = r[0], b[0].x[1] = r[1], b[1].x[0] = r[2], b[1].x[1] = r[3];
}

// ---- the same fragments with plain loads, from any memory (pairs 4-byte aligned) ----
// one 4-byte load (a memcpy from a bf16 *, 2-byte aligned to the compiler, became byte loads)
__device__ __forceinline__ uint32_t kld_bf16x2(const __nv_bfloat16 *p)
{
	return *reinterpret_cast<const uint32_t *>(p);
}
__device__ __forceinline__ void kfrag_load_a_direct(KFragA &a, const __nv_bfloat16 *p, int ld)
{
	int l = klane();
	for (int r = 0; r < 4; r++)
		a.x[r] = kld_bf16x2(p + kfrag_a_row(l, 2 * r) * ld + kfrag_a_col(l, 2 * r));
}
__device__ __forceinline__ void kfrag_load_b_nk_direct(KFragB &b, const __nv_bfloat16 *p, int ld)
{
	int l = klane();
	for (int r = 0; r < 2; r++)
		b.x[r] = kld_bf16x2(p + kfrag_b_n(l, 2 * r) * ld + kfrag_b_k(l, 2 * r));
}
__device__ __forceinline__ void kfrag_load_b_kn_direct(KFragB &b, const __nv_bfloat16 *p, int ld)
{
	int l = klane();
	for (int r = 0; r < 2; r++) {
		const uint16_t lo = *reinterpret_cast<const uint16_t *>(p + kfrag_b_k(l, 2 * r) * ld +
									kfrag_b_n(l, 2 * r)),
			       hi = *reinterpret_cast<const uint16_t *>(p + kfrag_b_k(l, 2 * r + 1) * ld +
									kfrag_b_n(l, 2 * r + 1));
		b.x[r] = (uint32_t)lo | (uint32_t)hi << 16;
	}
}

// ---- accumulators ----
__device__ __forceinline__ void kfrag_c_zero(KFragC &c)
{
	for (int i = 0; i < 4; i++)
		c.x[i] = 0.0f;
}
// the 16x8 accumulator to row-major f32 memory
__device__ __forceinline__ void kfrag_c_store(const KFragC &c, float *p, int ld)
{
	int l = klane();
	for (int i = 0; i < 4; i++)
		p[kfrag_c_row(l, i) * ld + kfrag_c_col(l, i)] = c.x[i];
}
// P (16x16) as two accumulators (columns 0..7 in c0, 8..15 in c1) -> its A fragment, rounded to bf16
__device__ __forceinline__ void kfrag_c_to_a(KFragA &a, const KFragC &c0, const KFragC &c1)
{
	a.x[0] = kpack_bf16x2(c0.x[0], c0.x[1]);
	a.x[1] = kpack_bf16x2(c0.x[2], c0.x[3]);
	a.x[2] = kpack_bf16x2(c1.x[0], c1.x[1]);
	a.x[3] = kpack_bf16x2(c1.x[2], c1.x[3]);
}
// max / sum over the 4 lanes of a quad: a full accumulator row when each lane first reduces its
// own two elements of that row. Every lane of the quad gets the same bits.
__device__ __forceinline__ float kquad_max(float v)
{
	v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
	return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float kquad_sum(float v)
{
	v += __shfl_xor_sync(0xffffffffu, v, 1);
	return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// ---- asynchronous copies global -> shared (cp.async, sm_80 and later) ----
// One thread's copy of 16 (or 4) bytes, both addresses aligned to the size, dst in shared memory.
// full == false copies nothing and writes zeros (src-size 0: src is not read, but must be a valid
// address). The copy is in flight until the thread waits for its group: kcp_async_commit() closes
// the group of the copies issued since the last commit, kcp_async_wait<N>() returns when at most N
// of the thread's groups are pending; other threads see the data after that wait and a barrier.
// Every thread waits for all its copies (kcp_async_wait<0>) before it returns.
#if defined(KEMU)
__device__ __forceinline__ void kcp_async_16(void *dst, const void *src, bool full KEMU_SITE_PARAMS)
{
	kemu::async_check(dst, src, 16, kemu_file_, kemu_line_);
	uint4 v = full ? *reinterpret_cast<const uint4 *>(src) : make_uint4(0, 0, 0, 0);
	*reinterpret_cast<uint4 *>(dst) = make_uint4(~0u, ~0u, ~0u, ~0u); // in flight: undefined until the wait
	kemu::async_issue(dst, &v, 16);
}
__device__ __forceinline__ void kcp_async_4(void *dst, const void *src, bool full KEMU_SITE_PARAMS)
{
	kemu::async_check(dst, src, 4, kemu_file_, kemu_line_);
	uint32_t v = full ? *reinterpret_cast<const uint32_t *>(src) : 0u;
	*reinterpret_cast<uint32_t *>(dst) = ~0u;
	kemu::async_issue(dst, &v, 4);
}
__device__ __forceinline__ void kcp_async_commit()
{
	kemu::async_commit();
}
template <int N>
__device__ __forceinline__ void kcp_async_wait()
{
	kemu::AsyncCopy c[16];
	for (size_t n; (n = kemu::async_take(N, c, 16)) > 0;)
		for (size_t i = 0; i < n; i++) // the copy's write, by this thread, now (instrumented here)
			if (c[i].n == 16)
				*reinterpret_cast<uint4 *>(c[i].dst) = *reinterpret_cast<const uint4 *>(c[i].data);
			else
				*reinterpret_cast<uint32_t *>(c[i].dst) =
					*reinterpret_cast<const uint32_t *>(c[i].data);
}
#else
__device__ __forceinline__ void kcp_async_16(void *dst, const void *src, bool full)
{
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(full ? 16 : 0));
}
__device__ __forceinline__ void kcp_async_4(void *dst, const void *src, bool full)
{
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(full ? 4 : 0));
}
__device__ __forceinline__ void kcp_async_commit()
{
	asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void kcp_async_wait()
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); // shared memory changed under the compiler
}
#endif

// ---- an f32 atomic add, outside the dialect's rule that atomics not change a result ----
// The sum depends on the order the adds arrive in (rounding): only for a result its caller has
// chosen to give up bit-reproducibility for (kattn's dQ by atomics). Device or shared memory.
__device__ __forceinline__ void katomic_add_f32_unordered(float *p, float v)
{
#if defined(KEMU)
	kemu::atomic_add_f32_unordered(p, v);
#else
	atomicAdd(p, v);
#endif
}

#endif
