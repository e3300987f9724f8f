// What the parts of the shim tell each other: the fiber scheduler, the launcher and the runtime
// (private to kernels/cuda/emu).
#ifndef KEMU_IMPL_H
#define KEMU_IMPL_H
// defines: kemu_fibers_run_block, kemu_set_error, kemu_stream_ok, kemu_func_dyn_smem_limit

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

#endif
