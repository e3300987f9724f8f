// The contract's model ops for every backend (dense, augmentation, embeddings, pooling,
// attention): shapes and the dtype class of every argument are checked here, then dispatched.
#include "kern_check.h" // defines: kchk_*, KPRE, KCK, KWS

#define BE(c) ((c)->dev->be)

static int64_t last_dim(const KTensor *t)
{
	return t->ndim > 0 ? t->shape[t->ndim - 1] : 1;
}

// (N, C) view of a tensor whose last dim is C
static int64_t rows(const KTensor *t, int64_t C)
{
	return C ? kern_numel(t) / C : 0;
}

// ---- dense ----
size_t kern_linear_ws_bytes(KernCtx *ctx)
{
	return ctx ? BE(ctx)->linear_ws_bytes(ctx) : 0;
}

static int valid_act(KAct a)
{
	return a == KACT_NONE || a == KACT_GELU || a == KACT_GELU_TANH || a == KACT_QUICKGELU;
}

// W's (OC, IC) from its layout; 0 when W is not a matrix matching IC
static int w_dims(const KTensor *w, int trans_w, int64_t IC, int64_t *OC)
{
	if (!w || w->ndim != 2 || (trans_w != 0 && trans_w != 1))
		return 0;
	*OC = trans_w ? w->shape[0] : w->shape[1];
	return (trans_w ? w->shape[1] : w->shape[0]) == IC && *OC > 0 && IC > 0;
}

int kern_linear(KernCtx *ctx, const KLinear *a)
{
	KCK(a && a->in && a->out);
	KDtype cdt = kchk_cdt(a->in);
	KPRE(ctx, cdt);
	int64_t IC = last_dim(a->in), N = rows(a->in, IC), OC;
	KCK(w_dims(a->w, a->trans_w, IC, &OC) && valid_act(a->act));
	KCK(kchk_act(a->in, cdt, N * IC) && kchk_act(a->w, cdt, OC * IC));
	KCK(kchk_act(a->out, cdt, N * OC) && last_dim(a->out) == OC);
	KCK(!a->bias || kchk_act(a->bias, cdt, OC));
	KCK(!a->pre || (a->act != KACT_NONE && kchk_act(a->pre, cdt, N * OC)));
	KCK(!a->residual || (a->act == KACT_NONE && kchk_act(a->residual, cdt, N * OC)));
	KCK(a->out->data != a->in->data && (!a->pre || a->pre->data != a->out->data));
	KCK(N <= INT32_MAX && IC <= INT32_MAX && OC <= INT32_MAX);
	KWS(ctx, BE(ctx)->linear_ws_bytes(ctx));
	return KRUN(ctx,
		    kplan("linear", 2.0 * N * IC * OC,
			  kplan_t(a->in) + kplan_t(a->w) + kplan_t(a->out) + kplan_t(a->bias) + kplan_t(a->pre) +
				  kplan_t(a->residual),
			  1, 0, "%lldx%lld -> %lld", (long long)N, (long long)IC, (long long)OC),
		    BE(ctx)->linear(ctx, a, N, (int)IC, (int)OC));
}

