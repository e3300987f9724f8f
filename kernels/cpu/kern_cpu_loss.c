// The CPU twins of the contrastive loss ops: OpenCLIP's gathered InfoNCE and FastCLIP's FCCO
// pieces, in double with the summation order of the host twins in tests/ref/ (so results equal theirs).
// Rows are computed in parallel; every scalar sum is then taken serially in the host code's order.
#include "kern_cpu.h" // defines: kcpu_store_grad, kcpu_load_f64, kcpu_ld, kcpu_st

#include <errno.h>

// doubles of workspace any loss op may use for B local and N gathered rows of width d
static size_t ws_doubles(int B, int N, int d)
{
	return (size_t)(4 * (size_t)B + 4 * (size_t)N) * d + 8 * (size_t)B * N + 4 * (size_t)N + 4 * (size_t)B + 64;
}

size_t kcpu_loss_ws_bytes(KernCtx *c, int B, int N, int d)
{
	return ws_doubles(B, N, d) * sizeof(double);
}

static double dot(const double *a, const double *b, int d)
{
	double s = 0.0;
	for (int k = 0; k < d; k++)
		s += a[k] * b[k];
	return s;
}

// bump allocation inside the stream's workspace (sized by kcpu_loss_ws_bytes)
typedef struct {
	double *p;
} Ws;

static double *take(Ws *w, size_t n)
{
	double *r = w->p;
	w->p += n;
	return r;
}

// the batch's features in double: x1, x2 (B, d), X1, X2 (N, d)
typedef struct {
	double *x1, *x2, *X1, *X2;
	double s; // exp(log_s), 0 when log_s is absent
} Feats;

static void load_feats(KernCtx *c, Ws *w, const KContrastBatch *b, int B, int N, int d, Feats *f)
{
	f->x1 = take(w, (size_t)B * d);
	f->x2 = take(w, (size_t)B * d);
	f->X1 = take(w, (size_t)N * d);
	f->X2 = take(w, (size_t)N * d);
	kcpu_load_f64(c, f->x1, b->e1);
	kcpu_load_f64(c, f->x2, b->e2);
	kcpu_load_f64(c, f->X1, b->E1);
	kcpu_load_f64(c, f->X2, b->E2);
	f->s = b->log_s ? exp(kcpu_ld(b->log_s->data, b->log_s->dtype, 0)) : 0.0;
}

// S (B, N): S[i][j] = a_i · M_j
static void sims(KernCtx *c, double *S, const double *A, const double *M, int B, int N, int d)
{
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static) collapse(2)")
	for (int i = 0; i < B; i++)
		for (int j = 0; j < N; j++)
			S[(size_t)i * N + j] = dot(A + (size_t)i * d, M + (size_t)j * d, d);
}

// ---- OpenCLIP: fastclip_openclip ----
// one cross-entropy row (anchor i vs the N rows behind S[i]): fills P[j] = c_j, the weighted
// dloss/dlogit, and Q[j] = c_j·logit_j; returns the row's weighted loss
static double ce_row(const double *Srow, int N, int label, double s, double wgt, double *P, double *Q)
{
	double mx = -INFINITY;
	for (int j = 0; j < N; j++)
		mx = s * Srow[j] > mx ? s * Srow[j] : mx;
	double se = 0.0;
	for (int j = 0; j < N; j++)
		se += exp(s * Srow[j] - mx);
	double lse = mx + log(se);
	for (int j = 0; j < N; j++) {
		double logit = s * Srow[j];
		P[j] = (exp(logit - lse) - (j == label)) * wgt;
		Q[j] = P[j] * logit;
	}
	return (lse - s * Srow[label]) * wgt;
}

