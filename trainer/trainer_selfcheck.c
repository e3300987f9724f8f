// The device backend's self-check (trainer_selfcheck.h): each op class of the model on small shapes
// and one tiny model step, on the device and the CPU backend from the same inputs.
#include "trainer_selfcheck.h" // defines: SelfCheckOptions, SelfCheckResult, trainer_selfcheck

#include "rng_philox.h" // defines: rng_splitmix64

#include <errno.h>  // defines: ENOMEM, EIO
#include <math.h>   // defines: sqrt, NAN
#include <stdarg.h> // defines: va_list
#include <stdio.h>  // defines: snprintf, vsnprintf
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: memset, strcmp, strcspn, strerror

// one tensor on both backends
typedef struct {
	KTensor c, d;
} Pair;

typedef struct {
	KernCtx *cpu, *dev;
	const SelfCheckOptions *o;
	SelfCheckResult *r;
	uint64_t rng;
	int setup_rc; // a failed allocation or copy: the check cannot go on
} Sc;

static void say(Sc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(Sc *s, const char *fmt, ...)
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
static void verdict(Sc *s, const char *op, int ok, double err, double tol, const char *what)
{
	s->r->checks++;
	say(s, "%-4s %-40s %s", ok ? "ok" : "FAIL", op, what);
	if (ok || s->r->failures++)
		return;
	snprintf(s->r->op, sizeof s->r->op, "%s", op);
	s->r->err = err, s->r->tol = tol;
	snprintf(s->r->message, sizeof s->r->message, "%s on the %s backend: %s", op, kern_ctx_backend_name(s->dev),
		 what);
}

static void setup_failed(Sc *s, const char *what, int rc)
{
	if (s->setup_rc)
		return;
	s->setup_rc = rc < 0 ? rc : -EIO;
	snprintf(s->r->message, sizeof s->r->message, "self-check: %s failed: %s (%s)", what, strerror(-s->setup_rc),
		 kern_error_message(s->dev));
}

static void alloc(Sc *s, Pair *p, KDtype dt, int ndim, const int64_t *shape)
{
	memset(p, 0, sizeof *p);
	int rc = kern_alloc(s->cpu, &p->c, dt, ndim, shape);
	rc = rc ? rc : kern_alloc(s->dev, &p->d, dt, ndim, shape);
	if (rc)
		setup_failed(s, "an allocation", rc);
}

static void pfree(Sc *s, Pair *p)
{
	kern_free(s->cpu, &p->c), kern_free(s->dev, &p->d);
}

static void set(Sc *s, Pair *p, const void *host)
{
	size_t n = kern_nbytes(&p->c);
	int rc = kern_upload(s->cpu, &p->c, host, n);
	rc = rc ? rc : kern_upload(s->dev, &p->d, host, n);
	if (rc)
		setup_failed(s, "an upload", rc);
}

static void store(void *buf, KDtype dt, int64_t i, double v)
{
	if (dt == KDT_F32)
		((float *)buf)[i] = (float)v;
	else if (dt == KDT_BF16)
		((uint16_t *)buf)[i] = kern_bf16_from_f32((float)v);
}

static double load(const void *buf, KDtype dt, int64_t i)
{
	return dt == KDT_F32    ? ((const float *)buf)[i]
	       : dt == KDT_BF16 ? kern_f32_from_bf16(((const uint16_t *)buf)[i])
				: NAN;
}

// uniform values in [lo, hi) on both; unit: rows of the last dim normalized (features); poison: NaN bytes
static void fill(Sc *s, Pair *p, double lo, double hi, int unit)
{
	const int64_t n = kern_numel(&p->c), d = p->c.shape[p->c.ndim - 1];
	void *buf = malloc(kern_nbytes(&p->c) + 1);
	double *v = malloc(sizeof(double) * (size_t)(n + 1));
	if (!buf || !v) {
		free(buf), free(v);
		return setup_failed(s, "a host buffer", -ENOMEM);
	}
	for (int64_t i = 0; i < n; i++)
		v[i] = lo + (hi - lo) * (double)(rng_splitmix64(&s->rng) >> 11) / 9007199254740992.0;
	for (int64_t r = 0; unit && r < n / d; r++) {
		double ss = 0;
		for (int64_t k = 0; k < d; k++)
			ss += v[r * d + k] * v[r * d + k];
		for (int64_t k = 0; k < d; k++)
			v[r * d + k] /= sqrt(ss);
	}
	for (int64_t i = 0; i < n; i++)
		store(buf, p->c.dtype, i, v[i]);
	set(s, p, buf);
	free(buf), free(v);
}

static void poison(Sc *s, Pair *p)
{
	size_t n = kern_nbytes(&p->c);
	void *buf = malloc(n + 1);
	if (!buf)
		return setup_failed(s, "a host buffer", -ENOMEM);
	memset(buf, 0xff, n);
	set(s, p, buf);
	free(buf);
}

// t's values as doubles (caller frees), NULL on a failed download
static double *values(Sc *s, KernCtx *c, const KTensor *t)
{
	const int64_t n = kern_numel(t);
	void *buf = malloc(kern_nbytes(t) + 1);
	double *v = malloc(sizeof(double) * (size_t)(n + 1));
	int rc = buf && v ? kern_download(c, buf, kern_nbytes(t), t) : -ENOMEM;
	if (rc) {
		free(buf), free(v);
		setup_failed(s, "a download", rc);
		return NULL;
	}
	for (int64_t i = 0; i < n; i++)
		v[i] = load(buf, t->dtype, i);
	free(buf);
	return v;
}

// relative L2 of y (on yc) against x (on xc); NAN when a value is NaN or a download failed
static double rel(Sc *s, KernCtx *xc, const KTensor *x, KernCtx *yc, const KTensor *y)
{
	double *a = values(s, xc, x), *b = values(s, yc, y), num = 0, den = 0;
	for (int64_t i = 0; a && b && i < kern_numel(x); i++)
		num += (b[i] - a[i]) * (b[i] - a[i]), den += a[i] * a[i];
	double err = !a || !b ? NAN : den > 0 ? sqrt(num / den) : sqrt(num);
	free(a), free(b);
	return err;
}

// the planted bug (a test's): the device's output of check op moves by 0.25 of its scale
static void plant(Sc *s, const char *op, Pair *p)
{
	if (!s->o->plant || strcmp(s->o->plant, op))
		return;
	const int64_t n = kern_numel(&p->d);
	double *v = values(s, s->dev, &p->d);
	void *buf = malloc(kern_nbytes(&p->d) + 1);
	for (int64_t i = 0; v && buf && i < n; i++)
		store(buf, p->d.dtype, i, v[i] * 1.25 + 0.01);
	if (v && buf && kern_upload(s->dev, &p->d, buf, kern_nbytes(&p->d)))
		setup_failed(s, "the planted bug's upload", -EIO);
	free(v), free(buf);
}

// one output of check op: planted bug, then held to the tolerance of its storage
static void compare(Sc *s, const char *op, const char *tensor, Pair *p)
{
	if (s->setup_rc)
		return;
	plant(s, op, p);
	const double tol = p->c.dtype == KDT_BF16 ? SELFCHECK_TOL_BF16 : SELFCHECK_TOL_F32;
	const double err = rel(s, s->cpu, &p->c, s->dev, &p->d);
	char name[96], what[160];
	snprintf(name, sizeof name, "%s: %s", op, tensor);
	snprintf(what, sizeof what, "%s relative L2 error %.3e, tolerance %.0e", kern_dtype_name(p->d.dtype), err, tol);
	verdict(s, name, err <= tol, err, tol, what); // NaN (an element not written) fails
}

// the two calls of one op; 0 when both ran
static int both(Sc *s, const char *op, int rc_cpu, int rc_dev)
{
	if (!rc_cpu && !rc_dev)
		return 0;
	char what[320];
	snprintf(what, sizeof what, "the op returned cpu %d, %s %d (%s)", rc_cpu, kern_ctx_backend_name(s->dev), rc_dev,
		 kern_error_message(s->dev));
	verdict(s, op, 0, NAN, 0, what);
	kern_error_clear(s->dev);
	return -1;
}

static void reserve(Sc *s, size_t wc, size_t wd)
{
	int rc = kern_ctx_reserve_workspace(s->cpu, wc > wd ? wc : wd);
	rc = rc ? rc : kern_ctx_reserve_workspace(s->dev, wc > wd ? wc : wd);
	if (rc)
		setup_failed(s, "a workspace", rc);
}

#define SH(...)                                                                                                        \
	(const int64_t[])                                                                                              \
	{                                                                                                              \
		__VA_ARGS__                                                                                            \
	}
#define NSH(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), SH(__VA_ARGS__)

// the CPU's bytes of t onto the device's copy, so that a backward compares alone
static void cpu_to_dev(Sc *s, Pair *p)
{
	size_t n = kern_nbytes(&p->c);
	void *h = malloc(n + 1);
	int rc = h ? kern_download(s->cpu, h, n, &p->c) : -ENOMEM;
	rc = rc ? rc : kern_upload(s->dev, &p->d, h, n);
	free(h);
	if (rc)
		setup_failed(s, "a copy to the device", rc);
}

static void free_all(Sc *s, Pair **ps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pfree(s, ps[i]);
}

// cuBLASLt's call classes as the model makes them: W transposed with bias and the MLP's activation
// (an epilogue, or BIAS then an own kernel), W as is with the residual add, and the backward of a
// layer whose input is that activation's output (the activation-gradient epilogue, both bias sums)
static void check_linear(Sc *s, KAct act)
{
	enum { N = 37, IC = 64, OC = 96 };
	Pair x, w, w2, b, out, pre, res, out2, dout, din, dw, db, dinb;
	alloc(s, &x, KDT_BF16, NSH(N, IC)), alloc(s, &w, KDT_BF16, NSH(OC, IC)), alloc(s, &w2, KDT_BF16, NSH(IC, OC));
	alloc(s, &b, KDT_BF16, NSH(OC)), alloc(s, &out, KDT_BF16, NSH(N, OC)), alloc(s, &pre, KDT_BF16, NSH(N, OC));
	alloc(s, &res, KDT_BF16, NSH(N, OC)), alloc(s, &out2, KDT_BF16, NSH(N, OC));
	alloc(s, &dout, KDT_BF16, NSH(N, IC)), alloc(s, &din, KDT_BF16, NSH(N, OC)),
		alloc(s, &dw, KDT_BF16, NSH(IC, OC));
	alloc(s, &db, KDT_BF16, NSH(IC)), alloc(s, &dinb, KDT_BF16, NSH(OC));
	fill(s, &x, -1.5, 1.5, 0), fill(s, &w, -0.5, 0.5, 0), fill(s, &w2, -0.5, 0.5, 0), fill(s, &b, -0.5, 0.5, 0);
	fill(s, &res, -1, 1, 0), fill(s, &dout, -1, 1, 0), poison(s, &out), poison(s, &pre), poison(s, &out2);
	const char *op = "linear (bias, activation)";
	KLinear fc = {.out = &out.c, .pre = &pre.c, .in = &x.c, .w = &w.c, .trans_w = 1, .bias = &b.c, .act = act};
	KLinear fd = {.out = &out.d, .pre = &pre.d, .in = &x.d, .w = &w.d, .trans_w = 1, .bias = &b.d, .act = act};
	if (!s->setup_rc && !both(s, op, kern_linear(s->cpu, &fc), kern_linear(s->dev, &fd)))
		compare(s, op, "out", &out), compare(s, op, "pre", &pre);
	op = "linear (residual)";
	KLinear rc = {.out = &out2.c, .in = &x.c, .w = &w2.c, .trans_w = 0, .residual = &res.c};
	KLinear rd = {.out = &out2.d, .in = &x.d, .w = &w2.d, .trans_w = 0, .residual = &res.d};
	if (!s->setup_rc && !both(s, op, kern_linear(s->cpu, &rc), kern_linear(s->dev, &rd)))
		compare(s, op, "out", &out2);
	// the next layer W2 (IC, OC) transposed takes out = act(pre) (N, OC) to (N, IC); its backward from
	// the CPU's forward on both sides
	op = "linear backward";
	cpu_to_dev(s, &out), cpu_to_dev(s, &pre);
	poison(s, &din), poison(s, &dw), poison(s, &db), poison(s, &dinb);
	KLinearBwd bc = {.din = KG_SET(&din.c),
			 .dw = KG_SET(&dw.c),
			 .dbias = KG_SET(&db.c),
			 .din_bias = KG_SET(&dinb.c),
			 .dout = &dout.c,
			 .in = &out.c,
			 .w = &w2.c,
			 .trans_w = 1,
			 .in_pre = &pre.c,
			 .in_act = act};
	KLinearBwd bd = {.din = KG_SET(&din.d),
			 .dw = KG_SET(&dw.d),
			 .dbias = KG_SET(&db.d),
			 .din_bias = KG_SET(&dinb.d),
			 .dout = &dout.d,
			 .in = &out.d,
			 .w = &w2.d,
			 .trans_w = 1,
			 .in_pre = &pre.d,
			 .in_act = act};
	if (!s->setup_rc && !both(s, op, kern_linear_bwd(s->cpu, &bc), kern_linear_bwd(s->dev, &bd))) {
		compare(s, op, "din", &din), compare(s, op, "dw", &dw);
		compare(s, op, "dbias", &db), compare(s, op, "din_bias", &dinb);
	}
	free_all(s, (Pair *[]){&x, &w, &w2, &b, &out, &pre, &res, &out2, &dout, &din, &dw, &db, &dinb}, 13);
}

static void check_layernorm(Sc *s)
{
	enum { N = 29, C = 128 };
	Pair x, w, b, out, mean, rstd, dout, din, dw, db;
	alloc(s, &x, KDT_BF16, NSH(N, C)), alloc(s, &w, KDT_BF16, NSH(C)), alloc(s, &b, KDT_BF16, NSH(C));
	alloc(s, &out, KDT_BF16, NSH(N, C)), alloc(s, &mean, KDT_F32, NSH(N)), alloc(s, &rstd, KDT_F32, NSH(N));
	alloc(s, &dout, KDT_BF16, NSH(N, C)), alloc(s, &din, KDT_BF16, NSH(N, C)), alloc(s, &dw, KDT_BF16, NSH(C));
	alloc(s, &db, KDT_BF16, NSH(C));
	fill(s, &x, -2, 3, 0), fill(s, &w, 0.5, 1.5, 0), fill(s, &b, -0.5, 0.5, 0), fill(s, &dout, -1, 1, 0);
	poison(s, &out), poison(s, &mean), poison(s, &rstd), poison(s, &din), poison(s, &dw), poison(s, &db);
	const char *op = "layernorm";
	if (!s->setup_rc && !both(s, op, kern_layernorm_fwd(s->cpu, &out.c, &mean.c, &rstd.c, &x.c, &w.c, &b.c),
				  kern_layernorm_fwd(s->dev, &out.d, &mean.d, &rstd.d, &x.d, &w.d, &b.d)))
		compare(s, op, "out", &out), compare(s, op, "mean", &mean), compare(s, op, "rstd", &rstd);
	op = "layernorm backward";
	cpu_to_dev(s, &mean), cpu_to_dev(s, &rstd);
	if (!s->setup_rc && !both(s, op,
				  kern_layernorm_bwd(s->cpu, KG_SET(&din.c), KG_SET(&dw.c), KG_SET(&db.c), &dout.c,
						     &x.c, &w.c, &mean.c, &rstd.c),
				  kern_layernorm_bwd(s->dev, KG_SET(&din.d), KG_SET(&dw.d), KG_SET(&db.d), &dout.d,
						     &x.d, &w.d, &mean.d, &rstd.d)))
		compare(s, op, "din", &din), compare(s, op, "dw", &dw), compare(s, op, "db", &db);
	free_all(s, (Pair *[]){&x, &w, &b, &out, &mean, &rstd, &dout, &din, &dw, &db}, 10);
}

// the attention implementation's short name ("own", "cudnn", "auto"; the CPU's whole description)
static void attn_short(const KernCtx *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s", kern_ctx_attention(c));
	buf[strcspn(buf, ":")] = 0;
}

// the attention the context runs (its own kernel, or cuDNN's): the video tower's (full) and the
// text tower's (causal), head dim 64; the backward from the CPU's forward on both sides
static void check_attention(Sc *s, int causal)
{
	enum { B = 2, T = 33, H = 2, HD = 64, D = H * HD };
	char op[64], impl[32];
	attn_short(s->dev, impl, sizeof impl);
	snprintf(op, sizeof op, "attention (%s%s)", impl, causal ? ", causal" : "");
	Pair qkv, out, lse, dout, dqkv;
	alloc(s, &qkv, KDT_BF16, NSH(B, T, 3 * D)), alloc(s, &out, KDT_BF16, NSH(B, T, D));
	alloc(s, &lse, KDT_F32, NSH(B, H, T)), alloc(s, &dout, KDT_BF16, NSH(B, T, D));
	alloc(s, &dqkv, KDT_BF16, NSH(B, T, 3 * D));
	reserve(s, kern_attention_ws_bytes(s->cpu, KDT_BF16, B, T, H, HD),
		kern_attention_ws_bytes(s->dev, KDT_BF16, B, T, H, HD));
	fill(s, &qkv, -1, 1, 0), fill(s, &dout, -1, 1, 0), poison(s, &out), poison(s, &lse), poison(s, &dqkv);
	if (!s->setup_rc && !both(s, op, kern_attention_fwd(s->cpu, &out.c, &lse.c, &qkv.c, H, causal),
				  kern_attention_fwd(s->dev, &out.d, &lse.d, &qkv.d, H, causal)))
		compare(s, op, "out", &out), compare(s, op, "lse", &lse);
	char bop[80];
	snprintf(bop, sizeof bop, "%s backward", op);
	cpu_to_dev(s, &out), cpu_to_dev(s, &lse);
	if (!s->setup_rc &&
	    !both(s, bop, kern_attention_bwd(s->cpu, KG_SET(&dqkv.c), &dout.c, &qkv.c, &out.c, &lse.c, H, causal),
		  kern_attention_bwd(s->dev, KG_SET(&dqkv.d), &dout.d, &qkv.d, &out.d, &lse.d, H, causal)))
		compare(s, bop, "dqkv", &dqkv);
	free_all(s, (Pair *[]){&qkv, &out, &lse, &dout, &dqkv}, 5);
}

// the features' normalization and the local contrastive loss with its gradients
static void check_loss(Sc *s)
{
	enum { B = 8, DIM = 64 };
	Pair x, y, nrm, e2, ls, loss, de1, de2, dls;
	alloc(s, &x, KDT_BF16, NSH(B, DIM)), alloc(s, &y, KDT_BF16, NSH(B, DIM)), alloc(s, &nrm, KDT_F32, NSH(B));
	alloc(s, &e2, KDT_BF16, NSH(B, DIM)), alloc(s, &ls, KDT_F32, NSH(1)), alloc(s, &loss, KDT_F32, NSH(1));
	alloc(s, &de1, KDT_BF16, NSH(B, DIM)), alloc(s, &de2, KDT_BF16, NSH(B, DIM)), alloc(s, &dls, KDT_F32, NSH(1));
	fill(s, &x, -1, 1, 0), fill(s, &e2, -1, 1, 1), fill(s, &ls, 1.5, 4.0, 0), poison(s, &y), poison(s, &nrm);
	poison(s, &loss), poison(s, &de1), poison(s, &de2), poison(s, &dls);
	reserve(s, kern_loss_ws_bytes(s->cpu, B, B, DIM), kern_loss_ws_bytes(s->dev, B, B, DIM));
	const char *op = "l2norm";
	if (!s->setup_rc &&
	    !both(s, op, kern_l2norm_fwd(s->cpu, &y.c, &nrm.c, &x.c), kern_l2norm_fwd(s->dev, &y.d, &nrm.d, &x.d)))
		compare(s, op, "out", &y), compare(s, op, "norm", &nrm);
	op = "infonce";
	cpu_to_dev(s, &y);
	KContrastBatch bc = {.e1 = &y.c, .e2 = &e2.c, .E1 = &y.c, .E2 = &e2.c, .log_s = &ls.c};
	KContrastBatch bd = {.e1 = &y.d, .e2 = &e2.d, .E1 = &y.d, .E2 = &e2.d, .log_s = &ls.d};
	if (!s->setup_rc &&
	    !both(s, op, kern_infonce(s->cpu, &bc, &loss.c, KG_SET(&de1.c), KG_SET(&de2.c), KG_SET(&dls.c)),
		  kern_infonce(s->dev, &bd, &loss.d, KG_SET(&de1.d), KG_SET(&de2.d), KG_SET(&dls.d)))) {
		compare(s, op, "loss", &loss), compare(s, op, "dE1", &de1), compare(s, op, "dE2", &de2);
		compare(s, op, "dlog_s", &dls);
	}
	free_all(s, (Pair *[]){&x, &y, &nrm, &e2, &ls, &loss, &de1, &de2, &dls}, 9);
}

// ---- one training step of the model at a tiny size ----

typedef struct {
	ClipModel *m;
	KTensor video, text;
	double loss;
} Run;

// the configured activation at a tiny size, with head dim 64 (the CUDA attention's)
static void tiny_model(ModelConfig *cfg, int act)
{
	model_config_preset(cfg, "tiny");
	cfg->vocab = 500;
	cfg->vis_width = cfg->txt_width = 128;
	cfg->vis_heads = cfg->txt_heads = 2;
	cfg->act = act;
}

enum { STEP_B = 3 };

static int run_step(KernCtx *c, const ModelConfig *cfg, KDtype dt, uint64_t wseed, uint64_t bseed, Run *r)
{
	const int64_t sv[] = {STEP_B, cfg->frames, cfg->image_size, cfg->image_size, 3}, st[] = {STEP_B, cfg->ctx_len};
	memset(r, 0, sizeof *r);
	int rc = clip_model_create(&r->m, c, cfg, STEP_B, dt);
	rc = rc ? rc : model_init_params(c, cfg, &r->m->params, wseed);
	rc = rc ? rc : clip_model_sync_weights(r->m);
	rc = rc ? rc : kern_alloc(c, &r->video, KDT_F32, 5, sv);
	rc = rc ? rc : kern_alloc(c, &r->text, KDT_I32, 2, st);
	rc = rc ? rc : model_synth_batch(c, cfg, bseed, 1, 64, &r->video, &r->text);
	return rc ? rc : clip_model_infonce_step(r->m, &r->video, &r->text, &r->loss);
}

static void run_done(KernCtx *c, Run *r)
{
	kern_free(c, &r->video), kern_free(c, &r->text);
	if (r->m)
		clip_model_destroy(r->m);
}

// the device's bf16 tensor as close to the CPU's f32 one as the CPU's own bf16 one is: at most
// ratio times its error, plus the bf16 tolerance over √n (test_kcuda_model's rule, floor included)
static void as_close(Sc *s, const char *name, double ratio, double floor, const KTensor *ref, const KTensor *cb,
		     const KTensor *dv)
{
	const double ec = rel(s, s->cpu, ref, s->cpu, cb), ed = rel(s, s->cpu, ref, s->dev, dv);
	const double held = kern_numel(ref) < 16 && ec < floor ? floor : ec;
	const double tol = ratio * held + SELFCHECK_TOL_BF16 / sqrt((double)kern_numel(ref));
	char op[128], what[200];
	snprintf(op, sizeof op, "model step: %s", name);
	snprintf(what, sizeof what,
		 "relative L2 error to the f32 step %.3e, tolerance %.3e (%.0fx the CPU bf16 step's %.3e)", ed, tol,
		 ratio, ec);
	verdict(s, op, ed <= tol, ed, tol, what);
}

// bytes of a and b (both on the device) that differ; -1 when a download failed
static long differing_bytes(Sc *s, const KTensor *a, const KTensor *b)
{
	size_t n = kern_nbytes(a);
	unsigned char *x = malloc(n + 1), *y = malloc(n + 1);
	int rc = x && y ? kern_download(s->dev, x, n, a) : -ENOMEM;
	rc = rc ? rc : kern_download(s->dev, y, n, b);
	long diff = 0;
	for (size_t i = 0; !rc && i < n; i++)
		diff += x[i] != y[i];
	free(x), free(y);
	return rc ? -1 : diff;
}

static void check_model_step(Sc *s, int act)
{
	ModelConfig cfg;
	tiny_model(&cfg, act);
	const uint64_t wseed = rng_splitmix64(&s->rng), bseed = rng_splitmix64(&s->rng);
	Run ref, cb, d1, d2;
	int rc = run_step(s->cpu, &cfg, KDT_F32, wseed, bseed, &ref);
	rc = rc ? rc : run_step(s->cpu, &cfg, KDT_BF16, wseed, bseed, &cb);
	if (rc) {
		setup_failed(s, "the CPU backend's model step", rc);
		run_done(s->cpu, &ref), run_done(s->cpu, &cb);
		return;
	}
	int r1 = run_step(s->dev, &cfg, KDT_BF16, wseed, bseed, &d1);
	int r2 = r1 ? 0 : run_step(s->dev, &cfg, KDT_BF16, wseed, bseed, &d2);
	if (!both(s, "model step", 0, r1 ? r1 : r2)) {
		if (s->o->plant && !strcmp(s->o->plant, "model step")) {
			Pair g = {d1.m->grads, d1.m->grads};
			plant(s, "model step", &g);
		}
		as_close(s, "video features", SELFCHECK_RATIO_ONE, 0, &ref.m->vfeat, &cb.m->vfeat, &d1.m->vfeat);
		as_close(s, "text features", SELFCHECK_RATIO_ONE, 0, &ref.m->tfeat, &cb.m->tfeat, &d1.m->tfeat);
		as_close(s, "loss", SELFCHECK_RATIO_ONE, 0, &ref.m->loss, &cb.m->loss, &d1.m->loss);
		as_close(s, "every gradient", SELFCHECK_RATIO_ALL, 0, &ref.m->grads, &cb.m->grads, &d1.m->grads);
		const double ec_all = rel(s, s->cpu, &ref.m->grads, s->cpu, &cb.m->grads);
		for (int i = 0; i < ref.m->n_specs && !s->setup_rc; i++) {
			const ParamSpec *p = &ref.m->specs[i];
			KTensor gr, gc, gd;
			kern_view(&gr, &ref.m->grads, p->offset, 1, &p->numel);
			kern_view(&gc, &cb.m->grads, p->offset, 1, &p->numel);
			kern_view(&gd, &d1.m->grads, p->offset, 1, &p->numel);
			char nm[128];
			snprintf(nm, sizeof nm, "grad %s", p->name);
			as_close(s, nm, SELFCHECK_RATIO_ONE, ec_all, &gr, &gc, &gd);
		}
		// the backend promises a step that repeats to the bit (its own attention; cuDNN's backward
		// does not promise it, so that run checks closeness only)
		char impl[32];
		attn_short(s->dev, impl, sizeof impl);
		if (strcmp(impl, "cudnn")) {
			long dg = differing_bytes(s, &d1.m->grads, &d2.m->grads);
			long dl = differing_bytes(s, &d1.m->loss, &d2.m->loss);
			char what[128];
			snprintf(what, sizeof what, "two identical steps differ in %ld gradient and %ld loss bytes", dg,
				 dl);
			verdict(s, "model step: determinism", dg == 0 && dl == 0, (double)(dg + dl), 0, what);
		}
	}
	run_done(s->cpu, &ref), run_done(s->cpu, &cb), run_done(s->dev, &d1);
	if (!r1)
		run_done(s->dev, &d2);
}

int trainer_selfcheck(KernCtx *dev, KernCtx *cpu, const SelfCheckOptions *o, SelfCheckResult *r)
{
	memset(r, 0, sizeof *r);
	Sc s = {.cpu = cpu, .dev = dev, .o = o, .r = r, .rng = o->seed};
	const KAct act = o->act == MODEL_ACT_QUICKGELU ? KACT_QUICKGELU : KACT_GELU;
	const size_t lw = kern_linear_ws_bytes(dev);
	reserve(&s, lw, lw);
	if (!s.setup_rc)
		check_linear(&s, act);
	if (!s.setup_rc)
		check_layernorm(&s);
	for (int causal = 0; causal < 2 && !s.setup_rc; causal++)
		check_attention(&s, causal);
	if (!s.setup_rc)
		check_loss(&s);
	if (!s.setup_rc && (kern_sync(dev) || kern_sync(cpu)))
		setup_failed(&s, "a sync after the op checks", -EIO);
	if (!s.setup_rc && !o->ops_only)
		check_model_step(&s, o->act);
	if (!s.setup_rc && kern_sync(dev))
		setup_failed(&s, "a sync after the model step", -EIO);
	if (s.setup_rc)
		return s.setup_rc;
	return r->failures ? 1 : 0;
}
