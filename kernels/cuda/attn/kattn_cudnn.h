// cuDNN's fused flash attention (SDPA forward and backward) for kattn.c: plans built through the
// backend graph API for the op contract's packed layouts and cached per shape (private to attn/).
#ifndef KATTN_CUDNN_H
#define KATTN_CUDNN_H
// defines: KcAttn, KC_FWD, KC_BWD, KC_BWD_DET, kc_attn_version, kc_attn_create, kc_attn_destroy, kc_attn_plan,
//          kc_attn_fwd, kc_attn_bwd, kc_attn_decisions

#include <cuda_runtime_api.h> // defines: cudaStream_t
#include <stddef.h>

#include "kcheck.h" // defines: KErr

// the loaded library's version as "9.19.0", or NULL below 9.0
const char *kc_attn_version(void);

typedef struct KcAttn KcAttn;
// The graphs: the forward; the backward with dQ through an f32 accumulator (cuDNN's default
// engines add into it with atomics: fast, not bit-reproducible); the backward with dQ = dS·K in a
// pass of its own (what cudnn-frontend builds for set_deterministic_algorithm(true) on Hopper, its
// "dP workspace" implementation: no atomics, so deterministic, and dS in cuDNN's workspace,
// B·H·T²·2 bytes). Only the graph differs: the backend API reaches it as it is.
enum { KC_FWD = 0, KC_BWD = 1, KC_BWD_DET = 2 };
// a cuDNN handle on the current device and an empty plan cache
int kc_attn_create(KcAttn **out, KErr *e);
void kc_attn_destroy(KcAttn *c);
// Finds or builds the plan of one graph (bwd: KC_FWD, KC_BWD, KC_BWD_DET) for a shape. 0 and *ws the workspace it
// needs; -ENOTSUP when cuDNN has no engine for it (why: the reason, kept with the shape, so a
// refused shape is not built again); other -errno latched in e.
int kc_attn_plan(KcAttn *c, int bwd, int B, int T, int H, int hd, int causal, size_t *ws, const char **why, KErr *e);
// run a plan kc_attn_plan built (building it if needed); the layouts of kattn.h
int kc_attn_fwd(KcAttn *c, cudaStream_t s, void *out, float *lse, const void *qkv, int B, int T, int H, int hd,
		int causal, void *ws, size_t ws_bytes, KErr *e);
// bwd: KC_BWD or KC_BWD_DET
int kc_attn_bwd(KcAttn *c, int bwd, cudaStream_t s, void *dqkv, const void *dout, const void *qkv, const void *out,
		const float *lse, int B, int T, int H, int hd, int causal, void *ws, size_t ws_bytes, KErr *e);
// "T 785 H 12 hd 64 full fwd: cuDNN; ..." for every shape planned so far, into buf
void kc_attn_decisions(const KcAttn *c, char *buf, size_t len);

#endif