int kcpu_infonce(KernCtx *c, const KContrastBatch *b, KTensor *loss, KGrad dE1, KGrad dE2, KGrad dlog_s, int B, int N,
		 int d)
{
	Ws w = {c->ws};
	Feats f;
	load_feats(c, &w, b, B, N, d, &f);
	const int off = b->offset;
	const double s = f.s, wgt = 0.5 / B;
	double *S1 = take(&w, (size_t)B * N), *S2 = take(&w, (size_t)B * N); // e1·E2ᵀ, e2·E1ᵀ
	double *P1 = take(&w, (size_t)B * N), *P2 = take(&w, (size_t)B * N), *Q1 = take(&w, (size_t)B * N);
	double *Q2 = take(&w, (size_t)B * N), *L = take(&w, 2 * (size_t)B);
	double *G1 = take(&w, (size_t)N * d), *G2 = take(&w, (size_t)N * d);
	sims(c, S1, f.x1, f.X2, B, N, d);
	sims(c, S2, f.x2, f.X1, B, N, d);
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int i = 0; i < B; i++) {
		size_t r = (size_t)i * N;
		L[2 * i] = ce_row(S1 + r, N, off + i, s, wgt, P1 + r, Q1 + r);
		L[2 * i + 1] = ce_row(S2 + r, N, off + i, s, wgt, P2 + r, Q2 + r);
	}
	// row j of dE1 gets, for anchors i in order, e2_i's negative term and (on its own row) e1_i's
	// anchor term; dE2 alike: the host code's order of additions
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int j = 0; j < N; j++) {
		double *g1 = G1 + (size_t)j * d, *g2 = G2 + (size_t)j * d;
		memset(g1, 0, sizeof(double) * (size_t)d);
		memset(g2, 0, sizeof(double) * (size_t)d);
		for (int i = 0; i < B; i++) {
			size_t r = (size_t)i * N;
			const double *a1 = f.x1 + (size_t)i * d, *a2 = f.x2 + (size_t)i * d;
			for (int k = 0; k < d; k++)
				g2[k] += P1[r + j] * s * a1[k];
			if (j == off + i)
				for (int q = 0; q < N; q++)
					for (int k = 0; k < d; k++)
						g1[k] += P1[r + q] * s * f.X2[(size_t)q * d + k];
			for (int k = 0; k < d; k++)
				g1[k] += P2[r + j] * s * a2[k];
			if (j == off + i)
				for (int q = 0; q < N; q++)
					for (int k = 0; k < d; k++)
						g2[k] += P2[r + q] * s * f.X1[(size_t)q * d + k];
		}
	}
	double l = 0.0, dls = 0.0;
	for (int i = 0; i < B; i++) {
		l += L[2 * i];
		for (int j = 0; j < N; j++)
			dls += Q1[(size_t)i * N + j];
		l += L[2 * i + 1];
		for (int j = 0; j < N; j++)
			dls += Q2[(size_t)i * N + j];
	}
	kcpu_st(loss->data, loss->dtype, 0, l);
	kcpu_store_grad(c, dE1, G1, (int64_t)N * d, 1.0);
	kcpu_store_grad(c, dE2, G2, (int64_t)N * d, 1.0);
	kcpu_store_grad(c, dlog_s, &dls, 1, 1.0);
	return 0;
}

// ---- FastCLIP local phase: fastclip_local ----
static int u_is_bad(float u)
{
	return isnan(u) || isinf(u) || u < 1e-35f;
}

// a value as the STAT dtype holds it (float rounding in the f32 path)
static double held(double x, int f64)
{
	return f64 ? x : (double)(float)x;
}

static double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

// u ← (1−γ)·u·rescale + γ·g, or g when u is bad (upstream: only when γ < 1, KFccoParams)
static double u_update(double u_old, double g, const KFccoParams *p, double rescale, int f64)
{
	if (u_is_bad((float)u_old) && !(p->upstream_reset && p->gamma >= 1.0))
		return held(g, f64);
	if (p->upstream_reset)
		rescale = held(rescale, f64); // torch.exp in the table's dtype: inf where float overflows
	return held((1.0 - p->gamma) * u_old * rescale + p->gamma * g, f64);
}

// 1 when some id is outside [0, n) (latched under op)
static int ids_bad(KernCtx *c, const KTensor *ids, int64_t n, const char *op)
{
	const int64_t *id = ids->data;
	for (int64_t i = 0; i < kern_numel(ids); i++)
		if (id[i] < 0 || id[i] >= n) {
			kern_latch(c, -ERANGE, op, "sample id %lld at [%lld] is outside the table [0, %lld)",
				   (long long)id[i], (long long)i, (long long)n);
			return 1;
		}
	return 0;
}

