// The CUDA backend's FastCLIP pieces (FCCO): the local phase (g, u and v2's per-sample τ), the
// table scatter with "a later row wins" resolved by looking ahead, not by racing, and the
// surrogate whose gradient is the FCCO estimator; in double as the CPU twins (kern_cpu_loss.c).
#include "kcu_loss.h" // defines: KcWs, kc_sims, kc_rowdots, kc_exp_log_s

struct LocalArgs {
	int version, N, off, tw, pw, upstream_reset;
	int64_t n_table;
	double gamma, eps, rho, lr_tau, b1, b2, eps_tau, tau_min, tau_max, clamp, bc1, bc2;
};

__device__ __forceinline__ double held(double x)
{
	return (double)(float)x;
} // the STAT dtype holds f32
__device__ __forceinline__ double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}
__device__ __forceinline__ bool u_bad(float u)
{
	return isnan(u) || isinf(u) || u < 1e-35f;
}
// as kern_cpu_loss.c's u_update: FastCLIP's rule skips the reset at γ = 1 (KFccoParams)
__device__ __forceinline__ double u_update(double u_old, double g, double gamma, double rescale, int upstream)
{
	if (u_bad((float)u_old) && !(upstream && gamma >= 1.0))
		return held(g);
	if (upstream)
		rescale = held(rescale);
	return held((1.0 - gamma) * u_old * rescale + gamma * g);
}

// block i: local anchor i against the N gathered rows, both sides; thread 0 writes its pack row
__global__ void KC_BOUNDS_F64 local_kernel(float *pack, const double *S1, const double *S2, const double *pos,
					   const int64_t *ids, const float *table, const float *log_s, LocalArgs a,
					   unsigned long long *errs)
{
	__shared__ double red[KC_THREADS / 32];
	const int i = (int)blockIdx.x, r = a.off + i;
	const int64_t id = ids[i];
	if (id < 0 || id >= a.n_table) { // the whole block leaves
		if (threadIdx.x == 0)
			kc_report(errs, KCU_E_FCCO_LOCAL, i, (uint32_t)id);
		return;
	}
	const float *row = table + id * a.tw;
	float *out = pack + (int64_t)i * a.pw;
	for (int side = 0; side < 2; side++) {
		const double *S = (side ? S2 : S1) + (size_t)i * a.N;
		if (a.version != KFCCO_V2) {
			const double sc = kc_exp_log_s(log_s);
			double sum = 0.0;
			for (int j = (int)threadIdx.x; j < a.N; j += KC_THREADS)
				sum += j != r ? exp((S[j] - pos[i]) * sc) : 0.0;
			sum = kc_block_sumd(sum, red);
			if (threadIdx.x == 0)
				out[KFCCO_P_U1 + side] = (float)u_update(row[KFCCO_T_U1 + side], sum / (a.N - 1),
									 a.gamma, 1.0, a.upstream_reset);
			continue;
		}
		const double tau_old = row[KFCCO_T_TAU1 + side], b_old = row[KFCCO_T_B1 + side], sc = 1.0 / tau_old;
		double bound = b_old;
		for (int j = (int)threadIdx.x; j < a.N; j += KC_THREADS)
			bound = fmax(bound, (S[j] - pos[i]) * sc);
		bound = held(kc_block_maxd(bound, red)); // the table and the pack hold it as float
		double sum = 0.0, sx = 0.0;
		for (int j = (int)threadIdx.x; j < a.N; j += KC_THREADS) {
			if (j == r)
				continue;
			double x = (S[j] - pos[i]) * sc, e = exp(x - bound);
			sum += e, sx += e * x;
		}
		sum = kc_block_sumd(sum, red);
		sx = kc_block_sumd(sx, red);
		if (threadIdx.x != 0)
			continue;
		const double u = u_update(row[KFCCO_T_U1 + side], sum / (a.N - 1), a.gamma, exp(b_old - bound),
					  a.upstream_reset);
		double grad = -sx / (u + a.eps) / (a.N - 1) + log(u + a.eps) + bound + a.rho;
		grad = clampd(grad, -a.clamp, a.clamp);
		const double m = held(a.b1 * row[KFCCO_T_M1 + side] + (1.0 - a.b1) * grad);
		const double v = held(a.b2 * row[KFCCO_T_V1 + side] + (1.0 - a.b2) * grad * grad);
		const double tau =
			clampd(tau_old - a.lr_tau * (m / a.bc1) / (sqrt(v / a.bc2) + a.eps_tau), a.tau_min, a.tau_max);
		out[KFCCO_P_U1 + side] = (float)u, out[KFCCO_P_TAU1 + side] = (float)tau;
		out[KFCCO_P_B1 + side] = (float)bound, out[KFCCO_P_TAU1_OLD + side] = (float)tau_old;
		out[KFCCO_P_M1 + side] = (float)m, out[KFCCO_P_V1 + side] = (float)v;
	}
}