int kern_linear_bwd(KernCtx *ctx, const KLinearBwd *a)
{
	KCK(a && a->in && a->dout);
	KDtype cdt = kchk_cdt(a->in);
	KPRE(ctx, cdt);
	int64_t IC = last_dim(a->in), N = rows(a->in, IC), OC;
	KCK(w_dims(a->w, a->trans_w, IC, &OC) && valid_act(a->in_act));
	KCK(kchk_act(a->in, cdt, N * IC) && kchk_act(a->w, cdt, OC * IC) && kchk_act(a->dout, cdt, N * OC));
	KCK(kchk_grad(a->din, cdt, N * IC) && kchk_grad(a->dw, cdt, OC * IC) && kchk_grad(a->dbias, cdt, OC));
	KCK(kchk_grad(a->din_bias, cdt, IC));
	if (a->in_act != KACT_NONE) // the GELU-backward epilogue writes d(in_pre), never adds
		KCK(a->din.t && !a->din.acc && kchk_act(a->in_pre, cdt, N * IC));
	else
		KCK(!a->in_pre && !a->din_bias.t);
	KCK(N <= INT32_MAX && IC <= INT32_MAX && OC <= INT32_MAX);
	KWS(ctx, BE(ctx)->linear_ws_bytes(ctx));
	const double prods = (a->din.t != NULL) + (a->dw.t != NULL);
	return KRUN(ctx,
		    kplan("linear_bwd", 2.0 * N * IC * OC * prods,
			  kplan_t(a->dout) + (a->din.t ? kplan_t(a->w) : 0) + (a->dw.t ? kplan_t(a->in) : 0) +
				  kplan_g(a->din) + kplan_g(a->dw) + kplan_g(a->dbias) + kplan_g(a->din_bias) +
				  kplan_t(a->in_pre),
			  1, 0, "%lldx%lld -> %lld%s%s", (long long)N, (long long)IC, (long long)OC,
			  a->din.t ? " din" : "", a->dw.t ? " dw" : ""),
		    BE(ctx)->linear_bwd(ctx, a, N, (int)IC, (int)OC));
}

int kern_layernorm_fwd(KernCtx *ctx, KTensor *out, KTensor *mean, KTensor *rstd, const KTensor *in, const KTensor *w,
		       const KTensor *b)
{
	KCK(in);
	KDtype cdt = kchk_cdt(in);
	KPRE(ctx, cdt);
	int64_t C = last_dim(in), N = rows(in, C);
	KCK(C > 0 && kchk_act(in, cdt, N * C) && kchk_act(out, cdt, N * C) && kchk_stat(mean, cdt, N) &&
	    kchk_stat(rstd, cdt, N) && kchk_act(w, cdt, C) && kchk_act(b, cdt, C));
	return KRUN(ctx,
		    kplan("layernorm_fwd", 8.0 * N * C,
			  kplan_t(in) + kplan_t(out) + kplan_t(mean) + kplan_t(rstd) + kplan_t(w) + kplan_t(b), 0, 0,
			  "%lldx%lld", (long long)N, (long long)C),
		    BE(ctx)->layernorm_fwd(ctx, out, mean, rstd, in, w, b, N, (int)C));
}

int kern_layernorm_bwd(KernCtx *ctx, KGrad din, KGrad dw, KGrad db, const KTensor *dout, const KTensor *in,
		       const KTensor *w, const KTensor *mean, const KTensor *rstd)
{
	KCK(in);
	KDtype cdt = kchk_cdt(in);
	KPRE(ctx, cdt);
	int64_t C = last_dim(in), N = rows(in, C);
	KCK(C > 0 && kchk_act(in, cdt, N * C) && kchk_act(dout, cdt, N * C) && kchk_act(w, cdt, C) &&
	    kchk_stat(mean, cdt, N) && kchk_stat(rstd, cdt, N));
	KCK(kchk_grad(din, cdt, N * C) && kchk_grad(dw, cdt, C) && kchk_grad(db, cdt, C));
	return KRUN(ctx,
		    kplan("layernorm_bwd", 10.0 * N * C,
			  kplan_t(dout) + kplan_t(in) + kplan_t(w) + kplan_t(mean) + kplan_t(rstd) + kplan_g(din) +
				  kplan_g(dw) + kplan_g(db),
			  0, 0, "%lldx%lld", (long long)N, (long long)C),
		    BE(ctx)->layernorm_bwd(ctx, din, dw, db, dout, in, w, mean, rstd, N, (int)C));
}

int kern_add(KernCtx *ctx, KTensor *out, const KTensor *a, const KTensor *b)
{
	KCK(a);
	KDtype cdt = kchk_cdt(a);
	KPRE(ctx, cdt);
	int64_t n = kern_numel(a);
	KCK(kchk_act(a, cdt, n) && kchk_act(b, cdt, n) && kchk_act(out, cdt, n));
	return KRUN(ctx, kplan("add", (double)n, kplan_t(a) + kplan_t(b) + kplan_t(out), 0, 0, "%lld", (long long)n),
		    BE(ctx)->add(ctx, out, a, b, n));
}

