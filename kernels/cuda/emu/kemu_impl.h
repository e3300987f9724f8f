// What the parts of the shim tell each other: the fiber scheduler, the launcher and the runtime
// (private to kernels/cuda/emu).
#ifndef KEMU_IMPL_H
#define KEMU_IMPL_H
// defines: kemu_fibers_run_block, kemu_set_error, kemu_stream_ok, kemu_func_dyn_smem_limit, kemu_check_*

#include "kemu.h" // defines: kemu::Body

// Runs one block of `block` threads, each calling body(ctx), until all return. shuffle: draw the
// next runnable thread at random from *rng (advanced). Returns 0, -ENOMEM, or -EFAULT with the
// reason in msg when the kernel broke a rule (a barrier not reached by all, a bad mask, ...).
int kemu_fibers_run_block(const dim3 &block, kemu::Body body, void *ctx, int shuffle, uint64_t *rng, char *msg,
			  size_t msg_len);
// the runtime's "last error" (cudaGetLastError returns and clears it); returns e
cudaError_t kemu_set_error(cudaError_t e);
// the null stream, cudaStreamLegacy, cudaStreamPerThread, or one cudaStreamCreate made
bool kemu_stream_ok(cudaStream_t s);
// dynamic shared memory a kernel may use: 48 KiB, or what cudaFuncSetAttribute allowed it
size_t kemu_func_dyn_smem_limit(const void *func);

// The memory checkers (kemu_check.cpp). The runtime names the device memory a kernel may write;
// a launch brackets its blocks (launch_begin holds the checker's lock until launch_end; it returns
// 0 or -ENOMEM); the scheduler reports each barrier and each __syncwarp release.
void kemu_check_alloc(void *p, size_t bytes);
void kemu_check_free(void *p);
int kemu_check_launch_begin(const char *kernel, dim3 grid, dim3 block, void *dyn, size_t dyn_len);
void kemu_check_block_begin(uint64_t linear_block);
void kemu_check_stacks(const void *lo, size_t len); // where the fibers' stacks are
void kemu_check_block_end(void);
void kemu_check_launch_end(void);
void kemu_check_barrier(void);
void kemu_check_syncwarp(unsigned warp);
// ldmatrix reads a row of n bytes of shared memory for the calling lane
void kemu_check_ldmatrix(const void *row, size_t n);

#endif