int kcu_fcco_local(KcuStream *s, const KContrastBatch *b, const KTensor *ids, const KTensor *table,
		   const KFccoParams *p, KTensor *pack, int B, int N, int d)
{
	KcWs w = {(char *)s->ws};
	double *S1 = kc_ws_take(&w, (size_t)B * N), *S2 = kc_ws_take(&w, (size_t)B * N),
	       *pos = kc_ws_take(&w, (size_t)B);
	LocalArgs a = {p->version,
		       N,
		       b->offset,
		       kern_fcco_table_width(p->version),
		       kern_fcco_pack_width(p->version),
		       p->upstream_reset,
		       table->shape[0],
		       p->gamma,
		       p->eps,
		       p->rho,
		       p->lr_tau,
		       p->beta1,
		       p->beta2,
		       p->eps_tau,
		       p->tau_min,
		       p->tau_max,
		       p->grad_clamp,
		       1.0 - pow(p->beta1, p->epoch + 1),
		       1.0 - pow(p->beta2, p->epoch + 1)};
	s->err_bound[KCU_E_FCCO_LOCAL] = table->shape[0];
	KC_TRY(kc_sims(s, S1, b->e1, b->E2, B, N, d));
	KC_TRY(kc_sims(s, S2, b->e2, b->E1, B, N, d));
	KC_TRY(kc_rowdots(s, pos, b->e1, b->e2, B, d));
	return KLAUNCH(&s->err, local_kernel, (unsigned)B, KC_THREADS, 0, (cudaStream_t)s->stream, (float *)pack->data,
		       S1, S2, pos, (const int64_t *)ids->data, (const float *)table->data,
		       b->log_s ? (const float *)b->log_s->data : nullptr, a, s->errs);
}

// ---- the table scatter: every id checked first; then row r writes unless a later row has its id ----
__global__ void KC_BOUNDS_F64 scatter_check_kernel(const int64_t *ids, int64_t N, int64_t n, int *bad,
						   unsigned long long *errs)
{
	const int64_t r = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x;
	if (r < N && (ids[r] < 0 || ids[r] >= n)) {
		kc_report(errs, KCU_E_FCCO_SCATTER, r, (uint32_t)ids[r]);
		atomicOr(bad, 1);
	}
}

__global__ void KC_BOUNDS_F64 scatter_kernel(float *table, const int64_t *ids, const float *pack, int64_t N, int tw,
					     int pw, const int *bad)
{
	const int64_t r = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x;
	if (*bad || r >= N)
		return;
	const int64_t id = ids[r];
	for (int64_t q = r + 1; q < N; q++)
		if (ids[q] == id)
			return; // a later row wins
	// table columns U1 U2 TAU1 TAU2 B1 B2 M1 M2 V1 V2 <- the pack's fields of those names, which
	// skip the two old τ after B2
	static_assert(KFCCO_P_B2 == 5 && KFCCO_P_M1 == 8 && KFCCO_T_M1 == 6 && KFCCO_P_V2 == 11,
		      "pack and table order");
	for (int k = 0; k < tw; k++)
		table[id * tw + k] = pack[r * pw + (k < KFCCO_T_M1 ? k : k + 2)];
}

