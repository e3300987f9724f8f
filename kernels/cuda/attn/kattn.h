// Attention on the GPU behind one small internal API: raw device pointers, dims, a stream and a
// workspace. Two implementations: an own FlashAttention-2-style kernel and cuDNN's fused SDPA.
#ifndef KATTN_H
#define KATTN_H
// defines: KAttnImpl, KATTN_*, KAttn, KAttnOwnOpts, KATTN_BWD_MIN_BLOCKS, kattn_own_ws_bytes[_opts],
//          kattn_own_fwd, kattn_own_bwd[_opts], kattn_own_supports, kattn_cudnn_available, kattn_create,
//          kattn_destroy, kattn_describe, kattn_ws_bytes, kattn_fwd, kattn_bwd, kattn_last_impl,
//          kattn_set_own_opts
//
// Layouts are the op contract's (kernels/kern_ops.h, kern_attention_fwd): qkv (B, T, 3·D) bf16 packed
// as [q | k | v], each D = H·hd split into heads as open_clip's in_proj; out (B, T, D) bf16; lse
// (B, H, T) f32, the natural log-sum-exp of each query row's scores q·kᵀ/√hd; dqkv like qkv, written
// (acc 0) or added into (acc 1: widened, summed in f32, rounded once). Every pointer is 16-byte
// aligned device memory. Functions return 0 or -errno with the message latched in e.
//
// Wiring into the CUDA backend (kernels/backend/kern_backend.h): one KAttn per stream handle,
// created with the context's KCtxOptions.attention, and
//   attention_ws_bytes: kattn_ws_bytes(a, B, T, H, hd)
//   attention_fwd:      kattn_fwd(a, stream, out->data, lse->data, qkv->data, B, T, H, hd, causal, ws, ws_bytes)
//   attention_bwd:      kattn_bwd(a, stream, dqkv.t->data, dqkv.acc, dout->data, qkv->data, out->data,
//                                 lse->data, B, T, H, hd, causal, ws, ws_bytes)
// (bf16 arguments only: the backend returns -ENOTSUP for F32 activations).

#include <cuda_runtime_api.h> // defines: cudaStream_t
#include <stddef.h>
#include <stdint.h>

#include "kcheck.h" // defines: KErr

#ifdef __cplusplus
extern "C" {
#endif

// ---- the own kernel (kattn_fwd.cu, kattn_bwd.cu): head dims 32, 64 and 128, any T >= 1 ----

// 1 when the own kernel computes this shape (hd 32, 64 or 128, T, H, B within the grid limits)
int kattn_own_supports(int B, int T, int H, int hd);
int kattn_own_fwd(KErr *e, void *out, float *lse, const void *qkv, int B, int T, int H, int hd, int causal,
		  cudaStream_t s);

// The backward (FlashAttention-2's: the row terms, then per key block the five tile products and
// dK, dV) sums dQ over the key blocks one of two ways:
// - dq_atomic 0 (the default, FlashAttention-2's deterministic mode): a block walks every S-th key
//   block of a head and adds their parts of dQ into an f32 slot of its own in the workspace, in key
//   block order; a last pass adds the S slots of each element in order: every element of dqkv has one
//   writer and a fixed summation order, so a run repeats to the bit. S = min(key blocks,
//   ⌈min_blocks / (B·H)⌉) (BN 128 keys a block, 64 at hd 128; min_blocks 0: KATTN_BWD_MIN_BLOCKS),
//   a function of the shape (and min_blocks): the bits depend on it, not on the device.
// - dq_atomic 1: a block per key block adds its part with f32 atomics into one slot, FlashAttention-2's
//   default. dQ is then NOT bit-reproducible: the order in which the adds arrive changes its rounding
//   from run to run (dK and dV still repeat).
typedef struct {
	int dq_atomic;
	int min_blocks; // deterministic: the fewest blocks to aim for (0: KATTN_BWD_MIN_BLOCKS); fewer slots
} KAttnOwnOpts;
#define KATTN_BWD_MIN_BLOCKS 512
// workspace of the backward: the row terms D = rowsum(dO ∘ O), (B, H, T) f32, then dQ's S slots (one
// with atomics) of B·H·T·hd f32 (o NULL: the default); the forward needs none
size_t kattn_own_ws_bytes_opts(int B, int T, int H, int hd, const KAttnOwnOpts *o);
size_t kattn_own_ws_bytes(int B, int T, int H, int hd);
// o NULL: the default; a workspace below kattn_own_ws_bytes_opts's is -ENOSPC
int kattn_own_bwd_opts(KErr *e, void *dqkv, int acc, const void *dout, const void *qkv, const void *out,
		       const float *lse, int B, int T, int H, int hd, int causal, void *ws, size_t ws_bytes,
		       const KAttnOwnOpts *o, cudaStream_t s);
int kattn_own_bwd(KErr *e, void *dqkv, int acc, const void *dout, const void *qkv, const void *out, const float *lse,
		  int B, int T, int H, int hd, int causal, void *ws, size_t ws_bytes, cudaStream_t s);

// ---- the selection and the cuDNN path (kattn.c, kattn_cudnn.c) ----

// KCtxOptions.attention of kernels/kern_ops.h has the same values
typedef enum { KATTN_AUTO = 0, KATTN_OWN = 1, KATTN_CUDNN = 2 } KAttnImpl;

// 1 when this build has cuDNN (HAVE_CUDNN) and its library loads with version 9 or newer
int kattn_cudnn_available(void);

// One per stream (a cuDNN handle is not shared between threads): the selection, and with cuDNN
// its handle and a cache of built plans. cudnn: -ENOTSUP when this build has no cuDNN.
typedef struct KAttn KAttn;
int kattn_create(KAttn **out, KAttnImpl impl, int device, KErr *e);
void kattn_destroy(KAttn *a);
// for the startup log: what runs, e.g. "auto: cuDNN 9.19.0 fused attention forward where it
// accepts the shape, else (and for every backward) the own kernel"
const char *kattn_describe(const KAttn *a);
// the workspace the selected implementation needs for both directions it may run, causal or not (building
// and caching cuDNN's plans for the shape: a setup call)
size_t kattn_ws_bytes(KAttn *a, int B, int T, int H, int hd);
// auto: cuDNN's forward where it accepts the shape, the own kernel otherwise and for every
// backward (cuDNN's backward is not bit-reproducible; auto keeps a run repeatable);
// cudnn: an argument cuDNN refuses is -ENOTSUP (so a forced choice never runs something else);
// own: the own kernel (-ENOTSUP for a head dim it lacks)
int kattn_fwd(KAttn *a, cudaStream_t s, void *out, float *lse, const void *qkv, int B, int T, int H, int hd, int causal,
	      void *ws, size_t ws_bytes, KErr *e);
int kattn_bwd(KAttn *a, cudaStream_t s, void *dqkv, int acc, const void *dout, const void *qkv, const void *out,
	      const float *lse, int B, int T, int H, int hd, int causal, void *ws, size_t ws_bytes, KErr *e);
// which implementation the last kattn_fwd / kattn_bwd on a ran (KATTN_OWN or KATTN_CUDNN)
KAttnImpl kattn_last_impl(const KAttn *a);
// the own backward's options for the following calls on a (default: all 0); kattn_ws_bytes follows them
void kattn_set_own_opts(KAttn *a, const KAttnOwnOpts *o);

#ifdef __cplusplus
}
#endif

#endif
