// A model-shaped training step on the CUDA backend against the CPU backend, and twice on the CUDA
// backend bit for bit: augment -> patch embedding -> video embeddings -> pre-LN block -> class
// pooling -> head -> L2 norm, the text tower from token ids with end-token pooling, FastCLIP v3's
// local phase, scatter and surrogate, the logged metrics, the whole backward, the gradient norm, the
// fused optimizer (AdamW and LAMB segments) and the temperature step, two steps in a row.
// The CUDA attention (kernels/cuda/attn) takes bf16 and head dims 64 and 128; this step runs in f32
// too with head dim 16, so both sides compute attention with the CPU backend's (the CUDA side
// copies qkv across) and everything else is the backend's own. test_kcuda_model runs the real
// model with the CUDA attention.
#include "kcu_twin.h" // defines: KtEnv, SH, NSH, kt_*

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x)                                                                                                         \
	do {                                                                                                           \
		int rc_ = (x);                                                                                         \
		if (rc_) {                                                                                             \
			fprintf(stderr, "%s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #x, rc_,                          \
				kern_error_message(n->c));                                                             \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

// sizes: B clips of T frames HxW, patch p; widths W (both towers), H heads, text length L, vocab V
enum {
	B = 3,
	T = 2,
	HW = 16,
	PT = 8,
	P = (HW / PT) * (HW / PT),
	TP = T * P,
	LV = 1 + TP,
	W = 32,
	HEADS = 2,
	MLP = 4,
	L = 7,
	V = 50,
	E = 16,
	NT = 16,
	KPP = 3 * PT * PT
};

// block parameters in order: ln1 w b, qkv w b, out w b, ln2 w b, fc w b, proj w b
enum { BLN1W, BLN1B, BQKVW, BQKVB, BOUTW, BOUTB, BLN2W, BLN2B, BFCW, BFCB, BPRW, BPRB, NBLK };
enum {
	P_CONV,
	P_CLS,
	P_VPOS,
	P_TPOS,
	P_LNPREW,
	P_LNPREB,
	P_VBLK,
	P_LNPOSTW = P_VBLK + NBLK,
	P_LNPOSTB,
	P_VPROJ,
	P_WTE,
	P_TPOSN,
	P_TBLK,
	P_LNFW = P_TBLK + NBLK,
	P_LNFB,
	P_TPROJ,
	NPARAM
};

typedef struct {
	const char *name;
	int ndim;
	int64_t shape[2];
	uint32_t flags;
	double lo, hi; // initial values uniform in [lo, hi)
} PSpec;

static PSpec specs[NPARAM];
static int64_t offs[NPARAM + 1];

static void spec(int i, const char *name, int ndim, int64_t a, int64_t b, uint32_t flags, double lo, double hi)
{
	specs[i] = (PSpec){name, ndim, {a, b}, flags | (ndim > 1 ? KSEG_DECAY : 0), lo, hi};
}

static void block_specs(int base, const char *tower, uint32_t flags)
{
	static char names[2][NBLK][32];
	static const char *what[NBLK] = {"ln1.w", "ln1.b", "qkv.w", "qkv.b", "out.w",  "out.b",
					 "ln2.w", "ln2.b", "fc.w",  "fc.b",  "proj.w", "proj.b"};
	const int64_t dims[NBLK][2] = {{W}, {W}, {3 * W, W},   {3 * W},   {W, W},       {W},
				       {W}, {W}, {MLP * W, W}, {MLP * W}, {W, MLP * W}, {W}};
	for (int k = 0; k < NBLK; k++) {
		char *nm = names[base == P_TBLK][k];
		snprintf(nm, 32, "%s.%s", tower, what[k]);
		int ln_w = k == BLN1W || k == BLN2W, nd = dims[k][1] ? 2 : 1;
		double r = nd == 2 ? 1.0 / sqrt((double)dims[k][1]) : 0.1;
		spec(base + k, nm, nd, dims[k][0], dims[k][1], flags, ln_w ? 0.8 : -r, ln_w ? 1.2 : r);
	}
}

static void make_specs(void)
{
	spec(P_CONV, "conv", 2, W, KPP, 0, -0.05, 0.05);
	spec(P_CLS, "cls", 1, W, 0, 0, -0.1, 0.1);
	spec(P_VPOS, "vis.pos", 2, 1 + P, W, 0, -0.1, 0.1);
	spec(P_TPOS, "vis.tpos", 2, T, W, KSEG_FROZEN, -0.1, 0.1);
	spec(P_LNPREW, "ln_pre.w", 1, W, 0, 0, 0.8, 1.2);
	spec(P_LNPREB, "ln_pre.b", 1, W, 0, 0, -0.1, 0.1);
	block_specs(P_VBLK, "vis", 0);
	spec(P_LNPOSTW, "ln_post.w", 1, W, 0, 0, 0.8, 1.2);
	spec(P_LNPOSTB, "ln_post.b", 1, W, 0, 0, -0.1, 0.1);
	spec(P_VPROJ, "vis.proj", 2, W, E, 0, -0.2, 0.2);
	spec(P_WTE, "wte", 2, V, W, KSEG_LAMB, -0.1, 0.1);
	spec(P_TPOSN, "txt.pos", 2, L, W, KSEG_LAMB, -0.1, 0.1);
	block_specs(P_TBLK, "txt", KSEG_LAMB);
	spec(P_LNFW, "ln_final.w", 1, W, 0, KSEG_LAMB, 0.8, 1.2);
	spec(P_LNFB, "ln_final.b", 1, W, 0, KSEG_LAMB, -0.1, 0.1);
	spec(P_TPROJ, "txt.proj", 2, W, E, KSEG_LAMB | KSEG_CLAMP, -0.2, 0.2);
	for (int i = 0; i < NPARAM; i++) // segments start at multiples of 8 plus a gap of 3 elements
		offs[i + 1] =
			(offs[i] + specs[i].shape[0] * (specs[i].ndim > 1 ? specs[i].shape[1] : 1) + 3 + 7) / 8 * 8;
}

typedef struct {
	KTensor ln1, ln1_m, ln1_r, qkv, att, lse, res1, ln2, ln2_m, ln2_r, fc, act, res2;
} Acts;

typedef struct {
	KtEnv *e;
	KernCtx *c;
	int dev; // the CUDA side: attention through the CPU backend
	KDtype dt;
	KTensor master, weights, grads, m, v, copy_of; // flat (NP)
	KTensor w[NPARAM], g[NPARAM];
	KTensor clips, gpos, patches, pemb, x0, xpre, pre_m, pre_r, cls_pos, vpool, vln, vln_m, vln_r, vpo, vfeat,
		vnorm;
	KTensor ids, tx0, eot, tpool, tln, tln_m, tln_r, tpo, tfeat, tnorm;
	Acts va, ta;
	KTensor dres, dln, datt, dqkv, dfc, dh1, dh2, demb, dpemb, dvf, dtf; // scratch (per tower width W alike)
	KTensor table, sid, pack, loss, dls, log_s, mv, metrics, nc;
	KOptPlan *plan;
	KTensor cq, ca, cl, cd, cdq; // CPU-side copies for the attention hook
	KTensor *owned[256];
	int n_owned;
} Net;

static int64_t NP(void)
{
	return offs[NPARAM];
}

static KTensor *al(Net *n, KTensor *t, KDtype dt, int nd, const int64_t *sh)
{
	TRY(kern_alloc(n->c, t, dt, nd, sh));
	n->owned[n->n_owned++] = t;
	return t;
}

static void acts_alloc(Net *n, Acts *a, int Lt)
{
	al(n, &a->ln1, n->dt, NSH(B, Lt, W)), al(n, &a->ln1_m, KDT_F32, NSH(B * Lt)),
		al(n, &a->ln1_r, KDT_F32, NSH(B * Lt));
	al(n, &a->qkv, n->dt, NSH(B, Lt, 3 * W)), al(n, &a->att, n->dt, NSH(B, Lt, W));
	al(n, &a->lse, KDT_F32, NSH(B, HEADS, Lt)), al(n, &a->res1, n->dt, NSH(B, Lt, W));
	al(n, &a->ln2, n->dt, NSH(B, Lt, W)), al(n, &a->ln2_m, KDT_F32, NSH(B * Lt)),
		al(n, &a->ln2_r, KDT_F32, NSH(B * Lt));
	al(n, &a->fc, n->dt, NSH(B, Lt, MLP * W)), al(n, &a->act, n->dt, NSH(B, Lt, MLP * W));
	al(n, &a->res2, n->dt, NSH(B, Lt, W));
}

static void net_create(Net *n, KtEnv *e, KernCtx *c, int dev, KDtype dt, const float *init, const uint8_t *px,
		       const int64_t *gpos, const int32_t *ids)
{
	memset(n, 0, sizeof *n);
	n->e = e, n->c = c, n->dev = dev, n->dt = dt;
	al(n, &n->master, KDT_F32, NSH(NP())), al(n, &n->grads, KDT_F32, NSH(NP()));
	al(n, &n->m, KDT_F32, NSH(NP())), al(n, &n->v, KDT_F32, NSH(NP()));
	if (dt == KDT_F32)
		TRY(kern_view(&n->weights, &n->master, 0, NSH(NP())));
	else
		al(n, &n->weights, dt, NSH(NP()));
	TRY(kern_upload(c, &n->master, init, sizeof(float) * (size_t)NP()));
	if (dt != KDT_F32)
		TRY(kern_convert(c, &n->weights, &n->master));
	KOptSegment segs[NPARAM];
	for (int i = 0; i < NPARAM; i++) {
		const PSpec *s = &specs[i];
		TRY(kern_view(&n->w[i], &n->weights, offs[i], s->ndim, s->shape));
		TRY(kern_view(&n->g[i], &n->grads, offs[i], s->ndim, s->shape));
		segs[i] = (KOptSegment){offs[i], kern_numel(&n->w[i]), s->flags, -0.15f, 0.15f, 0};
	}
	TRY(kern_opt_plan_create(c, &n->plan, segs, NPARAM, NP()));
	al(n, &n->clips, KDT_U8, NSH(B, T, HW, HW, 3)), al(n, &n->gpos, KDT_I64, NSH(B));
	TRY(kern_upload(c, &n->clips, px, (size_t)B * T * HW * HW * 3));
	TRY(kern_upload(c, &n->gpos, gpos, sizeof(int64_t) * B));
	al(n, &n->patches, dt, NSH(B, TP, KPP)), al(n, &n->pemb, dt, NSH(B, TP, W)),
		al(n, &n->dpemb, dt, NSH(B, TP, W));
	al(n, &n->x0, dt, NSH(B, LV, W)), al(n, &n->xpre, dt, NSH(B, LV, W));
	al(n, &n->pre_m, KDT_F32, NSH(B * LV)), al(n, &n->pre_r, KDT_F32, NSH(B * LV));
	acts_alloc(n, &n->va, LV);
	al(n, &n->cls_pos, KDT_I32, NSH(B)), al(n, &n->vpool, dt, NSH(B, W)), al(n, &n->vln, dt, NSH(B, W));
	al(n, &n->vln_m, KDT_F32, NSH(B)), al(n, &n->vln_r, KDT_F32, NSH(B)), al(n, &n->vpo, dt, NSH(B, E));
	al(n, &n->vfeat, dt, NSH(B, E)), al(n, &n->vnorm, KDT_F32, NSH(B));
	al(n, &n->ids, KDT_I32, NSH(B, L));
	TRY(kern_upload(c, &n->ids, ids, sizeof(int32_t) * B * L));
	al(n, &n->tx0, dt, NSH(B, L, W));
	acts_alloc(n, &n->ta, L);
	al(n, &n->eot, KDT_I32, NSH(B)), al(n, &n->tpool, dt, NSH(B, W)), al(n, &n->tln, dt, NSH(B, W));
	al(n, &n->tln_m, KDT_F32, NSH(B)), al(n, &n->tln_r, KDT_F32, NSH(B)), al(n, &n->tpo, dt, NSH(B, E));
	al(n, &n->tfeat, dt, NSH(B, E)), al(n, &n->tnorm, KDT_F32, NSH(B));
	al(n, &n->dres, dt, NSH(B, LV, W)), al(n, &n->dln, dt, NSH(B, LV, W)), al(n, &n->datt, dt, NSH(B, LV, W));
	al(n, &n->dqkv, dt, NSH(B, LV, 3 * W)), al(n, &n->dfc, dt, NSH(B, LV, MLP * W));
	al(n, &n->dh1, dt, NSH(B, W)), al(n, &n->dh2, dt, NSH(B, W)), al(n, &n->demb, dt, NSH(B, E));
	al(n, &n->dvf, dt, NSH(B, E)), al(n, &n->dtf, dt, NSH(B, E));
	al(n, &n->table, KDT_F32, NSH(NT, 2)), al(n, &n->sid, KDT_I64, NSH(B)), al(n, &n->pack, KDT_F32, NSH(B, 2));
	al(n, &n->loss, KDT_F32, NSH(1)), al(n, &n->dls, KDT_F32, NSH(1)), al(n, &n->log_s, KDT_F32, NSH(1));
	al(n, &n->mv, KDT_F32, NSH(2)), al(n, &n->metrics, KDT_F32, NSH(2)), al(n, &n->nc, KDT_F32, NSH(2));
	const int64_t sid[B] = {3, 11, 7};
	const float ls = 2.6593f; // log(1 / 0.07)
	TRY(kern_upload(c, &n->sid, sid, sizeof sid));
	TRY(kern_upload(c, &n->log_s, &ls, sizeof ls));
	size_t ws = kern_loss_ws_bytes(c, B, B, E), lw = kern_linear_ws_bytes(c);
	size_t aw = kern_attention_ws_bytes(c, dt, B, LV, HEADS, W / HEADS);
	ws = ws > lw ? ws : lw;
	TRY(kern_ctx_reserve_workspace(c, ws > aw ? ws : aw));
	if (dev) { // the attention hook's CPU-side tensors, for the larger tower
		KernCtx *cpu = e->cpu;
		TRY(kern_alloc(cpu, &n->cq, dt, NSH(B, LV, 3 * W)) || kern_alloc(cpu, &n->ca, dt, NSH(B, LV, W)) ||
		    kern_alloc(cpu, &n->cl, KDT_F32, NSH(B, HEADS, LV)) || kern_alloc(cpu, &n->cd, dt, NSH(B, LV, W)) ||
		    kern_alloc(cpu, &n->cdq, dt, NSH(B, LV, 3 * W)));
	}
}

static void net_destroy(Net *n)
{
	kern_opt_plan_destroy(n->plan);
	for (int i = n->n_owned - 1; i >= 0; i--)
		kern_free(n->c, n->owned[i]);
	KTensor *cpu[] = {&n->cq, &n->ca, &n->cl, &n->cd, &n->cdq};
	for (int i = 0; i < 5; i++)
		kern_free(n->e->cpu, cpu[i]);
}

// a (B, Lt, ...) tensor's first elements as a tensor of Lt rows: the hook's CPU tensors are sized
// for the video tower
static KTensor rows_of(KTensor *t, int64_t Lt, int64_t w)
{
	KTensor v;
	kern_view(&v, t, 0, 3, SH(B, Lt, w));
	return v;
}

static void move(Net *n, KernCtx *to, KTensor *dst, KernCtx *from, const KTensor *src)
{
	size_t bytes = kern_nbytes(src);
	void *buf = malloc(bytes);
	TRY(kern_download(from, buf, bytes, src));
	TRY(kern_upload(to, dst, buf, bytes));
	free(buf);
}

static void attention(Net *n, Acts *a, int Lt, int causal)
{
	if (!n->dev) {
		TRY(kern_attention_fwd(n->c, &a->att, &a->lse, &a->qkv, HEADS, causal));
		return;
	}
	KernCtx *cpu = n->e->cpu;
	KTensor q = rows_of(&n->cq, Lt, 3 * W), o = rows_of(&n->ca, Lt, W), l;
	kern_view(&l, &n->cl, 0, 3, SH(B, HEADS, Lt));
	move(n, cpu, &q, n->c, &a->qkv);
	TRY(kern_attention_fwd(cpu, &o, &l, &q, HEADS, causal));
	move(n, n->c, &a->att, cpu, &o), move(n, n->c, &a->lse, cpu, &l);
}

static void attention_bwd(Net *n, Acts *a, KTensor *datt, KTensor *dqkv, int Lt, int causal)
{
	if (!n->dev) {
		TRY(kern_attention_bwd(n->c, KG_SET(dqkv), datt, &a->qkv, &a->att, &a->lse, HEADS, causal));
		return;
	}
	KernCtx *cpu = n->e->cpu;
	KTensor q = rows_of(&n->cq, Lt, 3 * W), o = rows_of(&n->ca, Lt, W), d = rows_of(&n->cd, Lt, W), l;
	KTensor dq = rows_of(&n->cdq, Lt, 3 * W);
	kern_view(&l, &n->cl, 0, 3, SH(B, HEADS, Lt));
	move(n, cpu, &q, n->c, &a->qkv), move(n, cpu, &o, n->c, &a->att), move(n, cpu, &l, n->c, &a->lse);
	move(n, cpu, &d, n->c, datt);
	TRY(kern_attention_bwd(cpu, KG_SET(&dq), &d, &q, &o, &l, HEADS, causal));
	move(n, n->c, dqkv, cpu, &dq);
}

// the tower-sized (B, Lt, w) prefix of a scratch tensor
static KTensor sc(KTensor *t, int Lt, int64_t w)
{
	return rows_of(t, Lt, w);
}

static void block_fwd(Net *n, const KTensor *wb, Acts *a, const KTensor *x, int Lt, int causal)
{
	KernCtx *c = n->c;
	TRY(kern_layernorm_fwd(c, &a->ln1, &a->ln1_m, &a->ln1_r, x, &wb[BLN1W], &wb[BLN1B]));
	TRY(kern_linear(c,
			&(KLinear){.out = &a->qkv, .in = &a->ln1, .w = &wb[BQKVW], .trans_w = 1, .bias = &wb[BQKVB]}));
	attention(n, a, Lt, causal);
	TRY(kern_linear(c, &(KLinear){.out = &a->res1,
				      .in = &a->att,
				      .w = &wb[BOUTW],
				      .trans_w = 1,
				      .bias = &wb[BOUTB],
				      .residual = x}));
	TRY(kern_layernorm_fwd(c, &a->ln2, &a->ln2_m, &a->ln2_r, &a->res1, &wb[BLN2W], &wb[BLN2B]));
	TRY(kern_linear(c, &(KLinear){.out = &a->act,
				      .pre = &a->fc,
				      .in = &a->ln2,
				      .w = &wb[BFCW],
				      .trans_w = 1,
				      .bias = &wb[BFCB],
				      .act = causal ? KACT_QUICKGELU : KACT_GELU}));
	TRY(kern_linear(c, &(KLinear){.out = &a->res2,
				      .in = &a->act,
				      .w = &wb[BPRW],
				      .trans_w = 1,
				      .bias = &wb[BPRB],
				      .residual = &a->res1}));
}

// dres holds d(res2) on entry and d(x) on exit
static void block_bwd(Net *n, const KTensor *wb, KTensor *gb, Acts *a, const KTensor *x, int Lt, int causal)
{
	KernCtx *c = n->c;
	KTensor dres = sc(&n->dres, Lt, W), dln = sc(&n->dln, Lt, W), datt = sc(&n->datt, Lt, W);
	KTensor dqkv = sc(&n->dqkv, Lt, 3 * W), dfc = sc(&n->dfc, Lt, MLP * W);
	KAct act = causal ? KACT_QUICKGELU : KACT_GELU;
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&dfc),
					     .dw = KG_ADD(&gb[BPRW]),
					     .dbias = KG_ADD(&gb[BPRB]),
					     .din_bias = KG_ADD(&gb[BFCB]),
					     .dout = &dres,
					     .in = &a->act,
					     .w = &wb[BPRW],
					     .trans_w = 1,
					     .in_pre = &a->fc,
					     .in_act = act}));
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&dln),
					     .dw = KG_ADD(&gb[BFCW]),
					     .dout = &dfc,
					     .in = &a->ln2,
					     .w = &wb[BFCW],
					     .trans_w = 1}));
	TRY(kern_layernorm_bwd(c, KG_ADD(&dres), KG_ADD(&gb[BLN2W]), KG_ADD(&gb[BLN2B]), &dln, &a->res1, &wb[BLN2W],
			       &a->ln2_m, &a->ln2_r));
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&datt),
					     .dw = KG_ADD(&gb[BOUTW]),
					     .dbias = KG_ADD(&gb[BOUTB]),
					     .dout = &dres,
					     .in = &a->att,
					     .w = &wb[BOUTW],
					     .trans_w = 1}));
	attention_bwd(n, a, &datt, &dqkv, Lt, causal);
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&dln),
					     .dw = KG_ADD(&gb[BQKVW]),
					     .dbias = KG_ADD(&gb[BQKVB]),
					     .dout = &dqkv,
					     .in = &a->ln1,
					     .w = &wb[BQKVW],
					     .trans_w = 1}));
	TRY(kern_layernorm_bwd(c, KG_ADD(&dres), KG_ADD(&gb[BLN1W]), KG_ADD(&gb[BLN1B]), &dln, x, &wb[BLN1W], &a->ln1_m,
			       &a->ln1_r));
}

