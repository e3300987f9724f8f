// The execution shim: the project's CUDA kernel dialect compiled by g++ for the CPU, a block's
// threads run as fibers on one OS thread (what it models and what it does not: README.md here).
#ifndef KEMU_H
#define KEMU_H
// defines: threadIdx, blockIdx, blockDim, gridDim, warpSize, __shared__, __launch_bounds__, __syncthreads,
//          __syncwarp, __shfl_sync, __shfl_xor_sync, __shfl_down_sync, __shfl_up_sync, __all_sync, __any_sync,
//          __ballot_sync, atomicAdd/Sub/Max/Min/And/Or/Xor (integers), device math intrinsics, min, max,
//          kemu::launch, kemu::dyn_smem, kemu::warp_sync, kemu::fault, kemu::in_shared, kemu_config, kemu_config_c,
//          kemu_checks, KEMU_CHECK_*, KEMU_CHECKED, kemu_sched

#if defined(__CUDACC__)
#error "kemu.h is the CPU shim; nvcc builds use the real CUDA headers (see kernels/cuda/kcuda.h)"
#endif

// The toolkit's own headers give the types (dim3, float4, cudaError_t) and the runtime API
// declarations the shim implements; cuda_bf16.h's host path is the bf16 arithmetic.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tuple>
#include <type_traits>
#include <utility>

// Scheduling of the threads of a block between barriers, for every following launch.
// shuffle = 0: thread order 0, 1, 2, ...; shuffle = 1: a seeded random order, so a missing
// __syncthreads shows as a wrong result. The environment (KEMU_SHUFFLE, KEMU_SEED) sets the
// defaults; tests call kemu_config.
void kemu_config(int shuffle, uint64_t seed);
// the same for C programs (the backend's tests, which see only kern_ops.h, declare it weak)
extern "C" void kemu_config_c(int shuffle, uint64_t seed);
// the shim's explanation of the last failed launch ("" if none): a deadlock, a divergent barrier, ...
const char *kemu_fault_detail(void);
// Asynchronous streams (kemu_sched.cpp; KEMU_SCHED_SEED=n in the environment, or this call before
// the first stream is made): each stream a queue that a seeded scheduler runs later, honouring only
// CUDA's guarantees; a device-memory access not ordered after the last conflicting one of another
// stream is reported, and a kernel fault surfaces as a sticky error at the next call.
void kemu_sched(uint64_t seed);
extern "C" void kemu_sched_c(uint64_t seed); // for C programs, which declare it weak
// The memory checkers (kemu_check.cpp): shared-memory races between two barriers, reads of
// shared memory no thread of the block wrote, and writes of two blocks of one launch to the same
// device memory each end the launch with a fault naming the kernel and both threads. They see the
// accesses of kernels compiled with KEMU_CHECKED=1 (module.mk; not under a sanitizer). All are on
// by default (KEMU_CHECKS=bits in the environment sets the default); kemu_checks sets them for the
// following launches and returns the previous set.
enum { KEMU_CHECK_RACE = 1, KEMU_CHECK_GLOBAL = 2, KEMU_CHECK_INIT = 4, KEMU_CHECK_ALL = 7 };
unsigned kemu_checks(unsigned which);
#ifndef KEMU_CHECKED
#define KEMU_CHECKED 0
#endif
// fiber context switches since the process started, and how they switch (for the benchmark)
uint64_t kemu_switch_count(void);
const char *kemu_switch_name(void);

