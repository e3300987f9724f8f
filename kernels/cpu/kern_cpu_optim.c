// The CPU twin of the fused optimizer: the global gradient norm and one AdamW/LAMB update over
// the flat buffer, segment by segment, with reductions over the plan's fixed chunks in order.
// Per element in f32, with the bias corrections folded as torch.optim.AdamW does.
#include "kern_cpu.h" // defines: kcpu_ld, kcpu_st, KOMP

#include <errno.h>
#include <stdlib.h>

int kcpu_opt_plan_open(KOptPlan *p)
{
	p->priv = calloc(2 * (size_t)p->n_chunks, sizeof(double)); // per-chunk partial sums
	return p->priv ? 0 : -ENOMEM;
}

void kcpu_opt_plan_close(KOptPlan *p)
{
	free(p->priv);
}

static inline float gload(const KTensor *g, int64_t i)
{
	return g->dtype == KDT_F32 ? ((const float *)g->data)[i] : (float)kcpu_ld(g->data, g->dtype, i);
}

int kcpu_grad_norm(KernCtx *c, const KOptPlan *p, KTensor *norm_clip, const KTensor *grads, double clip_norm)
{
	double *part = p->priv;
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int k = 0; k < p->n_chunks; k++) {
		const KOptChunk *ch = &p->chunks[k];
		double s = 0;
		if (!(p->segs[ch->seg].flags & KSEG_FROZEN))
			for (int64_t i = ch->start; i < ch->start + ch->len; i++) {
				double g = gload(grads, i);
				s += g * g;
			}
		part[k] = s;
	}
	double ss = 0;
	for (int k = 0; k < p->n_chunks; k++)
		ss += part[k];
	double norm = sqrt(ss), factor = 1.0;
	if (!isfinite(norm))
		factor = NAN;
	else if (clip_norm > 0 && norm > clip_norm) // torch.nn.utils.clip_grad_norm_
		factor = clip_norm / (norm + 1e-6);
	kcpu_st(norm_clip->data, norm_clip->dtype, 0, norm);
	kcpu_st(norm_clip->data, norm_clip->dtype, 1, factor);
	return 0;
}

typedef struct {
	float b1, b2, eps, bc1, bc2, bc2s, step;
	double lr, wd;
	float fc; // clip factor
} Hyp;

// the segment's rate: lr, or lr·lr_scale under KSEG_LR_SCALE
static double seg_lr(const KOptSegment *s, double lr)
{
	return (s->flags & KSEG_LR_SCALE) ? lr * s->lr_scale : lr;
}

// AdamW on one chunk in f32
static void adamw_chunk(const Hyp *h, double wd, float *p, const KTensor *grads, float *m, float *v, int64_t s,
			int64_t e)
{
	const float decay = (float)(1 - h->lr * wd);
	for (int64_t i = s; i < e; i++) {
		float g = gload(grads, i) * h->fc;
		m[i] = h->b1 * m[i] + (1 - h->b1) * g;
		v[i] = h->b2 * v[i] + (1 - h->b2) * g * g;
		p[i] *= decay;
		p[i] -= h->step * m[i] / (sqrtf(v[i]) / h->bc2s + h->eps);
	}
}

static inline float lamb_r(const Hyp *h, float wd, float p, float m, float v)
{
	return (m / h->bc1) / (sqrtf(v / h->bc2) + h->eps) + wd * p;
}

// LAMB pass 1 on one chunk: moments, and the partial sums of p² and r² (in double)
static void lamb_chunk(const Hyp *h, float wd, const float *p, const KTensor *grads, float *m, float *v, int64_t s,
		       int64_t e, double *pp, double *rr)
{
	double sp = 0, sr = 0;
	for (int64_t i = s; i < e; i++) {
		float g = gload(grads, i) * h->fc;
		m[i] = h->b1 * m[i] + (1 - h->b1) * g;
		v[i] = h->b2 * v[i] + (1 - h->b2) * g * g;
		float r = lamb_r(h, wd, p[i], m[i], v[i]);
		sp += (double)p[i] * p[i];
		sr += (double)r * r;
	}
	*pp = sp;
	*rr = sr;
}

