// Checks the soft-target cross-entropy (kern_softce) on the CPU backend: dlogits against central
// finite differences of the loss in f64, the loss and per-row losses against a direct double
// evaluation of timm's mixup_target + SoftTargetCrossEntropy (eps 0, lam 1, a = b, tied logits),
// unlabelled rows (id −1) left out, KG_ADD, f32 and bf16 against f64, and -ERANGE on a bad id.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_softce, KSoftCe

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { N = 7, K = 5 };

typedef struct {
	KernCtx *c;
	KTensor z, a, b, loss, rows, dz;
	KSoftCe p;
} Ce;

static double loss_of(void *arg)
{
	Ce *s = arg;
	return kern_softce(s->c, &s->loss, NULL, KG_NONE, &s->z, &s->a, &s->b, &s->p) ? NAN : kgc_get(&s->loss, 0);
}

// timm, written out: t = lam·onehot(a, on, off) + (1−lam)·onehot(b, on, off) with off = eps/K,
// on = 1 − eps + off; loss = mean over labelled rows of Σ −t·log_softmax(z)
static double direct(const Ce *s, const int32_t *a, const int32_t *b, double *rows)
{
	double sum = 0;
	int m = 0;
	for (int n = 0; n < N; n++) {
		rows[n] = 0;
		if (a[n] < 0 || b[n] < 0)
			continue;
		double z[K], mx = -INFINITY, se = 0, l = 0;
		for (int j = 0; j < K; j++)
			z[j] = kgc_get(&s->z, n * K + j), mx = z[j] > mx ? z[j] : mx;
		for (int j = 0; j < K; j++)
			se += exp(z[j] - mx);
		const double off = s->p.eps / K, on = 1 - s->p.eps + off;
		for (int j = 0; j < K; j++) {
			double t = s->p.lam * (j == a[n] ? on : off) + (1 - s->p.lam) * (j == b[n] ? on : off);
			l -= t * (z[j] - mx - log(se));
		}
		rows[n] = l;
		sum += l;
		m++;
	}
	return m ? sum / m : 0;
}

static int setup(KernCtx *c, Ce *s, KDtype dt)
{
	memset(s, 0, sizeof *s);
	s->c = c;
	int rc = kern_alloc(c, &s->z, dt, 2, (const int64_t[]){N, K}) |
		 kern_alloc(c, &s->dz, dt, 2, (const int64_t[]){N, K}) |
		 kern_alloc(c, &s->a, KDT_I32, 1, (const int64_t[]){N}) |
		 kern_alloc(c, &s->b, KDT_I32, 1, (const int64_t[]){N}) |
		 kern_alloc(c, &s->loss, dt == KDT_F64 ? KDT_F64 : KDT_F32, 1, (const int64_t[]){1}) |
		 kern_alloc(c, &s->rows, dt == KDT_F64 ? KDT_F64 : KDT_F32, 1, (const int64_t[]){N});
	kgc_fill(&s->z, 31, 3);
	return rc;
}

static void set_ids(Ce *s, const int32_t *a, const int32_t *b)
{
	memcpy(s->a.data, a, sizeof(int32_t) * N);
	memcpy(s->b.data, b, sizeof(int32_t) * N);
}

// the loss, rows and gradient of one case against the direct evaluation and finite differences
static int check_case(Ce *s, const char *name, const int32_t *a, const int32_t *b, double lam, double eps)
{
	set_ids(s, a, b);
	s->p = (KSoftCe){.lam = lam, .eps = eps, .scale = 1};
	double want_rows[N];
	const double want = direct(s, a, b, want_rows);
	int rc = kern_softce(s->c, &s->loss, &s->rows, KG_SET(&s->dz), &s->z, &s->a, &s->b, &s->p);
	double err = fabs(kgc_get(&s->loss, 0) - want);
	for (int n = 0; n < N; n++)
		err = fmax(err, fabs(kgc_get(&s->rows, n) - want_rows[n]));
	int bad = rc != 0 || kern_sync(s->c) != 0 || !(err < 1e-12);
	printf("%-28s loss %.12f direct %.12f, max |diff| %.3g (rows too) %s\n", name, kgc_get(&s->loss, 0), want, err,
	       bad ? "FAIL" : "ok");
	char nm[64];
	snprintf(nm, sizeof nm, "%s dlogits", name);
	return bad | (kgc_check(nm, &s->z, &s->dz, loss_of, s, 1e-5, 1e-9, 1e-6) != 0);
}

