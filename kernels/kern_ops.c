// The public op functions: check dtypes and shapes once for every backend, then call the
// context's backend table. Adding a backend never touches this file's checks.
#include "kern_backend.h" // defines: KRawOps, KBackendImpl, struct KernCtx
#include "kern_ops.h"     // defines: the public ops

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define D(t) ((t)->data)
#define CK(cond)                                                                                                       \
	do {                                                                                                           \
		if (!(cond))                                                                                           \
			return -EINVAL;                                                                                \
	} while (0)

static int64_t last_dim(const KTensor *t)
{
	return t->ndim > 0 ? t->shape[t->ndim - 1] : 1;
}

// the raw op table for a float tensor's dtype, or NULL
static const KRawOps *raw(KernCtx *c, const KTensor *t)
{
	if (!c || !t || !t->data || (unsigned)t->dtype >= KDT_COUNT || t->dtype == KDT_I32)
		return NULL;
	return c->be->ops[t->dtype];
}

#define RAW(r, c, t)                                                                                                   \
	const KRawOps *r = raw(c, t);                                                                                  \
	if (!c || !t || !t->data)                                                                                      \
		return -EINVAL;                                                                                        \
	if (!r)                                                                                                        \
		return -ENOTSUP;

// same dtype as ref and n elements (NULL allowed when opt)
static int same(const KTensor *t, const KTensor *ref, int64_t n, int opt)
{
	if (!t)
		return opt;
	return t->data && t->dtype == ref->dtype && kern_numel(t) == n;
}

static int is_i32(const KTensor *t, int64_t n)
{
	return t && t->data && t->dtype == KDT_I32 && kern_numel(t) == n;
}

// ---- context and memory ----
const char *kern_ctx_backend_name(const KernCtx *ctx)
{
	return ctx->be->name;
}

int kern_ctx_threads(const KernCtx *ctx)
{
	return ctx->nthreads;
}

int kern_sync(KernCtx *ctx)
{
	return ctx->be->sync(ctx);
}

void kern_ctx_destroy(KernCtx *ctx)
{
	if (ctx)
		ctx->be->destroy(ctx);
}

int kern_alloc(KernCtx *ctx, KTensor *t, KDtype dt, int ndim, const int64_t *shape)
{
	if (ndim < 0 || ndim > KERN_MAX_DIMS || (unsigned)dt >= KDT_COUNT)
		return -EINVAL;
	for (int i = 0; i < ndim; i++)
		if (shape[i] < 0)
			return -EINVAL;
	*t = kern_tensor_make(NULL, dt, ndim, shape);
	size_t n = kern_nbytes(t);
	int rc = ctx->be->alloc(ctx, &t->data, n ? n : 1);
	if (rc)
		return rc;
	t->owned = 1;
	return 0;
}

void kern_free(KernCtx *ctx, KTensor *t)
{
	if (t && t->owned && t->data)
		ctx->be->free(ctx, t->data);
	if (t)
		memset(t, 0, sizeof *t);
}

int kern_upload(KernCtx *ctx, KTensor *dst, const void *host, size_t nbytes)
{
	CK(dst && dst->data && host && nbytes == kern_nbytes(dst));
	return ctx->be->upload(ctx, dst->data, host, nbytes);
}

int kern_download(KernCtx *ctx, void *host, size_t nbytes, const KTensor *src)
{
	CK(src && src->data && host && nbytes == kern_nbytes(src));
	return ctx->be->download(ctx, host, src->data, nbytes);
}

int kern_zero(KernCtx *ctx, KTensor *t)
{
	CK(t && t->data);
	return ctx->be->memzero(ctx, t->data, kern_nbytes(t));
}

int kern_copy(KernCtx *ctx, KTensor *dst, const KTensor *src)
{
	CK(dst && src && dst->data && src->data && dst->dtype == src->dtype && kern_numel(dst) == kern_numel(src));
	return ctx->be->memcopy(ctx, dst->data, src->data, kern_nbytes(src));
}

int kern_convert(KernCtx *ctx, KTensor *dst, const KTensor *src)
{
	CK(dst && src && dst->data && src->data && kern_numel(dst) == kern_numel(src));
	CK(dst->dtype != KDT_I32 && src->dtype != KDT_I32);
	return ctx->be->convert(ctx, dst->data, dst->dtype, src->data, src->dtype, kern_numel(src));
}

int kern_scale(KernCtx *ctx, KTensor *x, double s)
{
	RAW(r, ctx, x);
	r->scale(ctx, D(x), s, kern_numel(x));
	return 0;
}