int kcu_fcco_scatter(KcuStream *s, KTensor *table, const KTensor *ids_all, const KTensor *pack_all, int pw)
{
	const int64_t N = kern_numel(ids_all), n = table->shape[0];
	const cudaStream_t st = (cudaStream_t)s->stream;
	const unsigned grid = (unsigned)((N + KC_THREADS - 1) / KC_THREADS);
	s->err_bound[KCU_E_FCCO_SCATTER] = n;
	if (N == 0)
		return 0;
	int *bad = s->flags + 1;
	KC_TRY(cuda_try(&s->err, cudaMemsetAsync(bad, 0, sizeof *bad, st)));
	KC_TRY(KLAUNCH(&s->err, scatter_check_kernel, grid, KC_THREADS, 0, st, (const int64_t *)ids_all->data, N, n,
		       bad, s->errs));
	return KLAUNCH(&s->err, scatter_kernel, grid, KC_THREADS, 0, st, (float *)table->data,
		       (const int64_t *)ids_all->data, (const float *)pack_all->data, N, (int)table->shape[1], pw, bad);
}

// ---- the surrogate ----
// a pack row's side k: scale (v2: its old τ), bound (v2) and weight 1/(2B(N−1)(u + ε))
struct Side {
	double sc, bd, w;
};
struct SurArgs {
	int v2, version, B, N, d, off, pw;
	double eps, rho;
};
__device__ __forceinline__ Side side_of(const float *pk, int64_t row, int k, const SurArgs &a, double s)
{
	const float *p = pk + row * a.pw;
	Side r;
	r.sc = a.v2 ? 1.0 / p[KFCCO_P_TAU1_OLD + k] : s;
	r.bd = a.v2 ? p[KFCCO_P_B1 + k] : 0.0;
	r.w = 1.0 / (2.0 * a.B * (a.N - 1) * (p[KFCCO_P_U1 + k] + a.eps));
	return r;
}

// block j, term 2: gathered anchor j (detached) against this rank's rows i as negatives. Writes
// the coefficients scaled by the anchor's scale, C1[j][i] (E1_j vs e2_i) and C2[j][i] (E2_j vs e1_i),
// Σ C (the loss) and Σ C·x (dloss/dlog_s)
__global__ void KC_BOUNDS_F64 term2_kernel(double *C1, double *C2, double *NV, double *XS, const double *S1,
					   const double *S2, const double *D, const float *pack_all, const float *log_s,
					   SurArgs a)
{
	__shared__ double red[KC_THREADS / 32];
	const int j = (int)blockIdx.x;
	const double s = kc_exp_log_s(log_s);
	const Side s1 = side_of(pack_all, j, 0, a, s), s2 = side_of(pack_all, j, 1, a, s);
	double v1 = 0.0, v2 = 0.0, xs = 0.0;
	for (int i = (int)threadIdx.x; i < a.B; i += KC_THREADS) {
		const size_t q = (size_t)j * a.B + i;
		if (i == j - a.off) {
			C1[q] = C2[q] = 0.0;
			continue;
		}
		double x = (S2[(size_t)i * a.N + j] - D[j]) * s1.sc, c = exp(x - s1.bd) * s1.w; // E1_j · e2_i
		C1[q] = c * s1.sc, v1 += c, xs += c * x;
		x = (S1[(size_t)i * a.N + j] - D[j]) * s2.sc, c = exp(x - s2.bd) * s2.w; // E2_j · e1_i
		C2[q] = c * s2.sc, v2 += c, xs += c * x;
	}
	v1 = kc_block_sumd(v1, red);
	v2 = kc_block_sumd(v2, red);
	xs = kc_block_sumd(xs, red);
	if (threadIdx.x == 0)
		NV[2 * j] = v1, NV[2 * j + 1] = v2, XS[j] = xs;
}