// ---- augmentation and embeddings ----
int kern_augment(KernCtx *ctx, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip,
		 int patch)
{
	KCK(out);
	KDtype cdt = kchk_cdt(out);
	KPRE(ctx, cdt);
	KCK(clips && clips->ndim == 5 && clips->shape[4] == 3 && patch > 0);
	int64_t B = clips->shape[0], T = clips->shape[1], H = clips->shape[2], W = clips->shape[3];
	KCK(H % patch == 0 && W % patch == 0 && kchk_typed(clips, KDT_U8, kern_numel(clips)));
	KCK(kchk_typed(pos, KDT_I64, B));
	int64_t P = (H / patch) * (W / patch), K = 3 * (int64_t)patch * patch;
	KCK(kchk_act(out, cdt, B * T * P * K) && last_dim(out) == K);
	return KRUN(ctx,
		    kplan("augment", 4.0 * kern_numel(out), kplan_t(clips) + kplan_t(out) + kplan_t(pos), 0, 0,
			  "%lldx%lldx%lldx%lld", (long long)B, (long long)T, (long long)H, (long long)W),
		    BE(ctx)->augment(ctx, out, clips, pos, seed, flip, patch));
}

static int patchify_dims(const KTensor *patches, const KTensor *img, int p, KDtype cdt)
{
	if (!img || img->ndim != 5 || p <= 0 || img->shape[2] % p || img->shape[3] % p)
		return 0;
	int64_t B = img->shape[0], T = img->shape[1], P = (img->shape[2] / p) * (img->shape[3] / p);
	int64_t K = img->shape[4] * p * p;
	return kchk_act(img, cdt, kern_numel(img)) && kchk_act(patches, cdt, B * T * P * K) && last_dim(patches) == K;
}

int kern_patchify_fwd(KernCtx *ctx, KTensor *out, const KTensor *img, int patch)
{
	KCK(img);
	KDtype cdt = kchk_cdt(img);
	KPRE(ctx, cdt);
	KCK(patchify_dims(out, img, patch, cdt));
	return KRUN(ctx,
		    kplan("patchify_fwd", 0, kplan_t(img) + kplan_t(out), 0, 0, "%lld", (long long)kern_numel(img)),
		    BE(ctx)->patchify(ctx, out, KG_NONE, img, patch));
}

int kern_patchify_bwd(KernCtx *ctx, KGrad dimg, const KTensor *dout, int patch)
{
	KCK(dimg.t);
	KDtype cdt = kchk_cdt(dimg.t);
	KPRE(ctx, cdt);
	KCK(patchify_dims(dout, dimg.t, patch, cdt));
	return KRUN(ctx,
		    kplan("patchify_bwd", 0, kplan_t(dout) + kplan_g(dimg), 0, 0, "%lld", (long long)kern_numel(dout)),
		    BE(ctx)->patchify(ctx, (KTensor *)dout, dimg, NULL, patch));
}

// out (B, 1+T*P, D), tpos (T, D), pos (1+P, D)
static int vis_dims(const KTensor *out, const KTensor *tpos, const KTensor *pos, int *B, int *T, int *P, int *Dm)
{
	if (!out || !tpos || !pos || out->ndim != 3 || tpos->ndim != 2 || pos->ndim != 2)
		return 0;
	*Dm = (int)out->shape[2];
	*T = (int)tpos->shape[0];
	*P = (int)pos->shape[0] - 1;
	*B = (int)out->shape[0];
	return *P >= 1 && *T >= 1 && tpos->shape[1] == *Dm && pos->shape[1] == *Dm &&
	       out->shape[1] == 1 + (int64_t)*T * *P;
}

