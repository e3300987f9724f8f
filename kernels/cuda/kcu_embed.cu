// The CUDA backend's input side: the augment op (u8 clips -> normalized, flipped, patch- or
// tubelet-ordered in one pass over the bytes), patch rearrangement, the video embeddings, the text embedding's
// forward, end-token search and row pooling. Parameter gradients are fixed-order column sums.
#include "kcu_colsum.h" // defines: kc_colsum, KcColDst

// ---- augment: one thread per (slice, tubelet, channel, frame of the tubelet, patch row): p outputs
// of one row; with tubelets of 1 frame (kern_augment) a slice is a frame; Out: the output's storage
// (KcOutT<float>, KcOutT<bf16>: no branch per store) ----
template <class Out>
struct AugArgs {
	Out out;
	const uint8_t *clips;
	const int64_t *pos;
	const float *lut; // 3 x 256: ((v / 255 − mean[c]) / std[c]) computed in double, as the CPU twin
	uint64_t seed;
	int flip, Tp, tt, H, W, p, gw, P;
	int64_t rows; // B·T'·P·3·tt·p
};

template <int V, class Out>
__global__ void __launch_bounds__(KC_THREADS) augment_kernel(AugArgs<Out> a)
{
	__shared__ float lut[3 * 256];
	for (int i = (int)threadIdx.x; i < 3 * 256; i += KC_THREADS)
		lut[i] = a.lut[i];
	__syncthreads();
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t r = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; r < a.rows; r += step) {
		// r = ((patch·3 + ch)·tt + d)·p + i, patch = bs·P + q, bs = b·T' + t'
		const int i = (int)(r % a.p), d = (int)(r / a.p % a.tt), ch = (int)(r / ((int64_t)a.p * a.tt) % 3);
		const int64_t patch = r / (3 * (int64_t)a.tt * a.p), bs = patch / a.P, bt = bs * a.tt + d;
		const int q = (int)(patch % a.P), py = q / a.gw, qx = q % a.gw;
		bool mirror = false;
		if (a.flip) { // Philox4x32-10 at counter {g, 3 (the augmentation stream), 0}, key seed: bit 0
			const uint64_t g = (uint64_t)a.pos[bs / a.Tp];
			mirror = kc_philox_word0((uint32_t)g, (uint32_t)(g >> 32), 3u, 0u, (uint32_t)a.seed,
						 (uint32_t)(a.seed >> 32)) &
				 1u;
		}
		const uint8_t *line = a.clips + ((bt * a.H + (int64_t)py * a.p + i) * a.W) * 3 + ch;
		const int64_t o = r * a.p; // patch·K + ((ch·tt + d)·p + i)·p
		for (int j0 = 0; j0 < a.p; j0 += V) {
			float v[V];
			for (int k = 0; k < V; k++) {
				int x = qx * a.p + j0 + k;
				v[k] = lut[ch * 256 + line[(int64_t)(mirror ? a.W - 1 - x : x) * 3]];
			}
			kc_stv<V>(a.out, o + j0, v);
		}
	}
}

template <class Out>
static int augment(KcuStream *s, Out o, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip, int patch,
		   int tubelet, bool vec)
{
	const int64_t B = clips->shape[0];
	AugArgs<Out> a = {};
	a.out = o, a.clips = (const uint8_t *)clips->data, a.pos = (const int64_t *)pos->data;
	a.lut = s->aug_lut, a.seed = seed, a.flip = flip, a.tt = tubelet, a.Tp = (int)clips->shape[1] / tubelet;
	a.H = (int)clips->shape[2], a.W = (int)clips->shape[3], a.p = patch;
	a.gw = a.W / patch;
	a.P = (a.H / patch) * a.gw;
	a.rows = B * a.Tp * a.P * 3 * (int64_t)tubelet * patch;
	if (a.rows == 0)
		return 0;
	const cudaStream_t st = (cudaStream_t)s->stream;
	const unsigned grid = kc_grid(a.rows, KC_THREADS);
	if (vec)
		return KLAUNCH(&s->err, (augment_kernel<8, Out>), grid, KC_THREADS, 0, st, a);
	return KLAUNCH(&s->err, (augment_kernel<1, Out>), grid, KC_THREADS, 0, st, a);
}