// per-segment LAMB step lr·trust from the chunk partials, summed in chunk order
static void lamb_steps(const KOptPlan *p, const double *part, double lr, float *step)
{
	for (int s = 0; s < p->n_segs; s++)
		step[s] = 0;
	int k = 0;
	for (int s = 0; s < p->n_segs; s++) {
		double sp = 0, sr = 0;
		for (; k < p->n_chunks && p->chunks[k].seg == s; k++) {
			sp += part[2 * k];
			sr += part[2 * k + 1];
		}
		uint32_t f = p->segs[s].flags;
		// upstream fast_clip: the trust ratio only where weight decay applies
		double trust = (f & KSEG_DECAY) && sp > 0 && sr > 0 ? sqrt(sp) / sqrt(sr) : 1.0;
		step[s] = (float)(seg_lr(&p->segs[s], lr) * trust);
	}
}

int kcpu_optimizer(KernCtx *c, const KOptPlan *p, const KOptHyper *hy, KTensor *master, KTensor *copy,
		   const KTensor *grads, KTensor *m, KTensor *v, const KTensor *norm_clip)
{
	double fc = norm_clip ? kcpu_ld(norm_clip->data, norm_clip->dtype, 1) : 1.0;
	if (!isfinite(fc)) {
		kern_latch(c, -ERANGE, "optimizer", "the gradient norm is %g: no update",
			   kcpu_ld(norm_clip->data, norm_clip->dtype, 0));
		return 0;
	}
	float *w = master->data, *mm = m->data, *vv = v->data;
	double *part = p->priv;
	float *step = kcpu_arena_alloc(c, sizeof(float) * (size_t)p->n_segs);
	if (!step)
		return -ENOMEM;
	// the per-step values: from the device tensor when given (a graph's replay), else from hy
	double live[KOPT_LIVE_N];
	if (hy->live)
		memcpy(live, hy->live->data, sizeof live);
	else
		kern_opt_live(hy, live);
	const double lr = live[KOPT_LIVE_LR], bc1 = live[KOPT_LIVE_BC1], bc2 = live[KOPT_LIVE_BC2];
	Hyp h = {.b1 = (float)hy->beta1, .b2 = (float)hy->beta2, .eps = (float)hy->eps, .lr = lr, .fc = (float)fc};
	h.bc1 = (float)bc1;
	h.bc2 = (float)bc2;
	h.bc2s = (float)sqrt(bc2);
	h.step = (float)(lr / bc1);
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(dynamic, 4)")
	for (int k = 0; k < p->n_chunks; k++) {
		const KOptChunk *ch = &p->chunks[k];
		uint32_t f = p->segs[ch->seg].flags;
		double wd = (f & KSEG_DECAY) ? hy->weight_decay : 0;
		part[2 * k] = part[2 * k + 1] = 0;
		if (f & (KSEG_FROZEN | KSEG_EXTERNAL))
			continue;
		if (f & KSEG_LAMB)
			lamb_chunk(&h, (float)wd, w, grads, mm, vv, ch->start, ch->start + ch->len, &part[2 * k],
				   &part[2 * k + 1]);
		else if (!(f & KSEG_LR_SCALE))
			adamw_chunk(&h, wd, w, grads, mm, vv, ch->start, ch->start + ch->len);
		else { // the segment's own rate in both of AdamW's lr terms
			Hyp hs = h;
			hs.lr = seg_lr(&p->segs[ch->seg], lr);
			hs.step = (float)(hs.lr / bc1);
			adamw_chunk(&hs, wd, w, grads, mm, vv, ch->start, ch->start + ch->len);
		}
	}
	lamb_steps(p, part, lr, step);
	KOMP("omp parallel for num_threads(nt) schedule(dynamic, 4)")
	for (int k = 0; k < p->n_chunks; k++) {
		const KOptChunk *ch = &p->chunks[k];
		const KOptSegment *sg = &p->segs[ch->seg];
		int64_t e = ch->start + ch->len;
		const int updated = !(sg->flags & (KSEG_FROZEN | KSEG_EXTERNAL));
		if ((sg->flags & KSEG_LAMB) && updated) {
			float wd = (sg->flags & KSEG_DECAY) ? (float)hy->weight_decay : 0;
			for (int64_t i = ch->start; i < e; i++)
				w[i] -= step[ch->seg] * lamb_r(&h, wd, w[i], mm[i], vv[i]);
		}
		if ((sg->flags & KSEG_CLAMP) && updated)
			for (int64_t i = ch->start; i < e; i++)
				w[i] = w[i] < sg->clamp_lo ? sg->clamp_lo : w[i] > sg->clamp_hi ? sg->clamp_hi : w[i];
		if (copy)
			for (int64_t i = ch->start; i < e; i++)
				kcpu_st(copy->data, copy->dtype, i, w[i]);
	}
	kcpu_arena_reset(c);
	return 0;
}
