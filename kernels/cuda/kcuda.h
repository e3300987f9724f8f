// The one header an own CUDA source includes: the real CUDA headers under nvcc, the execution
// shim (emu/kemu.h) when g++ builds the same file for the CPU (-DKEMU), and the launch macro.
#ifndef KCUDA_H
#define KCUDA_H
// defines: KLAUNCH, KSHARED_DYN, KUNROLL, KEMU_SITE_PARAMS, KEMU_SITE_ARGS

#if defined(KEMU)
#include "emu/kemu.h" // defines: the dialect for the CPU
#else
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#endif

#include "kcheck.h" // defines: KErr, kcheck_launch

#include <stdint.h>

// KLAUNCH(err, kernel, grid, block, smem, stream, args...) launches `kernel` and checks the launch
// (cudaGetLastError after it), evaluating to 0 or -errno. A failure is latched in err (KErr *)
// with the kernel's name, file:line and a hint; err == NULL prints it and exits (programs, tests).
// A template kernel goes in parentheses: KLAUNCH(e, (k<float, 4>), ...).
#if defined(KEMU)
#define KLAUNCH(err, kernel, grid, block, smem, stream, ...)                                                           \
	kcheck_launch((err),                                                                                           \
		      ((void)kemu::launch(kemu::LaunchSite{#kernel, __FILE__, __LINE__}, kernel, grid, block, smem,    \
					  stream, ##__VA_ARGS__),                                                      \
		       (int)cudaGetLastError()),                                                                       \
		      #kernel, kemu_fault_detail(), __FILE__, __LINE__)
#else
#define KLAUNCH(err, kernel, grid, block, smem, stream, ...)                                                           \
	kcheck_launch((err), (kernel<<<grid, block, smem, stream>>>(__VA_ARGS__), (int)cudaGetLastError()), #kernel,   \
		      "", __FILE__, __LINE__)
#endif

// The kernel's one dynamic shared memory block (the launch's smem bytes), as a T *, 16-byte aligned:
// KSHARED_DYN(float, buf); buf[threadIdx.x] = ...
#if defined(KEMU)
#define KSHARED_DYN(T, name) T *const name = reinterpret_cast<T *>(kemu::dyn_smem())
#else
#define KSHARED_DYN(T, name)                                                                                           \
	extern __shared__ __align__(16) unsigned char kshared_dyn_[];                                                  \
	T *const name = reinterpret_cast<T *>(kshared_dyn_)
#endif

// `#pragma unroll` for the next loop under nvcc (a loop over a register array that must stay in
// registers); nothing for g++, which has no such pragma and runs the loop as written
#if defined(KEMU)
#define KUNROLL
#else
#define KUNROLL _Pragma("unroll")
#endif

// A device helper that wraps a warp collective takes its caller's site as trailing defaulted
// parameters (KEMU_SITE_PARAMS) and hands them on (KEMU_SITE_ARGS), so that a fault in the shim
// names the kernel's line; both are empty under nvcc.
#if defined(KEMU)
#define KEMU_SITE_PARAMS , const char *kemu_file_ = __builtin_FILE(), int kemu_line_ = __builtin_LINE()
#define KEMU_SITE_ARGS , kemu_file_, kemu_line_
#else
#define KEMU_SITE_PARAMS
#define KEMU_SITE_ARGS
#endif

#endif