int kern_sumsq(KernCtx *ctx, double *out, const KTensor *x)
{
	RAW(r, ctx, x);
	*out = r->sumsq(ctx, D(x), kern_numel(x));
	return 0;
}

// ---- dense ----
int kern_linear_fwd(KernCtx *ctx, KTensor *out, const KTensor *in, const KTensor *w, const KTensor *b)
{
	RAW(r, ctx, in);
	int64_t IC = last_dim(in), N = kern_numel(in) / (IC ? IC : 1);
	CK(w && w->ndim == 2 && w->shape[1] == IC);
	int64_t OC = w->shape[0];
	CK(same(w, in, OC * IC, 0) && same(b, in, OC, 1) && same(out, in, N * OC, 0) && last_dim(out) == OC);
	r->linear_fwd(ctx, D(out), D(in), D(w), b ? D(b) : NULL, N, (int)IC, (int)OC);
	return 0;
}

int kern_linear_bwd(KernCtx *ctx, KTensor *din, KTensor *dw, KTensor *db, const KTensor *dout, const KTensor *in,
		    const KTensor *w)
{
	RAW(r, ctx, in);
	int64_t IC = last_dim(in), N = kern_numel(in) / (IC ? IC : 1);
	CK(w && w->ndim == 2 && w->shape[1] == IC);
	int64_t OC = w->shape[0];
	CK(same(w, in, OC * IC, 0) && same(dw, in, OC * IC, 0) && same(db, in, OC, 1) && same(din, in, N * IC, 1));
	CK(same(dout, in, N * OC, 0));
	r->linear_bwd(ctx, din ? D(din) : NULL, D(dw), db ? D(db) : NULL, D(dout), D(in), D(w), N, (int)IC, (int)OC);
	return 0;
}

int kern_proj_fwd(KernCtx *ctx, KTensor *out, const KTensor *in, const KTensor *p)
{
	RAW(r, ctx, in);
	int64_t IC = last_dim(in), N = kern_numel(in) / (IC ? IC : 1);
	CK(p && p->ndim == 2 && p->shape[0] == IC);
	int64_t OC = p->shape[1];
	CK(same(p, in, IC * OC, 0) && same(out, in, N * OC, 0));
	r->proj_fwd(ctx, D(out), D(in), D(p), N, (int)IC, (int)OC);
	return 0;
}

int kern_proj_bwd(KernCtx *ctx, KTensor *din, KTensor *dp, const KTensor *dout, const KTensor *in, const KTensor *p)
{
	RAW(r, ctx, in);
	int64_t IC = last_dim(in), N = kern_numel(in) / (IC ? IC : 1);
	CK(p && p->ndim == 2 && p->shape[0] == IC);
	int64_t OC = p->shape[1];
	CK(same(p, in, IC * OC, 0) && same(dp, in, IC * OC, 0) && same(din, in, N * IC, 1) &&
	   same(dout, in, N * OC, 0));
	r->proj_bwd(ctx, din ? D(din) : NULL, D(dp), D(dout), D(in), D(p), N, (int)IC, (int)OC);
	return 0;
}

int kern_layernorm_fwd(KernCtx *ctx, KTensor *out, KTensor *mean, KTensor *rstd, const KTensor *in, const KTensor *w,
		       const KTensor *b)
{
	RAW(r, ctx, in);
	int64_t C = last_dim(in), N = kern_numel(in) / (C ? C : 1);
	CK(same(out, in, N * C, 0) && same(mean, in, N, 0) && same(rstd, in, N, 0) && same(w, in, C, 0) &&
	   same(b, in, C, 0));
	r->layernorm_fwd(ctx, D(out), D(mean), D(rstd), D(in), D(w), D(b), N, (int)C);
	return 0;
}

int kern_layernorm_bwd(KernCtx *ctx, KTensor *din, KTensor *dw, KTensor *db, const KTensor *dout, const KTensor *in,
		       const KTensor *w, const KTensor *mean, const KTensor *rstd)
{
	RAW(r, ctx, in);
	int64_t C = last_dim(in), N = kern_numel(in) / (C ? C : 1);
	CK(same(din, in, N * C, 0) && same(dout, in, N * C, 0) && same(dw, in, C, 0) && same(db, in, C, 0) &&
	   same(w, in, C, 0) && same(mean, in, N, 0) && same(rstd, in, N, 0));
	r->layernorm_bwd(ctx, D(din), D(dw), D(db), D(dout), D(in), D(w), D(mean), D(rstd), N, (int)C);
	return 0;
}

