// The pre-LN transformer block on the op interface. The residual adds ride in the linear ops'
// epilogues and the MLP's GELU backward in c_proj's input-gradient epilogue; every gradient's
// first writer sets it (KG_SET), parameters included, so backward clears nothing. With drop path
// (s->drop) each branch goes to the scratch datt (free in forward, also when a checkpointed block
// is recomputed in backward) and joins the stream by kern_row_scale's fused add.
#include "model_block.h" // defines: BlockActs, TowerScratch
#include "errbuf.h"      // defines: TRY

#include <errno.h>

#define SH(...)                                                                                                        \
	(const int64_t[])                                                                                              \
	{                                                                                                              \
		__VA_ARGS__                                                                                            \
	}
#define NSH(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), SH(__VA_ARGS__)

int block_acts_alloc(BlockActs *a, ModelAllocFn fn, void *o, int B, int L, int W, int H, int mlp)
{
	int64_t N = (int64_t)B * L;
	TRY(fn(o, &a->ln1, 0, NSH(B, L, W)));
	TRY(fn(o, &a->ln1_m, 1, NSH(N)));
	TRY(fn(o, &a->ln1_r, 1, NSH(N)));
	TRY(fn(o, &a->qkv, 0, NSH(B, L, 3 * W)));
	TRY(fn(o, &a->att, 0, NSH(B, L, W)));
	TRY(fn(o, &a->lse, 1, NSH(B, H, L)));
	TRY(fn(o, &a->res1, 0, NSH(B, L, W)));
	TRY(fn(o, &a->ln2, 0, NSH(B, L, W)));
	TRY(fn(o, &a->ln2_m, 1, NSH(N)));
	TRY(fn(o, &a->ln2_r, 1, NSH(N)));
	TRY(fn(o, &a->fc, 0, NSH(B, L, mlp * W)));
	TRY(fn(o, &a->act, 0, NSH(B, L, mlp * W)));
	TRY(fn(o, &a->res2, 0, NSH(B, L, W)));
	return 0;
}

int tower_scratch_alloc(TowerScratch *s, ModelAllocFn fn, void *o, int B, int L, int W, int H, int mlp, int E,
			int causal)
{
	s->B = B;
	s->L = L;
	s->W = W;
	s->H = H;
	s->causal = causal;
	s->drop = NULL; // no drop path until the caller points it at a block's scales
	TRY(fn(o, &s->dres, 0, NSH(B, L, W)));
	TRY(fn(o, &s->dln, 0, NSH(B, L, W)));
	TRY(fn(o, &s->datt, 0, NSH(B, L, W)));
	TRY(fn(o, &s->dqkv, 0, NSH(B, L, 3 * W)));
	TRY(fn(o, &s->dfc, 0, NSH(B, L, mlp * W)));
	TRY(fn(o, &s->dhead1, 0, NSH(B, W)));
	TRY(fn(o, &s->dhead2, 0, NSH(B, W)));
	TRY(fn(o, &s->demb, 0, NSH(B, E)));
	return 0;
}

// out = res + s[b]·branch: res copied, then the branch (in s->datt) scaled and added
static int drop_join(KernCtx *c, KTensor *out, const KTensor *res, const KTensor *branch, const KTensor *scale)
{
	TRY(kern_copy(c, out, res));
	return kern_row_scale(c, KG_ADD(out), branch, scale);
}

// drop path's scales of branch k (0 attention, 1 MLP) of the block: a (B) view of s->drop
static int drop_scale(const TowerScratch *s, int k, KTensor *out)
{
	const int64_t B = s->B;
	return kern_view(out, s->drop, k * B, 1, &B);
}

