// The CUDA backend's fused optimizer over the flat parameter buffer: the global gradient norm and
// clip factor left on the device, and one AdamW/LAMB update per call, one block per chunk of the
// plan (KERN_OPT_CHUNK elements inside one segment), every sum over chunks in chunk order.
#include "kcu_dev.h" // defines: KcIn, KcOut, kc_ldv, kc_stv, kc_block_sumd

// a chunk takes 8-element (16-byte) accesses when its start and length keep them aligned
static __device__ __forceinline__ bool chunk_vec(const KcuChunk &c, bool aligned)
{
	return aligned && c.start % 8 == 0 && c.len % 8 == 0;
}

// ---- the gradient norm: squares per chunk in double, then the chunks in order by one block; frozen
// segments are left out, KSEG_EXTERNAL ones (updated by another op with the same factor) are in ----
template <int V>
__device__ __forceinline__ double sumsq(KcIn g, int64_t start, int len)
{
	double s = 0.0;
	for (int64_t i = start + (int64_t)threadIdx.x * V; i < start + len; i += KC_THREADS * V) {
		float x[V];
		kc_ldv<V>(g, i, x);
		for (int k = 0; k < V; k++)
			s += (double)x[k] * x[k];
	}
	return s;
}

__global__ void __launch_bounds__(KC_THREADS)
	norm_chunks_kernel(double *part, const KcuChunk *chunks, const KcuSeg *segs, KcIn grads, bool aligned)
{
	__shared__ double red[KC_THREADS / 32];
	const KcuChunk c = chunks[blockIdx.x];
	double s = 0.0;
	if (!(segs[c.seg].flags & KSEG_FROZEN))
		s = chunk_vec(c, aligned) ? sumsq<8>(grads, c.start, c.len) : sumsq<1>(grads, c.start, c.len);
	s = kc_block_sumd(s, red);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
}

// norm_clip = [‖g‖, clip_norm / (‖g‖ + 1e-6) when clipping, else 1; NaN when ‖g‖ is not finite]
__global__ void __launch_bounds__(KC_THREADS) norm_finish_kernel(float *nc, const double *part, int n, double clip)
{
	__shared__ double red[KC_THREADS / 32];
	const int per = (n + KC_THREADS - 1) / KC_THREADS, k0 = (int)threadIdx.x * per;
	double s = 0.0;
	for (int k = k0; k < k0 + per && k < n; k++) // each thread a run of chunks, in order
		s += part[k];
	s = kc_block_sumd(s, red);
	if (threadIdx.x != 0)
		return;
	const double norm = sqrt(s);
	double factor = 1.0;
	if (!isfinite(norm))
		factor = NAN;
	else if (clip > 0 && norm > clip) // torch.nn.utils.clip_grad_norm_
		factor = clip / (norm + 1e-6);
	nc[0] = (float)norm, nc[1] = (float)factor;
}

static bool all_aligned(std::initializer_list<const void *> ptrs)
{
	for (const void *p : ptrs)
		if (p && (uintptr_t)p % 16)
			return false;
	return true;
}

int kcu_grad_norm(KcuStream *s, const KcuPlan *p, KTensor *norm_clip, const KTensor *grads, double clip_norm)
{
	const cudaStream_t st = (cudaStream_t)s->stream;
	KC_TRY(KLAUNCH(&s->err, norm_chunks_kernel, (unsigned)p->n_chunks, KC_THREADS, 0, st, p->part, p->chunks,
		       p->segs, kc_in(grads), all_aligned({grads->data})));
	return KLAUNCH(&s->err, norm_finish_kernel, 1, KC_THREADS, 0, st, (float *)norm_clip->data, p->part,
		       p->n_chunks, clip_norm);
}

// ---- the update ----
struct OptArgs {
	const KcuChunk *chunks;
	const KcuSeg *segs;
	double *part;
	const float *step;
	float *w, *m, *v;
	KcIn grads;
	KcOut copy;
	const float *nc; // norm_clip or NULL
	KcuOptHyp h;
	bool aligned;
};

// the update's scalars: as the host rounded them, or (KcuOptHyp.live: a graph replays the update)
// derived here from the per-step values in device memory by the same exact operations
__device__ __forceinline__ KcuOptHyp opt_hyp(const KcuOptHyp &h)
{
	if (!h.live)
		return h;
	KcuOptHyp r = h;
	const double lr = h.live[KOPT_LIVE_LR], bc1 = h.live[KOPT_LIVE_BC1], bc2 = h.live[KOPT_LIVE_BC2];
	r.lr = lr;
	r.bc1d = bc1;
	r.bc1 = (float)bc1;
	r.bc2 = (float)bc2;
	r.bc2s = (float)sqrt(bc2);
	r.step = (float)(lr / bc1);
	return r;
}