// v2, one side: anchor row Srow vs the gathered rows, the table row's τ, bound, u, m, v; writes
// the pack fields of that side
static void local_v2_side(const double *Srow, int N, int r, double pos, const KFccoParams *p, const double *row,
			  int side, double *out, int f64)
{
	const double tau_old = row[KFCCO_T_TAU1 + side], b_old = row[KFCCO_T_B1 + side];
	const double u_old = row[KFCCO_T_U1 + side], m_old = row[KFCCO_T_M1 + side], v_old = row[KFCCO_T_V1 + side];
	const double sc = 1.0 / tau_old;
	double bound = b_old;
	for (int j = 0; j < N; j++)
		bound = fmax(bound, (Srow[j] - pos) * sc);
	bound = held(bound, f64); // the table and pack hold it as float: g, u and the surrogate agree
	double sum = 0.0, sx = 0.0;
	for (int j = 0; j < N; j++) {
		if (j == r)
			continue;
		double x = (Srow[j] - pos) * sc, e = exp(x - bound);
		sum += e;
		sx += e * x;
	}
	double g = sum / (N - 1);
	double u = u_update(u_old, g, p, exp(b_old - bound), f64);
	double grad = -sx / (u + p->eps) / (N - 1) + log(u + p->eps) + bound + p->rho;
	grad = clampd(grad, -p->grad_clamp, p->grad_clamp);
	double m = held(p->beta1 * m_old + (1.0 - p->beta1) * grad, f64);
	double v = held(p->beta2 * v_old + (1.0 - p->beta2) * grad * grad, f64);
	double mh = m / (1.0 - pow(p->beta1, p->epoch + 1)), vh = v / (1.0 - pow(p->beta2, p->epoch + 1));
	double tau = clampd(tau_old - p->lr_tau * mh / (sqrt(vh) + p->eps_tau), p->tau_min, p->tau_max);
	out[KFCCO_P_U1 + side] = u;
	out[KFCCO_P_TAU1 + side] = tau;
	out[KFCCO_P_B1 + side] = bound;
	out[KFCCO_P_TAU1_OLD + side] = tau_old;
	out[KFCCO_P_M1 + side] = m;
	out[KFCCO_P_V1 + side] = v;
}

int kcpu_fcco_local(KernCtx *c, const KContrastBatch *b, const KTensor *ids, const KTensor *table, const KFccoParams *p,
		    KTensor *pack, int B, int N, int d)
{
	if (ids_bad(c, ids, table->shape[0], "fcco_local"))
		return 0;
	Ws w = {c->ws};
	Feats f;
	load_feats(c, &w, b, B, N, d, &f);
	double *S1 = take(&w, (size_t)B * N), *S2 = take(&w, (size_t)B * N);
	sims(c, S1, f.x1, f.X2, B, N, d);
	sims(c, S2, f.x2, f.X1, B, N, d);
	const int tw = kern_fcco_table_width(p->version), pw = kern_fcco_pack_width(p->version);
	const int f64 = table->dtype == KDT_F64, off = b->offset;
	const int64_t *id = ids->data;
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int i = 0; i < B; i++) {
		const double *S1r = S1 + (size_t)i * N, *S2r = S2 + (size_t)i * N;
		double row[10], out[12];
		for (int k = 0; k < tw; k++)
			row[k] = kcpu_ld(table->data, table->dtype, id[i] * tw + k);
		double pos = dot(f.x1 + (size_t)i * d, f.x2 + (size_t)i * d, d);
		const int r = off + i;
		if (p->version != KFCCO_V2) {
			double sum1 = 0.0, sum2 = 0.0;
			for (int j = 0; j < N; j++)
				if (j != r)
					sum1 += exp((S1r[j] - pos) * f.s);
			for (int j = 0; j < N; j++)
				if (j != r)
					sum2 += exp((S2r[j] - pos) * f.s);
			out[KFCCO_P_U1] = u_update(row[KFCCO_T_U1], sum1 / (N - 1), p, 1.0, f64);
			out[KFCCO_P_U2] = u_update(row[KFCCO_T_U2], sum2 / (N - 1), p, 1.0, f64);
		} else {
			local_v2_side(S1r, N, r, pos, p, row, 0, out, f64);
			local_v2_side(S2r, N, r, pos, p, row, 1, out, f64);
		}
		for (int k = 0; k < pw; k++)
			kcpu_st(pack->data, pack->dtype, (int64_t)i * pw + k, out[k]);
	}
	return 0;
}

int kcpu_fcco_scatter(KernCtx *c, KTensor *table, const KTensor *ids_all, const KTensor *pack_all, int pw)
{
	if (ids_bad(c, ids_all, table->shape[0], "fcco_scatter"))
		return 0;
	// table column k <- pack field from[k]
	static const int from[10] = {KFCCO_P_U1, KFCCO_P_U2, KFCCO_P_TAU1, KFCCO_P_TAU2, KFCCO_P_B1,
				     KFCCO_P_B2, KFCCO_P_M1, KFCCO_P_M2,   KFCCO_P_V1,   KFCCO_P_V2};
	const int tw = (int)table->shape[1];
	const int64_t *id = ids_all->data;
	for (int64_t r = 0; r < kern_numel(ids_all); r++) // in order: a later row wins
		for (int k = 0; k < tw; k++)
			kcpu_st(table->data, table->dtype, id[r] * tw + k,
				kcpu_ld(pack_all->data, pack_all->dtype, r * pw + from[k]));
	return 0;
}

