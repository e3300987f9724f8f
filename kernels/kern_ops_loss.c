// The contract's loss, temperature and optimizer ops for every backend: argument checks, the
// FastCLIP pack/table widths, the optimizer plan's chunk table (the fixed reduction order), and
// the per-step values an optimizer or temperature step may read from the device (kern_*_live).
#include "kern_check.h" // defines: kchk_*, KPRE, KCK, KWS

#include <math.h> // defines: pow
#include <stdlib.h>
#include <string.h>

#define BE(c) ((c)->dev->be)

// ---- contrastive losses ----
size_t kern_loss_ws_bytes(KernCtx *ctx, int B, int N, int d)
{
	if (!ctx || B < 1 || N < B || d < 1)
		return 0;
	return BE(ctx)->loss_ws_bytes(ctx, B, N, d);
}

int kern_fcco_pack_width(KFccoVersion v)
{
	return v == KFCCO_V2 ? 12 : (v == KFCCO_V0 || v == KFCCO_V1 || v == KFCCO_V3) ? 2 : 0;
}

int kern_fcco_table_width(KFccoVersion v)
{
	return v == KFCCO_V2 ? 10 : (v == KFCCO_V0 || v == KFCCO_V1 || v == KFCCO_V3) ? 2 : 0;
}

// features (B, d) and (N, d) of one compute dtype, N a multiple of B, the rank's rows inside;
// log_s (1) STAT unless optional
static int batch_dims(const KContrastBatch *b, int log_s_optional, int *B, int *N, int *d)
{
	if (!b || !b->e1 || b->e1->ndim != 2 || !b->E1 || b->E1->ndim != 2)
		return 0;
	KDtype cdt = kchk_cdt(b->e1);
	int64_t B_ = b->e1->shape[0], d_ = b->e1->shape[1], N_ = b->E1->shape[0];
	if (B_ < 1 || d_ < 1 || N_ < B_ || N_ % B_ || N_ > INT32_MAX || d_ > INT32_MAX)
		return 0;
	if (!kchk_act(b->e1, cdt, B_ * d_) || !kchk_act(b->e2, cdt, B_ * d_) || !kchk_act(b->E1, cdt, N_ * d_) ||
	    !kchk_act(b->E2, cdt, N_ * d_) || b->E1->shape[1] != d_)
		return 0;
	if (b->offset < 0 || b->offset % B_ || b->offset + B_ > N_)
		return 0;
	if (!(log_s_optional && !b->log_s) && !kchk_stat(b->log_s, cdt, 1))
		return 0;
	*B = (int)B_;
	*N = (int)N_;
	*d = (int)d_;
	return 1;
}

// bytes of a batch's local and gathered features
static double feats(const KContrastBatch *b)
{
	return kplan_t(b->e1) + kplan_t(b->e2) + kplan_t(b->E1) + kplan_t(b->E2);
}

int kern_infonce(KernCtx *ctx, const KContrastBatch *b, KTensor *loss, KGrad dE1, KGrad dE2, KGrad dlog_s)
{
	KCK(b && b->e1);
	KDtype cdt = kchk_cdt(b->e1);
	KPRE(ctx, cdt);
	int B, N, d;
	KCK(batch_dims(b, 0, &B, &N, &d) && kchk_stat(loss, cdt, 1));
	KCK(kchk_grad(dE1, cdt, (int64_t)N * d) && kchk_grad(dE2, cdt, (int64_t)N * d) && kchk_grad(dlog_s, cdt, 1));
	KWS(ctx, BE(ctx)->loss_ws_bytes(ctx, B, N, d));
	return KRUN(ctx,
		    kplan("infonce", 8.0 * B * N * d, feats(b) + kplan_t(loss) + kplan_g(dE1) + kplan_g(dE2), 2, 0,
			  "B=%d N=%d d=%d", B, N, d),
		    BE(ctx)->infonce(ctx, b, loss, dE1, dE2, dlog_s, B, N, d));
}