int kcu_augment_tubelet(KcuStream *s, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip,
			int patch, int tubelet)
{
	const bool vec = kc_vec_ok(patch, {out->data});
	if (out->dtype == KDT_BF16)
		return augment(s, kc_outt<bf16>(out), clips, pos, seed, flip, patch, tubelet, vec);
	if (out->dtype == KDT_F32)
		return augment(s, kc_outt<float>(out), clips, pos, seed, flip, patch, tubelet, vec);
	return augment(s, kc_out(out), clips, pos, seed, flip, patch, tubelet, vec);
}

int kcu_augment(KcuStream *s, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip,
		int patch)
{
	return kcu_augment_tubelet(s, out, clips, pos, seed, flip, patch, 1);
}

// ---- patchify: img (B, T, H, W, C) <-> patches (B, T·P, C·p·p); a permutation both ways ----
struct PatchArgs {
	KcOut dst;
	KcIn src;
	int acc, backward, H, W, C, p, gw, P;
	int64_t n;
};

__global__ void __launch_bounds__(KC_THREADS) patchify_kernel(PatchArgs a)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS, K = (int64_t)a.C * a.p * a.p;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < a.n; e += step) {
		int64_t pe, ie;    // the element's place in patches and in img
		if (!a.backward) { // e indexes patches: (bt, q, ch, i, j)
			const int64_t row = e / K;
			const int r = (int)(e % K), ch = r / (a.p * a.p), i = r / a.p % a.p, j = r % a.p;
			const int64_t bt = row / a.P;
			const int q = (int)(row % a.P);
			pe = e;
			ie = ((bt * a.H + (int64_t)(q / a.gw) * a.p + i) * a.W + (int64_t)(q % a.gw) * a.p + j) * a.C +
			     ch;
		} else { // e indexes img: (bt, y, x, ch)
			const int ch = (int)(e % a.C);
			const int64_t pix = e / a.C;
			const int x = (int)(pix % a.W), y = (int)(pix / a.W % a.H);
			const int64_t bt = pix / ((int64_t)a.W * a.H);
			const int q = (y / a.p) * a.gw + x / a.p;
			ie = e;
			pe = (bt * a.P + q) * K + ((int64_t)ch * a.p + y % a.p) * a.p + x % a.p;
		}
		if (!a.backward)
			kc_st(a.dst, pe, kc_ld(a.src, ie));
		else
			kc_st_acc(a.dst, ie, kc_ld(a.src, pe), a.acc);
	}
}

int kcu_patchify(KcuStream *s, KTensor *patches, KGrad dimg, const KTensor *img, int patch)
{
	const KTensor *shape = img ? img : dimg.t;
	PatchArgs a = {};
	a.H = (int)shape->shape[2], a.W = (int)shape->shape[3], a.C = (int)shape->shape[4], a.p = patch;
	a.gw = a.W / patch, a.P = (a.H / patch) * a.gw, a.n = kern_numel(shape);
	a.backward = img == nullptr;
	if (img)
		a.dst = kc_out(patches), a.src = kc_in(img);
	else
		a.dst = kc_grad(dimg), a.src = kc_in(patches), a.acc = dimg.acc;
	if (a.n == 0)
		return 0;
	return KLAUNCH(&s->err, patchify_kernel, kc_grid(a.n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream, a);
}

// ---- the video embeddings: class token, spatial and temporal positions ----
struct VisArgs {
	KcOut out;
	KcIn x, cls, pos, tpos;
	int T, P, D;
	int64_t n; // B·(1 + T·P)·D
};

template <int V>
__global__ void __launch_bounds__(KC_THREADS) vis_fwd_kernel(VisArgs a)
{
	const int64_t L = 1 + (int64_t)a.T * a.P, step = (int64_t)gridDim.x * KC_THREADS * V;
	for (int64_t e = ((int64_t)blockIdx.x * KC_THREADS + threadIdx.x) * V; e < a.n; e += step) {
		const int k = (int)(e % a.D);
		const int64_t row = e / a.D, b = row / L, l = row % L;
		float v[V], u[V], w[V];
		if (l == 0) {
			for (int i = 0; i < V; i++)
				v[i] = kc_ld(a.cls, k + i) + kc_ld(a.pos, k + i);
		} else {
			const int t = (int)((l - 1) / a.P), q = (int)((l - 1) % a.P);
			const int64_t xi = (b * (L - 1) + l - 1) * a.D + k;
			if (V == 8) {
				kc_ld8(a.x, xi, v), kc_ld8(a.pos, (int64_t)(1 + q) * a.D + k, u);
				kc_ld8(a.tpos, (int64_t)t * a.D + k, w);
			} else {
				v[0] = kc_ld(a.x, xi), u[0] = kc_ld(a.pos, (int64_t)(1 + q) * a.D + k);
				w[0] = kc_ld(a.tpos, (int64_t)t * a.D + k);
			}
			for (int i = 0; i < V; i++)
				v[i] = v[i] + u[i] + w[i];
		}
		if (V == 8)
			kc_st8(a.out, e, v);
		else
			kc_st(a.out, e, v[0]);
	}
}

int kcu_vis_embed_fwd(KcuStream *s, KTensor *out, const KTensor *x, const KTensor *cls, const KTensor *pos,
		      const KTensor *tpos, int /*B: out's numel covers it*/, int T, int P, int D)
{
	VisArgs a = {kc_out(out), kc_in(x), kc_in(cls), kc_in(pos), kc_in(tpos), T, P, D, kern_numel(out)};
	const cudaStream_t st = (cudaStream_t)s->stream;
	if (a.n == 0)
		return 0;
	if (kc_vec_ok(D, {out->data, x->data, cls->data, pos->data, tpos->data}))
		return KLAUNCH(&s->err, vis_fwd_kernel<8>, kc_grid(a.n, 8 * KC_THREADS), KC_THREADS, 0, st, a);
	return KLAUNCH(&s->err, vis_fwd_kernel<1>, kc_grid(a.n, KC_THREADS), KC_THREADS, 0, st, a);
}

// dx: the patch rows of dout (every row but each clip's first)
__global__ void __launch_bounds__(KC_THREADS)
	vis_dx_kernel(KcOut dx, int acc, KcIn dout, int64_t per_b, int D, int64_t n)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step)
		kc_st_acc(dx, e, kc_ld(dout, e + (e / per_b + 1) * D), acc);
}