int kern_vis_embed_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KTensor *cls, const KTensor *pos,
		       const KTensor *tpos)
{
	KCK(x);
	KDtype cdt = kchk_cdt(x);
	KPRE(ctx, cdt);
	int B, T, P, Dm;
	KCK(vis_dims(out, tpos, pos, &B, &T, &P, &Dm));
	KCK(kchk_act(out, cdt, kern_numel(out)) && kchk_act(x, cdt, (int64_t)B * T * P * Dm) &&
	    kchk_act(cls, cdt, Dm) && kchk_act(pos, cdt, (int64_t)(P + 1) * Dm) &&
	    kchk_act(tpos, cdt, (int64_t)T * Dm));
	return KRUN(ctx,
		    kplan("vis_embed_fwd", 2.0 * kern_numel(out),
			  kplan_t(out) + kplan_t(x) + kplan_t(cls) + kplan_t(pos) + kplan_t(tpos), 0, 0, "%dx%dx%dx%d",
			  B, T, P, Dm),
		    BE(ctx)->vis_embed_fwd(ctx, out, x, cls, pos, tpos, B, T, P, Dm));
}

int kern_vis_embed_bwd(KernCtx *ctx, KGrad dx, KGrad dcls, KGrad dpos, KGrad dtpos, const KTensor *dout)
{
	KCK(dout);
	KDtype cdt = kchk_cdt(dout);
	KPRE(ctx, cdt);
	int B, T, P, Dm;
	KCK(dpos.t && dtpos.t && vis_dims(dout, dtpos.t, dpos.t, &B, &T, &P, &Dm));
	KCK(kchk_act(dout, cdt, kern_numel(dout)) && kchk_grad(dx, cdt, (int64_t)B * T * P * Dm) &&
	    kchk_grad(dcls, cdt, Dm) && kchk_grad(dpos, cdt, (int64_t)(P + 1) * Dm) &&
	    kchk_grad(dtpos, cdt, (int64_t)T * Dm));
	return KRUN(ctx,
		    kplan("vis_embed_bwd", 2.0 * kern_numel(dout),
			  kplan_t(dout) + kplan_g(dx) + kplan_g(dcls) + kplan_g(dpos) + kplan_g(dtpos), 0, 0,
			  "%dx%dx%dx%d", B, T, P, Dm),
		    BE(ctx)->vis_embed_bwd(ctx, dx, dcls, dpos, dtpos, dout, B, T, P, Dm));
}

// ids (B, L) i32; table (V, D); pos (>= L, D)
static int tok_dims(const KTensor *ids, const KTensor *wte, const KTensor *pos, KDtype cdt)
{
	if (!ids || ids->ndim != 2 || !wte || wte->ndim != 2 || !pos || pos->ndim != 2)
		return 0;
	int64_t L = ids->shape[1], Dm = wte->shape[1];
	return kchk_typed(ids, KDT_I32, kern_numel(ids)) && pos->shape[0] >= L && pos->shape[1] == Dm &&
	       kchk_act(wte, cdt, kern_numel(wte)) && kchk_act(pos, cdt, kern_numel(pos)) && wte->shape[0] <= INT32_MAX;
}

int kern_tok_embed_fwd(KernCtx *ctx, KTensor *out, const KTensor *ids, const KTensor *wte, const KTensor *pos)
{
	KCK(wte);
	KDtype cdt = kchk_cdt(wte);
	KPRE(ctx, cdt);
	KCK(tok_dims(ids, wte, pos, cdt));
	KCK(kchk_act(out, cdt, kern_numel(ids) * wte->shape[1]) && last_dim(out) == wte->shape[1]);
	return KRUN(ctx,
		    kplan("tok_embed_fwd", (double)kern_numel(out), kplan_t(ids) + 2 * kplan_t(out), 0, 0, "%lldx%lld",
			  (long long)kern_numel(ids), (long long)wte->shape[1]),
		    BE(ctx)->tok_embed_fwd(ctx, out, ids, wte, pos));
}

int kern_tok_embed_bwd(KernCtx *ctx, KGrad dwte, KGrad dpos, const KTensor *dout, const KTensor *ids)
{
	KCK(dwte.t && dpos.t);
	KDtype cdt = kchk_cdt(dwte.t);
	KPRE(ctx, cdt);
	KCK(tok_dims(ids, dwte.t, dpos.t, cdt));
	KCK(kchk_act(dout, cdt, kern_numel(ids) * dwte.t->shape[1]));
	return KRUN(ctx,
		    kplan("tok_embed_bwd", (double)kern_numel(dout),
			  kplan_t(dout) + kplan_t(ids) + kplan_g(dwte) + kplan_g(dpos), 0, 0, "%lldx%lld",
			  (long long)kern_numel(ids), (long long)dwte.t->shape[1]),
		    BE(ctx)->tok_embed_bwd(ctx, dwte, dpos, dout, ids));
}