static void head_bwd(Net *n, const KTensor *dfeat, const KTensor *feat, const KTensor *norm, const KTensor *ln,
		     const KTensor *lm, const KTensor *lr, const KTensor *pooled, int pw, int pb, int pp)
{
	KernCtx *c = n->c;
	TRY(kern_l2norm_bwd(c, KG_SET(&n->demb), dfeat, feat, norm));
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&n->dh1),
					     .dw = KG_ADD(&n->g[pp]),
					     .dout = &n->demb,
					     .in = ln,
					     .w = &n->w[pp],
					     .trans_w = 0}));
	TRY(kern_layernorm_bwd(c, KG_SET(&n->dh2), KG_ADD(&n->g[pw]), KG_ADD(&n->g[pb]), &n->dh1, pooled, &n->w[pw], lm,
			       lr));
}

static void step(Net *n, int t, uint64_t seed)
{
	KernCtx *c = n->c;
	TRY(kern_zero(c, &n->grads));
	// video tower
	TRY(kern_augment(c, &n->patches, &n->clips, &n->gpos, seed, 1, PT));
	TRY(kern_linear(c, &(KLinear){.out = &n->pemb, .in = &n->patches, .w = &n->w[P_CONV], .trans_w = 1}));
	TRY(kern_vis_embed_fwd(c, &n->x0, &n->pemb, &n->w[P_CLS], &n->w[P_VPOS], &n->w[P_TPOS]));
	TRY(kern_layernorm_fwd(c, &n->xpre, &n->pre_m, &n->pre_r, &n->x0, &n->w[P_LNPREW], &n->w[P_LNPREB]));
	block_fwd(n, &n->w[P_VBLK], &n->va, &n->xpre, LV, 0);
	TRY(kern_pool_fwd(c, &n->vpool, &n->va.res2, &n->cls_pos));
	TRY(kern_layernorm_fwd(c, &n->vln, &n->vln_m, &n->vln_r, &n->vpool, &n->w[P_LNPOSTW], &n->w[P_LNPOSTB]));
	TRY(kern_linear(c, &(KLinear){.out = &n->vpo, .in = &n->vln, .w = &n->w[P_VPROJ], .trans_w = 0}));
	TRY(kern_l2norm_fwd(c, &n->vfeat, &n->vnorm, &n->vpo));
	// text tower
	TRY(kern_tok_embed_fwd(c, &n->tx0, &n->ids, &n->w[P_WTE], &n->w[P_TPOSN]));
	block_fwd(n, &n->w[P_TBLK], &n->ta, &n->tx0, L, 1);
	TRY(kern_argmax_rows(c, &n->eot, &n->ids));
	TRY(kern_pool_fwd(c, &n->tpool, &n->ta.res2, &n->eot));
	TRY(kern_layernorm_fwd(c, &n->tln, &n->tln_m, &n->tln_r, &n->tpool, &n->w[P_LNFW], &n->w[P_LNFB]));
	TRY(kern_linear(c, &(KLinear){.out = &n->tpo, .in = &n->tln, .w = &n->w[P_TPROJ], .trans_w = 0}));
	TRY(kern_l2norm_fwd(c, &n->tfeat, &n->tnorm, &n->tpo));
	// FastCLIP v3 on one rank
	KContrastBatch b = {
		.e1 = &n->vfeat, .e2 = &n->tfeat, .E1 = &n->vfeat, .E2 = &n->tfeat, .offset = 0, .log_s = &n->log_s};
	KFccoParams p = {.version = KFCCO_V3, .gamma = t == 1 ? 1.0 : 0.8, .eps = 1e-14, .rho = 6.5};
	TRY(kern_fcco_local(c, &b, &n->sid, &n->table, &p, &n->pack));
	TRY(kern_fcco_scatter(c, &n->table, &n->sid, &n->pack, KFCCO_V3));
	TRY(kern_fcco_surrogate(c, &b, &n->pack, &n->pack, &p, &n->loss, KG_SET(&n->dvf), KG_SET(&n->dtf),
				KG_SET(&n->dls)));
	TRY(kern_clip_metrics(c, &n->metrics, &n->vfeat, &n->tfeat, &n->log_s));
	// backward, video
	head_bwd(n, &n->dvf, &n->vfeat, &n->vnorm, &n->vln, &n->vln_m, &n->vln_r, &n->vpool, P_LNPOSTW, P_LNPOSTB,
		 P_VPROJ);
	KTensor dres = sc(&n->dres, LV, W), dln = sc(&n->dln, LV, W);
	TRY(kern_pool_bwd(c, KG_SET(&dres), &n->dh2, &n->cls_pos));
	block_bwd(n, &n->w[P_VBLK], &n->g[P_VBLK], &n->va, &n->xpre, LV, 0);
	TRY(kern_layernorm_bwd(c, KG_SET(&dln), KG_ADD(&n->g[P_LNPREW]), KG_ADD(&n->g[P_LNPREB]), &dres, &n->x0,
			       &n->w[P_LNPREW], &n->pre_m, &n->pre_r));
	TRY(kern_vis_embed_bwd(c, KG_SET(&n->dpemb), KG_ADD(&n->g[P_CLS]), KG_ADD(&n->g[P_VPOS]), KG_ADD(&n->g[P_TPOS]),
			       &dln));
	TRY(kern_linear_bwd(c, &(KLinearBwd){.dw = KG_ADD(&n->g[P_CONV]),
					     .dout = &n->dpemb,
					     .in = &n->patches,
					     .w = &n->w[P_CONV],
					     .trans_w = 1}));
	// backward, text
	head_bwd(n, &n->dtf, &n->tfeat, &n->tnorm, &n->tln, &n->tln_m, &n->tln_r, &n->tpool, P_LNFW, P_LNFB, P_TPROJ);
	KTensor tdres = sc(&n->dres, L, W);
	TRY(kern_pool_bwd(c, KG_SET(&tdres), &n->dh2, &n->eot));
	block_bwd(n, &n->w[P_TBLK], &n->g[P_TBLK], &n->ta, &n->tx0, L, 1);
	TRY(kern_tok_embed_bwd(c, KG_ADD(&n->g[P_WTE]), KG_ADD(&n->g[P_TPOSN]), &tdres, &n->ids));
	// the update: clip factor on the device, fused AdamW/LAMB, the temperature's own Adam
	TRY(kern_grad_norm(c, n->plan, &n->nc, &n->grads, 1.0));
	KOptHyper h = {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .weight_decay = 0.1, .step = t};
	TRY(kern_optimizer(c, n->plan, &h, &n->master, n->dt == KDT_F32 ? NULL : &n->weights, &n->grads, &n->m, &n->v,
			   &n->nc));
	KTempStep th = {.lr = 1e-2,
			.lr_low = 1e-2 / 3,
			.tau_low = 0.03,
			.beta1 = 0.9,
			.beta2 = 0.999,
			.eps = 1e-8,
			.step = t,
			.lo = 0.0,
			.hi = log(100.0)};
	TRY(kern_temp_step(c, &n->log_s, &n->mv, &n->dls, &n->nc, NULL, &th)); // clipped with the model, as the trainer
	TRY(kern_sync(c));
}