static int fcco_params_ok(const KFccoParams *p)
{
	if (!p || !kern_fcco_pack_width(p->version) || !(p->eps >= 0) || !(p->gamma >= 0 && p->gamma <= 1))
		return 0;
	if (p->version != KFCCO_V2)
		return 1;
	return p->epoch >= 0 && p->beta1 >= 0 && p->beta1 < 1 && p->beta2 >= 0 && p->beta2 < 1 && p->eps_tau > 0 &&
	       p->tau_min > 0 && p->tau_min < p->tau_max && p->grad_clamp > 0;
}

int kern_fcco_local(KernCtx *ctx, const KContrastBatch *b, const KTensor *ids, const KTensor *table,
		    const KFccoParams *p, KTensor *pack)
{
	KCK(b && b->e1 && fcco_params_ok(p));
	KDtype cdt = kchk_cdt(b->e1);
	KPRE(ctx, cdt);
	int B, N, d, tw = kern_fcco_table_width(p->version), pw = kern_fcco_pack_width(p->version);
	KCK(batch_dims(b, p->version == KFCCO_V2, &B, &N, &d) && N >= 2);
	KCK(kchk_typed(ids, KDT_I64, B) && table && table->ndim == 2 && table->shape[1] == tw &&
	    kchk_stat(table, cdt, kern_numel(table)) && kchk_stat(pack, cdt, (int64_t)B * pw));
	KWS(ctx, BE(ctx)->loss_ws_bytes(ctx, B, N, d));
	return KRUN(ctx,
		    kplan("fcco_local", 4.0 * B * N * d, feats(b) + kplan_t(ids) + 2 * kplan_t(pack), 2, 0,
			  "B=%d N=%d d=%d", B, N, d),
		    BE(ctx)->fcco_local(ctx, b, ids, table, p, pack, B, N, d));
}

int kern_fcco_scatter(KernCtx *ctx, KTensor *table, const KTensor *ids_all, const KTensor *pack_all, KFccoVersion v)
{
	KCK(table);
	KDtype cdt = kchk_cdt(table);
	KPRE(ctx, cdt);
	int tw = kern_fcco_table_width(v), pw = kern_fcco_pack_width(v);
	KCK(tw && table->ndim == 2 && table->shape[1] == tw && kchk_stat(table, cdt, kern_numel(table)));
	KCK(ids_all && ids_all->ndim == 1 && kchk_typed(ids_all, KDT_I64, ids_all->shape[0]));
	KCK(kchk_stat(pack_all, cdt, ids_all->shape[0] * pw));
	return KRUN(ctx,
		    kplan("fcco_scatter", 0, kplan_t(ids_all) + 2 * kplan_t(pack_all), 0, 0, "N=%lld w=%d",
			  (long long)ids_all->shape[0], pw),
		    BE(ctx)->fcco_scatter(ctx, table, ids_all, pack_all, pw));
}

int kern_fcco_surrogate(KernCtx *ctx, const KContrastBatch *b, const KTensor *pack, const KTensor *pack_all,
			const KFccoParams *p, KTensor *loss, KGrad de1, KGrad de2, KGrad dlog_s)
{
	KCK(b && b->e1 && fcco_params_ok(p));
	KDtype cdt = kchk_cdt(b->e1);
	KPRE(ctx, cdt);
	int B, N, d, pw = kern_fcco_pack_width(p->version);
	KCK(batch_dims(b, p->version == KFCCO_V2, &B, &N, &d) && N >= 2);
	KCK(kchk_stat(pack, cdt, (int64_t)B * pw) && kchk_stat(pack_all, cdt, (int64_t)N * pw) &&
	    kchk_stat(loss, cdt, 1));
	KCK(kchk_grad(de1, cdt, (int64_t)B * d) && kchk_grad(de2, cdt, (int64_t)B * d) && kchk_grad(dlog_s, cdt, 1));
	KWS(ctx, BE(ctx)->loss_ws_bytes(ctx, B, N, d));
	return KRUN(ctx,
		    kplan("fcco_surrogate", 12.0 * B * N * d,
			  feats(b) + kplan_t(pack) + kplan_t(pack_all) + kplan_t(loss) + kplan_g(de1) + kplan_g(de2), 2,
			  0, "B=%d N=%d d=%d", B, N, d),
		    BE(ctx)->fcco_surrogate(ctx, b, pack, pack_all, p, loss, de1, de2, dlog_s, B, N, d));
}