int block_forward(KernCtx *c, const BlockWeights *w, BlockActs *a, const KTensor *x, TowerScratch *s)
{
	KTensor s1, s2;
	if (s->drop) {
		TRY(drop_scale(s, 0, &s1));
		TRY(drop_scale(s, 1, &s2));
	}
	TRY(kern_layernorm_fwd(c, &a->ln1, &a->ln1_m, &a->ln1_r, x, &w->ln1_w, &w->ln1_b));
	TRY(kern_linear(c, &(KLinear){.out = &a->qkv, .in = &a->ln1, .w = &w->qkv_w, .trans_w = 1, .bias = &w->qkv_b}));
	TRY(kern_attention_fwd(c, &a->att, &a->lse, &a->qkv, s->H, s->causal));
	if (s->drop) {
		TRY(kern_linear(
			c,
			&(KLinear){.out = &s->datt, .in = &a->att, .w = &w->out_w, .trans_w = 1, .bias = &w->out_b}));
		TRY(drop_join(c, &a->res1, x, &s->datt, &s1));
	} else {
		TRY(kern_linear(c, &(KLinear){.out = &a->res1,
					      .in = &a->att,
					      .w = &w->out_w,
					      .trans_w = 1,
					      .bias = &w->out_b,
					      .residual = x}));
	}
	TRY(kern_layernorm_fwd(c, &a->ln2, &a->ln2_m, &a->ln2_r, &a->res1, &w->ln2_w, &w->ln2_b));
	TRY(kern_linear(c, &(KLinear){.out = &a->act,
				      .pre = &a->fc,
				      .in = &a->ln2,
				      .w = &w->fc_w,
				      .trans_w = 1,
				      .bias = &w->fc_b,
				      .act = s->act}));
	if (s->drop) {
		TRY(kern_linear(
			c,
			&(KLinear){.out = &s->datt, .in = &a->act, .w = &w->proj_w, .trans_w = 1, .bias = &w->proj_b}));
		return drop_join(c, &a->res2, &a->res1, &s->datt, &s2);
	}
	TRY(kern_linear(c, &(KLinear){.out = &a->res2,
				      .in = &a->act,
				      .w = &w->proj_w,
				      .trans_w = 1,
				      .bias = &w->proj_b,
				      .residual = &a->res1}));
	return 0;
}

int block_backward(KernCtx *c, const BlockWeights *w, BlockWeights *g, const BlockActs *a, const KTensor *x,
		   TowerScratch *s)
{
	// MLP branch, d(mlp out) = d(res2) = dres (with drop path dres·s2, in datt): c_proj's backward ends
	// in the GELU-backward epilogue (dfc = d(c_fc pre)) and gives c_fc's bias gradient on the way
	KTensor s1, s2;
	const KTensor *dmlp = &s->dres, *dattn = &s->dres;
	if (s->drop) {
		TRY(drop_scale(s, 0, &s1));
		TRY(drop_scale(s, 1, &s2));
		TRY(kern_row_scale(c, KG_SET(&s->datt), &s->dres, &s2));
		dmlp = &s->datt;
	}
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&s->dfc),
					     .dw = KG_SET(&g->proj_w),
					     .dbias = KG_SET(&g->proj_b),
					     .din_bias = KG_SET(&g->fc_b),
					     .dout = dmlp,
					     .in = &a->act,
					     .w = &w->proj_w,
					     .trans_w = 1,
					     .in_pre = &a->fc,
					     .in_act = s->act}));
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&s->dln),
					     .dw = KG_SET(&g->fc_w),
					     .dout = &s->dfc,
					     .in = &a->ln2,
					     .w = &w->fc_w,
					     .trans_w = 1}));
	// dres += ln_2 backward: now d(res1)
	TRY(kern_layernorm_bwd(c, KG_ADD(&s->dres), KG_SET(&g->ln2_w), KG_SET(&g->ln2_b), &s->dln, &a->res1, &w->ln2_w,
			       &a->ln2_m, &a->ln2_r));
	// attention branch (with drop path d(branch) = dres·s1, in dln until qkv's backward writes it)
	if (s->drop) {
		TRY(kern_row_scale(c, KG_SET(&s->dln), &s->dres, &s1));
		dattn = &s->dln;
	}
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&s->datt),
					     .dw = KG_SET(&g->out_w),
					     .dbias = KG_SET(&g->out_b),
					     .dout = dattn,
					     .in = &a->att,
					     .w = &w->out_w,
					     .trans_w = 1}));
	TRY(kern_attention_bwd(c, KG_SET(&s->dqkv), &s->datt, &a->qkv, &a->att, &a->lse, s->H, s->causal));
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&s->dln),
					     .dw = KG_SET(&g->qkv_w),
					     .dbias = KG_SET(&g->qkv_b),
					     .dout = &s->dqkv,
					     .in = &a->ln1,
					     .w = &w->qkv_w,
					     .trans_w = 1}));
	// dres += ln_1 backward: now d(x)
	TRY(kern_layernorm_bwd(c, KG_ADD(&s->dres), KG_SET(&g->ln1_w), KG_SET(&g->ln1_b), &s->dln, x, &w->ln1_w,
			       &a->ln1_m, &a->ln1_r));
	return 0;
}