// unlabelled rows: zero gradient, zero row loss, left out of the mean; KG_ADD adds onto old values
static int check_ignored(Ce *s)
{
	const int32_t a[N] = {1, -1, 3, 0, -1, 2, 4}, b[N] = {4, 2, -1, 0, -1, 2, 1};
	set_ids(s, a, b);
	s->p = (KSoftCe){.lam = 0.7, .eps = 0.1, .scale = 2.5};
	double want_rows[N];
	const double want = direct(s, a, b, want_rows);
	kgc_fill(&s->dz, 77, 1);
	double old[N * K];
	for (int i = 0; i < N * K; i++)
		old[i] = kgc_get(&s->dz, i);
	KTensor g1;
	kgc_alloc_like(s->c, &g1, &s->dz, KDT_F64);
	int bad = kern_softce(s->c, &s->loss, &s->rows, KG_SET(&g1), &s->z, &s->a, &s->b, &s->p) ||
		  kern_softce(s->c, &s->loss, &s->rows, KG_ADD(&s->dz), &s->z, &s->a, &s->b, &s->p) || kern_sync(s->c);
	bad |= !(fabs(kgc_get(&s->loss, 0) - want) < 1e-12);
	double rowsum = 0;
	for (int n = 0; n < N; n++) {
		int lab = a[n] >= 0 && b[n] >= 0;
		double gsum = 0;
		for (int j = 0; j < K; j++) {
			double g = kgc_get(&g1, n * K + j);
			gsum += g;
			bad |= !lab && g != 0;
			bad |= fabs(kgc_get(&s->dz, n * K + j) - (old[n * K + j] + g)) > 1e-12;
		}
		bad |= fabs(gsum) > 1e-12; // softmax and target both sum to one
		bad |= !lab && kgc_get(&s->rows, n) != 0;
		rowsum += kgc_get(&s->rows, n);
	}
	bad |= fabs(rowsum / 4 - want) > 1e-12; // 4 labelled rows
	// every row unlabelled: loss 0, gradient 0
	const int32_t none[N] = {-1, -1, -1, -1, -1, -1, -1};
	set_ids(s, none, a);
	bad |= kern_softce(s->c, &s->loss, NULL, KG_SET(&g1), &s->z, &s->a, &s->b, &s->p) || kern_sync(s->c);
	bad |= kgc_get(&s->loss, 0) != 0;
	for (int i = 0; i < N * K; i++)
		bad |= kgc_get(&g1, i) != 0;
	kern_free(s->c, &g1);
	printf("unlabelled rows (-1): excluded, zero gradient, KG_ADD adds, scale 2.5 %s\n", bad ? "FAIL" : "ok");
	return bad;
}

