// Checks the fused optimizer over a flat buffer with a segment table: AdamW equals the plain f32
// per-tensor rule bit for bit, LAMB equals it on every segment (both give a trust ratio of 1 where
// there is no weight decay, as upstream fast_clip); three steps with global-norm clipping against the
// torch/upstream formulas in double; frozen segments, the clamp, gaps, the bf16 weight copy, and
// one vs three threads.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_opt_plan_*, kern_grad_norm, kern_optimizer

#include <math.h>
#include <stdio.h>
#include <string.h>

// w (decayed), b (not), emb (decayed, several chunks), logit scale (clamped), a gap, frozen
enum { NSEG = 5, NP = 35 + 9 + 4100 + 1 + 2 + 3 };
static const KOptSegment SEGS[NSEG] = {
	{.offset = 0, .length = 35, .flags = KSEG_DECAY},
	{.offset = 35, .length = 9},
	{.offset = 44, .length = 4100, .flags = KSEG_DECAY},
	{.offset = 4144, .length = 1, .flags = KSEG_CLAMP, .clamp_lo = 0, .clamp_hi = 4.6051702f},
	{.offset = 4147, .length = 3, .flags = KSEG_FROZEN | KSEG_DECAY},
};
static const KOptHyper H0 = {.lr = 0.02, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .weight_decay = 0.1};
static const double CLIP = 1.0;

typedef struct {
	float p[NP], m[NP], v[NP], norm_clip[2];
	uint16_t copy[NP];
} State;

static void grad_of(int step, float *g)
{
	KTensor t = kern_tensor_make(g, KDT_F32, 1, (int64_t[]){NP});
	kgc_fill(&t, 40 + (uint64_t)step, step == 2 ? 0.002 : 0.05); // steps 1 and 3 exceed the clip norm
	g[4144] = -800.0f;                                           // pushes the logit scale past its clamp
}

// Σg² over the non-frozen segments in the contract's order: chunks of KERN_OPT_CHUNK, in order
static double sumsq(const float *g)
{
	double ss = 0;
	for (int k = 0; k < NSEG; k++)
		for (int64_t o = 0; o < SEGS[k].length && !(SEGS[k].flags & KSEG_FROZEN); o += KERN_OPT_CHUNK) {
			double part = 0;
			for (int64_t i = o; i < SEGS[k].length && i < o + KERN_OPT_CHUNK; i++)
				part += (double)g[SEGS[k].offset + i] * g[SEGS[k].offset + i];
			ss += part;
		}
	return ss;
}

// three fused steps with nt threads; lamb: every segment carries KSEG_LAMB
static int fused(int nt, int lamb, State *out)
{
	KernCtx *c;
	KOptPlan *plan;
	KOptSegment segs[NSEG];
	memcpy(segs, SEGS, sizeof segs);
	for (int s = 0; s < NSEG; s++)
		segs[s].flags |= lamb ? KSEG_LAMB : 0;
	KTensor p, g, m, v, nc, cp;
	const int64_t sn[] = {NP}, s2[] = {2};
	if (kern_ctx_create_cpu(&c, nt) || kern_opt_plan_create(c, &plan, segs, NSEG, NP) ||
	    kern_alloc(c, &p, KDT_F32, 1, sn) || kern_alloc(c, &g, KDT_F32, 1, sn) ||
	    kern_alloc(c, &m, KDT_F32, 1, sn) || kern_alloc(c, &v, KDT_F32, 1, sn) ||
	    kern_alloc(c, &nc, KDT_F32, 1, s2) || kern_alloc(c, &cp, KDT_BF16, 1, sn))
		return -1;
	kgc_fill(&p, 3, 1);
	kgc_set(&p, 4144, 4.59);
	kgc_fill(&cp, 4, 1); // the copy must get every segment element; the gap keeps this
	int rc = 0;
	for (int s = 1; s <= 3; s++) {
		grad_of(s, g.data);
		KOptHyper h = H0;
		h.step = s;
		rc |= kern_grad_norm(c, plan, &nc, &g, CLIP) | kern_optimizer(c, plan, &h, &p, &cp, &g, &m, &v, &nc);
	}
	rc |= kern_sync(c);
	memcpy(out->p, p.data, sizeof out->p);
	memcpy(out->m, m.data, sizeof out->m);
	memcpy(out->v, v.data, sizeof out->v);
	memcpy(out->copy, cp.data, sizeof out->copy);
	memcpy(out->norm_clip, nc.data, sizeof out->norm_clip);
	kern_opt_plan_destroy(plan);
	kern_ctx_destroy(c);
	return rc ? -1 : 0;
}

