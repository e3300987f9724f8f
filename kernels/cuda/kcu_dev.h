// Device helpers of the CUDA backend's kernels: loads and stores of a tensor whose storage (f32,
// bf16 or f64) is chosen at run time (KcIn, KcOut) or is a template argument of the kernel
// (KcInT, KcOutT: no branch per element; the hot kernels are instantiated per dtype), 8 elements =
// 16 bytes of bf16 at once when aligned, fixed-order warp and block reductions, the error slots,
// Philox4x32-10 and launch-shape arithmetic.
#ifndef KCU_DEV_H
#define KCU_DEV_H
// defines: bf16, KcIn, KcOut, KC_F32, KC_BF16, KC_F64, kc_in, kc_out, kc_grad, kc_ld, kc_ldd, kc_ldo, kc_st,
//          kc_esize, kc_at, kc_std, kc_st_acc, kc_ld8, kc_st8, kc_ldv, kc_stv, kc_vec_ok, KcSum, KcMax,
//          KcInT, KcOutT, kc_int, kc_outt, kc_same_dt, kc_in_of,
//          kc_warp_sum, kc_warp_sumd, kc_warp_reduce, kc_block_reduce, kc_block_sumd, kc_block_maxd,
//          kc_report, kc_philox_word0, kc_grid, KC_THREADS, KC_BOUNDS_F64, KC_TRY, KC_SYNC

#include "kcu.h"   // defines: KcuStream, KCU_E_*
#include "kcuda.h" // defines: the dialect, KLAUNCH
#include "kmma.h"  // defines: kpack_bf16x2

#include <errno.h>
#include <initializer_list>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef __nv_bfloat16 bf16;

// a barrier inside a helper that takes its caller's site (KEMU_SITE_PARAMS), so the shim names it
#if defined(KEMU)
#define KC_SYNC() __syncthreads(kemu_file_, kemu_line_)
#else
#define KC_SYNC() __syncthreads()
#endif

enum { KC_F32 = 0, KC_BF16 = 1, KC_F64 = 2 };
enum { KC_THREADS = 256 };
// the loss kernels' launch bounds: their double arithmetic spilled under a bare
// __launch_bounds__(256) on sm_90 (ptxas capped the registers at 48); asking for only one
// resident block per SM lifts the cap
#define KC_BOUNDS_F64 __launch_bounds__(KC_THREADS, 1)

// a tensor's data and storage type, passed to kernels by value
struct KcIn {
	const void *p;
	int dt;
};
struct KcOut {
	void *p;
	int dt;
};

static inline int kc_dt(KDtype d)
{
	return d == KDT_BF16 ? KC_BF16 : d == KDT_F64 ? KC_F64 : KC_F32;
}
static inline KcIn kc_in(const KTensor *t)
{
	return KcIn{t ? t->data : nullptr, t ? kc_dt(t->dtype) : KC_F32};
}
static inline KcOut kc_out(KTensor *t)
{
	return KcOut{t ? t->data : nullptr, t ? kc_dt(t->dtype) : KC_F32};
}
static inline KcOut kc_grad(KGrad g)
{
	return kc_out(g.t);
}
static inline size_t kc_esize(int dt)
{
	return dt == KC_BF16 ? 2 : dt == KC_F64 ? 8 : 4;
}
// the same tensor n elements further on
static inline KcIn kc_at(KcIn t, int64_t n)
{
	return KcIn{t.p ? (const char *)t.p + n * (int64_t)kc_esize(t.dt) : nullptr, t.dt};
}
static inline KcOut kc_at(KcOut t, int64_t n)
{
	return KcOut{t.p ? (char *)t.p + n * (int64_t)kc_esize(t.dt) : nullptr, t.dt};
}
static inline KcIn kc_f64in(const double *p)
{
	return KcIn{p, KC_F64};
}
static inline KcOut kc_f64out(double *p)
{
	return KcOut{p, KC_F64};
}

#define KC_TRY(x)                                                                                                      \
	do {                                                                                                           \
		int rc_ = (x);                                                                                         \
		if (rc_)                                                                                               \
			return rc_;                                                                                    \
	} while (0)

__device__ __forceinline__ float kc_bf(bf16 v)
{
	return __bfloat162float(v);
}

