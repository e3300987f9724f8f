// Twin-test support for the CUDA backend (kcu_twin.h): both backends side by side, inputs from one
// seeded generator, poisoned outputs, relative L2 comparisons printed per tensor.
#include "kcu_twin.h"  // defines: KtEnv, KtPair, kt_*
#include "stream.h"    // defines: rng_splitmix64
#include "test_seed.h" // defines: test_seed

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// present only in the shim's archive: a C entry to reschedule its fibers
void kemu_config_c(int shuffle, uint64_t seed) __attribute__((weak));

static void die(const char *what, int rc)
{
	fprintf(stderr, "%s failed: %d (%s)\n", what, rc, strerror(rc < 0 ? -rc : rc));
	exit(1);
}

uint64_t kt_rand(KtEnv *e)
{
	return rng_splitmix64(&e->rng);
}

double kt_uniform(KtEnv *e, double lo, double hi)
{
	return lo + (hi - lo) * (double)(kt_rand(e) >> 11) / 9007199254740992.0;
}

void kt_reschedule(KtEnv *e, uint64_t seed)
{
	if (kemu_config_c)
		kemu_config_c(1, seed);
}

void kt_setup(KtEnv *e, const char *name)
{
	memset(e, 0, sizeof *e);
	e->name = name;
	e->seed = test_seed(name);
	e->rng = e->seed;
	e->shim = kemu_config_c != NULL;
	printf("%s: seed %llu (KT_SEED=%llu reproduces this run)\n", name, (unsigned long long)e->seed,
	       (unsigned long long)e->seed);
	kt_reschedule(e, e->seed); // the shim runs a block's threads in a seeded shuffled order
	// the own attention kernel: cuDNN's backward is not promised to repeat to the bit
	KCtxOptions o = {.backend = KERN_BACKEND_CUDA, .device = 0, .attention = KERN_ATTN_OWN};
	int rc = kern_ctx_create(&e->dev, &o);
	if (rc == -ENODEV) {
		printf("no CUDA device: skipped\n");
		exit(77);
	}
	if (rc)
		die("kern_ctx_create(cuda)", rc);
	if ((rc = kern_ctx_create_cpu(&e->cpu, 2)))
		die("kern_ctx_create_cpu", rc);
	printf("CUDA backend on %s\n", e->shim ? "the CPU execution shim" : "a device");
	kt_reserve(e, kern_linear_ws_bytes(e->dev));
}

void kt_reserve(KtEnv *e, size_t bytes)
{
	int rc = kern_ctx_reserve_workspace(e->dev, bytes);
	if (!rc)
		rc = kern_ctx_reserve_workspace(e->cpu, bytes);
	if (rc)
		die("kern_ctx_reserve_workspace", rc);
}

int kt_finish(KtEnv *e)
{
	kern_ctx_destroy(e->dev);
	kern_ctx_destroy(e->cpu);
	printf("%s: %s (%d failed checks)\n", e->name, e->failures ? "FAIL" : "PASS", e->failures);
	return e->failures ? 1 : 0;
}

void kt_check(KtEnv *e, int ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%-4s ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	e->failures += !ok;
}

void kt_alloc(KtEnv *e, KtPair *p, const char *name, KDtype dt, int ndim, const int64_t *shape)
{
	p->name = name;
	int rc = kern_alloc(e->cpu, &p->c, dt, ndim, shape);
	if (!rc)
		rc = kern_alloc(e->dev, &p->d, dt, ndim, shape);
	if (rc)
		die(name, rc);
}

void kt_free(KtEnv *e, KtPair *p)
{
	kern_free(e->cpu, &p->c);
	kern_free(e->dev, &p->d);
}

void kt_free_all(KtEnv *e, KtPair **ps, int n)
{
	for (int i = 0; i < n; i++)
		kt_free(e, ps[i]);
}

void kt_both(KtEnv *e, int rc_cpu, int rc_dev, const char *file, int line)
{
	if (rc_cpu || rc_dev)
		kt_check(e, 0, "%s:%d: cpu %d, cuda %d (%s)", file, line, rc_cpu, rc_dev, kern_error_message(e->dev));
}

void kt_set(KtEnv *e, KtPair *p, const void *host)
{
	size_t n = kern_nbytes(&p->c);
	int rc = kern_upload(e->cpu, &p->c, host, n);
	if (!rc)
		rc = kern_upload(e->dev, &p->d, host, n);
	if (rc)
		die(p->name, rc);
}

static void store(void *buf, KDtype dt, int64_t i, double v)
{
	switch (dt) {
	case KDT_F32: ((float *)buf)[i] = (float)v; break;
	case KDT_BF16: ((uint16_t *)buf)[i] = kern_bf16_from_f32((float)v); break;
	case KDT_F64: ((double *)buf)[i] = v; break;
	default: break;
	}
}

static double load(const void *buf, KDtype dt, int64_t i)
{
	switch (dt) {
	case KDT_F32: return ((const float *)buf)[i];
	case KDT_BF16: return kern_f32_from_bf16(((const uint16_t *)buf)[i]);
	case KDT_F64: return ((const double *)buf)[i];
	case KDT_I32: return ((const int32_t *)buf)[i];
	case KDT_I64: return (double)((const int64_t *)buf)[i];
	case KDT_U8: return ((const uint8_t *)buf)[i];
	default: return NAN;
	}
}

