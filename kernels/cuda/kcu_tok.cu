// The text embedding's backward on the CUDA backend without float atomics: the token positions
// are sorted by id (one block, stable radix sort), then every id's rows are summed in a fixed
// two-level order (windows of sorted positions, then a run's windows in order), one thread per
// column; the positional gradient is a fixed-order column sum.
#include "kcu_colsum.h" // defines: kc_colsum, KcColDst

enum { SORT_THREADS = 512, SORT_WARPS = SORT_THREADS / 32, DIGIT_BITS = 4, DIGITS = 1 << DIGIT_BITS };
enum { TOK_WINDOW = 64 }; // sorted positions a level-1 block sums (the runs' two-level order below)

// exclusive prefix sum of v over the block, in thread order
__device__ __forceinline__ int block_excl_scan(int v, int *wsum)
{
	const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
	int inc = v;
	for (int o = 1; o < 32; o *= 2) {
		int y = __shfl_up_sync(0xffffffffu, inc, o);
		if (lane >= o)
			inc += y;
	}
	if (lane == 31)
		wsum[warp] = inc;
	__syncthreads();
	if (warp == 0) {
		int w = lane < SORT_WARPS ? wsum[lane] : 0, wi = w;
		for (int o = 1; o < 32; o *= 2) {
			int y = __shfl_up_sync(0xffffffffu, wi, o);
			if (lane >= o)
				wi += y;
		}
		if (lane < SORT_WARPS)
			wsum[lane] = wi - w;
	}
	__syncthreads();
	int r = wsum[warp] + inc - v;
	__syncthreads(); // wsum is reused by the next scan
	return r;
}

// One block sorts the n (id, position) pairs by id, DIGIT_BITS per pass, stably: thread t owns
// positions [n·t/T, n·(t+1)/T) and the digit-major histogram makes its elements land after thread
// t−1's. Pass p reads buffer p % 2 and writes the other. An id outside [0, V) is reported and the
// sort stops (skip = 1: the row sums write nothing).
__global__ void __launch_bounds__(SORT_THREADS)
	tok_sort_kernel(const int32_t *ids, int n, int64_t V, int passes, int32_t *keys, int32_t *vals, int *skip,
			unsigned long long *errs)
{
	__shared__ int hist[DIGITS * SORT_THREADS];
	__shared__ int wsum[SORT_WARPS];
	__shared__ int bad;
	const int t = (int)threadIdx.x;
	const int lo = (int)((int64_t)n * t / SORT_THREADS), hi = (int)((int64_t)n * (t + 1) / SORT_THREADS);
	if (t == 0)
		bad = 0;
	__syncthreads();
	for (int i = lo; i < hi; i++) {
		const int id = ids[i];
		if (id < 0 || id >= V) {
			kc_report(errs, KCU_E_TOK_EMBED_BWD, i, (uint32_t)id);
			atomicOr(&bad, 1);
		}
		keys[i] = id, vals[i] = i;
	}
	__syncthreads();
	if (t == 0)
		*skip = bad;
	if (bad)
		return; // every thread leaves here together
	for (int pass = 0; pass < passes; pass++) {
		const int shift = pass * DIGIT_BITS;
		const int32_t *ks = keys + (pass % 2) * n, *vs = vals + (pass % 2) * n;
		int32_t *kd = keys + (1 - pass % 2) * n, *vd = vals + (1 - pass % 2) * n;
		for (int d = 0; d < DIGITS; d++)
			hist[d * SORT_THREADS + t] = 0;
		for (int i = lo; i < hi; i++)
			hist[((ks[i] >> shift) & (DIGITS - 1)) * SORT_THREADS + t]++;
		__syncthreads();
		// exclusive scan of hist in digit-major order: each thread its 16 consecutive entries
		int run = 0;
		for (int k = 0; k < DIGITS; k++) {
			int c = hist[t * DIGITS + k];
			hist[t * DIGITS + k] = run;
			run += c;
		}
		const int off = block_excl_scan(run, wsum);
		for (int k = 0; k < DIGITS; k++)
			hist[t * DIGITS + k] += off;
		__syncthreads();
		for (int i = lo; i < hi; i++) {
			int at = hist[((ks[i] >> shift) & (DIGITS - 1)) * SORT_THREADS + t]++;
			kd[at] = ks[i], vd[at] = vs[i];
		}
		__syncthreads(); // the next pass reads what this one wrote
	}
}

// The row sums in a fixed two-level order, so that a long run (the padding id: ~60 of a caption's
// 77 positions) is not one block's serial loop. The sorted positions are cut into windows of W;
// a segment is a window's stretch of one id. Level 1, a block per window, sums each segment in
// position order: a run inside the window is final and written; a segment continuing from the
// previous window goes to head[w], the window's last segment when it starts a run that goes on
// into the next window to tail[w]. Level 2, a block per window whose tail[w] was written, adds
// head[v] of the following windows in order and writes the run's row. One thread per column.
struct TokRuns {
	KcOut dwte;
	int acc;
	KcIn dout;
	const int32_t *keys, *vals;
	int n, D, W, nwin;
	float *head, *tail; // nwin x D each
	const int *skip;
};

__device__ __forceinline__ int tok_end(const TokRuns &r, int w)
{
	const int64_t end = (int64_t)(w + 1) * r.W;
	return end < r.n ? (int)end : r.n;
}
// the window's last segment goes on into the next window
__device__ __forceinline__ bool tok_continues(const TokRuns &r, int w)
{
	const int hi = tok_end(r, w);
	return hi < r.n && r.keys[hi] == r.keys[hi - 1];
}