// the clip factor, read on the device; a non-finite one stops the update everywhere
__device__ __forceinline__ bool clip_factor(const OptArgs &a, float *fc)
{
	*fc = a.nc ? a.nc[1] : 1.0f;
	return isfinite(*fc);
}

__device__ __forceinline__ float lamb_r(const KcuOptHyp &h, float wd, float p, float m, float v)
{
	return (m / h.bc1) / (sqrtf(v / h.bc2) + h.eps) + wd * p;
}

// clamp and copy of V elements of w at i
template <int V>
__device__ __forceinline__ void finish(const OptArgs &a, const KcuSeg &sg, int64_t i, float *w)
{
	if (sg.flags & KSEG_CLAMP)
		for (int k = 0; k < V; k++)
			w[k] = w[k] < sg.lo ? sg.lo : w[k] > sg.hi ? sg.hi : w[k];
	kc_stv<V>(KcOut{a.w, KC_F32}, i, w);
	if (a.copy.p)
		kc_stv<V>(a.copy, i, w);
}

// AdamW over the chunk (moments, decay, step, clamp, copy: one pass), or LAMB's first pass
// (moments and the chunk's Σp², Σr² in double)
template <int V>
__device__ void update_chunk(const OptArgs &a, const KcuOptHyp &h, const KcuChunk &c, const KcuSeg &sg, float fc,
			     double *pp, double *rr)
{
	const bool lamb = sg.flags & KSEG_LAMB;
	const double wd = (sg.flags & KSEG_DECAY) ? h.wd : 0.0;
	const bool scaled = sg.flags & KSEG_LR_SCALE; // the segment's own rate (as the CPU twin)
	const double lr = scaled ? h.lr * sg.lr_scale : h.lr;
	const float decay = (float)(1.0 - lr * wd), wdf = (float)wd, step = scaled ? (float)(lr / h.bc1d) : h.step;
	const KcOut mo = {a.m, KC_F32}, vo = {a.v, KC_F32};
	for (int64_t i = c.start + (int64_t)threadIdx.x * V; i < c.start + c.len; i += KC_THREADS * V) {
		float g[V], w[V], m[V], v[V];
		kc_ldv<V>(a.grads, i, g);
		kc_ldv<V>(KcIn{a.w, KC_F32}, i, w);
		kc_ldv<V>(KcIn{a.m, KC_F32}, i, m);
		kc_ldv<V>(KcIn{a.v, KC_F32}, i, v);
		for (int k = 0; k < V; k++) {
			const float gk = g[k] * fc;
			m[k] = h.b1 * m[k] + (1 - h.b1) * gk;
			v[k] = h.b2 * v[k] + (1 - h.b2) * gk * gk;
			if (lamb) {
				const float r = lamb_r(h, wdf, w[k], m[k], v[k]);
				*pp += (double)w[k] * w[k];
				*rr += (double)r * r;
			} else {
				w[k] *= decay;
				w[k] -= step * m[k] / (sqrtf(v[k]) / h.bc2s + h.eps);
			}
		}
		kc_stv<V>(mo, i, m);
		kc_stv<V>(vo, i, v);
		if (!lamb)
			finish<V>(a, sg, i, w);
	}
}

// frozen segments and those another op updates (KSEG_EXTERNAL: the global τ): only the copy
template <int V>
__device__ void copy_chunk(const OptArgs &a, const KcuChunk &c)
{
	for (int64_t i = c.start + (int64_t)threadIdx.x * V; i < c.start + c.len && a.copy.p; i += KC_THREADS * V) {
		float w[V];
		kc_ldv<V>(KcIn{a.w, KC_F32}, i, w);
		kc_stv<V>(a.copy, i, w);
	}
}