// ---- FastCLIP surrogate: fastclip_surrogate ----
// the scale, bound and weight of a pack row's side k: v2 uses the row's τ and bound
typedef struct {
	double sc, bd, w;
} Side;

static Side side_of(const KTensor *pk, int64_t row, int pw, int k, int v2, double s, int B, int N, double eps)
{
	const void *p = pk->data;
	Side r;
	r.sc = v2 ? 1.0 / kcpu_ld(p, pk->dtype, row * pw + KFCCO_P_TAU1_OLD + k) : s;
	r.bd = v2 ? kcpu_ld(p, pk->dtype, row * pw + KFCCO_P_B1 + k) : 0.0;
	r.w = 1.0 / (2.0 * B * (N - 1) * (kcpu_ld(p, pk->dtype, row * pw + KFCCO_P_U1 + k) + eps));
	return r;
}

// term 1, one side: anchor a (row Srow of sims vs M) with its positive pvec; adds to ga, gp as the
// host's anchor_grad does; CX[j] = c·x; returns Σ c
static double anchor_side(const double *a, const double *pvec, const double *M, const double *Srow, int N, int d, int r,
			  double pos, Side sd, double *ga, double *gp, double *CX)
{
	double val = 0.0, csum = 0.0;
	for (int j = 0; j < N; j++) {
		if (j == r)
			continue;
		double x = (Srow[j] - pos) * sd.sc, cj = exp(x - sd.bd) * sd.w;
		val += cj;
		csum += cj;
		CX[j] = cj * x;
		const double *mj = M + (size_t)j * d;
		for (int k = 0; k < d; k++)
			ga[k] += cj * sd.sc * mj[k];
	}
	for (int k = 0; k < d; k++) {
		ga[k] -= csum * sd.sc * pvec[k];
		gp[k] -= csum * sd.sc * a[k];
	}
	return val;
}

