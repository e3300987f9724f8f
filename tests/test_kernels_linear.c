// Checks the linear op and its epilogues through a two-layer chain h = act(x·W1ᵀ + b1),
// y = h·op(W2) + b2 + res: every gradient (incl. the GELU-backward and bias-gradient epilogues
// of layer 2's input gradient) against central finite differences in f64, for every activation
// and both weight layouts; and the f32 op against the f64 one.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_linear, kern_linear_bwd

#include <math.h>
#include <stdio.h>

enum { N = 6, IC = 5, HID = 7, OC = 4 };

typedef struct {
	KernCtx *c;
	KAct act;
	int trans2; // layer 2's weight layout
	KTensor x, w1, b1, pre, h, w2, b2, res, y, r;
} Chain;

static int forward(Chain *s)
{
	if (kern_linear(s->c, &(KLinear){.out = &s->h,
					 .pre = s->act ? &s->pre : NULL,
					 .in = &s->x,
					 .w = &s->w1,
					 .trans_w = 1,
					 .bias = &s->b1,
					 .act = s->act}))
		return -1;
	return kern_linear(s->c, &(KLinear){.out = &s->y,
					    .in = &s->h,
					    .w = &s->w2,
					    .trans_w = s->trans2,
					    .bias = &s->b2,
					    .residual = &s->res});
}

static double loss(void *a)
{
	Chain *s = a;
	return forward(s) ? NAN : kgc_dot(&s->y, &s->r);
}

static int setup(KernCtx *c, Chain *s, KDtype dt, int trans2)
{
	*s = (Chain){.c = c, .trans2 = trans2};
	const int64_t sx[] = {2, 3, IC}, sw1[] = {HID, IC}, sb1[] = {HID}, sh[] = {2, 3, HID}, sb2[] = {OC},
		      sy[] = {2, 3, OC}, sw2t[] = {OC, HID}, sw2n[] = {HID, OC};
	int rc = kern_alloc(c, &s->x, dt, 3, sx) | kern_alloc(c, &s->w1, dt, 2, sw1) |
		 kern_alloc(c, &s->b1, dt, 1, sb1) | kern_alloc(c, &s->pre, dt, 3, sh) |
		 kern_alloc(c, &s->h, dt, 3, sh) | kern_alloc(c, &s->w2, dt, 2, trans2 ? sw2t : sw2n) |
		 kern_alloc(c, &s->b2, dt, 1, sb2) | kern_alloc(c, &s->res, dt, 3, sy) |
		 kern_alloc(c, &s->y, dt, 3, sy) | kern_alloc(c, &s->r, dt, 3, sy);
	kgc_fill(&s->x, 1, 1.5);
	kgc_fill(&s->w1, 2, 0.8);
	kgc_fill(&s->b1, 3, 0.5);
	kgc_fill(&s->w2, 4, 0.7);
	kgc_fill(&s->b2, 5, 0.5);
	kgc_fill(&s->res, 6, 1);
	kgc_fill(&s->r, 7, 1);
	return rc;
}

// the chain's gradients, every one written (KG_SET) into g[0..5] = dx, dW1, db1, dW2, db2, dres
static int backward(Chain *s, KTensor *g)
{
	if (forward(s) || kern_copy(s->c, &g[5], &s->r)) // d res = dy
		return -1;
	KTensor dpre = g[6]; // scratch (N, HID): d h, or d pre with the epilogue
	int rc = kern_linear_bwd(s->c, &(KLinearBwd){.din = KG_SET(&dpre),
						     .dw = KG_SET(&g[3]),
						     .dbias = KG_SET(&g[4]),
						     .din_bias = s->act ? KG_SET(&g[2]) : KG_NONE,
						     .dout = &s->r,
						     .in = &s->h,
						     .w = &s->w2,
						     .trans_w = s->trans2,
						     .in_pre = s->act ? &s->pre : NULL,
						     .in_act = s->act});
	return rc ? rc
		  : kern_linear_bwd(s->c, &(KLinearBwd){.din = KG_SET(&g[0]),
							.dw = KG_SET(&g[1]),
							.dbias = s->act ? KG_NONE : KG_SET(&g[2]),
							.dout = &dpre,
							.in = &s->x,
							.w = &s->w1,
							.trans_w = 1});
}

static int alloc_grads(KernCtx *c, const Chain *s, KTensor *g, KDtype dt)
{
	const KTensor *like[7] = {&s->x, &s->w1, &s->b1, &s->w2, &s->b2, &s->res, &s->h};
	for (int i = 0; i < 7; i++)
		if (kgc_alloc_like(c, &g[i], like[i], dt))
			return -1;
	for (int i = 0; i < 7; i++) // garbage: every gradient must be written, never added to
		kgc_fill(&g[i], 100 + (uint64_t)i, 9);
	return 0;
}

static int run(KernCtx *c, KAct act, int trans2)
{
	static const char *an[] = {"none", "gelu", "gelu_tanh", "quickgelu"};
	Chain s, f;
	KTensor g[7], fg[7];
	if (setup(c, &s, KDT_F64, trans2) || setup(c, &f, KDT_F32, trans2) || alloc_grads(c, &s, g, KDT_F64) ||
	    alloc_grads(c, &f, fg, KDT_F32))
		return 1;
	s.act = f.act = act;
	int bad = backward(&s, g) != 0;
	const char *what[6] = {"dx", "dW1", "db1", "dW2", "db2", "dres"};
	KTensor *wrt[6] = {&s.x, &s.w1, &s.b1, &s.w2, &s.b2, &s.res};
	for (int i = 0; i < 6; i++) {
		char nm[64];
		snprintf(nm, sizeof nm, "%s W2%s %s", an[act], trans2 ? "ᵀ" : "", what[i]);
		bad |= kgc_check(nm, wrt[i], &g[i], loss, &s, 1e-5, 1e-9, 1e-6);
	}
	bad |= backward(&f, fg) != 0;
	loss(&s);
	double e = kgc_maxdiff(&f.y, &s.y);
	for (int i = 0; i < 6; i++)
		e = fmax(e, kgc_maxdiff(&fg[i], &g[i]));
	if (!(e < 1e-5)) {
		printf("FAIL %s f32 vs f64 rel diff %g\n", an[act], e);
		bad = 1;
	}
	return bad;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	int bad = 0;
	for (int act = KACT_NONE; act <= KACT_QUICKGELU; act++)
		for (int t = 0; t < 2; t++)
			bad |= run(c, (KAct)act, t);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL linear op and epilogues" : "PASS linear op, epilogues and gradients");
	return bad ? 1 : 0;
}
