// Checks the element-wise and per-row ops: GELU (exact erf form), residual add and L2
// normalize — forward values, backward against central finite differences in f64, f32 vs f64.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_gelu_*, kern_add_*, kern_l2norm_*

#include <math.h>
#include <stdio.h>

typedef struct {
	KernCtx *c;
	KTensor x, y, out, r, norm;
	int op; // 0 gelu, 1 add, 2 l2norm
} El;

static double loss(void *a)
{
	El *s = a;
	int rc = s->op == 0 ? kern_gelu_fwd(s->c, &s->out, &s->x)
	       : s->op == 1 ? kern_add_fwd(s->c, &s->out, &s->x, &s->y)
			    : kern_l2norm_fwd(s->c, &s->out, &s->norm, &s->x);
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

// runs op's backward with dout = r into fresh gradients (dy only for add)
static int backward(El *s, KTensor *dx, KTensor *dy)
{
	kern_zero(s->c, dx);
	kern_zero(s->c, dy);
	loss(s);
	if (s->op == 0)
		return kern_gelu_bwd(s->c, dx, &s->r, &s->x);
	if (s->op == 1)
		return kern_add_bwd(s->c, dx, dy, &s->r);
	return kern_l2norm_bwd(s->c, dx, &s->r, &s->out, &s->norm);
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
	const char *names[3] = {"gelu", "add", "l2norm"};
	for (int op = 0; op < 3; op++) {
		s.op = f.op = op;
		char nm[64];
		bad |= backward(&s, &dx, &dy) != 0;
		snprintf(nm, sizeof nm, "%s d/dx", names[op]);
		bad |= kgc_check(nm, &s.x, &dx, loss, &s, 1e-5, 1e-9, 1e-6);
		if (op == 1) {
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
	// spot values: gelu(1) = 0.8413447460685429, rows of l2norm have unit length
	s.op = 0;
	kgc_set(&s.x, 0, 1.0);
	loss(&s);
	if (fabs(kgc_get(&s.out, 0) - 0.8413447460685429) > 1e-12) {
		printf("FAIL gelu(1) = %.16g\n", kgc_get(&s.out, 0));
		bad = 1;
	}
	s.op = 2;
	loss(&s);
	double n2 = 0;
	for (int k = 0; k < 7; k++)
		n2 += pow(kgc_get(&s.out, 14 + k), 2);
	if (fabs(n2 - 1) > 1e-12) {
		printf("FAIL l2norm row length^2 %.16g\n", n2);
		bad = 1;
	}
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL element-wise ops" : "PASS gelu, add, l2norm");
	return bad ? 1 : 0;
}