// block i, term 1: local anchor i against every gathered row but its own; A1, A2 scaled by the
// anchor's scale; coef[i] = Σ A1 + Σ A2 (each times its scale), the positive pair's weight
__global__ void KC_BOUNDS_F64 term1_kernel(double *A1, double *A2, double *V, double *TX, double *coef,
					   const double *S1, const double *S2, const double *pos, const float *pack,
					   const float *log_s, SurArgs a)
{
	__shared__ double red[KC_THREADS / 32];
	const int i = (int)blockIdx.x, r = a.off + i;
	const double s = kc_exp_log_s(log_s);
	const Side s1 = side_of(pack, i, 0, a, s), s2 = side_of(pack, i, 1, a, s);
	double v1 = 0.0, v2 = 0.0, tx = 0.0;
	for (int j = (int)threadIdx.x; j < a.N; j += KC_THREADS) {
		const size_t q = (size_t)i * a.N + j;
		if (j == r) {
			A1[q] = A2[q] = 0.0;
			continue;
		}
		double x = (S1[q] - pos[i]) * s1.sc, c = exp(x - s1.bd) * s1.w;
		A1[q] = c * s1.sc, v1 += c, tx += c * x;
		x = (S2[q] - pos[i]) * s2.sc, c = exp(x - s2.bd) * s2.w;
		A2[q] = c * s2.sc, v2 += c, tx += c * x;
	}
	v1 = kc_block_sumd(v1, red);
	v2 = kc_block_sumd(v2, red);
	tx = kc_block_sumd(tx, red);
	if (threadIdx.x == 0)
		V[2 * i] = v1, V[2 * i + 1] = v2, TX[i] = tx, coef[i] = v1 * s1.sc + v2 * s2.sc;
}

// de1 = (G1 − coef·e2) · scale, de2 = (G2 − coef·e1) · scale; scale 1/s for v3 (RGCL-g)
__global__ void KC_BOUNDS_F64 sur_grad_kernel(KcOut de, int acc, const double *G, const double *coef, KcIn pvec,
					      const float *log_s, SurArgs a)
{
	const double scale = a.version == KFCCO_V3 ? 1.0 / kc_exp_log_s(log_s) : 1.0;
	const int64_t n = (int64_t)a.B * a.d, step = (int64_t)gridDim.x * KC_THREADS;
	for (int64_t e = (int64_t)blockIdx.x * KC_THREADS + threadIdx.x; e < n; e += step)
		kc_st_acc(de, e, (float)((G[e] - coef[e / a.d] * kc_ldd(pvec, e)) * scale), acc);
}

// the loss and dloss/dlog_s by version, summed by one block
__global__ void KC_BOUNDS_F64 sur_finish_kernel(float *loss, KcOut dls, int dls_acc, const double *V, const double *TX,
						const double *NV, const double *XS, const float *pack,
						const float *log_s, SurArgs a)
{
	__shared__ double red[KC_THREADS / 32];
	double L = 0.0, dl = 0.0, lu = 0.0;
	for (int i = (int)threadIdx.x; i < a.B; i += KC_THREADS) {
		L += V[2 * i] + V[2 * i + 1], dl += TX[i];
		lu += log((double)pack[(int64_t)i * a.pw + KFCCO_P_U1]) +
		      log((double)pack[(int64_t)i * a.pw + KFCCO_P_U2]);
	}
	for (int j = (int)threadIdx.x; j < a.N; j += KC_THREADS)
		L += NV[2 * j] + NV[2 * j + 1], dl += XS[j];
	L = kc_block_sumd(L, red);
	dl = kc_block_sumd(dl, red);
	lu = kc_block_sumd(lu, red);
	if (threadIdx.x != 0)
		return;
	double dlog = 0.0;
	if (a.version == KFCCO_V0) {
		dlog = dl;
	} else if (a.version == KFCCO_V3) { // RGCL-g: L/s_detached + ρ/s + ½·mean(log u1 + log u2)/s
		const double s = kc_exp_log_s(log_s), extra = a.rho + 0.5 * lu / a.B;
		dlog = dl / s - extra / s;
		L = L / s + extra / s;
	}
	loss[0] = (float)L;
	if (dls.p)
		kc_st_acc(dls, 0, (float)dlog, dls_acc);
}

