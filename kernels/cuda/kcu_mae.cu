// The CUDA backend's VideoMAE ops: token gather and its backward, token mean pooling and its
// backward, the decoder's input (visible rows
// and mask tokens plus their positions) and its backward, the normalized-pixel target of the masked
// tubelets and the masked MSE. Index rows are checked by one pass of their own; every output element
// is owned by one thread (a backward finds its source row by binary search in the ascending index row).
#include "kcu_colsum.h" // defines: kc_colsum, KcColDst

// ---- index rows: each (B, M) row strictly ascending inside [0, N); the first bad element is reported ----
__global__ void __launch_bounds__(KC_THREADS)
	idx_check_kernel(const int32_t *idx, int64_t n, int64_t M, int64_t N, int slot, unsigned long long *errs)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step) {
		const int32_t v = idx[e];
		if (v < 0 || v >= N || (e % M && v <= idx[e - 1]))
			kc_report(errs, slot, e, (uint32_t)v);
	}
}

static int check_rows(KcuStream *s, const KTensor *idx, int64_t N, int slot)
{
	const int64_t n = kern_numel(idx);
	s->err_bound[slot] = N;
	if (n == 0)
		return 0;
	return KLAUNCH(&s->err, idx_check_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream,
		       (const int32_t *)idx->data, n, idx->shape[1], N, slot, s->errs);
}

// the place of n in an ascending row of M indices, or -1
__device__ __forceinline__ int row_find(const int32_t *row, int M, int n)
{
	int lo = 0, hi = M;
	while (lo < hi) {
		const int mid = (lo + hi) / 2;
		if (row[mid] < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < M && row[lo] == n ? lo : -1;
}

// ---- token gather: out (B, M, D) = x[b, idx[b, m]]; V elements a thread ----
template <int V>
__global__ void __launch_bounds__(KC_THREADS)
	gather_kernel(KcOut out, KcIn x, const int32_t *idx, int64_t N, int64_t M, int D, int64_t n)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS * V;
	for (int64_t e = ((int64_t)blockIdx.x * KC_THREADS + threadIdx.x) * V; e < n; e += step) {
		const int64_t r = e / D, src = idx[r];
		if (src < 0 || src >= N) // reported by the check
			continue;
		float v[V];
		kc_ldv<V>(x, ((r / M) * N + src) * D + e % D, v);
		kc_stv<V>(out, e, v);
	}
}

int kcu_token_gather_fwd(KcuStream *s, KTensor *out, const KTensor *x, const KTensor *idx)
{
	const int64_t N = x->shape[1], n = kern_numel(out);
	const int D = (int)x->shape[2];
	KC_TRY(check_rows(s, idx, N, KCU_E_TOKEN_GATHER));
	if (n == 0)
		return 0;
	const cudaStream_t st = (cudaStream_t)s->stream;
	const int32_t *ix = (const int32_t *)idx->data;
	if (kc_vec_ok(D, {out->data, x->data}))
		return KLAUNCH(&s->err, gather_kernel<8>, kc_grid(n, 8 * KC_THREADS), KC_THREADS, 0, st, kc_out(out),
			       kc_in(x), ix, N, idx->shape[1], D, n);
	return KLAUNCH(&s->err, gather_kernel<1>, kc_grid(n, KC_THREADS), KC_THREADS, 0, st, kc_out(out), kc_in(x), ix,
		       N, idx->shape[1], D, n);
}

// dx (B, N, D): element (b, n, k) is dout[b, m, k] where idx[b, m] = n, else 0 (set) or unchanged (add)
__global__ void __launch_bounds__(KC_THREADS)
	scatter_kernel(KcOut dx, int acc, KcIn dout, const int32_t *idx, int64_t N, int M, int D, int64_t n)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step) {
		const int64_t r = e / D, b = r / N;
		const int m = row_find(idx + b * M, M, (int)(r % N));
		if (m >= 0)
			kc_st_acc(dx, e, kc_ld(dout, (b * M + m) * D + e % D), acc);
		else if (!acc)
			kc_st(dx, e, 0.0f);
	}
}

int kcu_token_gather_bwd(KcuStream *s, KGrad dx, const KTensor *dout, const KTensor *idx)
{
	const int64_t N = dx.t->shape[1], n = kern_numel(dx.t);
	KC_TRY(check_rows(s, idx, N, KCU_E_TOKEN_GATHER_BWD));
	if (n == 0)
		return 0;
	return KLAUNCH(&s->err, scatter_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream,
		       kc_grad(dx), dx.acc, kc_in(dout), (const int32_t *)idx->data, N, (int)idx->shape[1],
		       (int)dx.t->shape[2], n);
}