// f32 and bf16 logits against f64 on the same (storage-rounded) values
static int check_storage(KernCtx *c, Ce *d, KDtype dt, double tol)
{
	Ce f;
	if (setup(c, &f, dt))
		return 1;
	const int32_t a[N] = {1, 0, 3, 2, -1, 4, 4}, b[N] = {4, 4, -1, 2, 1, 3, 1};
	set_ids(&f, a, b), set_ids(d, a, b);
	for (int i = 0; i < N * K; i++) // the f64 twin gets the stored values
		kgc_set(&d->z, i, kgc_get(&f.z, i));
	f.p = d->p = (KSoftCe){.lam = 0.35, .eps = 0.1, .scale = 1};
	int bad = kern_softce(c, &f.loss, &f.rows, KG_SET(&f.dz), &f.z, &f.a, &f.b, &f.p) ||
		  kern_softce(c, &d->loss, &d->rows, KG_SET(&d->dz), &d->z, &d->a, &d->b, &d->p) || kern_sync(c);
	double e0 = kgc_maxdiff(&f.loss, &d->loss), e1 = kgc_maxdiff(&f.rows, &d->rows),
	       e2 = kgc_maxdiff(&f.dz, &d->dz);
	bad |= !(e0 < tol && e1 < tol && e2 < tol);
	printf("%s vs f64: loss %.2g rows %.2g dlogits %.2g (tol %.0e) %s\n", kern_dtype_name(dt), e0, e1, e2, tol,
	       bad ? "FAIL" : "ok");
	kern_free(c, &f.z), kern_free(c, &f.dz), kern_free(c, &f.a), kern_free(c, &f.b), kern_free(c, &f.loss);
	kern_free(c, &f.rows);
	return bad;
}

static int check_errors(Ce *s)
{
	const int32_t a[N] = {1, 0, 3, 2, 1, 4, K}, b[N] = {0, 0, 0, -2, 0, 0, 0};
	set_ids(s, a, b);
	s->p = (KSoftCe){.lam = 1, .eps = 0, .scale = 1};
	int rc = kern_softce(s->c, &s->loss, NULL, KG_NONE, &s->z, &s->a, &s->b, &s->p), e = kern_sync(s->c);
	int bad = rc != 0 || e != -ERANGE || !strstr(kern_error_message(s->c), "softce");
	printf("id -2 / K: %s (%s) %s\n", strerror(-e), kern_error_message(s->c), bad ? "FAIL" : "ok");
	kern_error_clear(s->c);
	KSoftCe badp[] = {{.lam = 1.5, .scale = 1}, {.lam = 0.5, .eps = 1, .scale = 1}, {.lam = 0.5, .scale = NAN}};
	for (int i = 0; i < 3; i++)
		bad |= kern_softce(s->c, &s->loss, NULL, KG_NONE, &s->z, &s->a, &s->a, &badp[i]) != -EINVAL;
	bad |= kern_softce(s->c, &s->rows, NULL, KG_NONE, &s->z, &s->a, &s->a, &s->p) != -EINVAL; // loss (N)
	return bad;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	Ce s;
	if (setup(c, &s, KDT_F64))
		return 1;
	const int32_t a[N] = {0, 1, 2, 3, 4, 0, 2}, flip[N] = {2, 0, 4, 3, 2, 1, 0};
	int bad = 0;
	bad |= check_case(&s, "mixup lam 0.6 eps 0.1", a, flip, 0.6, 0.1);
	bad |= check_case(&s, "eps 0 (hard mixup)", a, flip, 0.3, 0);
	bad |= check_case(&s, "lam 1 (no mixing)", a, flip, 1, 0.1);
	bad |= check_case(&s, "lam 0 (the partner only)", a, flip, 0, 0.2);
	bad |= check_case(&s, "a = b", a, a, 0.45, 0.1);
	for (int n = 0; n < N; n++) // ties: equal logits in every row, and one row all equal
		kgc_set(&s.z, n * K + 1, kgc_get(&s.z, n * K + 3));
	for (int j = 0; j < K; j++)
		kgc_set(&s.z, 4 * K + j, 0.25);
	bad |= check_case(&s, "tied logits", a, flip, 0.8, 0.1);
	bad |= check_ignored(&s);
	bad |= check_storage(c, &s, KDT_F32, 1e-6);  // the f32 stores of a double computation
	bad |= check_storage(c, &s, KDT_BF16, 4e-3); // dlogits stored in bf16: 2^-9 relative
	bad |= check_errors(&s);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}