int kcu_fcco_surrogate(KcuStream *s, const KContrastBatch *b, const KTensor *pack, const KTensor *pack_all,
		       const KFccoParams *p, KTensor *loss, KGrad de1, KGrad de2, KGrad dlog_s, int B, int N, int d)
{
	KcWs w = {(char *)s->ws};
	double *S1 = kc_ws_take(&w, (size_t)B * N), *S2 = kc_ws_take(&w, (size_t)B * N);
	double *A1 = kc_ws_take(&w, (size_t)B * N), *A2 = kc_ws_take(&w, (size_t)B * N);
	double *C1 = kc_ws_take(&w, (size_t)N * B), *C2 = kc_ws_take(&w, (size_t)N * B);
	double *G = kc_ws_take(&w, 2 * (size_t)B * d), *pos = kc_ws_take(&w, (size_t)B), *D = kc_ws_take(&w, (size_t)N);
	double *V = kc_ws_take(&w, 2 * (size_t)B), *TX = kc_ws_take(&w, (size_t)B), *coef = kc_ws_take(&w, (size_t)B);
	double *NV = kc_ws_take(&w, 2 * (size_t)N), *XS = kc_ws_take(&w, (size_t)N);
	const cudaStream_t st = (cudaStream_t)s->stream;
	const float *ls = b->log_s ? (const float *)b->log_s->data : nullptr;
	const float *pk = (const float *)pack->data, *pka = (const float *)pack_all->data;
	SurArgs a = {p->version == KFCCO_V2,           p->version, B,     N, d, b->offset,
		     kern_fcco_pack_width(p->version), p->eps,     p->rho};
	KC_TRY(kc_sims(s, S1, b->e1, b->E2, B, N, d));
	KC_TRY(kc_sims(s, S2, b->e2, b->E1, B, N, d));
	KC_TRY(kc_rowdots(s, pos, b->e1, b->e2, B, d));
	KC_TRY(kc_rowdots(s, D, b->E1, b->E2, N, d));
	KC_TRY(KLAUNCH(&s->err, term2_kernel, (unsigned)N, KC_THREADS, 0, st, C1, C2, NV, XS, S1, S2, D, pka, ls, a));
	KC_TRY(KLAUNCH(&s->err, term1_kernel, (unsigned)B, KC_THREADS, 0, st, A1, A2, V, TX, coef, S1, S2, pos, pk, ls,
		       a));
	// G1 = A1·E2 + C2ᵀ·E2 (gradient of e1), G2 = A2·E1 + C1ᵀ·E1 (gradient of e2)
	const struct {
		KGrad g;
		const double *A, *C;
		const KTensor *M, *pvec;
	} sides[2] = {{de1, A1, C2, b->E2, b->e2}, {de2, A2, C1, b->E1, b->e1}};
	for (int k = 0; k < 2; k++) {
		if (!sides[k].g.t)
			continue;
		double *Gk = G + (size_t)k * B * d;
		KcMM m = {};
		m.M = B, m.N = d, m.K = N, m.A = kc_f64in(sides[k].A), m.lda = N, m.B = kc_in(sides[k].M), m.ldb = d;
		m.C = kc_f64out(Gk), m.ldc = d, m.alpha = 1.0f;
		KC_TRY(kc_mm_f64(s, m));
		m.ta = 1, m.A = kc_f64in(sides[k].C), m.lda = B, m.accumulate = 1;
		KC_TRY(kc_mm_f64(s, m));
		KC_TRY(KLAUNCH(&s->err, sur_grad_kernel, kc_grid((int64_t)B * d, KC_THREADS), KC_THREADS, 0, st,
			       kc_grad(sides[k].g), sides[k].g.acc, Gk, coef, kc_in(sides[k].pvec), ls, a));
	}
	return KLAUNCH(&s->err, sur_finish_kernel, 1, KC_THREADS, 0, st, (float *)loss->data, kc_grad(dlog_s),
		       dlog_s.acc, V, TX, NV, XS, pk, ls, a);
}