int kern_argmax_rows(KernCtx *ctx, KTensor *pos, const KTensor *ids)
{
	KPRE(ctx, KDT_F32);
	KCK(ids && ids->ndim == 2 && ids->shape[1] > 0 && kchk_typed(ids, KDT_I32, kern_numel(ids)) &&
	    kchk_typed(pos, KDT_I32, ids->shape[0]));
	return KRUN(ctx,
		    kplan("argmax_rows", 0, kplan_t(ids) + kplan_t(pos), 0, 0, "%lldx%lld", (long long)ids->shape[0],
			  (long long)ids->shape[1]),
		    BE(ctx)->argmax_rows(ctx, pos, ids));
}

static int pool_dims(const KTensor *x, const KTensor *o, const KTensor *pos, KDtype cdt)
{
	return x && x->ndim == 3 && kchk_act(x, cdt, kern_numel(x)) && kchk_typed(pos, KDT_I32, x->shape[0]) &&
	       kchk_act(o, cdt, x->shape[0] * x->shape[2]);
}

int kern_pool_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KTensor *pos)
{
	KCK(x);
	KDtype cdt = kchk_cdt(x);
	KPRE(ctx, cdt);
	KCK(pool_dims(x, out, pos, cdt));
	return KRUN(ctx,
		    kplan("pool_fwd", 0, 2 * kplan_t(out) + kplan_t(pos), 0, 0, "%lldx%lld", (long long)x->shape[0],
			  (long long)x->shape[2]),
		    BE(ctx)->pool_fwd(ctx, out, x, pos));
}

int kern_pool_bwd(KernCtx *ctx, KGrad dx, const KTensor *dout, const KTensor *pos)
{
	KCK(dx.t);
	KDtype cdt = kchk_cdt(dx.t);
	KPRE(ctx, cdt);
	KCK(pool_dims(dx.t, dout, pos, cdt));
	return KRUN(ctx,
		    kplan("pool_bwd", 0, kplan_g(dx) + kplan_t(dout) + kplan_t(pos), 0, 0, "%lldx%lld",
			  (long long)dx.t->shape[0], (long long)dx.t->shape[2]),
		    BE(ctx)->pool_bwd(ctx, dx, dout, pos));
}

int kern_l2norm_fwd(KernCtx *ctx, KTensor *out, KTensor *norm, const KTensor *in)
{
	KCK(in);
	KDtype cdt = kchk_cdt(in);
	KPRE(ctx, cdt);
	int64_t C = last_dim(in), N = rows(in, C);
	KCK(C > 0 && kchk_act(in, cdt, N * C) && kchk_act(out, cdt, N * C) && kchk_stat(norm, cdt, N));
	return KRUN(ctx,
		    kplan("l2norm_fwd", 3.0 * N * C, kplan_t(in) + kplan_t(out) + kplan_t(norm), 0, 0, "%lldx%lld",
			  (long long)N, (long long)C),
		    BE(ctx)->l2norm_fwd(ctx, out, norm, in, N, (int)C));
}

int kern_l2norm_bwd(KernCtx *ctx, KGrad din, const KTensor *dout, const KTensor *out, const KTensor *norm)
{
	KCK(out);
	KDtype cdt = kchk_cdt(out);
	KPRE(ctx, cdt);
	int64_t C = last_dim(out), N = rows(out, C);
	KCK(C > 0 && kchk_act(out, cdt, N * C) && kchk_act(dout, cdt, N * C) && kchk_stat(norm, cdt, N) &&
	    kchk_grad(din, cdt, N * C));
	return KRUN(ctx,
		    kplan("l2norm_bwd", 4.0 * N * C, kplan_t(dout) + kplan_t(out) + kplan_t(norm) + kplan_g(din), 0, 0,
			  "%lldx%lld", (long long)N, (long long)C),
		    BE(ctx)->l2norm_bwd(ctx, din, dout, out, norm, N, (int)C));
}

