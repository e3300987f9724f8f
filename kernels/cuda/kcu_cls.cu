// The CUDA backend's classification fine-tuning ops: the soft-target cross-entropy in double as
// its CPU twin (kern_cpu_cls.c: one block per row, the mean summed by one block in a fixed order),
// Mixup/CutMix one thread per element pair (in place safe), the per-row scale of drop path, dropout
// (its mask from Philox word 0 per element, as the CPU twin), and the joint norm of two plans.
#include "kcu_dev.h" // defines: KcIn, KcOut, kc_*, KC_THREADS, KC_BOUNDS_F64, KLAUNCH

// ---- soft-target cross-entropy ----
// the stream scratch (s->part) as doubles: [0] the labelled row count M, [1 + n] row n's loss
enum { SOFTCE_ROW0 = 1 };

__device__ __forceinline__ bool softce_id_ok(int y, int K)
{
	return y >= -1 && y < K;
}

// one block: M, and the first row with an id outside [−1, K) reported
__global__ void KC_BOUNDS_F64 softce_count_kernel(double *ws, const int32_t *a, const int32_t *b, int64_t N, int K,
						  unsigned long long *errs)
{
	__shared__ double red[KC_THREADS / 32];
	double m = 0.0;
	for (int64_t n = threadIdx.x; n < N; n += KC_THREADS) {
		const int ya = a[n], yb = b[n];
		if (!softce_id_ok(ya, K) || !softce_id_ok(yb, K))
			kc_report(errs, KCU_E_SOFTCE, n, (uint32_t)(softce_id_ok(ya, K) ? yb : ya));
		else if (ya >= 0 && yb >= 0)
			m += 1.0;
	}
	m = kc_block_sumd(m, red);
	if (threadIdx.x == 0)
		ws[0] = m;
}

struct SoftceArgs {
	KcIn z;
	const int32_t *a, *b;
	KcOut dz, rows;
	int acc, K;
	int64_t N;
	double lam, eps, scale;
};

// a labelled row: its loss, and its gradient (softmax − t)·g when dz is wanted
__device__ double softce_row(const SoftceArgs &p, int64_t n, int ya, int yb, double g, double *red)
{
	const int64_t base = n * p.K;
	double mx = -INFINITY, se = 0.0, sz = 0.0;
	for (int j = (int)threadIdx.x; j < p.K; j += KC_THREADS)
		mx = fmax(mx, kc_ldd(p.z, base + j));
	mx = kc_block_maxd(mx, red);
	for (int j = (int)threadIdx.x; j < p.K; j += KC_THREADS) {
		const double v = kc_ldd(p.z, base + j);
		se += exp(v - mx);
		sz += v;
	}
	const double lse = mx + log(kc_block_sumd(se, red)), off = p.eps / p.K, on = 1.0 - p.eps;
	sz = kc_block_sumd(sz, red);
	for (int j = (int)threadIdx.x; p.dz.p && j < p.K; j += KC_THREADS) {
		const double t = off + on * (p.lam * (j == ya) + (1.0 - p.lam) * (j == yb));
		kc_st_acc(p.dz, base + j, (float)((exp(kc_ldd(p.z, base + j) - lse) - t) * g), p.acc);
	}
	return lse - (off * sz + on * (p.lam * kc_ldd(p.z, base + ya) + (1.0 - p.lam) * kc_ldd(p.z, base + yb)));
}

// a block per row (grid-stride over rows): the row's loss into the scratch and rows, its gradient
__global__ void KC_BOUNDS_F64 softce_rows_kernel(SoftceArgs p, double *ws)
{
	__shared__ double red[KC_THREADS / 32];
	const double M = ws[0], g = M > 0 ? p.scale / M : 0.0;
	for (int64_t n = blockIdx.x; n < p.N; n += gridDim.x) {
		const int ya = p.a[n], yb = p.b[n];
		const bool lab = ya >= 0 && yb >= 0 && ya < p.K && yb < p.K;
		double l = 0.0;
		if (lab)
			l = softce_row(p, n, ya, yb, g, red);
		else
			for (int j = (int)threadIdx.x; p.dz.p && j < p.K; j += KC_THREADS)
				kc_st_acc(p.dz, n * p.K + j, 0.0f, p.acc);
		if (threadIdx.x == 0) {
			ws[SOFTCE_ROW0 + n] = l;
			if (p.rows.p)
				kc_std(p.rows, n, l);
		}
	}
}