namespace kemu
{

// What a kernel sees of the running thread; the scheduler points `cur` at the running fiber.
struct ThreadState {
	uint3 tid;
	unsigned linear, lane, warp;
};
extern ThreadState *cur;
extern uint3 block_idx;
extern dim3 block_dim, grid_dim;

// One lane's deposit in a warp collective: large enough for an mma's A, B and C fragments.
struct alignas(16) Slot {
	unsigned char b[48];
};
enum Kind { K_SYNCWARP = 1, K_SHFL, K_VOTE, K_MMA, K_LDMATRIX };
typedef void (*Combine)(Slot *slots, void *ctx);

// Block barrier (site = the caller's file:line; every thread must reach the same one).
void syncthreads(const char *file, int line);
// Warp collective: deposits `bytes` of `mine` for this lane, waits until all 32 lanes of the warp
// have arrived at a collective of the same kind and site, runs `combine` once over the 32 slots,
// and returns them. They stay valid until this lane's next collective.
const Slot *warp_sync(int kind, unsigned mask, const void *mine, size_t bytes, Combine combine, void *ctx,
		      const char *file, int line);
// Ends the block with an error the launch returns (the kernel broke a rule of the dialect).
[[noreturn]] void fault(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *dyn_smem();
// an atomic's access: no conflict with anything, but its operand must have been written
void atomic_access(const void *p, size_t n);
// true when [p, p+n) lies in this block's shared memory (the dynamic block or a static __shared__)
bool in_shared(const void *p, size_t n);

// ---- launches ----
struct LaunchSite {
	const char *kernel, *file;
	int line;
};
typedef void (*Body)(void *ctx);
// Validates the launch, then runs the blocks now or (asynchronous streams) queues them; drop(ctx)
// frees the arguments once the launch has run or was refused.
cudaError_t run(const void *func, dim3 grid, dim3 block, size_t smem, cudaStream_t stream, Body body, void *ctx,
		Body drop, const LaunchSite &site);

// Arguments are converted to the kernel's parameter types once, as a CUDA launch does, and kept by
// value until the launch runs (with asynchronous streams, after the call has returned); every
// thread receives its own copy of them.
template <class... P, class... A>
cudaError_t launch(const LaunchSite &site, void (*kernel)(P...), dim3 grid, dim3 block, size_t smem,
		   cudaStream_t stream, A &&...a)
{
	static_assert(sizeof...(P) == sizeof...(A), "kernel launched with the wrong number of arguments");
	typedef std::pair<void (*)(P...), std::tuple<typename std::decay<P>::type...>> Call;
	Call *call = new Call(kernel, std::tuple<typename std::decay<P>::type...>(std::forward<A>(a)...));
	return run(
		reinterpret_cast<const void *>(kernel), grid, block, smem, stream,
		[](void *c) { std::apply(static_cast<Call *>(c)->first, static_cast<Call *>(c)->second); }, call,
		[](void *c) { delete static_cast<Call *>(c); }, site);
}

// ---- warp shuffles: PTX shfl.sync semantics (mode, lane, b, c), c built as CUDA's intrinsics do ----
enum ShflMode { SH_IDX, SH_UP, SH_DOWN, SH_BFLY };
int shfl_source(int mode, unsigned lane, unsigned b, int width);
template <class T>
struct shuffleable : std::integral_constant<bool, std::is_arithmetic<T>::value> {
};
template <>
struct shuffleable<__nv_bfloat16> : std::true_type {
};
template <>
struct shuffleable<__nv_bfloat162> : std::true_type {
};

template <class T>
T shfl(int mode, unsigned mask, T v, unsigned b, int width, const char *file, int line)
{
	static_assert(shuffleable<T>::value && sizeof(T) <= 8, "warp shuffles move built-in types of up to 8 bytes");
	const Slot *s = warp_sync(K_SHFL, mask, &v, sizeof v, nullptr, nullptr, file, line);
	T r;
	memcpy(static_cast<void *>(&r), s[shfl_source(mode, cur->lane, b, width)].b,
	       sizeof r); // bf16 types copy as bytes
	return r;
}
unsigned vote(unsigned mask, int pred, const char *file, int line); // the ballot of the warp

// Tensor-core instructions for kernels/cuda/kmma.h, with the PTX ISA's fragment layouts:
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 for the calling lane, and
// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 (row: this lane's row address).
void mma_bf16_16816(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4], const char *file, int line);
void ldmatrix(uint32_t *r, int nmat, bool trans, const void *row, const char *file, int line);

} // namespace kemu