// the pre-fused rule in plain f32 on the host, one tensor at a time on the clipped gradients:
// AdamW's arithmetic exactly as the fused op's, LAMB with the trust ratio where there is decay
static void tensor_adamw(float *p, const float *g, float *m, float *v, int64_t n, const KOptHyper *h)
{
	const float b1 = (float)h->beta1, b2 = (float)h->beta2, eps = (float)h->eps;
	const float decay = (float)(1 - h->lr * h->weight_decay);
	const float step = (float)(h->lr / (1 - pow(h->beta1, (double)h->step)));
	const float bc2s = (float)sqrt(1 - pow(h->beta2, (double)h->step));
	for (int64_t i = 0; i < n; i++) {
		m[i] = b1 * m[i] + (1 - b1) * g[i];
		v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
		p[i] *= decay;
		p[i] -= step * m[i] / (sqrtf(v[i]) / bc2s + eps);
	}
}

static void tensor_lamb(float *p, const float *g, float *m, float *v, int64_t n, const KOptHyper *h)
{
	const float b1 = (float)h->beta1, b2 = (float)h->beta2, eps = (float)h->eps, wd = (float)h->weight_decay;
	const float bc1 = (float)(1 - pow(h->beta1, (double)h->step)),
		    bc2 = (float)(1 - pow(h->beta2, (double)h->step));
	double sp = 0, sr = 0;
	for (int64_t i = 0; i < n; i++) {
		m[i] = b1 * m[i] + (1 - b1) * g[i];
		v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
		float r = (m[i] / bc1) / (sqrtf(v[i] / bc2) + eps) + wd * p[i];
		sp += (double)p[i] * p[i];
		sr += (double)r * r;
	}
	const float step = (float)(h->lr * (wd != 0 && sp > 0 && sr > 0 ? sqrt(sp) / sqrt(sr) : 1.0));
	for (int64_t i = 0; i < n; i++)
		p[i] -= step * ((m[i] / bc1) / (sqrtf(v[i] / bc2) + eps) + wd * p[i]);
}

static int per_tensor(int lamb, State *out)
{
	static float g[NP];
	memset(out, 0, sizeof *out);
	KTensor t = kern_tensor_make(out->p, KDT_F32, 1, (int64_t[]){NP});
	kgc_fill(&t, 3, 1);
	out->p[4144] = 4.59f;
	for (int s = 1; s <= 3; s++) {
		grad_of(s, g);
		double ss = sumsq(g);
		float fc = sqrt(ss) > CLIP ? (float)(CLIP / (sqrt(ss) + 1e-6)) : 1.0f;
		for (int i = 0; i < NP; i++)
			g[i] *= fc;
		for (int k = 0; k < NSEG - 1; k++) {
			const KOptSegment *sg = &SEGS[k];
			KOptHyper h = H0;
			h.step = s;
			h.weight_decay = sg->flags & KSEG_DECAY ? H0.weight_decay : 0;
			int64_t o = sg->offset;
			(lamb ? tensor_lamb : tensor_adamw)(out->p + o, g + o, out->m + o, out->v + o, sg->length, &h);
		}
		out->p[4144] = fminf(fmaxf(out->p[4144], SEGS[3].clamp_lo), SEGS[3].clamp_hi);
	}
	return 0;
}

