// The pre-LN transformer block on the op interface. Backward zeroes each branch scratch before
// use because ops accumulate; the residual adds need no op in backward: the branch's input
// gradient accumulates straight into the stream's gradient s->dres.
#include "model_block.h" // defines: BlockActs, TowerScratch

#include <errno.h>

#define TRY(x)                                                                                                         \
	do {                                                                                                           \
		int rc_ = (x);                                                                                         \
		if (rc_)                                                                                               \
			return rc_;                                                                                    \
	} while (0)
#define SH(...) (const int64_t[]){__VA_ARGS__}
#define NSH(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), SH(__VA_ARGS__)

int block_acts_alloc(BlockActs *a, ModelAllocFn fn, void *o, int B, int L, int W, int H, int mlp)
{
	int64_t N = (int64_t)B * L;
	TRY(fn(o, &a->ln1, NSH(B, L, W)));
	TRY(fn(o, &a->ln1_m, NSH(N)));
	TRY(fn(o, &a->ln1_r, NSH(N)));
	TRY(fn(o, &a->qkv, NSH(B, L, 3 * W)));
	TRY(fn(o, &a->att, NSH(B, L, W)));
	TRY(fn(o, &a->lse, NSH(B, H, L)));
	TRY(fn(o, &a->res1, NSH(B, L, W)));
	TRY(fn(o, &a->ln2, NSH(B, L, W)));
	TRY(fn(o, &a->ln2_m, NSH(N)));
	TRY(fn(o, &a->ln2_r, NSH(N)));
	TRY(fn(o, &a->fc, NSH(B, L, mlp * W)));
	TRY(fn(o, &a->act, NSH(B, L, mlp * W)));
	TRY(fn(o, &a->res2, NSH(B, L, W)));
	return 0;
}

int tower_scratch_alloc(TowerScratch *s, ModelAllocFn fn, void *o, KernCtx *ctx, KDtype dt, int B, int L, int W, int H,
			int mlp, int E, int causal)
{
	s->B = B;
	s->L = L;
	s->W = W;
	s->H = H;
	s->causal = causal;
	TRY(fn(o, &s->tmp, NSH(B, L, W)));
	TRY(fn(o, &s->dres, NSH(B, L, W)));
	TRY(fn(o, &s->dln, NSH(B, L, W)));
	TRY(fn(o, &s->datt, NSH(B, L, W)));
	TRY(fn(o, &s->dqkv, NSH(B, L, 3 * W)));
	TRY(fn(o, &s->dfc, NSH(B, L, mlp * W)));
	TRY(fn(o, &s->dact, NSH(B, L, mlp * W)));
	TRY(fn(o, &s->dhead1, NSH(B, W)));
	TRY(fn(o, &s->dhead2, NSH(B, W)));
	TRY(fn(o, &s->demb, NSH(B, E)));
	size_t wsb = kern_attention_ws_bytes(ctx, dt, B, L, H, W / H);
	TRY(fn(o, &s->ws, NSH((int64_t)(wsb / kern_dtype_size(dt)) + 1)));
	return 0;
}

int block_forward(KernCtx *c, const BlockWeights *w, BlockActs *a, const KTensor *x, TowerScratch *s)
{
	TRY(kern_layernorm_fwd(c, &a->ln1, &a->ln1_m, &a->ln1_r, x, &w->ln1_w, &w->ln1_b));
	TRY(kern_linear_fwd(c, &a->qkv, &a->ln1, &w->qkv_w, &w->qkv_b));
	TRY(kern_attention_fwd(c, &a->att, &a->lse, &a->qkv, s->H, s->causal, &s->ws));
	TRY(kern_linear_fwd(c, &s->tmp, &a->att, &w->out_w, &w->out_b));
	TRY(kern_add_fwd(c, &a->res1, x, &s->tmp));
	TRY(kern_layernorm_fwd(c, &a->ln2, &a->ln2_m, &a->ln2_r, &a->res1, &w->ln2_w, &w->ln2_b));
	TRY(kern_linear_fwd(c, &a->fc, &a->ln2, &w->fc_w, &w->fc_b));
	TRY(kern_gelu_fwd(c, &a->act, &a->fc));
	TRY(kern_linear_fwd(c, &s->tmp, &a->act, &w->proj_w, &w->proj_b));
	TRY(kern_add_fwd(c, &a->res2, &a->res1, &s->tmp));
	return 0;
}

int block_backward(KernCtx *c, const BlockWeights *w, BlockWeights *g, const BlockActs *a, const KTensor *x,
		   TowerScratch *s)
{
	// MLP branch: d(mlp out) = d(res2) = dres
	TRY(kern_zero(c, &s->dact));
	TRY(kern_linear_bwd(c, &s->dact, &g->proj_w, &g->proj_b, &s->dres, &a->act, &w->proj_w));
	TRY(kern_zero(c, &s->dfc));
	TRY(kern_gelu_bwd(c, &s->dfc, &s->dact, &a->fc));
	TRY(kern_zero(c, &s->dln));
	TRY(kern_linear_bwd(c, &s->dln, &g->fc_w, &g->fc_b, &s->dfc, &a->ln2, &w->fc_w));
	// dres += ln_2 backward: now d(res1)
	TRY(kern_layernorm_bwd(c, &s->dres, &g->ln2_w, &g->ln2_b, &s->dln, &a->res1, &w->ln2_w, &a->ln2_m, &a->ln2_r));
	// attention branch
	TRY(kern_zero(c, &s->datt));
	TRY(kern_linear_bwd(c, &s->datt, &g->out_w, &g->out_b, &s->dres, &a->att, &w->out_w));
	TRY(kern_zero(c, &s->dqkv));
	TRY(kern_attention_bwd(c, &s->dqkv, &s->datt, &a->qkv, &a->att, &a->lse, s->H, s->causal, &s->ws));
	TRY(kern_zero(c, &s->dln));
	TRY(kern_linear_bwd(c, &s->dln, &g->qkv_w, &g->qkv_b, &s->dqkv, &a->ln1, &w->qkv_w));
	// dres += ln_1 backward: now d(x)
	TRY(kern_layernorm_bwd(c, &s->dres, &g->ln1_w, &g->ln1_b, &s->dln, x, &w->ln1_w, &a->ln1_m, &a->ln1_r));
	return 0;
}
