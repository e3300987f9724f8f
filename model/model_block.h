// One pre-LN transformer block (x + attn(ln_1(x)), then + mlp(ln_2(.))) forward and backward
// on the op interface, shared by the video tower (joint space-time) and the text tower (causal).
// Private to model/ (its activation types are in model.h, inside ClipModel).
#ifndef MODEL_BLOCK_H
#define MODEL_BLOCK_H
// defines: ModelAllocFn, block_acts_alloc, tower_scratch_alloc, block_forward, block_backward

#include "model.h" // defines: BlockActs, TowerScratch, BlockWeights, KernCtx, KTensor

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