int kern_gelu_fwd(KernCtx *ctx, KTensor *out, const KTensor *in)
{
	RAW(r, ctx, in);
	CK(same(out, in, kern_numel(in), 0));
	r->gelu_fwd(ctx, D(out), D(in), kern_numel(in));
	return 0;
}

int kern_gelu_bwd(KernCtx *ctx, KTensor *din, const KTensor *dout, const KTensor *in)
{
	RAW(r, ctx, in);
	int64_t n = kern_numel(in);
	CK(same(din, in, n, 0) && same(dout, in, n, 0));
	r->gelu_bwd(ctx, D(din), D(dout), D(in), n);
	return 0;
}

int kern_add_fwd(KernCtx *ctx, KTensor *out, const KTensor *a, const KTensor *b)
{
	RAW(r, ctx, a);
	int64_t n = kern_numel(a);
	CK(same(out, a, n, 0) && same(b, a, n, 0));
	r->add_fwd(ctx, D(out), D(a), D(b), n);
	return 0;
}

int kern_add_bwd(KernCtx *ctx, KTensor *da, KTensor *db, const KTensor *dout)
{
	RAW(r, ctx, dout);
	int64_t n = kern_numel(dout);
	CK(same(da, dout, n, 1) && same(db, dout, n, 1));
	if (da)
		r->acc(ctx, D(da), D(dout), n);
	if (db)
		r->acc(ctx, D(db), D(dout), n);
	return 0;
}

// ---- embeddings and pooling ----
static int patchify_dims(const KTensor *patches, const KTensor *img, int p)
{
	if (!img || img->ndim != 5 || p <= 0 || img->shape[2] % p || img->shape[3] % p)
		return 0;
	int64_t B = img->shape[0], T = img->shape[1], P = (img->shape[2] / p) * (img->shape[3] / p);
	int64_t K = img->shape[4] * p * p;
	return same(patches, img, B * T * P * K, 0) && last_dim(patches) == K;
}

int kern_patchify_fwd(KernCtx *ctx, KTensor *out, const KTensor *img, int patch)
{
	RAW(r, ctx, img);
	CK(patchify_dims(out, img, patch));
	r->patchify(ctx, D(out), D(img), (int)img->shape[0], (int)img->shape[1], (int)img->shape[2],
		    (int)img->shape[3], (int)img->shape[4], patch, 0);
	return 0;
}

int kern_patchify_bwd(KernCtx *ctx, KTensor *dimg, const KTensor *dout, int patch)
{
	RAW(r, ctx, dimg);
	CK(patchify_dims(dout, dimg, patch));
	r->patchify(ctx, (void *)D(dout), D(dimg), (int)dimg->shape[0], (int)dimg->shape[1], (int)dimg->shape[2],
		    (int)dimg->shape[3], (int)dimg->shape[4], patch, 1);
	return 0;
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
	return *P >= 1 && tpos->shape[1] == *Dm && pos->shape[1] == *Dm && out->shape[1] == 1 + (int64_t)*T * *P;
}

int kern_vis_embed_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KTensor *cls, const KTensor *pos,
		       const KTensor *tpos)
{
	RAW(r, ctx, x);
	int B, T, P, Dm;
	CK(vis_dims(out, tpos, pos, &B, &T, &P, &Dm));
	CK(same(out, x, kern_numel(out), 0) && same(x, x, (int64_t)B * T * P * Dm, 0) && same(cls, x, Dm, 0) &&
	   same(pos, x, (int64_t)(P + 1) * Dm, 0) && same(tpos, x, (int64_t)T * Dm, 0));
	r->vis_embed_fwd(ctx, D(out), D(x), D(cls), D(pos), D(tpos), B, T, P, Dm);
	return 0;
}

int kern_vis_embed_bwd(KernCtx *ctx, KTensor *dx, KTensor *dcls, KTensor *dpos, KTensor *dtpos, const KTensor *dout)
{
	RAW(r, ctx, dout);
	int B, T, P, Dm;
	CK(vis_dims(dout, dtpos, dpos, &B, &T, &P, &Dm));
	CK(same(dx, dout, (int64_t)B * T * P * Dm, 1) && same(dcls, dout, Dm, 0) &&
	   same(dpos, dout, (int64_t)(P + 1) * Dm, 0) && same(dtpos, dout, (int64_t)T * Dm, 0));
	r->vis_embed_bwd(ctx, dx ? D(dx) : NULL, D(dcls), D(dpos), D(dtpos), D(dout), B, T, P, Dm);
	return 0;
}