// row (b·L + l) of dout, picked per group g and row m by a rule
struct VisSrc {
	static constexpr int NOUT = 2; // the class rows feed dcls and pos[0] alike
	KcIn dout;
	int T, P, D, which; // which: 0 class rows (m = b), 1 pos (g = q, m = b·T + t), 2 tpos (g = t, m = b·P + q)
	__device__ void at(int g, int64_t m, int col, float *v) const
	{
		const int64_t L = 1 + (int64_t)T * P;
		int64_t row;
		if (which == 0)
			row = m * L;
		else if (which == 1)
			row = (m / T) * L + 1 + (m % T) * P + g;
		else
			row = (m / P) * L + 1 + (int64_t)g * P + m % P;
		v[0] = v[1] = kc_ld(dout, row * D + col);
	}
};

int kcu_vis_embed_bwd(KcuStream *s, KGrad dx, KGrad dcls, KGrad dpos, KGrad dtpos, const KTensor *dout, int B, int T,
		      int P, int D)
{
	const int64_t L = 1 + (int64_t)T * P;
	if (dx.t && kern_numel(dx.t) > 0) {
		int64_t n = kern_numel(dx.t);
		KC_TRY(KLAUNCH(&s->err, vis_dx_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream,
			       kc_grad(dx), dx.acc, kc_in(dout), (L - 1) * D, D, n));
	}
	VisSrc src = {kc_in(dout), T, P, D, 0};
	KcColDst d = {};
	d.t[0] = kc_grad(dcls), d.acc[0] = dcls.acc, d.t[1] = kc_grad(dpos), d.acc[1] = dpos.acc;
	KC_TRY(kc_colsum(s, src, 1, B, D, d));
	src.which = 1; // pos[1 + q]
	d = KcColDst{};
	d.t[0] = kc_grad(dpos), d.acc[0] = dpos.acc, d.gstride = D;
	d.t[0].p = (char *)d.t[0].p + (size_t)D * kern_dtype_size(dpos.t->dtype);
	KC_TRY(kc_colsum(s, src, P, (int64_t)B * T, D, d));
	src.which = 2;
	d.t[0] = kc_grad(dtpos), d.acc[0] = dtpos.acc;
	return kc_colsum(s, src, T, (int64_t)B * P, D, d);
}

// ---- text embedding forward: wte[id] + pos[l]; an id outside [0, V) is reported, not read ----
__global__ void __launch_bounds__(KC_THREADS) tok_fwd_kernel(KcOut out, const int32_t *ids, KcIn wte, KcIn pos, int L,
							     int D, int64_t V, int64_t n, unsigned long long *errs)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step) {
		const int64_t i = e / D;
		const int k = (int)(e % D), id = ids[i];
		if (id < 0 || id >= V) {
			if (k == 0)
				kc_report(errs, KCU_E_TOK_EMBED, i, (uint32_t)id);
			continue;
		}
		kc_st(out, e, kc_ld(wte, (int64_t)id * D + k) + kc_ld(pos, (i % L) * D + k));
	}
}