// the values both nets end with, by name
typedef struct {
	const char *name;
	size_t off; // offsetof a KTensor in Net
} Out;
#define O(f)                                                                                                           \
	{                                                                                                              \
#f, offsetof(Net, f)                                                                                   \
	}
static const Out outs[] = {O(patches), O(vfeat), O(tfeat), O(pack),   O(table),   O(loss), O(dvf), O(dtf),   O(dls),
			   O(metrics), O(nc),    O(grads), O(master), O(weights), O(m),    O(v),   O(log_s), O(mv)};

static KTensor *field(Net *n, size_t off)
{
	return (KTensor *)((char *)n + off);
}

typedef struct {
	float *init;
	uint8_t *px;
	int64_t gpos[B];
	int32_t ids[B * L];
	uint64_t seed;
} Inputs;

static void inputs_make(KtEnv *e, Inputs *in)
{
	in->init = calloc((size_t)NP(), sizeof(float));
	for (int i = 0; i < NPARAM; i++)
		for (int64_t k = offs[i]; k < offs[i + 1] - 3; k++)
			in->init[k] = (float)kt_uniform(e, specs[i].lo, specs[i].hi);
	in->px = malloc((size_t)B * T * HW * HW * 3);
	for (size_t i = 0; i < (size_t)B * T * HW * HW * 3; i++)
		in->px[i] = (uint8_t)kt_rand(e);
	for (int b = 0; b < B; b++) {
		in->gpos[b] = (int64_t)(kt_rand(e) % 100000);
		for (int l = 0; l < L; l++)
			in->ids[b * L + l] = l < 3 + b ? 1 + (int32_t)(kt_rand(e) % (V - 2)) : 0;
		in->ids[b * L + 2 + b] = V - 1; // end token
	}
	in->seed = kt_rand(e);
}