int kern_tok_embed_fwd(KernCtx *ctx, KTensor *out, const KTensor *ids, const KTensor *wte, const KTensor *pos)
{
	RAW(r, ctx, wte);
	CK(ids && ids->ndim == 2 && wte->ndim == 2 && pos && pos->ndim == 2);
	int64_t B = ids->shape[0], L = ids->shape[1], V = wte->shape[0], Dm = wte->shape[1];
	CK(is_i32(ids, B * L) && pos->shape[0] >= L && pos->shape[1] == Dm && same(pos, wte, kern_numel(pos), 0) &&
	   same(out, wte, B * L * Dm, 0) && last_dim(out) == Dm);
	int rc = ctx->be->check_ids(ctx, D(ids), B * L, (int)V);
	if (rc)
		return rc;
	r->tok_embed_fwd(ctx, D(out), D(ids), D(wte), D(pos), (int)B, (int)L, (int)Dm);
	return 0;
}

int kern_tok_embed_bwd(KernCtx *ctx, KTensor *dwte, KTensor *dpos, const KTensor *dout, const KTensor *ids)
{
	RAW(r, ctx, dwte);
	CK(ids && ids->ndim == 2 && dwte->ndim == 2 && dpos && dpos->ndim == 2);
	int64_t B = ids->shape[0], L = ids->shape[1], V = dwte->shape[0], Dm = dwte->shape[1];
	CK(is_i32(ids, B * L) && dpos->shape[0] >= L && dpos->shape[1] == Dm &&
	   same(dpos, dwte, kern_numel(dpos), 0) && same(dout, dwte, B * L * Dm, 0));
	int rc = ctx->be->check_ids(ctx, D(ids), B * L, (int)V);
	if (rc)
		return rc;
	r->tok_embed_bwd(ctx, D(dwte), D(dpos), D(dout), D(ids), (int)B, (int)L, (int)Dm, (int)V);
	return 0;
}

int kern_argmax_rows(KernCtx *ctx, KTensor *pos, const KTensor *ids)
{
	CK(ids && ids->ndim == 2 && ids->shape[1] > 0 && is_i32(ids, kern_numel(ids)) && is_i32(pos, ids->shape[0]));
	ctx->be->argmax_rows(ctx, D(pos), D(ids), (int)ids->shape[0], (int)ids->shape[1]);
	return 0;
}

static int pool_check(KernCtx *ctx, const KTensor *x, const KTensor *o, const KTensor *pos)
{
	if (!x || x->ndim != 3 || !is_i32(pos, x->shape[0]) || !same(o, x, x->shape[0] * x->shape[2], 0))
		return -EINVAL;
	return ctx->be->check_ids(ctx, D(pos), x->shape[0], (int)x->shape[1]);
}

int kern_pool_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KTensor *pos)
{
	RAW(r, ctx, x);
	int rc = pool_check(ctx, x, out, pos);
	if (rc)
		return rc;
	r->pool_fwd(ctx, D(out), D(x), D(pos), (int)x->shape[0], (int)x->shape[1], (int)x->shape[2]);
	return 0;
}

int kern_pool_bwd(KernCtx *ctx, KTensor *dx, const KTensor *dout, const KTensor *pos)
{
	RAW(r, ctx, dx);
	int rc = pool_check(ctx, dx, dout, pos);
	if (rc)
		return rc;
	r->pool_bwd(ctx, D(dx), D(dout), D(pos), (int)dx->shape[0], (int)dx->shape[1], (int)dx->shape[2]);
	return 0;
}

int kern_l2norm_fwd(KernCtx *ctx, KTensor *out, KTensor *norm, const KTensor *in)
{
	RAW(r, ctx, in);
	int64_t C = last_dim(in), N = kern_numel(in) / (C ? C : 1);
	CK(same(out, in, N * C, 0) && same(norm, in, N, 0));
	r->l2norm_fwd(ctx, D(out), D(norm), D(in), N, (int)C);
	return 0;
}

int kern_l2norm_bwd(KernCtx *ctx, KTensor *din, const KTensor *dout, const KTensor *out, const KTensor *norm)
{
	RAW(r, ctx, out);
	int64_t C = last_dim(out), N = kern_numel(out) / (C ? C : 1);
	CK(same(din, out, N * C, 0) && same(dout, out, N * C, 0) && same(norm, out, N, 0));
	r->l2norm_bwd(ctx, D(din), D(dout), D(out), D(norm), N, (int)C);
	return 0;
}

// ---- attention ----
size_t kern_attention_ws_bytes(KernCtx *ctx, KDtype dt, int B, int T, int H, int hd)
{
	if ((unsigned)dt >= KDT_COUNT || !ctx->be->ops[dt])
		return 0;
	return ctx->be->ops[dt]->attention_ws_bytes(ctx, B, T, H, hd);
}