int kern_clip_metrics(KernCtx *ctx, KTensor *metrics, const KTensor *e1, const KTensor *e2, const KTensor *log_s)
{
	KCK(e1 && e1->ndim == 2);
	KDtype cdt = kchk_cdt(e1);
	KPRE(ctx, cdt);
	int64_t B = e1->shape[0], d = e1->shape[1];
	KCK(B >= 1 && d >= 1 && B <= INT32_MAX && d <= INT32_MAX);
	KCK(kchk_act(e1, cdt, B * d) && kchk_act(e2, cdt, B * d) && kchk_stat(log_s, cdt, 1) &&
	    kchk_stat(metrics, cdt, 2));
	KWS(ctx, BE(ctx)->loss_ws_bytes(ctx, (int)B, (int)B, (int)d));
	return KRUN(ctx,
		    kplan("clip_metrics", 4.0 * B * B * d, kplan_t(e1) + kplan_t(e2) + kplan_t(metrics), 2, 0,
			  "B=%lld d=%lld", (long long)B, (long long)d),
		    BE(ctx)->clip_metrics(ctx, metrics, e1, e2, log_s, (int)B, (int)d));
}

void kern_temp_live(const KTempStep *h, double out[KTEMP_LIVE_N])
{
	out[KTEMP_LIVE_LR] = h->lr;
	out[KTEMP_LIVE_LR_LOW] = h->lr_low;
	out[KTEMP_LIVE_BC1] = 1.0 - pow(h->beta1, (double)h->step);
	out[KTEMP_LIVE_BC2] = 1.0 - pow(h->beta2, (double)h->step);
}

int kern_temp_step(KernCtx *ctx, KTensor *log_s, KTensor *mv, const KTensor *grad, const KTensor *norm_clip,
		   KTensor *copy, const KTempStep *h)
{
	KCK(log_s);
	KDtype cdt = kchk_cdt(log_s);
	KPRE(ctx, cdt);
	KCK(h && h->step >= 1 && h->lr >= 0 && h->lr_low >= 0 && h->beta1 >= 0 && h->beta1 < 1 && h->beta2 >= 0 &&
	    h->beta2 < 1 && h->eps > 0 && h->lo <= h->hi);
	KCK(kchk_stat(log_s, cdt, 1) && kchk_stat(mv, cdt, 2) && kchk_act(grad, cdt, 1) &&
	    (!copy || kchk_act(copy, cdt, 1)) && (!norm_clip || kchk_stat(norm_clip, cdt, 2)) &&
	    (!h->live || kchk_typed(h->live, KDT_F64, KTEMP_LIVE_N)));
	return KRUN(ctx,
		    kplan("temp_step", 20,
			  2 * kplan_t(log_s) + 2 * kplan_t(mv) + kplan_t(grad) + kplan_t(norm_clip) + kplan_t(copy) +
				  kplan_t(h->live),
			  0, 0, "1"),
		    BE(ctx)->temp_step(ctx, log_s, mv, grad, norm_clip, copy, h));
}

// ---- optimizer ----
static void plan_free(KOptPlan *p)
{
	free(p->segs);
	free(p->chunks);
	free(p);
}