__device__ __forceinline__ float kc_ld(KcIn t, int64_t i)
{
	if (t.dt == KC_BF16)
		return kc_bf(static_cast<const bf16 *>(t.p)[i]);
	if (t.dt == KC_F64)
		return (float)static_cast<const double *>(t.p)[i];
	return static_cast<const float *>(t.p)[i];
}
__device__ __forceinline__ double kc_ldd(KcIn t, int64_t i)
{
	if (t.dt == KC_F64)
		return static_cast<const double *>(t.p)[i];
	return (double)kc_ld(t, i);
}
__device__ __forceinline__ float kc_ldo(KcOut t, int64_t i)
{
	return kc_ld(KcIn{t.p, t.dt}, i);
}

// the store rule: f32 as is, bf16 rounded to nearest even from the f32 value
__device__ __forceinline__ void kc_st(KcOut t, int64_t i, float v)
{
	if (t.dt == KC_BF16)
		static_cast<bf16 *>(t.p)[i] = __float2bfloat16(v);
	else if (t.dt == KC_F64)
		static_cast<double *>(t.p)[i] = (double)v;
	else
		static_cast<float *>(t.p)[i] = v;
}
// a double result: rounded to float first for f32 and bf16 storage (as the CPU twins store it)
__device__ __forceinline__ void kc_std(KcOut t, int64_t i, double v)
{
	if (t.dt == KC_F64)
		static_cast<double *>(t.p)[i] = v;
	else
		kc_st(t, i, (float)v);
}
// a gradient output: acc adds in f32 (old value + the result rounded to f32) and rounds once
__device__ __forceinline__ void kc_st_acc(KcOut t, int64_t i, float v, int acc)
{
	kc_st(t, i, acc ? kc_ldo(t, i) + v : v);
}

__device__ __forceinline__ float kc_bf_lo(uint32_t u)
{
	return __uint_as_float(u << 16);
}
__device__ __forceinline__ float kc_bf_hi(uint32_t u)
{
	return __uint_as_float(u & 0xffff0000u);
}

// 8 consecutive elements from i (i % 8 == 0, the pointer 16-byte aligned): one 16-byte load of
// bf16, two of f32
__device__ __forceinline__ void kc_ld8(KcIn t, int64_t i, float v[8])
{
	if (t.dt == KC_BF16) {
		uint4 q = *reinterpret_cast<const uint4 *>(static_cast<const bf16 *>(t.p) + i);
		uint32_t w[4] = {q.x, q.y, q.z, q.w};
		for (int k = 0; k < 4; k++)
			v[2 * k] = kc_bf_lo(w[k]), v[2 * k + 1] = kc_bf_hi(w[k]);
	} else if (t.dt == KC_F32) {
		float4 a = *reinterpret_cast<const float4 *>(static_cast<const float *>(t.p) + i);
		float4 b = *reinterpret_cast<const float4 *>(static_cast<const float *>(t.p) + i + 4);
		v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
	} else {
		for (int k = 0; k < 8; k++)
			v[k] = kc_ld(t, i + k);
	}
}
__device__ __forceinline__ void kc_st8(KcOut t, int64_t i, const float v[8])
{
	if (t.dt == KC_BF16) {
		uint4 q = make_uint4(kpack_bf16x2(v[0], v[1]), kpack_bf16x2(v[2], v[3]), kpack_bf16x2(v[4], v[5]),
				     kpack_bf16x2(v[6], v[7]));
		*reinterpret_cast<uint4 *>(static_cast<bf16 *>(t.p) + i) = q;
	} else if (t.dt == KC_F32) {
		*reinterpret_cast<float4 *>(static_cast<float *>(t.p) + i) = make_float4(v[0], v[1], v[2], v[3]);
		*reinterpret_cast<float4 *>(static_cast<float *>(t.p) + i + 4) = make_float4(v[4], v[5], v[6], v[7]);
	} else {
		for (int k = 0; k < 8; k++)
			kc_st(t, i + k, v[k]);
	}
}

// ---- storage known at compile time (issue 25 §8) ----
// A kernel templated on its tensors' types takes KcInT<T> / KcOutT<T> (T float or bf16, double for
// the loss ops' f64 scratch) where it took KcIn / KcOut, and calls the same helpers: overloads of
// kc_ld, kc_ldd, kc_st, kc_std, kc_st_acc, kc_ld8, kc_st8, kc_ldv, kc_stv that compile to one load
// or store without the run-time branch on dt per element. The values are the same bits as the
// KcIn/KcOut forms'; the host launches the typed instantiation when the tensors share a dtype
// (kc_same_dt) and the run-time form otherwise (mixed storage).
template <class T>
struct KcInT {
	const T *p;
};
template <class T>
struct KcOutT {
	T *p;
};