int kcpu_fcco_surrogate(KernCtx *c, const KContrastBatch *b, const KTensor *pack, const KTensor *pack_all,
			const KFccoParams *p, KTensor *loss, KGrad de1, KGrad de2, KGrad dlog_s, int B, int N, int d)
{
	Ws w = {c->ws};
	Feats f;
	load_feats(c, &w, b, B, N, d, &f);
	const int off = b->offset, pw = kern_fcco_pack_width(p->version), v2 = p->version == KFCCO_V2;
	double *S1 = take(&w, (size_t)B * N), *S2 = take(&w, (size_t)B * N), *D = take(&w, (size_t)N);
	double *G1 = take(&w, (size_t)B * d), *G2 = take(&w, (size_t)B * d);
	double *T1 = take(&w, (size_t)B * N), *T2 = take(&w, (size_t)B * N), *V = take(&w, 2 * (size_t)B);
	double *C1 = take(&w, (size_t)N * B), *C2 = take(&w, (size_t)N * B), *X1 = take(&w, (size_t)N * B);
	double *X2 = take(&w, (size_t)N * B), *NV = take(&w, 2 * (size_t)N);
	sims(c, S1, f.x1, f.X2, B, N, d);
	sims(c, S2, f.x2, f.X1, B, N, d);
	int nt = kcpu_threads(c);
	(void)nt;
	// term 2 coefficients: gathered anchor j (detached) vs this rank's rows i as negatives
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int j = 0; j < N; j++) {
		D[j] = dot(f.X1 + (size_t)j * d, f.X2 + (size_t)j * d, d);
		Side s1 = side_of(pack_all, j, pw, 0, v2, f.s, B, N, p->eps),
		     s2 = side_of(pack_all, j, pw, 1, v2, f.s, B, N, p->eps);
		double v1 = 0.0, vv2 = 0.0;
		for (int i = 0; i < B; i++) {
			size_t q = (size_t)j * B + i;
			if (i == j - off) {
				C1[q] = C2[q] = X1[q] = X2[q] = 0.0;
				continue;
			}
			double x = (S2[(size_t)i * N + j] - D[j]) * s1.sc; // E1_j · e2_i
			C1[q] = exp(x - s1.bd) * s1.w;
			X1[q] = C1[q] * x;
			v1 += C1[q];
		}
		for (int i = 0; i < B; i++) {
			size_t q = (size_t)j * B + i;
			if (i == j - off)
				continue;
			double x = (S1[(size_t)i * N + j] - D[j]) * s2.sc; // E2_j · e1_i
			C2[q] = exp(x - s2.bd) * s2.w;
			X2[q] = C2[q] * x;
			vv2 += C2[q];
		}
		NV[2 * j] = v1;
		NV[2 * j + 1] = vv2;
	}
	// term 1 and every gradient of local row i, in the host code's order of additions
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int i = 0; i < B; i++) {
		const double *x1 = f.x1 + (size_t)i * d, *x2 = f.x2 + (size_t)i * d;
		double *g1 = G1 + (size_t)i * d, *g2 = G2 + (size_t)i * d;
		memset(g1, 0, sizeof(double) * (size_t)d);
		memset(g2, 0, sizeof(double) * (size_t)d);
		double pos = dot(x1, x2, d);
		Side s1 = side_of(pack, i, pw, 0, v2, f.s, B, N, p->eps),
		     s2 = side_of(pack, i, pw, 1, v2, f.s, B, N, p->eps);
		V[2 * i] = anchor_side(x1, x2, f.X2, S1 + (size_t)i * N, N, d, off + i, pos, s1, g1, g2,
				       T1 + (size_t)i * N);
		V[2 * i + 1] = anchor_side(x2, x1, f.X1, S2 + (size_t)i * N, N, d, off + i, pos, s2, g2, g1,
					   T2 + (size_t)i * N);
		for (int j = 0; j < N; j++) {
			if (i == j - off)
				continue;
			Side a1 = side_of(pack_all, j, pw, 0, v2, f.s, B, N, p->eps);
			Side a2 = side_of(pack_all, j, pw, 1, v2, f.s, B, N, p->eps);
			size_t q = (size_t)j * B + i;
			for (int k = 0; k < d; k++)
				g2[k] += C1[q] * a1.sc * f.X1[(size_t)j * d + k];
			for (int k = 0; k < d; k++)
				g1[k] += C2[q] * a2.sc * f.X2[(size_t)j * d + k];
		}
	}
	// the scalars, serially in the host code's order
	double L = 0.0, dls = 0.0, logu = 0.0;
	for (int i = 0; i < B; i++) {
		L += V[2 * i];
		L += V[2 * i + 1];
		for (int j = 0; j < N; j++)
			if (j != off + i)
				dls += T1[(size_t)i * N + j];
		for (int j = 0; j < N; j++)
			if (j != off + i)
				dls += T2[(size_t)i * N + j];
		logu += log(kcpu_ld(pack->data, pack->dtype, (int64_t)i * pw + KFCCO_P_U1)) +
			log(kcpu_ld(pack->data, pack->dtype, (int64_t)i * pw + KFCCO_P_U2));
	}
	for (int j = 0; j < N; j++) {
		L += NV[2 * j];
		L += NV[2 * j + 1];
		for (int i = 0; i < B; i++)
			if (i != j - off)
				dls += X1[(size_t)j * B + i];
		for (int i = 0; i < B; i++)
			if (i != j - off)
				dls += X2[(size_t)j * B + i];
	}
	double scale = 1.0, dlog = 0.0;
	if (p->version == KFCCO_V0) {
		dlog = dls;
	} else if (p->version == KFCCO_V3) { // RGCL-g: L/s_detached + ρ/s + ½·mean(log u1 + log u2)/s
		double extra = p->rho + 0.5 * logu / B;
		dlog = dls / f.s - extra / f.s;
		L = L / f.s + extra / f.s;
		scale = 1.0 / f.s;
	}
	kcpu_st(loss->data, loss->dtype, 0, L);
	kcpu_store_grad(c, de1, G1, (int64_t)B * d, scale);
	kcpu_store_grad(c, de2, G2, (int64_t)B * d, scale);
	kcpu_store_grad(c, dlog_s, &dlog, 1, 1.0);
	return 0;
}