// ---- attention ----
size_t kern_attention_ws_bytes(KernCtx *ctx, KDtype dt, int B, int T, int H, int hd)
{
	if (!ctx || (dt != KDT_F32 && dt != KDT_BF16 && dt != KDT_F64))
		return 0;
	return BE(ctx)->attention_ws_bytes(ctx, dt, B, T, H, hd);
}

static int attn_dims(const KTensor *qkv, int heads, int *B, int *T, int *hd)
{
	if (!qkv || qkv->ndim != 3 || heads <= 0 || qkv->shape[2] % (3 * heads))
		return 0;
	*B = (int)qkv->shape[0];
	*T = (int)qkv->shape[1];
	*hd = (int)(qkv->shape[2] / (3 * heads));
	return *hd > 0 && *T > 0;
}

int kern_attention_fwd(KernCtx *ctx, KTensor *out, KTensor *lse, const KTensor *qkv, int heads, int causal)
{
	KCK(qkv);
	KDtype cdt = kchk_cdt(qkv);
	KPRE(ctx, cdt);
	int B, T, hd;
	KCK(attn_dims(qkv, heads, &B, &T, &hd) && kchk_act(qkv, cdt, kern_numel(qkv)));
	KCK(kchk_act(out, cdt, (int64_t)B * T * heads * hd) && kchk_stat(lse, cdt, (int64_t)B * heads * T));
	KWS(ctx, BE(ctx)->attention_ws_bytes(ctx, qkv->dtype, B, T, heads, hd));
	// q·kᵀ and p·v: 2 products of 2·T²·hd per head (half of them under a causal mask)
	const double prod = 2.0 * B * heads * (double)T * T * hd * (causal ? 0.5 : 1);
	return KRUN(ctx,
		    kplan("attention_fwd", 2 * prod, kplan_t(qkv) + kplan_t(out) + kplan_t(lse), 1, 0,
			  "B=%d T=%d H=%d hd=%d%s", B, T, heads, hd, causal ? " causal" : ""),
		    BE(ctx)->attention_fwd(ctx, out, lse, qkv, B, T, heads, hd, causal));
}

int kern_attention_bwd(KernCtx *ctx, KGrad dqkv, const KTensor *dout, const KTensor *qkv, const KTensor *out,
		       const KTensor *lse, int heads, int causal)
{
	KCK(qkv && dqkv.t);
	KDtype cdt = kchk_cdt(qkv);
	KPRE(ctx, cdt);
	int B, T, hd;
	KCK(attn_dims(qkv, heads, &B, &T, &hd) && kchk_act(qkv, cdt, kern_numel(qkv)));
	int64_t n = (int64_t)B * T * heads * hd;
	KCK(kchk_grad(dqkv, cdt, 3 * n) && kchk_act(dout, cdt, n) && kchk_act(out, cdt, n) &&
	    kchk_stat(lse, cdt, (int64_t)B * heads * T));
	KWS(ctx, BE(ctx)->attention_ws_bytes(ctx, qkv->dtype, B, T, heads, hd));
	// FlashAttention-2's backward: the scores recomputed (1 product), then dV, dP, dQ, dK (4): the model
	// counts backward as twice the forward's 2, so one product is the recompute
	const double prod = 2.0 * B * heads * (double)T * T * hd * (causal ? 0.5 : 1);
	return KRUN(ctx,
		    kplan("attention_bwd", 5 * prod,
			  kplan_t(qkv) + kplan_t(dout) + kplan_t(out) + kplan_t(lse) + kplan_g(dqkv), 1, prod,
			  "B=%d T=%d H=%d hd=%d%s", B, T, heads, hd, causal ? " causal" : ""),
		    BE(ctx)->attention_bwd(ctx, dqkv, dout, qkv, out, lse, B, T, heads, hd, causal));
}