// nvcc's cuda_runtime.h offers this for kernels; the host-compiler view of it does not
template <class T>
inline cudaError_t cudaFuncSetAttribute(T *kernel, enum cudaFuncAttribute attr, int value)
{
	return ::cudaFuncSetAttribute(reinterpret_cast<const void *>(kernel), attr, value);
}

// ---- the dialect's names ----
#define threadIdx (static_cast<const uint3 &>(kemu::cur->tid))
#define blockIdx (static_cast<const uint3 &>(kemu::block_idx))
#define blockDim (static_cast<const dim3 &>(kemu::block_dim))
#define gridDim (static_cast<const dim3 &>(kemu::grid_dim))
static constexpr int warpSize = 32;

// A block's static shared memory: one instance per kernel (blocks run one after another), kept in
// its own section so the shim can poison all of it before each block.
#undef __shared__
#define __shared__ static __attribute__((section("kemu_shared"), aligned(16)))
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif
#ifndef __noinline__
#define __noinline__ __attribute__((noinline))
#endif

inline void __syncthreads(const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
	kemu::syncthreads(file, line);
}
inline void __syncwarp(unsigned mask = 0xffffffffu, const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
	kemu::warp_sync(kemu::K_SYNCWARP, mask, nullptr, 0, nullptr, nullptr, file, line);
}
template <class T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32, const char *file = __builtin_FILE(),
		     int line = __builtin_LINE())
{
	return kemu::shfl(kemu::SH_IDX, mask, v, (unsigned)src, width, file, line);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32, const char *file = __builtin_FILE(),
			int line = __builtin_LINE())
{
	return kemu::shfl(kemu::SH_UP, mask, v, delta, width, file, line);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32, const char *file = __builtin_FILE(),
			  int line = __builtin_LINE())
{
	return kemu::shfl(kemu::SH_DOWN, mask, v, delta, width, file, line);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32, const char *file = __builtin_FILE(),
			 int line = __builtin_LINE())
{
	return kemu::shfl(kemu::SH_BFLY, mask, v, (unsigned)lane_mask, width, file, line);
}
inline unsigned __ballot_sync(unsigned mask, int pred, const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
	return kemu::vote(mask, pred, file, line);
}
inline int __all_sync(unsigned mask, int pred, const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
	return kemu::vote(mask, pred, file, line) == 0xffffffffu;
}
inline int __any_sync(unsigned mask, int pred, const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
	return kemu::vote(mask, pred, file, line) != 0;
}

// ---- atomics: fibers are never preempted, so a read-modify-write is atomic as written. Only
// integer ones whose final value does not depend on the order: float additions do (rounding), so
// they are deleted here and a kernel that uses one fails to compile in the shim. ----
// With the checkers compiled in they are not instrumented, and tell the checker instead.
#if KEMU_CHECKED
#define KEMU_ATOMIC_ATTR __attribute__((no_sanitize_thread))
#else
#define KEMU_ATOMIC_ATTR
#endif
#define KEMU_ATOMIC(name, expr)                                                                                        \
	template <class T>                                                                                             \
	KEMU_ATOMIC_ATTR inline typename std::enable_if<std::is_integral<T>::value, T>::type name(T *p, T v)           \
	{                                                                                                              \
		if (KEMU_CHECKED)                                                                                      \
			kemu::atomic_access(p, sizeof(T));                                                             \
		T old = *p;                                                                                            \
		*p = (expr);                                                                                           \
		return old;                                                                                            \
	}