static int attn_dims(const KTensor *qkv, int heads, int *B, int *T, int *hd)
{
	if (!qkv || qkv->ndim != 3 || heads <= 0 || qkv->shape[2] % (3 * heads))
		return 0;
	*B = (int)qkv->shape[0];
	*T = (int)qkv->shape[1];
	*hd = (int)(qkv->shape[2] / (3 * heads));
	return *hd > 0;
}

static int ws_ok(KernCtx *ctx, const KTensor *ws, size_t need)
{
	return need == 0 || (ws && ws->data && kern_nbytes(ws) >= need);
}

int kern_attention_fwd(KernCtx *ctx, KTensor *out, KTensor *lse, const KTensor *qkv, int heads, int causal,
		       KTensor *ws)
{
	RAW(r, ctx, qkv);
	int B, T, hd;
	CK(attn_dims(qkv, heads, &B, &T, &hd));
	CK(same(out, qkv, (int64_t)B * T * heads * hd, 0) && same(lse, qkv, (int64_t)B * heads * T, 0));
	CK(ws_ok(ctx, ws, r->attention_ws_bytes(ctx, B, T, heads, hd)));
	r->attention_fwd(ctx, D(out), D(lse), D(qkv), B, T, heads, hd, causal, ws ? D(ws) : NULL);
	return 0;
}

int kern_attention_bwd(KernCtx *ctx, KTensor *dqkv, const KTensor *dout, const KTensor *qkv, const KTensor *out,
		       const KTensor *lse, int heads, int causal, KTensor *ws)
{
	RAW(r, ctx, qkv);
	int B, T, hd;
	CK(attn_dims(qkv, heads, &B, &T, &hd));
	int64_t n = (int64_t)B * T * heads * hd;
	CK(same(dqkv, qkv, 3 * n, 0) && same(dout, qkv, n, 0) && same(out, qkv, n, 0) &&
	   same(lse, qkv, (int64_t)B * heads * T, 0));
	CK(ws_ok(ctx, ws, r->attention_ws_bytes(ctx, B, T, heads, hd)));
	r->attention_bwd(ctx, D(dqkv), D(dout), D(qkv), D(out), D(lse), B, T, heads, hd, causal, ws ? D(ws) : NULL);
	return 0;
}

// ---- loss ----
size_t kern_clip_loss_ws_bytes(KernCtx *ctx, KDtype dt, int B)
{
	if ((unsigned)dt >= KDT_COUNT || !ctx->be->ops[dt])
		return 0;
	return ctx->be->ops[dt]->clip_loss_ws_bytes(ctx, B);
}

int kern_clip_loss(KernCtx *ctx, KTensor *loss, KTensor *dimg, KTensor *dtxt, KTensor *dls, const KTensor *img,
		   const KTensor *txt, const KTensor *ls, KTensor *ws)
{
	RAW(r, ctx, img);
	CK(img->ndim == 2);
	int64_t B = img->shape[0], E = img->shape[1];
	CK(same(txt, img, B * E, 0) && same(dimg, img, B * E, 0) && same(dtxt, img, B * E, 0) &&
	   same(ls, img, 1, 0) && same(dls, img, 1, 0) && same(loss, img, 1, 0));
	CK(ws_ok(ctx, ws, r->clip_loss_ws_bytes(ctx, (int)B)));
	r->clip_loss(ctx, D(loss), D(dimg), D(dtxt), D(dls), D(img), D(txt), D(ls), (int)B, (int)E, ws ? D(ws) : NULL);
	return 0;
}

// ---- optimizer ----
static int opt_check(const KTensor *p, const KTensor *g, const KTensor *m, const KTensor *v, const KOptHyper *h)
{
	int64_t n = kern_numel(p);
	return h && h->step >= 1 && same(g, p, n, 0) && same(m, p, n, 0) && same(v, p, n, 0);
}

int kern_adamw_step(KernCtx *ctx, KTensor *p, const KTensor *g, KTensor *m, KTensor *v, const KOptHyper *h)
{
	RAW(r, ctx, p);
	CK(opt_check(p, g, m, v, h));
	r->adamw(ctx, D(p), D(g), D(m), D(v), kern_numel(p), h);
	return 0;
}

int kern_lamb_step(KernCtx *ctx, KTensor *p, const KTensor *g, KTensor *m, KTensor *v, const KOptHyper *h)
{
	RAW(r, ctx, p);
	CK(opt_check(p, g, m, v, h));
	r->lamb(ctx, D(p), D(g), D(m), D(v), kern_numel(p), h);
	return 0;
}
