// Checks linear (+bias) and the projection op: backward against central finite differences
// in f64, accumulation into existing gradients, and the f32 ops against the f64 ones.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_linear_*, kern_proj_*

#include <math.h>
#include <stdio.h>

typedef struct {
	KernCtx *c;
	KTensor in, w, b, p, out, pout, r, pr;
} Lin;

static double loss_lin(void *a)
{
	Lin *s = a;
	if (kern_linear_fwd(s->c, &s->out, &s->in, &s->w, &s->b))
		return NAN;
	return kgc_dot(&s->out, &s->r);
}

static double loss_proj(void *a)
{
	Lin *s = a;
	if (kern_proj_fwd(s->c, &s->pout, &s->in, &s->p))
		return NAN;
	return kgc_dot(&s->pout, &s->pr);
}

static int setup(KernCtx *c, Lin *s, KDtype dt)
{
	const int64_t sin[] = {2, 3, 5}, sw[] = {4, 5}, sb[] = {4}, so[] = {2, 3, 4}, sp[] = {5, 7}, spo[] = {2, 3, 7};
	s->c = c;
	int rc = kern_alloc(c, &s->in, dt, 3, sin) | kern_alloc(c, &s->w, dt, 2, sw) | kern_alloc(c, &s->b, dt, 1, sb) |
		 kern_alloc(c, &s->out, dt, 3, so) | kern_alloc(c, &s->r, dt, 3, so) | kern_alloc(c, &s->p, dt, 2, sp) |
		 kern_alloc(c, &s->pout, dt, 3, spo) | kern_alloc(c, &s->pr, dt, 3, spo);
	kgc_fill(&s->in, 1, 1);
	kgc_fill(&s->w, 2, 0.5);
	kgc_fill(&s->b, 3, 0.5);
	kgc_fill(&s->r, 4, 1);
	kgc_fill(&s->p, 5, 0.5);
	kgc_fill(&s->pr, 6, 1);
	return rc;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	Lin s, f;
	KTensor din, dw, db, dp, dpin, fdin, fdw, fdb;
	if (setup(c, &s, KDT_F64) || setup(c, &f, KDT_F32))
		return 1;
	kgc_alloc_like(c, &din, &s.in, KDT_F64);
	kgc_alloc_like(c, &dw, &s.w, KDT_F64);
	kgc_alloc_like(c, &db, &s.b, KDT_F64);
	kgc_alloc_like(c, &dp, &s.p, KDT_F64);
	kgc_alloc_like(c, &dpin, &s.in, KDT_F64);
	int bad = 0;
	bad |= kern_linear_bwd(c, &din, &dw, &db, &s.r, &s.in, &s.w) != 0;
	bad |= kgc_check("linear d/din", &s.in, &din, loss_lin, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("linear d/dw", &s.w, &dw, loss_lin, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("linear d/db", &s.b, &db, loss_lin, &s, 1e-5, 1e-9, 1e-6);
	bad |= kern_proj_bwd(c, &dpin, &dp, &s.pr, &s.in, &s.p) != 0;
	bad |= kgc_check("proj d/din", &s.in, &dpin, loss_proj, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("proj d/dp", &s.p, &dp, loss_proj, &s, 1e-5, 1e-9, 1e-6);

	// backward accumulates: a second call doubles the gradients
	double w0 = kgc_get(&dw, 3), b0 = kgc_get(&db, 1);
	kern_linear_bwd(c, NULL, &dw, &db, &s.r, &s.in, &s.w);
	if (fabs(kgc_get(&dw, 3) - 2 * w0) > 1e-12 || fabs(kgc_get(&db, 1) - 2 * b0) > 1e-12) {
		printf("FAIL linear_bwd does not accumulate\n");
		bad = 1;
	}
	kern_scale(c, &dw, 0.5);
	kern_scale(c, &db, 0.5);

	// the f32 instantiation against f64, forward and backward
	kgc_alloc_like(c, &fdin, &f.in, KDT_F32);
	kgc_alloc_like(c, &fdw, &f.w, KDT_F32);
	kgc_alloc_like(c, &fdb, &f.b, KDT_F32);
	loss_lin(&s);
	loss_lin(&f);
	kern_linear_bwd(c, &fdin, &fdw, &fdb, &f.r, &f.in, &f.w);
	double e[4] = {kgc_maxdiff(&f.out, &s.out), kgc_maxdiff(&fdin, &din), kgc_maxdiff(&fdw, &dw),
		       kgc_maxdiff(&fdb, &db)};
	for (int i = 0; i < 4; i++)
		if (!(e[i] < 1e-5)) {
			printf("FAIL f32 vs f64 [%d] rel diff %g\n", i, e[i]);
			bad = 1;
		}
	printf("f32 vs f64 rel diffs: out %.2g din %.2g dw %.2g db %.2g\n", e[0], e[1], e[2], e[3]);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL linear/projection gradients" : "PASS linear/projection gradients");
	return bad ? 1 : 0;
}