// ---- token mean: out (B, D) = mean of rows first..L-1, a thread per output summing in token order ----
__global__ void __launch_bounds__(KC_THREADS) mean_fwd_kernel(KcOut out, KcIn x, int L, int D, int first, int64_t n)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	const float cnt = (float)(L - first);
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step) {
		const int64_t base = e / D * L * D + e % D;
		float sum = 0;
		for (int t = first; t < L; t++)
			sum += kc_ld(x, base + (int64_t)t * D);
		kc_st(out, e, sum / cnt);
	}
}

int kcu_token_mean_fwd(KcuStream *s, KTensor *out, const KTensor *x, int first)
{
	const int64_t n = kern_numel(out);
	if (n == 0)
		return 0;
	return KLAUNCH(&s->err, mean_fwd_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream,
		       kc_out(out), kc_in(x), (int)x->shape[1], (int)x->shape[2], first, n);
}

// dx (B, L, D): dout[b] / (L - first) on rows t >= first, 0 (set) or unchanged (add) before
__global__ void __launch_bounds__(KC_THREADS)
	mean_bwd_kernel(KcOut dx, int acc, KcIn dout, int L, int D, int first, int64_t n)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	const float cnt = (float)(L - first);
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step) {
		if (e / D % L >= first)
			kc_st_acc(dx, e, kc_ld(dout, e / ((int64_t)L * D) * D + e % D) / cnt, acc);
		else if (!acc)
			kc_st(dx, e, 0.0f);
	}
}

int kcu_token_mean_bwd(KcuStream *s, KGrad dx, const KTensor *dout, int first)
{
	const int64_t n = kern_numel(dx.t);
	if (n == 0)
		return 0;
	return KLAUNCH(&s->err, mean_bwd_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream,
		       kc_grad(dx), dx.acc, kc_in(dout), (int)dx.t->shape[1], (int)dx.t->shape[2], first, n);
}

// ---- the decoder's input: out (B, Nv + Nm, D) ----
struct DecArgs {
	KcOut out;
	KcIn x, tok, pos;
	const int32_t *vis, *msk;
	int Nv, Nm, D;
	int64_t N, n;
};

__global__ void __launch_bounds__(KC_THREADS) dec_fwd_kernel(DecArgs a)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS, L = a.Nv + a.Nm;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < a.n; e += step) {
		const int64_t r = e / a.D, b = r / L, l = r % L;
		const int k = (int)(e % a.D);
		const int64_t p = l < a.Nv ? a.vis[b * a.Nv + l] : a.msk[b * a.Nm + l - a.Nv];
		if (p < 0 || p >= a.N) // reported by the check
			continue;
		const float v = l < a.Nv ? kc_ld(a.x, (b * a.Nv + l) * a.D + k) : kc_ld(a.tok, k);
		kc_st(a.out, e, v + kc_ld(a.pos, p * a.D + k));
	}
}

int kcu_mae_decoder_input_fwd(KcuStream *s, KTensor *out, const KTensor *x_vis, const KTensor *mask_token,
			      const KTensor *pos, const KTensor *vis_idx, const KTensor *mask_idx)
{
	DecArgs a = {kc_out(out),
		     kc_in(x_vis),
		     kc_in(mask_token),
		     kc_in(pos),
		     (const int32_t *)vis_idx->data,
		     (const int32_t *)mask_idx->data,
		     (int)vis_idx->shape[1],
		     (int)mask_idx->shape[1],
		     (int)out->shape[2],
		     pos->shape[0],
		     kern_numel(out)};
	KC_TRY(check_rows(s, vis_idx, a.N, KCU_E_MAE_DEC));
	KC_TRY(check_rows(s, mask_idx, a.N, KCU_E_MAE_DEC));
	if (a.n == 0)
		return 0;
	return KLAUNCH(&s->err, dec_fwd_kernel, kc_grid(a.n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream, a);
}

// dx_vis: the visible rows of dout
__global__ void __launch_bounds__(KC_THREADS)
	dec_dx_kernel(KcOut dx, int acc, KcIn dout, int Nv, int64_t L, int D, int64_t n)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step) {
		const int64_t r = e / D, b = r / Nv;
		kc_st_acc(dx, e, kc_ld(dout, (b * L + r % Nv) * D + e % D), acc);
	}
}