// ---- logged metrics of the local batch (the trainer's nce and acc) ----
int kcpu_clip_metrics(KernCtx *c, KTensor *metrics, const KTensor *e1, const KTensor *e2, const KTensor *log_s, int B,
		      int d)
{
	Ws w = {c->ws};
	double *x1 = take(&w, (size_t)B * d), *x2 = take(&w, (size_t)B * d), *sim = take(&w, (size_t)B * B);
	kcpu_load_f64(c, x1, e1);
	kcpu_load_f64(c, x2, e2);
	sims(c, sim, x1, x2, B, B, d);
	const double sc = exp(kcpu_ld(log_s->data, log_s->dtype, 0));
	double lrow = 0.0, lcol = 0.0;
	int hits = 0;
	for (int i = 0; i < B; i++) {
		double mr = -INFINITY, mc = -INFINITY, sr = 0.0, scol = 0.0;
		int best = 0;
		for (int j = 0; j < B; j++) {
			if (sim[i * B + j] > mr) {
				mr = sim[i * B + j];
				best = j;
			}
			mc = fmax(mc, sim[j * B + i]);
		}
		for (int j = 0; j < B; j++) {
			sr += exp(sc * (sim[i * B + j] - mr));
			scol += exp(sc * (sim[j * B + i] - mc));
		}
		lrow += sc * (mr - sim[i * B + i]) + log(sr);
		lcol += sc * (mc - sim[i * B + i]) + log(scol);
		hits += best == i;
	}
	kcpu_st(metrics->data, metrics->dtype, 0, 0.5 * (lrow + lcol) / B);
	kcpu_st(metrics->data, metrics->dtype, 1, (double)hits / B);
	return 0;
}

// ---- the global temperature's Adam step (FastclipTemp) ----
int kcpu_temp_step(KernCtx *c, KTensor *log_s, KTensor *mv, const KTensor *grad, const KTensor *norm_clip,
		   KTensor *copy, const KTempStep *h)
{
	// the clipped gradient as kern_optimizer forms it for the model's parameters: f32 product
	float gf = (float)kcpu_ld(grad->data, grad->dtype, 0);
	if (norm_clip)
		gf *= (float)kcpu_ld(norm_clip->data, norm_clip->dtype, 1);
	double g = gf;
	if (!isfinite(g)) {
		kern_latch(c, -ERANGE, "temp_step", "the temperature gradient is %g", g);
		return 0;
	}
	double ls = kcpu_ld(log_s->data, log_s->dtype, 0), m = kcpu_ld(mv->data, mv->dtype, 0);
	double v = kcpu_ld(mv->data, mv->dtype, 1);
	double live[KTEMP_LIVE_N]; // the per-step values: from the device tensor when given (a graph's replay)
	if (h->live)
		memcpy(live, h->live->data, sizeof live);
	else
		kern_temp_live(h, live);
	double lr = exp(-ls) <= h->tau_low ? live[KTEMP_LIVE_LR_LOW] : live[KTEMP_LIVE_LR];
	m = h->beta1 * m + (1.0 - h->beta1) * g;
	v = h->beta2 * v + (1.0 - h->beta2) * g * g;
	double bc1 = live[KTEMP_LIVE_BC1], bc2 = live[KTEMP_LIVE_BC2];
	double denom = sqrt(v) / sqrt(bc2) + h->eps;
	ls = clampd(ls - lr / bc1 * m / denom, h->lo, h->hi);
	kcpu_st(mv->data, mv->dtype, 0, m);
	kcpu_st(mv->data, mv->dtype, 1, v);
	kcpu_st(log_s->data, log_s->dtype, 0, ls);
	if (copy)
		kcpu_st(copy->data, copy->dtype, 0, ls);
	return 0;
}

// ---- VideoMAE's masked MSE: the loss summed in double in element order, dpred = (pred − target)·2·scale/n ----
int kcpu_mae_mse(KernCtx *c, KTensor *loss, KGrad dpred, const KTensor *pred, const KTensor *target, double scale)
{
	const int64_t n = kern_numel(pred);
	double *diff = kcpu_arena_alloc(c, sizeof(double) * (size_t)n);
	if (!diff)
		return -ENOMEM;
	for (int64_t i = 0; i < n; i++)
		diff[i] = kcpu_ld(pred->data, pred->dtype, i) - kcpu_ld(target->data, target->dtype, i);
	if (loss) {
		double s = 0.0;
		for (int64_t i = 0; i < n; i++)
			s += diff[i] * diff[i];
		kcpu_st(loss->data, loss->dtype, 0, s / (double)n);
	}
	kcpu_store_grad(c, dpred, diff, n, 2.0 * scale / (double)n);
	kcpu_arena_reset(c);
	return 0;
}
