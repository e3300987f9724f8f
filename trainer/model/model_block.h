// One pre-LN transformer block (x + attn(ln_1(x)), then + mlp(ln_2(.))) forward and backward
// on the op interface, shared by the video tower (joint space-time) and the text tower (causal).
#ifndef MODEL_BLOCK_H
#define MODEL_BLOCK_H
// defines: BlockActs, TowerScratch, ModelAllocFn, block_acts_alloc, tower_scratch_alloc, block_forward,
//          block_backward

#include "kern_ops.h"     // defines: KernCtx, KTensor
#include "model_params.h" // defines: BlockWeights

// what one block keeps for its backward; N = B * L tokens of width W. Activations are in the
// model's activation dtype, the statistics (means, rstds, lse) in f32 (f64 in the f64 path).
typedef struct {
	KTensor ln1, ln1_m, ln1_r; // (B, L, W), (N), (N)
	KTensor qkv, att, lse;     // (B, L, 3W), (B, L, W), (B, H, L)
	KTensor res1;              // (B, L, W) x + attention branch
	KTensor ln2, ln2_m, ln2_r; // (B, L, W), (N), (N)
	KTensor fc, act;           // (B, L, mW) before and after GELU
	KTensor res2;              // (B, L, W) block output
} BlockActs;

// per-tower scratch reused by every block; dres carries the residual stream's gradient
typedef struct {
	KTensor dres, dln, datt, dqkv, dfc; // (B, L, W) x3, (B, L, 3W), (B, L, mW)
	KTensor dhead1, dhead2, demb;       // (B, W), (B, W), (B, E): the pooling/projection head
	int B, L, W, H, causal;
	KAct act; // the MLP's activation: KACT_GELU, or KACT_QUICKGELU for OpenAI CLIP's weights
} TowerScratch;

// allocations go through alloc_fn so the caller can free them as a group; stat = 1 for a
// statistics tensor, 0 for an activation
typedef int (*ModelAllocFn)(void *owner, KTensor *t, int stat, int ndim, const int64_t *shape);

int block_acts_alloc(BlockActs *a, ModelAllocFn fn, void *owner, int B, int L, int W, int H, int mlp);
int tower_scratch_alloc(TowerScratch *s, ModelAllocFn fn, void *owner, int B, int L, int W, int H, int mlp, int E,
			int causal);
// x (B, L, W) -> a->res2
int block_forward(KernCtx *ctx, const BlockWeights *w, BlockActs *a, const KTensor *x, TowerScratch *s);
// s->dres holds d(res2) on entry and d(x) on exit; the block's parameter gradients are written to g
int block_backward(KernCtx *ctx, const BlockWeights *w, BlockWeights *g, const BlockActs *a, const KTensor *x,
		   TowerScratch *s);

#endif