void kt_fill(KtEnv *e, KtPair *p, double lo, double hi)
{
	int64_t n = kern_numel(&p->c);
	void *buf = malloc(kern_nbytes(&p->c) + 1);
	for (int64_t i = 0; i < n; i++)
		store(buf, p->c.dtype, i, kt_uniform(e, lo, hi));
	kt_set(e, p, buf);
	free(buf);
}

void kt_fill_unit_rows(KtEnv *e, KtPair *p)
{
	int64_t d = p->c.shape[p->c.ndim - 1], rows = kern_numel(&p->c) / d;
	void *buf = malloc(kern_nbytes(&p->c) + 1);
	double *row = malloc(sizeof(double) * (size_t)d);
	for (int64_t r = 0; r < rows; r++) {
		double ss = 0;
		for (int64_t k = 0; k < d; k++) {
			row[k] = kt_uniform(e, -1, 1);
			ss += row[k] * row[k];
		}
		for (int64_t k = 0; k < d; k++)
			store(buf, p->c.dtype, r * d + k, row[k] / sqrt(ss));
	}
	kt_set(e, p, buf);
	free(row);
	free(buf);
}

void kt_poison(KtEnv *e, KtPair *p)
{
	size_t n = kern_nbytes(&p->c);
	void *buf = malloc(n + 1);
	memset(buf, 0xff, n);
	kt_set(e, p, buf);
	free(buf);
}

void *kt_bits(KtEnv *e, const KTensor *t)
{
	size_t n = kern_nbytes(t);
	void *buf = malloc(n + 1);
	int rc = kern_download(e->dev, buf, n, t);
	if (rc) {
		fprintf(stderr, "download: %s\n", kern_error_message(e->dev));
		die("kern_download", rc);
	}
	return buf;
}

double *kt_download_f64(KtEnv *e, KtPair *p, int which)
{
	KernCtx *c = which ? e->dev : e->cpu;
	KTensor *t = which ? &p->d : &p->c;
	size_t n = kern_nbytes(t);
	int64_t cnt = kern_numel(t);
	void *buf = malloc(n + 1);
	double *out = malloc(sizeof(double) * (size_t)(cnt + 1));
	int rc = kern_download(c, buf, n, t);
	if (rc) {
		fprintf(stderr, "%s: download from %s: %s\n", p->name, which ? "cuda" : "cpu", kern_error_message(c));
		die("kern_download", rc);
	}
	for (int64_t i = 0; i < cnt; i++)
		out[i] = load(buf, t->dtype, i);
	free(buf);
	return out;
}

double kt_compare(KtEnv *e, KtPair *p, double tol)
{
	if (tol <= 0)
		tol = p->d.dtype == KDT_BF16 || p->c.dtype == KDT_BF16 ? KT_TOL_BF16 : KT_TOL_F32;
	int64_t n = kern_numel(&p->c);
	double *a = kt_download_f64(e, p, 0), *b = kt_download_f64(e, p, 1), num = 0, den = 0;
	for (int64_t i = 0; i < n; i++) {
		num += (b[i] - a[i]) * (b[i] - a[i]);
		den += a[i] * a[i];
	}
	double err = den > 0 ? sqrt(num / den) : sqrt(num);
	int ok = err <= tol; // NaN (an element left poisoned, or computed as NaN) fails
	printf("%-4s %-34s %-5s rel L2 %.3e (tol %.0e)\n", ok ? "ok" : "FAIL", p->name, kern_dtype_name(p->d.dtype),
	       err, tol);
	e->failures += !ok;
	free(a);
	free(b);
	return err;
}

int kt_same_bits(KtEnv *e, KtPair *p)
{
	size_t n = kern_nbytes(&p->c);
	void *a = malloc(n + 1), *b = kt_bits(e, &p->d);
	int rc = kern_download(e->cpu, a, n, &p->c);
	int same = !rc && memcmp(a, b, n) == 0;
	kt_check(e, same, "%s: identical bytes on both backends (%zu bytes)", p->name, n);
	free(a);
	free(b);
	return same;
}

int kt_same_bytes(KernCtx *ctx, const KTensor *a, const KTensor *b)
{
	size_t n = kern_nbytes(a);
	char *x = malloc(n), *y = malloc(n);
	int same = n == kern_nbytes(b) && x && y && !kern_download(ctx, x, n, a) && !kern_download(ctx, y, n, b) &&
		   !memcmp(x, y, n);
	free(x), free(y);
	return same;
}

void kt_sync(KtEnv *e, const char *what)
{
	int rc = kern_sync(e->cpu);
	if (rc)
		kt_check(e, 0, "%s: cpu backend: %s", what, kern_error_message(e->cpu));
	rc = kern_sync(e->dev);
	if (rc)
		kt_check(e, 0, "%s: cuda backend: %s", what, kern_error_message(e->dev));
}