__global__ void __launch_bounds__(KC_THREADS) update_kernel(OptArgs a, unsigned long long *errs)
{
	__shared__ double red[KC_THREADS / 32];
	float fc;
	if (!clip_factor(a, &fc)) {
		if (blockIdx.x == 0 && threadIdx.x == 0)
			kc_report(errs, KCU_E_OPTIMIZER, 0, __float_as_uint(a.nc[0]));
		return;
	}
	const KcuChunk c = a.chunks[blockIdx.x];
	const KcuSeg sg = a.segs[c.seg];
	const bool vec = chunk_vec(c, a.aligned);
	if (sg.flags & (KSEG_FROZEN | KSEG_EXTERNAL)) {
		if (vec)
			copy_chunk<8>(a, c);
		else
			copy_chunk<1>(a, c);
		return;
	}
	double pp = 0.0, rr = 0.0;
	const KcuOptHyp h = opt_hyp(a.h);
	if (vec)
		update_chunk<8>(a, h, c, sg, fc, &pp, &rr);
	else
		update_chunk<1>(a, h, c, sg, fc, &pp, &rr);
	if (!(sg.flags & KSEG_LAMB))
		return; // every thread of the block leaves here together
	pp = kc_block_sumd(pp, red);
	rr = kc_block_sumd(rr, red);
	if (threadIdx.x == 0)
		a.part[2 * blockIdx.x] = pp, a.part[2 * blockIdx.x + 1] = rr;
}

// LAMB's step per segment: lr · ‖p‖/‖r‖ from its chunks' partials in chunk order (the trust ratio
// only where weight decay applies, as upstream fast_clip); one thread per segment
__global__ void __launch_bounds__(KC_THREADS)
	trust_kernel(float *step, const KcuSeg *segs, const double *part, int n, double lr, const double *live)
{
	if (live)
		lr = live[KOPT_LIVE_LR];
	for (int s = (int)threadIdx.x; s < n; s += KC_THREADS) {
		double sp = 0.0, sr = 0.0;
		for (int k = segs[s].chunk0; k < segs[s].chunk0 + segs[s].nchunks; k++)
			sp += part[2 * k], sr += part[2 * k + 1];
		const double trust = (segs[s].flags & KSEG_DECAY) && sp > 0 && sr > 0 ? sqrt(sp) / sqrt(sr) : 1.0;
		const double lr_s = (segs[s].flags & KSEG_LR_SCALE) ? lr * segs[s].lr_scale : lr;
		step[s] = (float)(lr_s * trust);
	}
}

template <int V>
__device__ void lamb_apply(const OptArgs &a, const KcuOptHyp &h, const KcuChunk &c, const KcuSeg &sg)
{
	const float wd = (sg.flags & KSEG_DECAY) ? (float)h.wd : 0.0f, st = a.step[c.seg];
	for (int64_t i = c.start + (int64_t)threadIdx.x * V; i < c.start + c.len; i += KC_THREADS * V) {
		float w[V], m[V], v[V];
		kc_ldv<V>(KcIn{a.w, KC_F32}, i, w);
		kc_ldv<V>(KcIn{a.m, KC_F32}, i, m);
		kc_ldv<V>(KcIn{a.v, KC_F32}, i, v);
		for (int k = 0; k < V; k++)
			w[k] -= st * lamb_r(h, wd, w[k], m[k], v[k]);
		finish<V>(a, sg, i, w);
	}
}

__global__ void __launch_bounds__(KC_THREADS) lamb_kernel(OptArgs a)
{
	float fc;
	const KcuChunk c = a.chunks[blockIdx.x];
	const KcuSeg sg = a.segs[c.seg];
	if (!clip_factor(a, &fc) || !(sg.flags & KSEG_LAMB) || (sg.flags & (KSEG_FROZEN | KSEG_EXTERNAL)))
		return;
	const KcuOptHyp h = opt_hyp(a.h);
	if (chunk_vec(c, a.aligned))
		lamb_apply<8>(a, h, c, sg);
	else
		lamb_apply<1>(a, h, c, sg);
}

int kcu_optimizer(KcuStream *s, const KcuPlan *p, const KcuOptHyp *h, KTensor *master, KTensor *copy,
		  const KTensor *grads, KTensor *m, KTensor *v, const KTensor *norm_clip)
{
	const cudaStream_t st = (cudaStream_t)s->stream;
	OptArgs a = {p->chunks,
		     p->segs,
		     p->part,
		     p->step,
		     (float *)master->data,
		     (float *)m->data,
		     (float *)v->data,
		     kc_in(grads),
		     kc_out(copy),
		     norm_clip ? (const float *)norm_clip->data : nullptr,
		     *h,
		     all_aligned({master->data, m->data, v->data, grads->data, copy ? copy->data : nullptr})};
	KC_TRY(KLAUNCH(&s->err, update_kernel, (unsigned)p->n_chunks, KC_THREADS, 0, st, a, s->errs));
	if (!p->has_lamb)
		return 0;
	KC_TRY(KLAUNCH(&s->err, trust_kernel, 1, KC_THREADS, 0, st, p->step, p->segs, p->part, p->n_segs, h->lr,
		       h->live));
	return KLAUNCH(&s->err, lamb_kernel, (unsigned)p->n_chunks, KC_THREADS, 0, st, a);
}
