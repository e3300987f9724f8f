// Checks layernorm: forward against a direct formula, backward (input, weight, bias) against
// central finite differences in f64, and the f32 op against the f64 one.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_layernorm_*

#include <math.h>
#include <stdio.h>

typedef struct {
	KernCtx *c;
	KTensor in, w, b, out, mean, rstd, r;
} Ln;

static double loss(void *a)
{
	Ln *s = a;
	if (kern_layernorm_fwd(s->c, &s->out, &s->mean, &s->rstd, &s->in, &s->w, &s->b))
		return NAN;
	return kgc_dot(&s->out, &s->r);
}

static int setup(KernCtx *c, Ln *s, KDtype dt)
{
	const int64_t sx[] = {3, 4, 9}, sc[] = {9}, sn[] = {12};
	s->c = c;
	int rc = kern_alloc(c, &s->in, dt, 3, sx) | kern_alloc(c, &s->out, dt, 3, sx) |
		 kern_alloc(c, &s->r, dt, 3, sx) | kern_alloc(c, &s->w, dt, 1, sc) | kern_alloc(c, &s->b, dt, 1, sc) |
		 kern_alloc(c, &s->mean, dt, 1, sn) | kern_alloc(c, &s->rstd, dt, 1, sn);
	kgc_fill(&s->in, 11, 2);
	kgc_fill(&s->w, 12, 1);
	kgc_fill(&s->b, 13, 1);
	kgc_fill(&s->r, 14, 1);
	return rc;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	Ln s, f;
	if (setup(c, &s, KDT_F64) || setup(c, &f, KDT_F32))
		return 1;
	int bad = 0;
	loss(&s);
	// row 5 by hand
	double m = 0, v = 0;
	for (int k = 0; k < 9; k++)
		m += kgc_get(&s.in, 5 * 9 + k) / 9;
	for (int k = 0; k < 9; k++)
		v += pow(kgc_get(&s.in, 5 * 9 + k) - m, 2) / 9;
	double y = (kgc_get(&s.in, 5 * 9 + 4) - m) / sqrt(v + 1e-5) * kgc_get(&s.w, 4) + kgc_get(&s.b, 4);
	if (fabs(y - kgc_get(&s.out, 5 * 9 + 4)) > 1e-12) {
		printf("FAIL forward %.12g vs %.12g\n", kgc_get(&s.out, 5 * 9 + 4), y);
		bad = 1;
	}
	KTensor din, dw, db, fdin, fdw, fdb;
	kgc_alloc_like(c, &din, &s.in, KDT_F64);
	kgc_alloc_like(c, &dw, &s.w, KDT_F64);
	kgc_alloc_like(c, &db, &s.b, KDT_F64);
	bad |= kern_layernorm_bwd(c, KG_SET(&din), KG_SET(&dw), KG_SET(&db), &s.r, &s.in, &s.w, &s.mean, &s.rstd) != 0;
	bad |= kgc_check("layernorm d/din", &s.in, &din, loss, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("layernorm d/dw", &s.w, &dw, loss, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("layernorm d/db", &s.b, &db, loss, &s, 1e-5, 1e-9, 1e-6);

	kgc_alloc_like(c, &fdin, &f.in, KDT_F32);
	kgc_alloc_like(c, &fdw, &f.w, KDT_F32);
	kgc_alloc_like(c, &fdb, &f.b, KDT_F32);
	loss(&s);
	loss(&f);
	kern_layernorm_bwd(c, KG_SET(&fdin), KG_SET(&fdw), KG_SET(&fdb), &f.r, &f.in, &f.w, &f.mean, &f.rstd);
	double e[4] = {kgc_maxdiff(&f.out, &s.out), kgc_maxdiff(&fdin, &din), kgc_maxdiff(&fdw, &dw),
		       kgc_maxdiff(&fdb, &db)};
	for (int i = 0; i < 4; i++)
		if (!(e[i] < 1e-5)) {
			printf("FAIL f32 vs f64 [%d] rel diff %g\n", i, e[i]);
			bad = 1;
		}
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL layernorm" : "PASS layernorm forward and gradients");
	return bad ? 1 : 0;
}
