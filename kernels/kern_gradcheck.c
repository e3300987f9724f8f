// Finite-difference and comparison helpers for the kernel and model tests (CPU backend only:
// they read tensor memory directly, which model code never does).
#include "kern_gradcheck.h" // defines: kgc_*

#include <math.h>
#include <stdio.h>

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

double kgc_get(const KTensor *t, int64_t i)
{
	switch (t->dtype) {
	case KDT_F32: return ((const float *)t->data)[i];
	case KDT_F64: return ((const double *)t->data)[i];
	case KDT_BF16: return kern_f32_from_bf16(((const uint16_t *)t->data)[i]);
	case KDT_I32: return ((const int32_t *)t->data)[i];
	default: return 0;
	}
}

void kgc_set(KTensor *t, int64_t i, double v)
{
	switch (t->dtype) {
	case KDT_F32: ((float *)t->data)[i] = (float)v; break;
	case KDT_F64: ((double *)t->data)[i] = v; break;
	case KDT_BF16: ((uint16_t *)t->data)[i] = kern_bf16_from_f32((float)v); break;
	case KDT_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
	default: break;
	}
}

void kgc_fill(KTensor *t, uint64_t seed, double scale)
{
	int64_t n = kern_numel(t);
	for (int64_t i = 0; i < n; i++) {
		double u = (double)(mix(seed * 0x100000001b3ull + (uint64_t)i) >> 11) / 9007199254740992.0;
		kgc_set(t, i, (2 * u - 1) * scale);
	}
}

double kgc_dot(const KTensor *a, const KTensor *b)
{
	int64_t n = kern_numel(a);
	double s = 0;
	for (int64_t i = 0; i < n; i++)
		s += kgc_get(a, i) * kgc_get(b, i);
	return s;
}

int kgc_check(const char *name, KTensor *x, const KTensor *grad, double (*f)(void *), void *arg, double h, double atol,
	      double rtol)
{
	int64_t n = kern_numel(x), worst = -1;
	double worst_ratio = 0, wa = 0, wn = 0;
	for (int64_t i = 0; i < n; i++) {
		double x0 = kgc_get(x, i);
		kgc_set(x, i, x0 + h);
		double fp = f(arg);
		kgc_set(x, i, x0 - h);
		double fm = f(arg);
		kgc_set(x, i, x0);
		double num = (fp - fm) / (2 * h), an = kgc_get(grad, i);
		double ratio = fabs(an - num) / (atol + rtol * fabs(num));
		if (!(ratio <= worst_ratio) || worst < 0) {
			worst_ratio = ratio;
			worst = i;
			wa = an;
			wn = num;
		}
	}
	int ok = worst_ratio <= 1.0;
	printf("%-4s %-28s %lld elems, worst [%lld] analytic %.10g numeric %.10g (%.3g of tolerance)\n",
	       ok ? "ok" : "FAIL", name, (long long)n, (long long)worst, wa, wn, worst_ratio);
	return ok ? 0 : -1;
}

double kgc_maxdiff(const KTensor *a, const KTensor *b)
{
	int64_t n = kern_numel(a);
	double md = 0, mb = 1e-30;
	for (int64_t i = 0; i < n; i++) {
		double d = fabs(kgc_get(a, i) - kgc_get(b, i));
		if (!(d <= md))
			md = d;
		if (fabs(kgc_get(b, i)) > mb)
			mb = fabs(kgc_get(b, i));
	}
	return md / mb;
}

int kgc_alloc_like(KernCtx *ctx, KTensor *out, const KTensor *like, KDtype dt)
{
	return kern_alloc(ctx, out, dt, like->ndim, like->shape);
}
