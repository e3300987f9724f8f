// Checks the residual add and the L2 normalize: forward values, backward against central finite
// differences in f64 (the add's backward is the identity into both branches), f32 vs f64.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_add, kern_l2norm_*

#include <math.h>
#include <stdio.h>

typedef struct {
	KernCtx *c;
	KTensor x, y, out, r, norm;
	int op; // 0 add, 1 l2norm
} El;

static double loss(void *a)
{
	El *s = a;
	int rc = s->op == 0 ? kern_add(s->c, &s->out, &s->x, &s->y) : kern_l2norm_fwd(s->c, &s->out, &s->norm, &s->x);
	return rc ? NAN : kgc_dot(&s->out, &s->r);
}

static int setup(KernCtx *c, El *s, KDtype dt)
{
	const int64_t sh[] = {5, 7}, sn[] = {5};
	s->c = c;
	int rc = kern_alloc(c, &s->x, dt, 2, sh) | kern_alloc(c, &s->y, dt, 2, sh) | kern_alloc(c, &s->out, dt, 2, sh) |
		 kern_alloc(c, &s->r, dt, 2, sh) | kern_alloc(c, &s->norm, dt, 1, sn);
	kgc_fill(&s->x, 21, 3);
	kgc_fill(&s->y, 22, 1);
	kgc_fill(&s->r, 23, 1);
	return rc;
}

// op's backward with dout = r into dx (and dy for add): the add's is a copy of r into both
static int backward(El *s, KTensor *dx, KTensor *dy)
{
	loss(s);
	if (s->op == 0)
		return kern_copy(s->c, dx, &s->r) || kern_copy(s->c, dy, &s->r);
	return kern_l2norm_bwd(s->c, KG_SET(dx), &s->r, &s->out, &s->norm);
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	El s, f;
	if (setup(c, &s, KDT_F64) || setup(c, &f, KDT_F32))
		return 1;
	int bad = 0;
	KTensor dx, dy, fdx, fdy;
	kgc_alloc_like(c, &dx, &s.x, KDT_F64);
	kgc_alloc_like(c, &dy, &s.x, KDT_F64);
	kgc_alloc_like(c, &fdx, &s.x, KDT_F32);
	kgc_alloc_like(c, &fdy, &s.x, KDT_F32);
	const char *names[2] = {"add", "l2norm"};
	for (int op = 0; op < 2; op++) {
		s.op = f.op = op;
		char nm[64];
		bad |= backward(&s, &dx, &dy) != 0;
		snprintf(nm, sizeof nm, "%s d/dx", names[op]);
		bad |= kgc_check(nm, &s.x, &dx, loss, &s, 1e-5, 1e-9, 1e-6);
		if (op == 0) {
			snprintf(nm, sizeof nm, "%s d/dy", names[op]);
			bad |= kgc_check(nm, &s.y, &dy, loss, &s, 1e-5, 1e-9, 1e-6);
		}
		bad |= backward(&f, &fdx, &fdy) != 0;
		loss(&s);
		double e0 = kgc_maxdiff(&f.out, &s.out), e1 = kgc_maxdiff(&fdx, &dx);
		if (!(e0 < 1e-5 && e1 < 1e-5)) {
			printf("FAIL %s f32 vs f64: out %g dx %g\n", names[op], e0, e1);
			bad = 1;
		}
	}
	// rows of l2norm have unit length
	s.op = 1;
	loss(&s);
	double n2 = 0;
	for (int k = 0; k < 7; k++)
		n2 += pow(kgc_get(&s.out, 14 + k), 2);
	if (fabs(n2 - 1) > 1e-12) {
		printf("FAIL l2norm row length^2 %.16g\n", n2);
		bad = 1;
	}
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL element-wise ops" : "PASS add, l2norm");
	return bad ? 1 : 0;
}