// one block: loss = Σ row losses / M in a fixed order
__global__ void KC_BOUNDS_F64 softce_mean_kernel(float *loss, const double *ws, int64_t N)
{
	__shared__ double red[KC_THREADS / 32];
	double l = 0.0;
	for (int64_t n = threadIdx.x; n < N; n += KC_THREADS)
		l += ws[SOFTCE_ROW0 + n];
	l = kc_block_sumd(l, red);
	if (threadIdx.x == 0)
		loss[0] = (float)(ws[0] > 0 ? l / ws[0] : 0.0);
}

int kcu_softce(KcuStream *s, KTensor *loss, KTensor *rows, KGrad dlogits, const KTensor *logits, const KTensor *a,
	       const KTensor *b, const KSoftCe *p, int64_t N, int K)
{
	const cudaStream_t st = (cudaStream_t)s->stream;
	double *ws = (double *)s->part;
	static_assert(KCU_PART_FLOATS / 2 >= SOFTCE_ROW0 + ((size_t)1 << 19), "the scratch holds 2^19 row losses");
	if ((size_t)N + SOFTCE_ROW0 > KCU_PART_FLOATS / 2)
		return -EINVAL; // the contract's limit (kern_ops_cls.c) keeps N below
	s->err_bound[KCU_E_SOFTCE] = K;
	const int32_t *ya = (const int32_t *)a->data, *yb = (const int32_t *)b->data;
	KC_TRY(KLAUNCH(&s->err, softce_count_kernel, 1, KC_THREADS, 0, st, ws, ya, yb, N, K, s->errs));
	SoftceArgs q = {kc_in(logits), ya,     yb,      kc_grad(dlogits), kc_out(rows), dlogits.acc, K, N,
			p->lam,        p->eps, p->scale};
	KC_TRY(KLAUNCH(&s->err, softce_rows_kernel, kc_grid(N, 1), KC_THREADS, 0, st, q, ws));
	return KLAUNCH(&s->err, softce_mean_kernel, 1, KC_THREADS, 0, st, (float *)loss->data, ws, N);
}

// ---- Mixup / CutMix: one thread per (pair, element), both read before either is written ----
struct MixArgs {
	KcIn x;
	KcOut out;
	int acc, cutmix, p, gw, P, y0, y1, x0, x1;
	float lam, lam1;
	int64_t B, row, k; // k: a token's elements, 3·tt·p·p
};

// element ((c·tt + dt)·p + i)·p + j of token q: the pixel (i, j) of patch q in every channel and frame
__device__ __forceinline__ bool mix_in_box(const MixArgs &a, int64_t e)
{
	const int q = (int)(e / a.k % a.P), col = (int)(e % a.k), i = col / a.p % a.p, j = col % a.p;
	const int y = q / a.gw * a.p + i, x = q % a.gw * a.p + j;
	return y >= a.y0 && y < a.y1 && x >= a.x0 && x < a.x1;
}

__global__ void __launch_bounds__(KC_THREADS) mixup_kernel(MixArgs a)
{
	const int64_t n = (a.B + 1) / 2 * a.row, step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t t = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; t < n; t += step) {
		const int64_t b = t / a.row, e = t % a.row, i = b * a.row + e, k = (a.B - 1 - b) * a.row + e;
		const float v = kc_ld(a.x, i), w = kc_ld(a.x, k);
		float ov, ow;
		if (a.cutmix) {
			const bool in = mix_in_box(a, e);
			ov = in ? w : v, ow = in ? v : w;
		} else {
			ov = a.lam * v + a.lam1 * w, ow = a.lam * w + a.lam1 * v;
		}
		kc_st_acc(a.out, i, ov, a.acc);
		if (k != i)
			kc_st_acc(a.out, k, ow, a.acc);
	}
}