// two steps of a fresh net; sched: the shim's thread order (0: leave it)
static void train(KtEnv *e, Net *n, KernCtx *c, int dev, KDtype dt, const Inputs *in, uint64_t sched)
{
	net_create(n, e, c, dev, dt, in->init, in->px, in->gpos, in->ids);
	for (int t = 1; t <= 2; t++) {
		if (sched)
			kt_reschedule(e, sched + (uint64_t)t);
		step(n, t, in->seed + (uint64_t)t);
	}
}

static double rel_l2(KtEnv *e, const KTensor *ref, KernCtx *rc, const KTensor *t, KernCtx *tc)
{
	KtPair a = {*ref, *ref, ""}, b = {*t, *t, ""};
	double *x = kt_download_f64(e, &a, 0), *y;
	if (rc != e->cpu)
		free(x), x = kt_download_f64(e, &a, 1);
	y = tc == e->cpu ? kt_download_f64(e, &b, 0) : kt_download_f64(e, &b, 1);
	double num = 0, den = 0;
	for (int64_t i = 0; i < kern_numel(t); i++)
		num += (y[i] - x[i]) * (y[i] - x[i]), den += x[i] * x[i];
	free(x), free(y);
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void same_bits(KtEnv *e, Net *d1, Net *d2)
{
	int same = 1;
	for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
		void *a = kt_bits(e, field(d1, outs[i].off)), *b = kt_bits(e, field(d2, outs[i].off));
		int eq = !memcmp(a, b, kern_nbytes(field(d1, outs[i].off)));
		if (!eq)
			printf("     %s differs between the two CUDA runs\n", outs[i].name);
		same &= eq;
		free(a), free(b);
	}
	kt_check(e, same, "two CUDA runs of two steps give the same bits (%zu tensors, %s)",
		 sizeof outs / sizeof outs[0], e->shim ? "the shim in two thread orders" : "the device");
}