__device__ __forceinline__ float kc_ld(KcInT<float> t, int64_t i)
{
	return t.p[i];
}
__device__ __forceinline__ float kc_ld(KcInT<bf16> t, int64_t i)
{
	return kc_bf(t.p[i]);
}
__device__ __forceinline__ float kc_ld(KcInT<double> t, int64_t i)
{
	return (float)t.p[i];
}
template <class T>
__device__ __forceinline__ double kc_ldd(KcInT<T> t, int64_t i)
{
	return (double)kc_ld(t, i);
}
__device__ __forceinline__ double kc_ldd(KcInT<double> t, int64_t i)
{
	return t.p[i];
}
template <class T>
__device__ __forceinline__ float kc_ldo(KcOutT<T> t, int64_t i)
{
	return kc_ld(KcInT<T>{t.p}, i);
}
__device__ __forceinline__ void kc_st(KcOutT<float> t, int64_t i, float v)
{
	t.p[i] = v;
}
__device__ __forceinline__ void kc_st(KcOutT<bf16> t, int64_t i, float v)
{
	t.p[i] = __float2bfloat16(v);
}
__device__ __forceinline__ void kc_st(KcOutT<double> t, int64_t i, float v)
{
	t.p[i] = (double)v;
}
template <class T>
__device__ __forceinline__ void kc_std(KcOutT<T> t, int64_t i, double v)
{
	kc_st(t, i, (float)v);
}
__device__ __forceinline__ void kc_std(KcOutT<double> t, int64_t i, double v)
{
	t.p[i] = v;
}
template <class T>
__device__ __forceinline__ void kc_st_acc(KcOutT<T> t, int64_t i, float v, int acc)
{
	kc_st(t, i, acc ? kc_ldo(t, i) + v : v);
}
__device__ __forceinline__ void kc_ld8(KcInT<bf16> t, int64_t i, float v[8])
{
	uint4 q = *reinterpret_cast<const uint4 *>(t.p + i);
	uint32_t w[4] = {q.x, q.y, q.z, q.w};
	for (int k = 0; k < 4; k++)
		v[2 * k] = kc_bf_lo(w[k]), v[2 * k + 1] = kc_bf_hi(w[k]);
}
__device__ __forceinline__ void kc_ld8(KcInT<float> t, int64_t i, float v[8])
{
	float4 a = *reinterpret_cast<const float4 *>(t.p + i), b = *reinterpret_cast<const float4 *>(t.p + i + 4);
	v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
__device__ __forceinline__ void kc_st8(KcOutT<bf16> t, int64_t i, const float v[8])
{
	*reinterpret_cast<uint4 *>(t.p + i) = make_uint4(kpack_bf16x2(v[0], v[1]), kpack_bf16x2(v[2], v[3]),
							 kpack_bf16x2(v[4], v[5]), kpack_bf16x2(v[6], v[7]));
}
__device__ __forceinline__ void kc_st8(KcOutT<float> t, int64_t i, const float v[8])
{
	*reinterpret_cast<float4 *>(t.p + i) = make_float4(v[0], v[1], v[2], v[3]);
	*reinterpret_cast<float4 *>(t.p + i + 4) = make_float4(v[4], v[5], v[6], v[7]);
}

// V = 8 or 1 consecutive elements from i, of either form
template <int V, class In>
__device__ __forceinline__ void kc_ldv(In t, int64_t i, float *x)
{
	if constexpr (V == 8)
		kc_ld8(t, i, x);
	else
		x[0] = kc_ld(t, i);
}
template <int V, class Out>
__device__ __forceinline__ void kc_stv(Out t, int64_t i, const float *x)
{
	if constexpr (V == 8)
		kc_st8(t, i, x);
	else
		kc_st(t, i, x[0]);
}

// host: a tensor in the typed form (NULL tensors stay NULL)
template <class T>
static inline KcInT<T> kc_int(const KTensor *t)
{
	return KcInT<T>{t ? static_cast<const T *>(t->data) : nullptr};
}
template <class T>
static inline KcOutT<T> kc_outt(KTensor *t)
{
	return KcOutT<T>{t ? static_cast<T *>(t->data) : nullptr};
}
// host: the dtype every given tensor shares (NULLs skipped), KC_F32 or KC_BF16; -1 when they
// differ or one is f64 (the run-time form then)
static inline int kc_same_dt(std::initializer_list<const KTensor *> ts)
{
	int dt = -2;
	for (const KTensor *t : ts) {
		if (!t)
			continue;
		const int d = kc_dt(t->dtype);
		if (d == KC_F64 || (dt != -2 && d != dt))
			return -1;
		dt = d;
	}
	return dt == -2 ? KC_F32 : dt;
}
// the stored tensor as an input (a gradient added to: KG_ADD), in the same form
__device__ __forceinline__ KcIn kc_in_of(KcOut t)
{
	return KcIn{t.p, t.dt};
}
template <class T>
__device__ __forceinline__ KcInT<T> kc_in_of(KcOutT<T> t)
{
	return KcInT<T>{t.p};
}

// host: 8-element vectors are possible when every pointer is 16-byte aligned and rows of `inner`
// elements keep them so
static inline bool kc_vec_ok(int64_t inner, std::initializer_list<const void *> ptrs)
{
	if (inner % 8)
		return false;
	for (const void *p : ptrs)
		if (p && (uintptr_t)p % 16)
			return false;
	return true;
}

// ---- reductions in a fixed order: butterflies leave the same bits in every lane ----
struct KcSum {
	__device__ double operator()(double a, double b) const { return a + b; }
};
struct KcMax {
	__device__ double operator()(double a, double b) const { return fmax(a, b); }
};

__device__ __forceinline__ float kc_warp_sum(float v KEMU_SITE_PARAMS)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, o, 32 KEMU_SITE_ARGS);
	return v;
}
template <class Op>
__device__ __forceinline__ double kc_warp_reduce(double v, Op op KEMU_SITE_PARAMS)
{
	for (int o = 16; o > 0; o /= 2)
		v = op(v, __shfl_xor_sync(0xffffffffu, v, o, 32 KEMU_SITE_ARGS));
	return v;
}
__device__ __forceinline__ double kc_warp_sumd(double v KEMU_SITE_PARAMS)
{
	return kc_warp_reduce(v, KcSum() KEMU_SITE_ARGS);
}

