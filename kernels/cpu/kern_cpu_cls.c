// The CPU twins of the classification fine-tuning ops: timm's soft-target cross-entropy (in
// double, rows in parallel, the mean summed serially in row order), Mixup/CutMix on the patch
// layout kern_augment writes, the per-row scale of drop path and dropout (f32 arithmetic; f64 path in
// double), and the joint gradient norm of two plans.
#include "kern_cpu.h" // defines: KOMP, kcpu_threads, kcpu_ld, kcpu_st, kcpu_*
#include "stream.h"   // defines: rng_philox4x32, RNG_STREAM_DROPOUT

#include <errno.h>
#include <math.h>

// a gradient element by the KGrad rule: set, or add in the tensor's precision (rounded once)
static void put(void *p, KDtype dt, int acc, int64_t i, double v)
{
	if (!acc)
		kcpu_st(p, dt, i, v);
	else if (dt == KDT_F64)
		((double *)p)[i] += v;
	else
		kcpu_st(p, dt, i, (float)kcpu_ld(p, dt, i) + (float)v);
}

// ---- soft-target cross-entropy ----
// the first row whose id is < −1 or >= K, or -1
static int64_t bad_row(const int32_t *a, const int32_t *b, int64_t N, int K)
{
	for (int64_t n = 0; n < N; n++)
		if (a[n] < -1 || a[n] >= K || b[n] < -1 || b[n] >= K)
			return n;
	return -1;
}

// row n's loss l_n (and its gradient (softmax − t)·g, when dz is set) from its logits z
static double softce_row(const void *z, KDtype dt, int64_t base, int K, int ya, int yb, const KSoftCe *p, double g,
			 void *dz, KDtype gdt, int acc)
{
	double mx = -INFINITY, se = 0.0, sz = 0.0;
	for (int j = 0; j < K; j++)
		mx = fmax(mx, kcpu_ld(z, dt, base + j));
	for (int j = 0; j < K; j++) {
		double v = kcpu_ld(z, dt, base + j);
		se += exp(v - mx);
		sz += v;
	}
	const double lse = mx + log(se), off = p->eps / K, on = 1.0 - p->eps;
	const double tz =
		off * sz + on * (p->lam * kcpu_ld(z, dt, base + ya) + (1.0 - p->lam) * kcpu_ld(z, dt, base + yb));
	if (dz)
		for (int j = 0; j < K; j++) {
			double t = off + on * (p->lam * (j == ya) + (1.0 - p->lam) * (j == yb));
			put(dz, gdt, acc, base + j, (exp(kcpu_ld(z, dt, base + j) - lse) - t) * g);
		}
	return lse - tz;
}

int kcpu_softce(KernCtx *c, KTensor *loss, KTensor *rows, KGrad dlogits, const KTensor *logits, const KTensor *a,
		const KTensor *b, const KSoftCe *p, int64_t N, int K)
{
	const int32_t *ya = a->data, *yb = b->data;
	const int64_t bad = bad_row(ya, yb, N, K);
	if (bad >= 0) {
		kern_latch(c, -ERANGE, "softce", "class ids (%d, %d) of row %lld are outside [-1, %d)", ya[bad],
			   yb[bad], (long long)bad, K);
		return 0;
	}
	int64_t M = 0;
	for (int64_t n = 0; n < N; n++)
		M += ya[n] >= 0 && yb[n] >= 0;
	double *l = kcpu_arena_alloc(c, sizeof(double) * (size_t)N);
	if (!l)
		return -ENOMEM;
	const double g = M ? p->scale / (double)M : 0.0;
	void *dz = dlogits.t ? dlogits.t->data : NULL;
	const KDtype dt = logits->dtype, gdt = dlogits.t ? dlogits.t->dtype : KDT_F32;
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int64_t n = 0; n < N; n++) {
		const int64_t base = n * K;
		if (ya[n] >= 0 && yb[n] >= 0) {
			l[n] = softce_row(logits->data, dt, base, K, ya[n], yb[n], p, g, dz, gdt, dlogits.acc);
			continue;
		}
		l[n] = 0.0;
		for (int j = 0; dz && j < K; j++)
			put(dz, gdt, dlogits.acc, base + j, 0.0);
	}
	double sum = 0.0;
	for (int64_t n = 0; n < N; n++) {
		sum += l[n];
		if (rows)
			kcpu_st(rows->data, rows->dtype, n, l[n]);
	}
	kcpu_st(loss->data, loss->dtype, 0, M ? sum / (double)M : 0.0);
	kcpu_arena_reset(c);
	return 0;
}

// ---- Mixup / CutMix ----
typedef struct {
	const KMixup *m;
	int p, gw, P, f64; // patch, patches per row, patches per frame
	int64_t k;         // a token's elements: 3·tt·p·p
	float lam, lam1;   // mixup's weights in f32
} MixGeo;

