// The device backend's self-check (trainer_selfcheck.h): the helpers every op check uses
// (trainer_selfcheck_sc.h) and the order the checks run in.
#include "trainer_selfcheck_sc.h" // defines: Sc, ScPair, sc_*

#include "stream.h" // defines: rng_splitmix64

#include <errno.h>  // defines: ENOMEM, EIO
#include <math.h>   // defines: sqrt, NAN
#include <stdarg.h> // defines: va_list
#include <stdio.h>  // defines: snprintf, vsnprintf
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: memset, memcmp, strcmp, strcspn, strerror

static void sc_say(Sc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sc_say(Sc *s, const char *fmt, ...)
{
	if (!s->o->line)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	s->o->line(s->o->arg, buf);
}

// counts a check; the first failure is kept with its op, error and tolerance
void sc_verdict(Sc *s, const char *op, int ok, double err, double tol, const char *what)
{
	s->r->checks++;
	sc_say(s, "%-4s %-40s %s", ok ? "ok" : "FAIL", op, what);
	if (ok || s->r->failures++)
		return;
	snprintf(s->r->op, sizeof s->r->op, "%s", op);
	s->r->err = err, s->r->tol = tol;
	snprintf(s->r->message, sizeof s->r->message, "%s on the %s backend: %s", op, kern_ctx_backend_name(s->dev),
		 what);
}

void sc_setup_failed(Sc *s, const char *what, int rc)
{
	if (s->setup_rc)
		return;
	s->setup_rc = rc < 0 ? rc : -EIO;
	snprintf(s->r->message, sizeof s->r->message, "self-check: %s failed: %s (%s)", what, strerror(-s->setup_rc),
		 kern_error_message(s->dev));
}

void sc_alloc(Sc *s, ScPair *p, KDtype dt, int ndim, const int64_t *shape)
{
	memset(p, 0, sizeof *p);
	int rc = kern_alloc(s->cpu, &p->c, dt, ndim, shape);
	rc = rc ? rc : kern_alloc(s->dev, &p->d, dt, ndim, shape);
	if (rc)
		sc_setup_failed(s, "an allocation", rc);
}

void sc_pfree(Sc *s, ScPair *p)
{
	kern_free(s->cpu, &p->c), kern_free(s->dev, &p->d);
}

void sc_set(Sc *s, ScPair *p, const void *host)
{
	size_t n = kern_nbytes(&p->c);
	int rc = kern_upload(s->cpu, &p->c, host, n);
	rc = rc ? rc : kern_upload(s->dev, &p->d, host, n);
	if (rc)
		sc_setup_failed(s, "an upload", rc);
}

static void sc_store(void *buf, KDtype dt, int64_t i, double v)
{
	if (dt == KDT_F32)
		((float *)buf)[i] = (float)v;
	else if (dt == KDT_BF16)
		((uint16_t *)buf)[i] = kern_bf16_from_f32((float)v);
}

static double sc_load(const void *buf, KDtype dt, int64_t i)
{
	return dt == KDT_F32    ? ((const float *)buf)[i]
	       : dt == KDT_BF16 ? kern_f32_from_bf16(((const uint16_t *)buf)[i])
				: NAN;
}

double sc_uniform(Sc *s, double lo, double hi)
{
	return lo + (hi - lo) * (double)(rng_splitmix64(&s->rng) >> 11) / 9007199254740992.0;
}
// uniform values in [lo, hi) on both; unit: rows of the last dim normalized (features); poison: NaN bytes
void sc_fill(Sc *s, ScPair *p, double lo, double hi, int unit)
{
	const int64_t n = kern_numel(&p->c), d = p->c.shape[p->c.ndim - 1];
	void *buf = malloc(kern_nbytes(&p->c) + 1);
	double *v = malloc(sizeof(double) * (size_t)(n + 1));
	if (!buf || !v) {
		free(buf), free(v);
		return sc_setup_failed(s, "a host buffer", -ENOMEM);
	}
	for (int64_t i = 0; i < n; i++)
		v[i] = sc_uniform(s, lo, hi);
	for (int64_t r = 0; unit && r < n / d; r++) {
		double ss = 0;
		for (int64_t k = 0; k < d; k++)
			ss += v[r * d + k] * v[r * d + k];
		for (int64_t k = 0; k < d; k++)
			v[r * d + k] /= sqrt(ss);
	}
	for (int64_t i = 0; i < n; i++)
		sc_store(buf, p->c.dtype, i, v[i]);
	sc_set(s, p, buf);
	free(buf), free(v);
}

void sc_poison(Sc *s, ScPair *p)
{
	size_t n = kern_nbytes(&p->c);
	void *buf = malloc(n + 1);
	if (!buf)
		return sc_setup_failed(s, "a host buffer", -ENOMEM);
	memset(buf, 0xff, n);
	sc_set(s, p, buf);
	free(buf);
}

// t's values as doubles (caller frees), NULL on a failed download
static double *sc_values(Sc *s, KernCtx *c, const KTensor *t)
{
	const int64_t n = kern_numel(t);
	void *buf = malloc(kern_nbytes(t) + 1);
	double *v = malloc(sizeof(double) * (size_t)(n + 1));
	int rc = buf && v ? kern_download(c, buf, kern_nbytes(t), t) : -ENOMEM;
	if (rc) {
		free(buf), free(v);
		sc_setup_failed(s, "a download", rc);
		return NULL;
	}
	for (int64_t i = 0; i < n; i++)
		v[i] = sc_load(buf, t->dtype, i);
	free(buf);
	return v;
}

// relative L2 of y (on yc) against x (on xc); NAN when a value is NaN or a download failed
double sc_rel(Sc *s, KernCtx *xc, const KTensor *x, KernCtx *yc, const KTensor *y)
{
	double *a = sc_values(s, xc, x), *b = sc_values(s, yc, y), num = 0, den = 0;
	for (int64_t i = 0; a && b && i < kern_numel(x); i++)
		num += (b[i] - a[i]) * (b[i] - a[i]), den += a[i] * a[i];
	double err = !a || !b ? NAN : den > 0 ? sqrt(num / den) : sqrt(num);
	free(a), free(b);
	return err;
}

// the planted bug (a test's): the device's output of check op moves by 0.25 of its scale
void sc_plant(Sc *s, const char *op, ScPair *p)
{
	if (!s->o->plant || strcmp(s->o->plant, op))
		return;
	const int64_t n = kern_numel(&p->d);
	double *v = sc_values(s, s->dev, &p->d);
	void *buf = malloc(kern_nbytes(&p->d) + 1);
	for (int64_t i = 0; v && buf && i < n; i++)
		sc_store(buf, p->d.dtype, i, v[i] * 1.25 + 0.01);
	if (v && buf && kern_upload(s->dev, &p->d, buf, kern_nbytes(&p->d)))
		sc_setup_failed(s, "the planted bug's upload", -EIO);
	free(v), free(buf);
}

// one output of check op: planted bug, then held to the tolerance of its storage
void sc_compare(Sc *s, const char *op, const char *tensor, ScPair *p)
{
	if (s->setup_rc)
		return;
	sc_plant(s, op, p);
	const double tol = p->c.dtype == KDT_BF16 ? SELFCHECK_TOL_BF16 : SELFCHECK_TOL_F32;
	const double err = sc_rel(s, s->cpu, &p->c, s->dev, &p->d);
	char name[96], what[160];
	snprintf(name, sizeof name, "%s: %s", op, tensor);
	snprintf(what, sizeof what, "%s relative L2 error %.3e, tolerance %.0e", kern_dtype_name(p->d.dtype), err, tol);
	sc_verdict(s, name, err <= tol, err, tol, what); // NaN (an element not written) fails
}

// the two calls of one op; 0 when both ran
int sc_both(Sc *s, const char *op, int rc_cpu, int rc_dev)
{
	if (!rc_cpu && !rc_dev)
		return 0;
	char what[320];
	snprintf(what, sizeof what, "the op returned cpu %d, %s %d (%s)", rc_cpu, kern_ctx_backend_name(s->dev), rc_dev,
		 kern_error_message(s->dev));
	sc_verdict(s, op, 0, NAN, 0, what);
	kern_error_clear(s->dev);
	return -1;
}

void sc_reserve(Sc *s, size_t wc, size_t wd)
{
	int rc = kern_ctx_reserve_workspace(s->cpu, wc > wd ? wc : wd);
	rc = rc ? rc : kern_ctx_reserve_workspace(s->dev, wc > wd ? wc : wd);
	if (rc)
		sc_setup_failed(s, "a workspace", rc);
}

// the CPU's bytes of t onto the device's copy, so that a backward compares alone
void sc_cpu_to_dev(Sc *s, ScPair *p)
{
	size_t n = kern_nbytes(&p->c);
	void *h = malloc(n + 1);
	int rc = h ? kern_download(s->cpu, h, n, &p->c) : -ENOMEM;
	rc = rc ? rc : kern_upload(s->dev, &p->d, h, n);
	free(h);
	if (rc)
		sc_setup_failed(s, "a copy to the device", rc);
}

void sc_free_all(Sc *s, ScPair **ps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sc_pfree(s, ps[i]);
}

void sc_same_bits(Sc *s, const char *op, const char *tensor, ScPair *p)
{
	if (s->setup_rc)
		return;
	sc_plant(s, op, p);
	const size_t n = kern_nbytes(&p->c);
	unsigned char *x = malloc(n + 1), *y = malloc(n + 1);
	int rc = x && y ? kern_download(s->cpu, x, n, &p->c) : -ENOMEM;
	rc = rc ? rc : kern_download(s->dev, y, n, &p->d);
	long diff = 0;
	for (size_t i = 0; !rc && i < n; i++)
		diff += x[i] != y[i];
	free(x), free(y);
	if (rc)
		return sc_setup_failed(s, "a download", rc);
	char name[96], what[160];
	snprintf(name, sizeof name, "%s: %s", op, tensor);
	snprintf(what, sizeof what, "%ld of %zu bytes differ from the CPU's, tolerance 0 (bit-exact)", diff, n);
	sc_verdict(s, name, diff == 0, (double)diff, 0, what);
}

void sc_attn_short(const KernCtx *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s", kern_ctx_attention(c));
	buf[strcspn(buf, ":")] = 0;
}

// whether the op checks of a group run: all, unless o->only names one of its ops (a test's)
static int want(const Sc *s, const char *ops)
{
	if (s->setup_rc)
		return 0;
	if (!s->o->only)
		return 1;
	for (const char *p = ops; *p;) {
		size_t n = strcspn(p, "|");
		if (!strncmp(s->o->only, p, n))
			return 1;
		p += n + (p[n] == '|');
	}
	return 0;
}

int trainer_selfcheck(KernCtx *dev, KernCtx *cpu, const SelfCheckOptions *o, SelfCheckResult *r)
{
	memset(r, 0, sizeof *r);
	Sc s = {.cpu = cpu, .dev = dev, .o = o, .r = r, .rng = o->seed};
	const KAct act = o->act == MODEL_ACT_QUICKGELU ? KACT_QUICKGELU : KACT_GELU;
	const size_t lw = kern_linear_ws_bytes(dev);
	sc_reserve(&s, lw, lw);
	if (want(&s, "linear"))
		sc_check_linear(&s, act);
	if (want(&s, "layernorm"))
		sc_check_layernorm(&s);
	for (int causal = 0; causal < 2 && want(&s, "attention"); causal++)
		sc_check_attention(&s, causal);
	if (want(&s, "augment"))
		sc_check_augment(&s);
	if (want(&s, "l2norm|infonce"))
		sc_check_loss(&s);
	for (int v = KFCCO_V0; v <= KFCCO_V3 && want(&s, "fcco"); v++)
		sc_check_fcco(&s, (KFccoVersion)v);
	if (want(&s, "clip metrics"))
		sc_check_metrics(&s);
	if (want(&s, "temperature step"))
		sc_check_temp(&s);
	if (want(&s, "gradient norm|optimizer"))
		sc_check_optimizer(&s);
	if (want(&s, "softce|cutmix|drop path|dropout|gradient norm join"))
		sc_check_classify(&s);
	if (!s.setup_rc && (kern_sync(dev) || kern_sync(cpu)))
		sc_setup_failed(&s, "a sync after the op checks", -EIO);
	if (!s.setup_rc && !o->ops_only)
		sc_check_model_step(&s, o->act);
	if (!s.setup_rc && kern_sync(dev))
		sc_setup_failed(&s, "a sync after the model step", -EIO);
	if (s.setup_rc)
		return s.setup_rc;
	return r->failures ? 1 : 0;
}