// op over a block of KC_THREADS threads (every thread gets it); scratch: KC_THREADS/32 doubles
template <class Op>
__device__ __forceinline__ double kc_block_reduce(double v, double identity, double *scratch, Op op KEMU_SITE_PARAMS)
{
	v = kc_warp_reduce(v, op KEMU_SITE_ARGS);
	if (threadIdx.x % 32 == 0)
		scratch[threadIdx.x / 32] = v;
	KC_SYNC();
	v = threadIdx.x % 32 < KC_THREADS / 32 ? scratch[threadIdx.x % 32] : identity;
	v = kc_warp_reduce(v, op KEMU_SITE_ARGS);
	KC_SYNC(); // scratch is reused by the next reduction
	return v;
}
__device__ __forceinline__ double kc_block_sumd(double v, double *scratch KEMU_SITE_PARAMS)
{
	return kc_block_reduce(v, 0.0, scratch, KcSum() KEMU_SITE_ARGS);
}
__device__ __forceinline__ double kc_block_maxd(double v, double *scratch KEMU_SITE_PARAMS)
{
	return kc_block_reduce(v, -INFINITY, scratch, KcMax() KEMU_SITE_ARGS);
}

// a content error: the smallest (index, value) key wins, whatever the order of threads
__device__ __forceinline__ void kc_report(unsigned long long *errs, int slot, int64_t index, uint32_t value)
{
	atomicMin(&errs[slot], kcu_err_key(index, value));
}

// Philox4x32-10 (Random123's constants), bit 0 of word 0: stream/rng_philox.c's rng_philox4x32
__host__ __device__ __forceinline__ uint32_t kc_philox_word0(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
							     uint32_t k0, uint32_t k1)
{
	for (int r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
		uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0, hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
		c0 = hi1 ^ c1 ^ k0;
		c1 = lo1;
		c2 = hi0 ^ c3 ^ k1;
		c3 = lo0;
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
	return c0;
}

// blocks for n work items of `per` each, capped (kernels loop over the rest)
static inline unsigned kc_grid(int64_t n, int64_t per)
{
	int64_t b = (n + per - 1) / per;
	return (unsigned)(b < 1 ? 1 : b > (1 << 20) ? (1 << 20) : b);
}

#endif