// dpos (N, D): per element the sum over b, in order, of its visible row, then its masked row (the
// CPU twin's order: the same f32 sum), starting from the old value when acc
__global__ void __launch_bounds__(KC_THREADS) dec_dpos_kernel(KcOut dpos, int acc, KcIn dout, DecArgs a, int B)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS, L = a.Nv + a.Nm, n = a.N * a.D;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step) {
		const int p = (int)(e / a.D), k = (int)(e % a.D);
		float s = acc ? kc_ldo(dpos, e) : 0.0f;
		for (int64_t b = 0; b < B; b++) {
			const int m = row_find(a.vis + b * a.Nv, a.Nv, p), j = row_find(a.msk + b * a.Nm, a.Nm, p);
			if (m >= 0)
				s += kc_ld(dout, (b * L + m) * a.D + k);
			if (j >= 0)
				s += kc_ld(dout, (b * L + a.Nv + j) * a.D + k);
		}
		kc_st(dpos, e, s);
	}
}

// the mask-token rows of dout, m = b·Nm + j, for the column sum of dmask_token
struct MaskTokSrc {
	static constexpr int NOUT = 1;
	KcIn dout;
	int Nv, Nm, D;
	__device__ void at(int /*g*/, int64_t m, int col, float *v) const
	{
		const int64_t L = Nv + Nm;
		v[0] = kc_ld(dout, ((m / Nm) * L + Nv + m % Nm) * D + col);
	}
};

int kcu_mae_decoder_input_bwd(KcuStream *s, KGrad dx_vis, KGrad dmask_token, KGrad dpos, const KTensor *dout,
			      const KTensor *vis_idx, const KTensor *mask_idx)
{
	const int B = (int)dout->shape[0], Nv = (int)vis_idx->shape[1], Nm = (int)mask_idx->shape[1];
	const int D = (int)dout->shape[2];
	const int64_t L = Nv + Nm;
	const cudaStream_t st = (cudaStream_t)s->stream;
	if (dx_vis.t && kern_numel(dx_vis.t) > 0) {
		const int64_t n = kern_numel(dx_vis.t);
		KC_TRY(KLAUNCH(&s->err, dec_dx_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, st, kc_grad(dx_vis),
			       dx_vis.acc, kc_in(dout), Nv, L, D, n));
	}
	if (dmask_token.t) {
		KcColDst d = {};
		d.t[0] = kc_grad(dmask_token), d.acc[0] = dmask_token.acc;
		KC_TRY(kc_colsum(s, MaskTokSrc{kc_in(dout), Nv, Nm, D}, 1, (int64_t)B * Nm, D, d));
	}
	if (!dpos.t)
		return 0;
	DecArgs a = {};
	a.vis = (const int32_t *)vis_idx->data, a.msk = (const int32_t *)mask_idx->data;
	a.Nv = Nv, a.Nm = Nm, a.D = D, a.N = dpos.t->shape[0];
	KC_TRY(check_rows(s, vis_idx, a.N, KCU_E_MAE_DEC_BWD));
	KC_TRY(check_rows(s, mask_idx, a.N, KCU_E_MAE_DEC_BWD));
	const int64_t n = a.N * D;
	if (n == 0)
		return 0;
	return KLAUNCH(&s->err, dec_dpos_kernel, kc_grid(n, KC_THREADS), KC_THREADS, 0, st, kc_grad(dpos), dpos.acc,
		       kc_in(dout), a, B);
}

// ---- the normalized-pixel target: one thread per (masked token, channel), every step in double as the
// CPU twin (exact integer sums, then divisions and a square root: IEEE-rounded, so the same bits) ----
struct TargetArgs {
	float *out;
	const uint8_t *clips;
	const int64_t *pos;
	const int32_t *idx;
	uint64_t seed;
	int flip, T, H, W, p, tt, gw, P;
	int64_t Nm, N, n; // n = B·Nm·3
};

__global__ void __launch_bounds__(KC_THREADS) target_kernel(TargetArgs a)
{
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	const int K = a.tt * a.p * a.p;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < a.n; e += step) {
		const int ch = (int)(e % 3);
		const int64_t r = e / 3, b = r / a.Nm, tok = a.idx[r];
		if (tok < 0 || tok >= a.N) // reported by the check
			continue;
		const int64_t tp = tok / a.P;
		const int q = (int)(tok % a.P), py = q / a.gw, qx = q % a.gw;
		bool mirror = false;
		if (a.flip) { // kern_augment's flip: Philox4x32-10 at {g, 3, 0}, key seed, bit 0
			const uint64_t g = (uint64_t)a.pos[b];
			mirror = kc_philox_word0((uint32_t)g, (uint32_t)(g >> 32), 3u, 0u, (uint32_t)a.seed,
						 (uint32_t)(a.seed >> 32)) &
				 1u;
		}
		const uint8_t *base = a.clips + ((b * a.T + tp * a.tt) * a.H + (int64_t)py * a.p) * a.W * 3 + ch;
		int64_t S = 0, S2 = 0;
		for (int k = 0; k < K; k++) { // k = (dt·p + i)·p + j
			const int d = k / (a.p * a.p), i = k / a.p % a.p, x = qx * a.p + k % a.p;
			const int v = base[(((int64_t)d * a.H + i) * a.W + (mirror ? a.W - 1 - x : x)) * 3];
			S += v, S2 += v * v;
		}
		const double mean = (double)S / (255.0 * K);
		const double sd = sqrt((double)(K * S2 - S * S) / ((double)K * (K - 1) * 65025.0));
		float *o = a.out + r * K * 3 + ch;
		for (int k = 0; k < K; k++) {
			const int d = k / (a.p * a.p), i = k / a.p % a.p, x = qx * a.p + k % a.p;
			const int v = base[(((int64_t)d * a.H + i) * a.W + (mirror ? a.W - 1 - x : x)) * 3];
			o[(int64_t)k * 3] = (float)((v / 255.0 - mean) / (sd + 1e-6));
		}
	}
}

