// The CUDA backend's inside: what its C device side (kcu_backend.c, kcu_ops.c: the KBackend table)
// and its kernels (kcu_*.cu, built by nvcc for a GPU or by g++ for the CPU execution shim) share.
#ifndef KCU_H
#define KCU_H
// defines: KcuStream, KcuPlan, KcuChunk, KcuSeg, KcuOptHyp, KCU_E_*, KCU_ERR_BYTES, KCU_SCRATCH_BYTES, KCU_PART_FLOATS,
//          kcu_err_key, kcu_loss_ws_bytes, kcu_* (one entry per KOP of kern_ops.def, and the optimizer's)

#include "kcheck.h" // defines: KErr
#include "kgemm.h"  // defines: KGemm

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "kern_ops.h" // defines: KTensor, KGrad, KLinear, KLinearBwd, KContrastBatch, KFccoParams, ...

// Content errors kernels find (a token id out of range, a non-finite gradient norm): one slot per
// kind in the stream's scratch, holding the smallest key (index << 32 | 32 bits of the value), ~0
// when clear. atomicMin keeps it independent of the order of threads; the host reads the slots at
// the stream's next sync point and latches the first set one with the op's name.
enum {
	KCU_E_TOK_EMBED = 0,
	KCU_E_TOK_EMBED_BWD,
	KCU_E_POOL,
	KCU_E_POOL_BWD,
	KCU_E_FCCO_LOCAL,
	KCU_E_FCCO_SCATTER,
	KCU_E_TEMP_STEP,
	KCU_E_OPTIMIZER,
	KCU_E_SOFTCE,
	KCU_E_TOKEN_GATHER, // VideoMAE's index rows: not ascending inside [0, N)
	KCU_E_TOKEN_GATHER_BWD,
	KCU_E_MAE_DEC,
	KCU_E_MAE_DEC_BWD,
	KCU_E_MAE_TARGET,
	KCU_E_COUNT
};
#define kcu_err_key(index, value) (((unsigned long long)(uint32_t)(index) << 32) | (uint32_t)(value))

// Each stream's private device scratch: the error slots, a few flags, the partial sums of the
// fixed-order column reductions (also the token sort's buffers).
#define KCU_SCRATCH_HEAD 256 // bytes: error slots (KCU_ERR_BYTES) and flags
#define KCU_ERR_BYTES 128
#define KCU_PART_FLOATS ((size_t)2 << 20)
#define KCU_SCRATCH_BYTES (KCU_SCRATCH_HEAD + KCU_PART_FLOATS * sizeof(float))

// One stream handle's state as the kernels see it
typedef struct {
	void *stream; // cudaStream_t
	KErr err;     // the running op's CUDA or cuBLAS failure: file:line and a hint
	KGemm *gemm;  // this stream's cuBLASLt handle and workspace
	void *ws;     // the contract's workspace (kern_ctx_reserve_workspace)
	size_t ws_bytes;
	unsigned long long *errs;       // device: KCU_E_COUNT error slots
	int *flags;                     // device: op-local flags (a bad id seen: write nothing)
	float *part;                    // device: KCU_PART_FLOATS floats of partial sums / sort buffers
	const float *aug_lut;           // device: 3 x 256 CLIP normalization table of kern_augment
	int64_t err_bound[KCU_E_COUNT]; // host: the bound the last op of each kind checked against
	struct KcuSlow *slow;           // host: the device's slow-path record (kcu_slow.h)
} KcuStream;

// ---- the kernel side of each KOP of kern_ops.def: int kcu_name(KcuStream *s, params) ----
#define KOP(name, label, params, args) int kcu_##name(KcuStream *s, KOP_LIST params);
#define KOP_OWN(ret, name, params)
#include "../backend/kern_ops.def" // defines: kcu_convert, kcu_linear, .. kcu_temp_step (prototypes)

// ---- losses (computed in double, as the CPU twins) ----
size_t kcu_loss_ws_bytes(int B, int N, int d);

// ---- the fused optimizer: the plan's tables on the device ----
typedef struct {
	int64_t start;
	int32_t len, seg; // len <= KERN_OPT_CHUNK
} KcuChunk;

typedef struct {
	uint32_t flags;
	float lo, hi;
	int32_t chunk0, nchunks; // its chunks, in order
	double lr_scale;         // read under KSEG_LR_SCALE
} KcuSeg;

typedef struct {
	KcuChunk *chunks; // device: n_chunks
	KcuSeg *segs;     // device: n_segs
	double *part;     // device: 2 per chunk (squares of g, or of p and r for LAMB)
	float *step;      // device: per segment, LAMB's lr * trust
	int n_chunks, n_segs, has_lamb;
} KcuPlan;

// one update's scalars as the CPU twin rounds them (kern_cpu_optim.c)
typedef struct {
	float b1, b2, eps, bc1, bc2, bc2s, step;
	double lr, wd, bc1d; // bc1d: 1 − β1^t unrounded (a KSEG_LR_SCALE segment's step)
	// device, or NULL: kern_opt_live's values, from which the kernels derive lr, bc1, bc2, bc2s,
	// step and bc1d when they run (a graph's replay) instead of taking these fields
	const double *live;
} KcuOptHyp;

int kcu_grad_norm(KcuStream *s, const KcuPlan *p, KTensor *norm_clip, const KTensor *grads, double clip_norm);
int kcu_optimizer(KcuStream *s, const KcuPlan *p, const KcuOptHyp *h, KTensor *master, KTensor *copy,
		  const KTensor *grads, KTensor *m, KTensor *v, const KTensor *norm_clip);

#ifdef __cplusplus
}
#endif

#endif