// torch.optim.AdamW / upstream LAMB in double, trust ratio only on decayed segments
static void reference(int lamb, double *p)
{
	double m[NP] = {0}, v[NP] = {0};
	float p0[NP], g[NP];
	KTensor t = kern_tensor_make(p0, KDT_F32, 1, (int64_t[]){NP});
	kgc_fill(&t, 3, 1);
	p0[4144] = 4.59f;
	for (int i = 0; i < NP; i++)
		p[i] = p0[i];
	for (int s = 1; s <= 3; s++) {
		grad_of(s, g);
		double ss = sumsq(g), bc1 = 1 - pow(H0.beta1, s), bc2 = 1 - pow(H0.beta2, s);
		double fc = sqrt(ss) > CLIP ? CLIP / (sqrt(ss) + 1e-6) : 1.0;
		for (int k = 0; k < NSEG - 1; k++) {
			const KOptSegment *sg = &SEGS[k];
			double wd = sg->flags & KSEG_DECAY ? H0.weight_decay : 0, r[4100], pn = 0, rn = 0;
			for (int64_t i = sg->offset, j = 0; j < sg->length; i++, j++) {
				double gi = g[i] * fc;
				m[i] = H0.beta1 * m[i] + (1 - H0.beta1) * gi;
				v[i] = H0.beta2 * v[i] + (1 - H0.beta2) * gi * gi;
				double u = (m[i] / bc1) / (sqrt(v[i] / bc2) + H0.eps);
				if (!lamb)
					p[i] = p[i] * (1 - H0.lr * wd) -
					       H0.lr * (m[i] / bc1) / (sqrt(v[i]) / sqrt(bc2) + H0.eps);
				r[j] = u + wd * p[i];
				pn += p[i] * p[i];
				rn += r[j] * r[j];
			}
			double trust = lamb && wd > 0 && pn > 0 && rn > 0 ? sqrt(pn) / sqrt(rn) : 1.0;
			for (int64_t i = sg->offset, j = 0; lamb && j < sg->length; i++, j++)
				p[i] -= H0.lr * trust * r[j];
			if (sg->flags & KSEG_CLAMP)
				p[sg->offset] = fmin(fmax(p[sg->offset], sg->clamp_lo), sg->clamp_hi);
		}
	}
}

static double maxdiff(const float *a, const float *b, int64_t from, int64_t to)
{
	double e = 0;
	for (int64_t i = from; i < to; i++)
		e = fmax(e, fabs((double)a[i] - b[i]));
	return e;
}

static int run(int lamb)
{
	static State f1, f3, pt;
	static double ref[NP];
	if (fused(1, lamb, &f1) || fused(3, lamb, &f3) || per_tensor(lamb, &pt))
		return 1;
	reference(lamb, ref);
	const char *k = lamb ? "lamb " : "adamw";
	int bad = memcmp(&f1, &f3, sizeof f1) != 0;
	printf("%-4s %s: 1 and 3 threads give %s bits\n", bad ? "FAIL" : "ok", k, bad ? "different" : "the same");
	double et = 0;
	for (int i = 0; i < NP - 5; i++)
		et = fmax(et, fabs(f1.p[i] - ref[i]));
	int ok = et < 3e-6;
	printf("%-4s %s: 3 clipped steps vs torch/upstream in double: max |p - ref| %.2g\n", ok ? "ok" : "FAIL", k, et);
	bad |= !ok;
	// per-tensor: AdamW bit for bit; LAMB to rounding on every segment (trust ratio 1 without decay)
	double dec = fmax(maxdiff(f1.p, pt.p, 0, 35), maxdiff(f1.p, pt.p, 44, 4144));
	double mv = fmax(maxdiff(f1.m, pt.m, 0, 4145), maxdiff(f1.v, pt.v, 0, 4145)),
	       nodec = maxdiff(f1.p, pt.p, 35, 44);
	if (!lamb) // the clamped logit scale has no decay either
		nodec = fmax(nodec, maxdiff(f1.p, pt.p, 4144, 4145));
	ok = lamb ? dec <= 2e-7 && mv == 0 && nodec <= 2e-7 : dec == 0 && mv == 0 && nodec == 0;
	printf("%-4s %s vs the per-tensor rule: decayed %.2g, moments %.2g, undecayed %.2g (%s)\n", ok ? "ok" : "FAIL",
	       k, dec, mv, nodec, lamb ? "trust ratio 1 there in both" : "bit for bit");
	bad |= !ok;
	// segment rules, the gap and the copy
	float p0[NP];
	KTensor t = kern_tensor_make(p0, KDT_F32, 1, (int64_t[]){NP});
	kgc_fill(&t, 3, 1);
	uint16_t c0[NP];
	KTensor tc = kern_tensor_make(c0, KDT_BF16, 1, (int64_t[]){NP});
	kgc_fill(&tc, 4, 1);
	int copy_bad = 0;
	for (int i = 0; i < NP; i++) {
		int gap = i == 4145 || i == 4146;
		copy_bad += f1.copy[i] != (gap ? c0[i] : kern_bf16_from_f32(f1.p[i]));
	}
	ok = maxdiff(f1.p, p0, 4145, NP) == 0 && f1.m[4148] == 0 && f1.p[4144] == SEGS[3].clamp_hi && !copy_bad;
	printf("%-4s %s: frozen and gap untouched, logit scale clamped at %.7g, bf16 copy %s\n", ok ? "ok" : "FAIL", k,
	       f1.p[4144], copy_bad ? "wrong" : "= RNE(master)");
	return bad | !ok;
}