int kcu_mae_target(KcuStream *s, KTensor *out, const KTensor *clips, const KTensor *pos, const KTensor *mask_idx,
		   uint64_t seed, int flip, int patch, int tubelet)
{
	TargetArgs a = {};
	a.out = (float *)out->data, a.clips = (const uint8_t *)clips->data, a.pos = (const int64_t *)pos->data;
	a.idx = (const int32_t *)mask_idx->data, a.seed = seed, a.flip = flip;
	a.T = (int)clips->shape[1], a.H = (int)clips->shape[2], a.W = (int)clips->shape[3], a.p = patch, a.tt = tubelet;
	a.gw = a.W / patch, a.P = (a.H / patch) * a.gw;
	a.Nm = mask_idx->shape[1], a.N = (int64_t)(a.T / tubelet) * a.P, a.n = kern_numel(mask_idx) * 3;
	KC_TRY(check_rows(s, mask_idx, a.N, KCU_E_MAE_TARGET));
	if (a.n == 0)
		return 0;
	return KLAUNCH(&s->err, target_kernel, kc_grid(a.n, KC_THREADS), KC_THREADS, 0, (cudaStream_t)s->stream, a);
}

// ---- the masked MSE: per block a double partial of Σ (pred − target)² over a fixed stride of
// elements (the grid a function of n alone) and dpred; then one block adds the partials in order ----
enum { MSE_MAX_BLOCKS = 1024, MSE_PER_THREAD = 16 };

__global__ void KC_BOUNDS_F64 mse_kernel(double *part, KcOut dpred, int acc, KcIn pred, KcIn target, double c,
					 int64_t n)
{
	__shared__ double red[KC_THREADS / 32];
	const int64_t step = (int64_t)gridDim.x * KC_THREADS;
	double sum = 0.0;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step) {
		const double d = kc_ldd(pred, e) - kc_ldd(target, e);
		sum += d * d;
		if (!dpred.p)
			continue;
		const double g = d * c;
		if (acc)
			kc_st(dpred, e, kc_ldo(dpred, e) + (float)g);
		else
			kc_std(dpred, e, g);
	}
	sum = kc_block_sumd(sum, red);
	if (threadIdx.x == 0)
		part[blockIdx.x] = sum;
}

__global__ void KC_BOUNDS_F64 mse_finish_kernel(float *loss, const double *part, int G, int64_t n)
{
	__shared__ double red[KC_THREADS / 32];
	double s = 0.0;
	for (int i = (int)threadIdx.x; i < G; i += KC_THREADS)
		s += part[i];
	s = kc_block_sumd(s, red);
	if (threadIdx.x == 0)
		loss[0] = (float)(s / (double)n);
}

int kcu_mae_mse(KcuStream *s, KTensor *loss, KGrad dpred, const KTensor *pred, const KTensor *target, double scale)
{
	const int64_t n = kern_numel(pred);
	const int64_t want = (n + (int64_t)KC_THREADS * MSE_PER_THREAD - 1) / ((int64_t)KC_THREADS * MSE_PER_THREAD);
	const int G = (int)(want < 1 ? 1 : want > MSE_MAX_BLOCKS ? (int64_t)MSE_MAX_BLOCKS : want);
	const cudaStream_t st = (cudaStream_t)s->stream;
	double *part = (double *)s->part;
	KC_TRY(KLAUNCH(&s->err, mse_kernel, (unsigned)G, KC_THREADS, 0, st, part, kc_grad(dpred), dpred.acc,
		       kc_in(pred), kc_in(target), 2.0 * scale / (double)n, n));
	if (!loss)
		return 0;
	return KLAUNCH(&s->err, mse_finish_kernel, 1u, KC_THREADS, 0, st, (float *)loss->data, part, G, n);
}