int kern_opt_plan_create(KernCtx *ctx, KOptPlan **out, const KOptSegment *segs, int n_segs, int64_t n_params)
{
	KCK(ctx && out && segs && n_segs > 0 && n_params > 0);
	int64_t end = 0, n_chunks = 0;
	for (int i = 0; i < n_segs; i++) {
		const KOptSegment *s = &segs[i];
		KCK(s->offset >= end && s->length > 0 && s->offset + s->length <= n_params);
		KCK(!(s->flags &
		      ~(uint32_t)(KSEG_DECAY | KSEG_LAMB | KSEG_FROZEN | KSEG_CLAMP | KSEG_EXTERNAL | KSEG_LR_SCALE)));
		KCK(!(s->flags & KSEG_LR_SCALE) || (s->lr_scale > 0 && s->lr_scale <= 1e6));
		KCK(!(s->flags & KSEG_CLAMP) || s->clamp_lo <= s->clamp_hi);
		end = s->offset + s->length;
		n_chunks += (s->length + KERN_OPT_CHUNK - 1) / KERN_OPT_CHUNK;
	}
	KCK(n_chunks <= INT32_MAX);
	KOptPlan *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	p->dev = ctx->dev;
	p->n_segs = n_segs;
	p->n_params = n_params;
	p->n_chunks = (int)n_chunks;
	p->segs = malloc(sizeof *p->segs * (size_t)n_segs);
	p->chunks = malloc(sizeof *p->chunks * (size_t)n_chunks);
	if (!p->segs || !p->chunks) {
		plan_free(p);
		return -ENOMEM;
	}
	memcpy(p->segs, segs, sizeof *segs * (size_t)n_segs);
	int k = 0;
	for (int i = 0; i < n_segs; i++)
		for (int64_t o = 0; o < segs[i].length; o += KERN_OPT_CHUNK) {
			int64_t len = segs[i].length - o < KERN_OPT_CHUNK ? segs[i].length - o : KERN_OPT_CHUNK;
			p->chunks[k++] = (KOptChunk){.start = segs[i].offset + o, .len = len, .seg = i};
		}
	int rc = BE(ctx)->opt_plan_open(p);
	if (rc < 0) {
		plan_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void kern_opt_plan_destroy(KOptPlan *plan)
{
	if (!plan)
		return;
	plan->dev->be->opt_plan_close(plan);
	plan_free(plan);
}

int kern_grad_norm(KernCtx *ctx, const KOptPlan *plan, KTensor *norm_clip, const KTensor *grads, double clip_norm)
{
	KPRE(ctx, KDT_F32);
	KCK(plan && plan->dev == ctx->dev && clip_norm >= 0);
	KCK(kchk_act(grads, KDT_F32, plan->n_params) && kchk_stat(norm_clip, KDT_F32, 2));
	return KRUN(ctx,
		    kplan("grad_norm", 2.0 * plan->n_params, kplan_t(grads) + kplan_t(norm_clip), 0, 0, "%lld",
			  (long long)plan->n_params),
		    BE(ctx)->grad_norm(ctx, plan, norm_clip, grads, clip_norm));
}

static int hyper_ok(const KOptHyper *h)
{
	return h && h->step >= 1 && h->lr >= 0 && h->beta1 >= 0 && h->beta1 < 1 && h->beta2 >= 0 && h->beta2 < 1 &&
	       h->eps > 0 && h->weight_decay >= 0 && (!h->live || kchk_typed(h->live, KDT_F64, KOPT_LIVE_N));
}

void kern_opt_live(const KOptHyper *h, double out[KOPT_LIVE_N])
{
	out[KOPT_LIVE_LR] = h->lr;
	out[KOPT_LIVE_BC1] = 1.0 - pow(h->beta1, (double)h->step);
	out[KOPT_LIVE_BC2] = 1.0 - pow(h->beta2, (double)h->step);
}

int kern_optimizer(KernCtx *ctx, const KOptPlan *plan, const KOptHyper *h, KTensor *master, KTensor *copy,
		   const KTensor *grads, KTensor *m, KTensor *v, const KTensor *norm_clip)
{
	KPRE(ctx, KDT_F32);
	KCK(plan && plan->dev == ctx->dev && hyper_ok(h));
	int64_t n = plan->n_params;
	KCK(kchk_stat(master, KDT_F32, n) && kchk_act(grads, KDT_F32, n) && kchk_stat(m, KDT_F32, n) &&
	    kchk_stat(v, KDT_F32, n) && (!copy || kchk_act(copy, KDT_F32, n)) &&
	    (!norm_clip || kchk_stat(norm_clip, KDT_F32, 2)));
	// master, m and v read and written, the gradient read, the storage copy written
	return KRUN(ctx,
		    kplan("optimizer", 12.0 * n,
			  2 * (kplan_t(master) + kplan_t(m) + kplan_t(v)) + kplan_t(grads) + kplan_t(copy) +
				  kplan_t(norm_clip) + kplan_t(h->live),
			  0, 0, "%lld", (long long)n),
		    BE(ctx)->optimizer(ctx, plan, h, master, copy, grads, m, v, norm_clip));
}