// whether element e of a row of (T'·P, 3·tt·p·p) is a pixel inside the box (element ((c·tt + dt)·p +
// i)·p + j of a token: i and j are its row and column in the patch whatever c and dt)
static int in_box(const MixGeo *g, int64_t e)
{
	const int q = (int)(e / g->k % g->P), col = (int)(e % g->k), i = col / g->p % g->p, j = col % g->p;
	const int y = q / g->gw * g->p + i, x = q % g->gw * g->p + j;
	return y >= g->m->y0 && y < g->m->y1 && x >= g->m->x0 && x < g->m->x1;
}

// the output of the row whose value is v, its partner's w, at element e
static double mix_one(const MixGeo *g, int64_t e, double v, double w)
{
	if (g->m->cutmix)
		return in_box(g, e) ? w : v;
	if (g->f64)
		return g->m->lam * v + (1.0 - g->m->lam) * w;
	return g->lam * (float)v + g->lam1 * (float)w;
}

int kcpu_mixup(KernCtx *c, KGrad out, const KTensor *x, const KMixup *m, int H, int W, int patch)
{
	MixGeo g = {.m = m, .p = patch, .gw = W / patch, .f64 = x->dtype == KDT_F64, .k = x->shape[2]};
	g.P = (H / patch) * g.gw;
	g.lam = (float)m->lam, g.lam1 = (float)(1.0 - m->lam);
	const int64_t B = x->shape[0], row = kern_numel(x) / B;
	const KDtype dt = x->dtype, odt = out.t->dtype;
	const void *src = x->data;
	void *dst = out.t->data;
	int nt = kcpu_threads(c);
	(void)nt;
	// one pair (b, B−1−b) per iteration, both read before either is written: in place is safe
	KOMP("omp parallel for num_threads(nt) schedule(static) collapse(2)")
	for (int64_t b = 0; b < (B + 1) / 2; b++)
		for (int64_t e = 0; e < row; e++) {
			const int64_t i = b * row + e, k = (B - 1 - b) * row + e;
			const double v = kcpu_ld(src, dt, i), w = kcpu_ld(src, dt, k);
			const double ov = mix_one(&g, e, v, w), ow = mix_one(&g, e, w, v);
			put(dst, odt, out.acc, i, ov);
			if (k != i)
				put(dst, odt, out.acc, k, ow);
		}
	return 0;
}

// ---- per-row scale (drop path) ----
int kcpu_row_scale(KernCtx *c, KGrad out, const KTensor *x, const KTensor *scale, int64_t B, int64_t inner)
{
	const KDtype dt = x->dtype, odt = out.t->dtype;
	const int f64 = dt == KDT_F64;
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int64_t i = 0; i < B * inner; i++) {
		const double s = kcpu_ld(scale->data, scale->dtype, i / inner), v = kcpu_ld(x->data, dt, i);
		put(out.t->data, odt, out.acc, i, f64 ? v * s : (double)((float)v * (float)s));
	}
	return 0;
}

// ---- dropout: element (b, i) kept when the top 24 bits of Philox word 0 at {g, 8, i} fall below keep ----
_Static_assert(RNG_STREAM_DROPOUT == 8, "the contract names stream 8 for dropout");

static int dropout_kept(uint64_t seed, uint64_t g, uint32_t i, double keep)
{
	const uint32_t ctr[4] = {(uint32_t)g, (uint32_t)(g >> 32), RNG_STREAM_DROPOUT, i};
	const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	uint32_t w[4];
	rng_philox4x32(ctr, key, w);
	return (double)(w[0] >> 8) / 16777216.0 < keep;
}

int kcpu_dropout(KernCtx *c, KGrad out, const KTensor *x, const KTensor *pos, const KDropout *p, int64_t B,
		 int64_t inner)
{
	const KDtype dt = x->dtype, odt = out.t->dtype;
	const int f64 = dt == KDT_F64;
	const double keep = 1.0 - p->rate;
	const float scale = keep > 0 ? (float)(1.0 / keep) : 0.0f;
	const double scale64 = keep > 0 ? 1.0 / keep : 0.0;
	const int64_t *g = pos->data;
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int64_t k = 0; k < B * inner; k++) {
		const int64_t b = k / inner;
		const double v = kcpu_ld(x->data, dt, k);
		double o = v; // rate 0: kept with factor 1, no draw
		if (p->rate > 0)
			o = !dropout_kept(p->seed, (uint64_t)g[b], (uint32_t)(k % inner), keep) ? 0.0
			    : f64                                                               ? v * scale64
				  : (double)((float)v * scale);
		put(out.t->data, odt, out.acc, k, o);
	}
	return 0;
}

// ---- the joint gradient norm: [√(a² + b²), kern_grad_norm's factor of it] ----
int kcpu_grad_norm_join(KernCtx *c, KTensor *norm_clip, const KTensor *other, double clip_norm)
{
	(void)c;
	float *nc = norm_clip->data;
	const float *o = other->data;
	const double norm = sqrt((double)nc[0] * nc[0] + (double)o[0] * o[0]);
	double factor = 1.0;
	if (!isfinite(norm))
		factor = NAN;
	else if (clip_norm > 0 && norm > clip_norm) // torch.nn.utils.clip_grad_norm_
		factor = clip_norm / (norm + 1e-6);
	nc[0] = (float)norm, nc[1] = (float)factor;
	return 0;
}