KEMU_ATOMIC(atomicAdd, old + v)
KEMU_ATOMIC(atomicSub, old - v)
KEMU_ATOMIC(atomicMax, old > v ? old : v)
KEMU_ATOMIC(atomicMin, old < v ? old : v)
KEMU_ATOMIC(atomicAnd, old &v)
KEMU_ATOMIC(atomicOr, old | v)
KEMU_ATOMIC(atomicXor, old ^ v)
#undef KEMU_ATOMIC
#undef KEMU_ATOMIC_ATTR
float atomicAdd(float *p, float v) = delete; // order-dependent rounding: not in the dialect
double atomicAdd(double *p, double v) = delete;

// ---- math: the fast intrinsics are computed exactly here (the device approximates them) ----
inline float __expf(float x)
{
	return expf(x);
}
inline float __exp10f(float x)
{
	return exp10f(x);
}
inline float __logf(float x)
{
	return logf(x);
}
inline float __log2f(float x)
{
	return log2f(x);
}
inline float __powf(float x, float y)
{
	return powf(x, y);
}
inline float __sinf(float x)
{
	return sinf(x);
}
inline float __cosf(float x)
{
	return cosf(x);
}
inline float __tanf(float x)
{
	return tanf(x);
}
inline float __fdividef(float a, float b)
{
	return a / b;
}
inline float rsqrtf(float x)
{
	return 1.0f / sqrtf(x);
}
inline float __frsqrt_rn(float x)
{
	return 1.0f / sqrtf(x);
}
inline float __frcp_rn(float x)
{
	return 1.0f / x;
}
inline float __fsqrt_rn(float x)
{
	return sqrtf(x);
}
inline float __fadd_rn(float a, float b)
{
	return a + b;
}
inline float __fmul_rn(float a, float b)
{
	return a * b;
}
inline float __fmaf_rn(float a, float b, float c)
{
	return fmaf(a, b, c);
}
inline float __saturatef(float x)
{
	return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;
} // NaN -> 0
inline int __float2int_rn(float x)
{
	return (int)nearbyintf(x);
}
inline int __float2int_rz(float x)
{
	return (int)x;
}
inline int __float_as_int(float x)
{
	int i;
	memcpy(&i, &x, 4);
	return i;
}
inline unsigned __float_as_uint(float x)
{
	unsigned i;
	memcpy(&i, &x, 4);
	return i;
}
inline float __int_as_float(int i)
{
	float x;
	memcpy(&x, &i, 4);
	return x;
}
inline float __uint_as_float(unsigned i)
{
	float x;
	memcpy(&x, &i, 4);
	return x;
}
inline int __popc(unsigned x)
{
	return __builtin_popcount(x);
}
inline int __popcll(unsigned long long x)
{
	return __builtin_popcountll(x);
}
inline int __clz(int x)
{
	return x ? __builtin_clz((unsigned)x) : 32;
}
inline int __clzll(long long x)
{
	return x ? __builtin_clzll((unsigned long long)x) : 64;
}
inline int __ffs(int x)
{
	return __builtin_ffs(x);
}
inline int __ffsll(long long x)
{
	return __builtin_ffsll(x);
}
inline unsigned __brev(unsigned x)
{
	x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
	x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
	x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
	return __builtin_bswap32(x);
}
template <class T>
inline T __ldg(const T *p)
{
	return *p;
}
#define KEMU_MINMAX(T)                                                                                                 \
	inline T min(T a, T b)                                                                                         \
	{                                                                                                              \
		return a < b ? a : b;                                                                                  \
	}                                                                                                              \
	inline T max(T a, T b)                                                                                         \
	{                                                                                                              \
		return a > b ? a : b;                                                                                  \
	}
KEMU_MINMAX(int)
KEMU_MINMAX(unsigned)
KEMU_MINMAX(long long)
KEMU_MINMAX(unsigned long long)
#undef KEMU_MINMAX
inline float min(float a, float b)
{
	return fminf(a, b);
}
inline float max(float a, float b)
{
	return fmaxf(a, b);
}

#endif