// KSEG_EXTERNAL (the global τ in a FastCLIP run): its gradient is in the norm, its value and moments
// are left to another op, even when a clamp is set
static int external(void)
{
	KernCtx *c;
	KOptPlan *plan;
	const KOptSegment segs[2] = {
		{.offset = 0, .length = 10, .flags = KSEG_DECAY},
		{.offset = 10, .length = 1, .flags = KSEG_EXTERNAL | KSEG_CLAMP, .clamp_lo = 0, .clamp_hi = 0.5f}};
	KTensor p, g, m, v, nc;
	const int64_t sn[] = {11}, s2[] = {2};
	if (kern_ctx_create_cpu(&c, 1) || kern_opt_plan_create(c, &plan, segs, 2, 11) ||
	    kern_alloc(c, &p, KDT_F32, 1, sn) || kern_alloc(c, &g, KDT_F32, 1, sn) ||
	    kern_alloc(c, &m, KDT_F32, 1, sn) || kern_alloc(c, &v, KDT_F32, 1, sn) ||
	    kern_alloc(c, &nc, KDT_F32, 1, s2))
		return 1;
	double ss = 0;
	for (int i = 0; i < 11; i++) {
		kgc_set(&p, i, 1.0 + i);
		kgc_set(&g, i, 0.1 * (i + 1));
		ss += (double)(float)(0.1 * (i + 1)) * (float)(0.1 * (i + 1));
	}
	KOptHyper h = H0;
	h.step = 1;
	int rc = kern_grad_norm(c, plan, &nc, &g, 0) | kern_optimizer(c, plan, &h, &p, NULL, &g, &m, &v, &nc) |
		 kern_sync(c);
	int ok = rc == 0 && fabs(kgc_get(&nc, 0) - sqrt(ss)) < 1e-6 * sqrt(ss) && kgc_get(&p, 10) == 11.0 &&
		 kgc_get(&m, 10) == 0 && kgc_get(&v, 10) == 0 && kgc_get(&p, 0) != 1.0;
	printf("%-4s external segment: in the norm (%.6g), value %.6g and moments untouched\n", ok ? "ok" : "FAIL",
	       kgc_get(&nc, 0), kgc_get(&p, 10));
	kern_opt_plan_destroy(plan);
	kern_ctx_destroy(c);
	return !ok;
}

int main(void)
{
	int bad = run(0) | run(1) | external();
	printf("%s\n", bad ? "FAIL fused optimizer" : "PASS fused AdamW/LAMB over the flat buffer");
	return bad;
}
