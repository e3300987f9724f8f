// bf16 storage on the CPU backend: arguments in another dtype than the op's compute type are
// widened into the stream's arena before the body runs, outputs stored back once, rounded to
// nearest even. So the f32 body is the whole reference and bf16 is exactly "f32 math, RNE store".
#include "kern_cpu.h" // defines: KcStage, kst_*, kcpu_arena_*

#include <errno.h>

static KDtype compute_type(const KcStage *s)
{
	return s->f64 ? KDT_F64 : KDT_F32;
}

void kst_begin(KcStage *s, KernCtx *c, KDtype cdt)
{
	memset(s, 0, sizeof *s);
	s->c = c;
	s->f64 = cdt == KDT_F64;
}

// dst (compute type) = src (any float dtype), n elements
static void widen(KernCtx *c, void *dst, KDtype ddt, const KTensor *src)
{
	int64_t n = kern_numel(src);
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int64_t i = 0; i < n; i++)
		kcpu_st(dst, ddt, i, kcpu_ld(src->data, src->dtype, i));
}

const void *kst_in(KcStage *s, const KTensor *t)
{
	if (!t || s->err)
		return t ? t->data : NULL;
	KDtype ct = compute_type(s);
	if (t->dtype == ct || t->dtype == KDT_I32 || t->dtype == KDT_I64 || t->dtype == KDT_U8)
		return t->data;
	void *p = kcpu_arena_alloc(s->c, (size_t)kern_numel(t) * kern_dtype_size(ct));
	if (!p) {
		s->err = -ENOMEM;
		return t->data;
	}
	widen(s->c, p, ct, t);
	return p;
}

void *kst_out(KcStage *s, KTensor *t, int acc)
{
	if (!t || s->err)
		return t ? t->data : NULL;
	KDtype ct = compute_type(s);
	if (t->dtype == ct)
		return t->data;
	if (s->nout == (int)(sizeof s->outs / sizeof s->outs[0])) {
		s->err = -E2BIG;
		return t->data;
	}
	void *p = kcpu_arena_alloc(s->c, (size_t)kern_numel(t) * kern_dtype_size(ct));
	if (!p) {
		s->err = -ENOMEM;
		return t->data;
	}
	if (acc)
		widen(s->c, p, ct, t);
	s->outs[s->nout].t = t;
	s->outs[s->nout].scratch = p;
	s->nout++;
	return p;
}

int kst_end(KcStage *s)
{
	KDtype ct = compute_type(s);
	for (int k = 0; k < s->nout && !s->err; k++) {
		KTensor *t = s->outs[k].t;
		KTensor src = kern_tensor_make(s->outs[k].scratch, ct, t->ndim, t->shape);
		widen(s->c, t->data, t->dtype, &src); // narrowing by the store rule
	}
	kcpu_arena_reset(s->c);
	return s->err;
}

void kcpu_store_grad(KernCtx *c, KGrad g, const double *src, int64_t n, double scale)
{
	if (!g.t)
		return;
	KDtype dt = g.t->dtype;
	void *p = g.t->data;
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int64_t i = 0; i < n; i++) {
		double v = src[i] * scale;
		if (!g.acc)
			kcpu_st(p, dt, i, v);
		else if (dt == KDT_F64)
			((double *)p)[i] += v;
		else // f32 and bf16 add in f32: the old value plus the rounded new one, rounded once
			kcpu_st(p, dt, i, (float)kcpu_ld(p, dt, i) + (float)v);
	}
}

void kcpu_load_f64(KernCtx *c, double *dst, const KTensor *t)
{
	int64_t n = kern_numel(t);
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int64_t i = 0; i < n; i++)
		dst[i] = kcpu_ld(t->data, t->dtype, i);
}