__global__ void __launch_bounds__(KC_THREADS) tok_seg_kernel(TokRuns r)
{
	const int w = (int)blockIdx.x, col = (int)(blockIdx.y * KC_THREADS + threadIdx.x);
	if (*r.skip || col >= r.D)
		return;
	const int lo = w * r.W, hi = tok_end(r, w);
	float s = 0.0f;
	for (int i = lo, start = lo; i < hi; i++) {
		s += kc_ld(r.dout, (int64_t)r.vals[i] * r.D + col);
		if (i + 1 < hi && r.keys[i + 1] == r.keys[i])
			continue;
		if (start == lo && lo > 0 && r.keys[lo - 1] == r.keys[lo]) // from the previous window
			r.head[(int64_t)w * r.D + col] = s;
		else if (i + 1 == hi && tok_continues(r, w)) // a run's first segment
			r.tail[(int64_t)w * r.D + col] = s;
		else
			kc_st_acc(r.dwte, (int64_t)r.keys[i] * r.D + col, s, r.acc);
		s = 0.0f, start = i + 1;
	}
}

__global__ void __launch_bounds__(KC_THREADS) tok_run_kernel(TokRuns r)
{
	const int w = (int)blockIdx.x, col = (int)(blockIdx.y * KC_THREADS + threadIdx.x);
	if (*r.skip || col >= r.D || !tok_continues(r, w))
		return;
	const int lo = w * r.W, last = tok_end(r, w) - 1;
	if (lo > 0 && r.keys[lo - 1] == r.keys[lo] && r.keys[lo] == r.keys[last])
		return; // the whole window continues a run that started earlier
	const int32_t key = r.keys[last];
	float s = r.tail[(int64_t)w * r.D + col];
	for (int v = w + 1; v < r.nwin; v++) { // the run ends in v unless it fills v and goes on
		s += r.head[(int64_t)v * r.D + col];
		if (r.keys[tok_end(r, v) - 1] != key || !tok_continues(r, v))
			break;
	}
	kc_st_acc(r.dwte, (int64_t)key * r.D + col, s, r.acc);
}

// dpos[l] = Σ_b dout[b, l]
struct TokPosSrc {
	static constexpr int NOUT = 1;
	KcIn dout;
	int L, D;
	__device__ void at(int g, int64_t m, int col, float *v) const { v[0] = kc_ld(dout, (m * L + g) * D + col); }
};

int kcu_tok_embed_bwd(KcuStream *s, KGrad dwte, KGrad dpos, const KTensor *dout, const KTensor *ids)
{
	const int64_t B = ids->shape[0], L = ids->shape[1], n = B * L, V = dwte.t->shape[0], D = dwte.t->shape[1];
	const int64_t Lmax = dpos.t->shape[0];
	const cudaStream_t st = (cudaStream_t)s->stream;
	// the sort's buffers (4n) and the runs' partial sums (2 per window and column) live in the
	// stream's scratch: windows of TOK_WINDOW positions, wider when the partials would not fit
	if (4 * n + 2 * D > (int64_t)KCU_PART_FLOATS)
		return -ENOSPC;
	int W = TOK_WINDOW;
	while (2 * ((n + W - 1) / W) * D > (int64_t)KCU_PART_FLOATS - 4 * n)
		W *= 2;
	const int nwin = (int)((n + W - 1) / W);
	s->err_bound[KCU_E_TOK_EMBED_BWD] = V;
	const size_t esz = kern_dtype_size(dpos.t->dtype);
	if (!dpos.acc && Lmax > L) // rows no position reaches
		KC_TRY(cuda_try(&s->err, cudaMemsetAsync((char *)dpos.t->data + (size_t)(L * D) * esz, 0,
							 (size_t)((Lmax - L) * D) * esz, st)));
	if (n > 0) {
		TokPosSrc src = {kc_in(dout), (int)L, (int)D};
		KcColDst d = {};
		d.t[0] = kc_grad(dpos), d.acc[0] = dpos.acc, d.gstride = D;
		KC_TRY(kc_colsum(s, src, (int)L, B, (int)D, d));
	}
	if (!dwte.acc) // KG_SET: rows no token uses are zeros
		KC_TRY(cuda_try(&s->err, cudaMemsetAsync(dwte.t->data, 0, kern_nbytes(dwte.t), st)));
	if (n == 0)
		return 0;
	int passes = 1;
	while (passes * DIGIT_BITS < 63 && (V - 1) >> (passes * DIGIT_BITS))
		passes++;
	int32_t *keys = (int32_t *)s->part, *vals = keys + 2 * n;
	KC_TRY(KLAUNCH(&s->err, tok_sort_kernel, 1, SORT_THREADS, 0, st, (const int32_t *)ids->data, (int)n, V, passes,
		       keys, vals, s->flags, s->errs));
	TokRuns r = {};
	r.dwte = kc_grad(dwte), r.acc = dwte.acc, r.dout = kc_in(dout), r.n = (int)n, r.D = (int)D, r.skip = s->flags;
	r.keys = keys + (passes % 2) * n, r.vals = vals + (passes % 2) * n;
	r.W = W, r.nwin = nwin, r.head = s->part + 4 * n, r.tail = r.head + (int64_t)nwin * D;
	dim3 grid((unsigned)nwin, (unsigned)((D + KC_THREADS - 1) / KC_THREADS));
	KC_TRY(KLAUNCH(&s->err, tok_seg_kernel, grid, KC_THREADS, 0, st, r));
	return KLAUNCH(&s->err, tok_run_kernel, grid, KC_THREADS, 0, st, r);
}
