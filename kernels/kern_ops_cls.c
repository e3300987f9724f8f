// The contract's classification fine-tuning ops for every backend (soft-target cross-entropy,
// Mixup/CutMix, the per-row scale of drop path, dropout, the joint gradient norm): argument checks,
// then dispatch.
#include "kern_check.h" // defines: kchk_*, KPRE, KCK, KRUN, kplan

#include <math.h>
#include <stdint.h> // defines: UINT32_MAX

#define BE(c) ((c)->dev->be)

// the soft-target cross-entropy's limit on rows (the CUDA backend sums them in its stream scratch)
#define SOFTCE_MAX_ROWS ((int64_t)1 << 19)

static int softce_params_ok(const KSoftCe *p)
{
	return p && p->lam >= 0 && p->lam <= 1 && p->eps >= 0 && p->eps < 1 && isfinite(p->scale);
}

int kern_softce(KernCtx *ctx, KTensor *loss, KTensor *rows, KGrad dlogits, const KTensor *logits, const KTensor *a,
		const KTensor *b, const KSoftCe *p)
{
	KCK(logits && logits->ndim == 2);
	KDtype cdt = kchk_cdt(logits);
	KPRE(ctx, cdt);
	const int64_t N = logits->shape[0], K = logits->shape[1];
	KCK(N >= 1 && N <= SOFTCE_MAX_ROWS && K >= 1 && K <= INT32_MAX && softce_params_ok(p));
	KCK(kchk_act(logits, cdt, N * K) && kchk_typed(a, KDT_I32, N) && kchk_typed(b, KDT_I32, N));
	KCK(kchk_stat(loss, cdt, 1) && (!rows || kchk_stat(rows, cdt, N)) && kchk_grad(dlogits, cdt, N * K));
	return KRUN(ctx,
		    kplan("softce", 6.0 * N * K,
			  kplan_t(logits) + kplan_t(a) + kplan_t(b) + kplan_t(loss) + kplan_t(rows) + kplan_g(dlogits),
			  0, 0, "%lldx%lld", (long long)N, (long long)K),
		    BE(ctx)->softce(ctx, loss, rows, dlogits, logits, a, b, p, N, (int)K));
}

// x (B, T·P, 3·p·p) of the H×W frame's patches; the box inside the frame
static int mixup_dims(const KTensor *x, const KMixup *m, int H, int W, int patch)
{
	if (!x || !m || x->ndim != 3 || patch < 1 || H < patch || W < patch || H % patch || W % patch)
		return 0;
	const int64_t P = (int64_t)(H / patch) * (W / patch);
	const int64_t k = 3 * (int64_t)patch * patch; // a token's elements per frame of its tubelet
	if (x->shape[0] < 1 || x->shape[1] < P || x->shape[1] % P || x->shape[2] < k || x->shape[2] % k)
		return 0;
	if (m->cutmix != 0 && m->cutmix != 1)
		return 0;
	if (!m->cutmix)
		return m->lam >= 0 && m->lam <= 1;
	return 0 <= m->y0 && m->y0 <= m->y1 && m->y1 <= H && 0 <= m->x0 && m->x0 <= m->x1 && m->x1 <= W;
}

// out is x itself or shares no byte with it
static int same_or_apart(const KTensor *out, const KTensor *x)
{
	const char *o = out->data, *i = x->data;
	return o == i || o + kern_nbytes(out) <= i || i + kern_nbytes(x) <= o;
}

static int mixup(KernCtx *ctx, KGrad out, const KTensor *x, const KMixup *m, int H, int W, int patch, const char *op)
{
	KCK(x);
	KDtype cdt = kchk_cdt(x);
	KPRE(ctx, cdt);
	KCK(out.t && mixup_dims(x, m, H, W, patch) && kchk_act(x, cdt, kern_numel(x)));
	KCK(kchk_grad(out, cdt, kern_numel(x)) && same_or_apart(out.t, x) && !(out.acc && out.t->data == x->data));
	return KRUN(ctx,
		    kplan(op, 2.0 * kern_numel(x), kplan_t(x) + kplan_g(out), 0, 0, "%lldx%lldx%lld %s",
			  (long long)x->shape[0], (long long)x->shape[1], (long long)x->shape[2],
			  m->cutmix ? "cutmix" : "mixup"),
		    BE(ctx)->mixup(ctx, out, x, m, H, W, patch));
}

int kern_mixup_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KMixup *m, int H, int W, int patch)
{
	return mixup(ctx, KG_SET(out), x, m, H, W, patch, "mixup_fwd");
}

int kern_mixup_bwd(KernCtx *ctx, KGrad dx, const KTensor *dout, const KMixup *m, int H, int W, int patch)
{
	return mixup(ctx, dx, dout, m, H, W, patch, "mixup_bwd");
}

int kern_row_scale(KernCtx *ctx, KGrad out, const KTensor *x, const KTensor *scale)
{
	KCK(x && x->ndim >= 1);
	KDtype cdt = kchk_cdt(x);
	KPRE(ctx, cdt);
	const int64_t B = x->shape[0], n = kern_numel(x), inner = B ? n / B : 0;
	KCK(B >= 1 && kchk_act(x, cdt, n) && kchk_stat(scale, cdt, B) && out.t && kchk_grad(out, cdt, n));
	KCK(out.t->ndim >= 1 && out.t->shape[0] == B && same_or_apart(out.t, x) &&
	    !(out.acc && out.t->data == x->data));
	return KRUN(ctx,
		    kplan("row_scale", (double)n * (out.acc ? 2 : 1), kplan_t(x) + kplan_t(scale) + kplan_g(out), 0, 0,
			  "%lldx%lld", (long long)B, (long long)inner),
		    BE(ctx)->row_scale(ctx, out, x, scale, B, inner));
}

int kern_dropout(KernCtx *ctx, KGrad out, const KTensor *x, const KTensor *pos, const KDropout *p)
{
	KCK(x && x->ndim >= 1);
	KDtype cdt = kchk_cdt(x);
	KPRE(ctx, cdt);
	const int64_t B = x->shape[0], n = kern_numel(x), inner = B ? n / B : 0;
	KCK(B >= 1 && inner <= UINT32_MAX && p && p->rate >= 0 && p->rate <= 1);
	KCK(kchk_act(x, cdt, n) && kchk_typed(pos, KDT_I64, B) && out.t && kchk_grad(out, cdt, n));
	KCK(out.t->ndim >= 1 && out.t->shape[0] == B && same_or_apart(out.t, x) &&
	    !(out.acc && out.t->data == x->data));
	return KRUN(ctx,
		    kplan("dropout", (double)n * (out.acc ? 2 : 1), kplan_t(x) + kplan_t(pos) + kplan_g(out), 0, 0,
			  "%lldx%lld p%g", (long long)B, (long long)inner, p->rate),
		    BE(ctx)->dropout(ctx, out, x, pos, p, B, inner));
}

int kern_grad_norm_join(KernCtx *ctx, KTensor *norm_clip, const KTensor *other, double clip_norm)
{
	KPRE(ctx, KDT_F32);
	KCK(clip_norm >= 0 && kchk_stat(norm_clip, KDT_F32, 2) && kchk_stat(other, KDT_F32, 2));
	KCK(norm_clip->data != other->data);
	return KRUN(ctx, kplan("grad_norm_join", 4, kplan_t(norm_clip) + kplan_t(other), 0, 0, "2"),
		    BE(ctx)->grad_norm_join(ctx, norm_clip, other, clip_norm));
}