// f32 activations: the CUDA step is the CPU step up to the order of sums (KT_TOL_F32_CHAIN)
static void run_f32(KtEnv *e, const Inputs *in)
{
	printf("-- a model-shaped step, f32 activations: CUDA against CPU\n");
	Net cpu, d1, d2;
	train(e, &cpu, e->cpu, 0, KDT_F32, in, 0);
	train(e, &d1, e->dev, 1, KDT_F32, in, e->seed + 100);
	train(e, &d2, e->dev, 1, KDT_F32, in, e->seed + 200);
	for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
		KtPair pr = {*field(&cpu, outs[i].off), *field(&d1, outs[i].off), outs[i].name};
		kt_compare(e, &pr, KT_TOL_F32_CHAIN);
	}
	for (int i = 0; i < NPARAM; i++) { // every parameter gradient by name
		char nm[64];
		snprintf(nm, sizeof nm, "grad %s", specs[i].name);
		KtPair pr = {cpu.g[i], d1.g[i], nm};
		kt_compare(e, &pr, KT_TOL_F32_CHAIN);
	}
	same_bits(e, &d1, &d2);
	net_destroy(&cpu), net_destroy(&d1), net_destroy(&d2);
}

// Two bf16 pipelines round every intermediate their own way and a contrastive loss amplifies that
// (its gradient is a near-cancelling sum of exp(s·Δ) terms), so CUDA-bf16 is not compared with
// CPU-bf16 directly: both are held against the f32 CPU step, and the CUDA one must be as close to
// it as the CPU one is: error at most KT_BF16_RATIO times the CPU's, plus KT_TOL_BF16 / √n for a
// tensor of n values (the fewer its values, the more one rounding decides its error: over 160
// seeds a scalar's CPU error fell to 3e-5 where the CUDA one was 3e-3).
#define KT_BF16_RATIO 2.0
static void run_bf16(KtEnv *e, const Inputs *in)
{
	printf("-- a model-shaped step, bf16 activations: CUDA and CPU against the f32 step\n");
	Net ref, cpu, d1, d2;
	train(e, &ref, e->cpu, 0, KDT_F32, in, 0);
	train(e, &cpu, e->cpu, 0, KDT_BF16, in, 0);
	train(e, &d1, e->dev, 1, KDT_BF16, in, e->seed + 300);
	train(e, &d2, e->dev, 1, KDT_BF16, in, e->seed + 400);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < (pass ? (size_t)NPARAM : sizeof outs / sizeof outs[0]); i++) {
			char nm[64];
			const KTensor *r, *a, *b;
			if (pass)
				snprintf(nm, sizeof nm, "grad %s", specs[i].name), r = &ref.g[i], a = &cpu.g[i],
										   b = &d1.g[i];
			else
				snprintf(nm, sizeof nm, "%s", outs[i].name), r = field(&ref, outs[i].off),
									     a = field(&cpu, outs[i].off),
									     b = field(&d1, outs[i].off);
			if (!pass && !strcmp(outs[i].name, "weights"))
				continue; // the f32 step's weights are its master
			double ec = rel_l2(e, r, e->cpu, a, e->cpu), ed = rel_l2(e, r, e->cpu, b, e->dev);
			double slack = KT_TOL_BF16 / sqrt((double)kern_numel(r));
			kt_check(e, ed <= KT_BF16_RATIO * ec + slack, "%-20s vs f32: cuda %.3e, cpu %.3e (+%.0e)", nm,
				 ed, ec, slack);
		}
	same_bits(e, &d1, &d2);
	net_destroy(&ref), net_destroy(&cpu), net_destroy(&d1), net_destroy(&d2);
}

int main(void)
{
	KtEnv e;
	kt_setup(&e, "test_kcuda_step");
	make_specs();
	Inputs in;
	inputs_make(&e, &in);
	run_f32(&e, &in);
	run_bf16(&e, &in);
	free(in.init), free(in.px);
	return kt_finish(&e);
}