int kcu_mixup(KcuStream *s, KGrad out, const KTensor *x, const KMixup *m, int H, int W, int patch)
{
	MixArgs a = {kc_in(x),
		     kc_grad(out),
		     out.acc,
		     m->cutmix,
		     patch,
		     W / patch,
		     0,
		     m->y0,
		     m->y1,
		     m->x0,
		     m->x1,
		     (float)m->lam,
		     (float)(1.0 - m->lam),
		     x->shape[0],
		     0,
		     x->shape[2]};
	a.P = (H / patch) * a.gw;
	a.row = kern_numel(x) / a.B;
	const int64_t n = (a.B + 1) / 2 * a.row;
	if (n == 0)
		return 0;
	return KLAUNCH(&s->err, mixup_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream, a);
}

// ---- per-row scale (drop path): out[b, i] (=|+=) x[b, i]·scale[b] ----
__global__ void __launch_bounds__(KC_THREADS)
	row_scale_kernel(KcOut out, int acc, KcIn x, const float *scale, int64_t n, int64_t inner)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t i = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; i < n; i += step)
		kc_st_acc(out, i, kc_ld(x, i) * scale[i / inner], acc);
}

int kcu_row_scale(KcuStream *s, KGrad out, const KTensor *x, const KTensor *scale, int64_t B, int64_t inner)
{
	const int64_t n = B * inner;
	if (n == 0)
		return 0;
	return KLAUNCH(&s->err, row_scale_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream,
		       kc_grad(out), out.acc, kc_in(x), (const float *)scale->data, n, inner);
}

// ---- dropout: out[b, i] (=|+=) x[b, i]·(1/keep) when kept, 0 when not; RNG_STREAM_DROPOUT is 8 ----
__global__ void __launch_bounds__(KC_THREADS)
	dropout_kernel(KcOut out, int acc, KcIn x, const int64_t *pos, uint64_t seed, uint32_t below, float scale,
		       int draw, int64_t n, int64_t inner)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t k = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; k < n; k += step) {
		float v = kc_ld(x, k);
		if (draw) {
			const uint64_t g = (uint64_t)pos[k / inner];
			const uint32_t w = kc_philox_word0((uint32_t)g, (uint32_t)(g >> 32), 8u, (uint32_t)(k % inner),
							   (uint32_t)seed, (uint32_t)(seed >> 32));
			v = (w >> 8) < below ? v * scale : 0.0f;
		}
		kc_st_acc(out, k, v, acc);
	}
}

// kept when (w >> 8)·2^−24 < keep, i.e. (w >> 8) < ceil(keep·2^24): the same comparison in integers
static uint32_t dropout_below(double keep)
{
	const double t = keep * 16777216.0;
	const uint32_t c = (uint32_t)t;
	return (double)c < t ? c + 1 : c;
}

int kcu_dropout(KcuStream *s, KGrad out, const KTensor *x, const KTensor *pos, const KDropout *p, int64_t B,
		int64_t inner)
{
	const int64_t n = B * inner;
	const double keep = 1.0 - p->rate;
	if (n == 0)
		return 0;
	return KLAUNCH(&s->err, dropout_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream,
		       kc_grad(out), out.acc, kc_in(x), (const int64_t *)pos->data, p->seed, dropout_below(keep),
		       keep > 0 ? (float)(1.0 / keep) : 0.0f, p->rate > 0, n, inner);
}

// ---- the joint gradient norm of two plans (kern_grad_norm's factor rule, in double) ----
__global__ void __launch_bounds__(32) norm_join_kernel(float *nc, const float *other, double clip)
{
	if (threadIdx.x != 0)
		return;
	const double norm = sqrt((double)nc[0] * nc[0] + (double)other[0] * other[0]);
	double factor = 1.0;
	if (!isfinite(norm))
		factor = NAN;
	else if (clip > 0 && norm > clip) // torch.nn.utils.clip_grad_norm_
		factor = clip / (norm + 1e-6);
	nc[0] = (float)norm, nc[1] = (float)factor;
}

int kcu_grad_norm_join(KcuStream *s, KTensor *norm_clip, const KTensor *other, double clip_norm)
{
	return KLAUNCH(&s->err, norm_join_kernel, 1, 32, 0, (cudaStream_t)s->stream, (float *)norm_clip->data,
		       (const float *)other->data, clip_norm);
}