int kcu_tok_embed_fwd(KcuStream *s, KTensor *out, const KTensor *ids, const KTensor *wte, const KTensor *pos)
{
	const int64_t n = kern_numel(out), V = wte->shape[0];
	s->err_bound[KCU_E_TOK_EMBED] = V;
	if (n == 0)
		return 0;
	return KLAUNCH(&s->err, tok_fwd_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream,
		       kc_out(out), (const int32_t *)ids->data, kc_in(wte), kc_in(pos), (int)ids->shape[1],
		       (int)wte->shape[1], V, n, s->errs);
}

// ---- end-token search: per row the first position of the largest id, one warp per row ----
__global__ void __launch_bounds__(KC_THREADS) argmax_kernel(int32_t *out, const int32_t *ids, int64_t B, int L)
{
	const int lane = (int)threadIdx.x % 32;
	const int64_t b = (int64_t)blockIdx.x * (KC_THREADS / 32) + threadIdx.x / 32;
	if (b >= B)
		return;
	int best = INT32_MIN, at = L;
	for (int l = lane; l < L; l += 32)
		if (ids[b * L + l] > best)
			best = ids[b * L + l], at = l;
	for (int o = 16; o > 0; o /= 2) { // the larger id wins, the earlier position on ties
		int ob = __shfl_xor_sync(0xffffffffu, best, o), oa = __shfl_xor_sync(0xffffffffu, at, o);
		if (ob > best || (ob == best && oa < at))
			best = ob, at = oa;
	}
	if (lane == 0)
		out[b] = at;
}

int kcu_argmax_rows(KcuStream *s, KTensor *pos, const KTensor *ids)
{
	const int64_t B = ids->shape[0];
	if (B == 0)
		return 0;
	return KLAUNCH(&s->err, argmax_kernel, (unsigned)((B + 7) / 8), KC_THREADS, 0, (cudaStream_t)s->stream,
		       (int32_t *)pos->data, (const int32_t *)ids->data, B, (int)ids->shape[1]);
}

// ---- row pooling: out[b] = x[b, pos[b]]; backward scatters (and zeroes the other rows on set) ----
__global__ void __launch_bounds__(KC_THREADS) pool_kernel(KcOut dst, KcIn src, const int32_t *pos, int L, int D,
							  int backward, int acc, int64_t n, unsigned long long *errs)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step) {
		const int k = (int)(e % D);
		// forward and accumulating backward: e over (b, k); backward that sets: e over (b, l, k)
		const int64_t b = backward && !acc ? e / ((int64_t)L * D) : e / D;
		const int l = backward && !acc ? (int)(e / D % L) : 0, p = pos[b];
		if (p < 0 || p >= L) {
			if (k == 0 && l == 0)
				kc_report(errs, backward ? KCU_E_POOL_BWD : KCU_E_POOL, b, (uint32_t)p);
			continue;
		}
		if (!backward)
			kc_st(dst, e, kc_ld(src, (b * L + p) * D + k));
		else if (acc)
			kc_st_acc(dst, (b * L + p) * D + k, kc_ld(src, e), 1);
		else
			kc_st(dst, e, l == p ? kc_ld(src, b * D + k) : 0.0f);
	}
}

static int pool(KcuStream *s, KcOut dst, KcIn src, const KTensor *pos, int64_t B, int L, int D, int backward, int acc)
{
	const int64_t n = backward && !acc ? B * L * D : B * D;
	s->err_bound[backward ? KCU_E_POOL_BWD : KCU_E_POOL] = L;
	if (n == 0)
		return 0;
	return KLAUNCH(&s->err, pool_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream, dst, src,
		       (const int32_t *)pos->data, L, D, backward, acc, n, s->errs);
}

int kcu_pool_fwd(KcuStream *s, KTensor *out, const KTensor *x, const KTensor *pos)
{
	return pool(s, kc_out(out), kc_in(x), pos, x->shape[0], (int)x->shape[1], (int)x->shape[2], 0, 0);
}

int kcu_pool_bwd(KcuStream *s, KGrad dx, const KTensor *dout, const KTensor *pos)
{
	const KTensor *x = dx.t;
	return pool(s, kc_grad(dx), kc_in(dout), pos, x->shape[0], (int)x->shape[1], (int)x->shape[2], 1, dx.acc);
}
