// FastCLIP (v0-v3) local phase and surrogate, after FastCLIPLoss / FastCLIPLossIndividual in
// Optimization-AI/fast_clip src/fast_clip/loss.py @efd89d5. Sums accumulate in double.
#include "fastclip_ref.h" // defines: FastclipBatch, FastclipGrads, FastclipTables

#include <errno.h>  // defines: EINVAL, ENOMEM, ERANGE
#include <math.h>   // defines: exp, log, pow, sqrt, fmax, fmin
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memset

static double dot(const float *a, const float *b, int d)
{
	double s = 0.0;
	for (int k = 0; k < d; k++)
		s += (double)a[k] * (double)b[k];
	return s;
}

static int batch_check(const FastclipBatch *b)
{
	if (!b || b->B < 1 || b->K < 1 || b->d < 1 || b->rank < 0 || b->rank >= b->K)
		return -EINVAL;
	if ((int64_t)b->K * b->B < 2 || !b->e1 || !b->e2 || !b->E1 || !b->E2)
		return -EINVAL;
	return 0;
}

static double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

// one anchor vs the gathered rows of M: sum over j≠excl of exp((a·M_j − pos)·sc − bound).
// With bound_io non-NULL (v2) the bound is first raised to the max scaled gap over all j
// (diagonal included), and *sxa receives the sum of exp(x − bound)·x (x the scaled gap).
static double anchor_sum(const float *a, const float *M, int n, int d, int excl, double pos, double sc,
			 double *bound_io, double *sxa)
{
	double bound = 0.0;
	if (bound_io) {
		bound = *bound_io;
		for (int j = 0; j < n; j++)
			bound = fmax(bound, (dot(a, M + (size_t)j * d, d) - pos) * sc);
		bound = (float)bound; // the table and pack hold it as float: g, u and the surrogate agree
		*bound_io = bound;
	}
	double sum = 0.0, sx = 0.0;
	for (int j = 0; j < n; j++) {
		if (j == excl)
			continue;
		double x = (dot(a, M + (size_t)j * d, d) - pos) * sc;
		double e = exp(x - bound);
		sum += e;
		sx += e * x;
	}
	if (sxa)
		*sxa = sx;
	return sum;
}

// u ← (1−γ)·u·exp(b_old − b_new) + γ·g, or g when u is bad (0, < 1e-35, inf, nan); with
// upstream (FastCLIP's u_update) the reset only when γ < 1, and the rescale as float
static float u_update(float u_old, double g, double gamma, double rescale, int upstream)
{
	if (fastclip_u_is_bad(u_old) && !(upstream && gamma >= 1.0))
		return (float)g;
	if (upstream)
		rescale = (float)rescale;
	return (float)((1.0 - gamma) * (double)u_old * rescale + gamma * g);
}

int fastclip_local(const FastclipConfig *cfg, const FastclipTables *t, int epoch, const FastclipBatch *b, float *pack)
{
	if (!cfg || !t || !pack || batch_check(b) < 0 || cfg->kind == FASTCLIP_OPENCLIP || t->kind != cfg->kind)
		return -EINVAL;
	if (!b->ids || epoch < 0)
		return -EINVAL;
	for (int i = 0; i < b->B; i++)
		if (b->ids[i] < 0 || b->ids[i] >= t->n)
			return -ERANGE;
	const int N = b->K * b->B, off = b->rank * b->B, d = b->d, w = fastclip_pack_width(cfg->kind);
	const double gamma = fastclip_gamma(cfg, epoch);
	double beta1, beta2;
	fastclip_tau_betas(cfg, epoch, &beta1, &beta2);
	const double s = exp(b->log_s);
	for (int i = 0; i < b->B; i++) {
		const float *x1 = b->e1 + (size_t)i * d, *x2 = b->e2 + (size_t)i * d;
		const int64_t id = b->ids[i];
		float *p = pack + (size_t)i * w; // (w)
		double pos = dot(x1, x2, d);
		if (cfg->kind != FASTCLIP_V2) {
			double g1 = anchor_sum(x1, b->E2, N, d, off + i, pos, s, NULL, NULL) / (N - 1);
			double g2 = anchor_sum(x2, b->E1, N, d, off + i, pos, s, NULL, NULL) / (N - 1);
			p[FASTCLIP_P_U1] = u_update(t->u1[id], g1, gamma, 1.0, cfg->upstream_reset);
			p[FASTCLIP_P_U2] = u_update(t->u2[id], g2, gamma, 1.0, cfg->upstream_reset);
			continue;
		}
		// v2: per-sample τ of each anchor, log-sum-exp bound, then its own Adam-style τ step
		const float tau_old[2] = {t->tau1[id], t->tau2[id]};
		const float b_old[2] = {t->bound1[id], t->bound2[id]};
		const float u_old[2] = {t->u1[id], t->u2[id]};
		const float m_old[2] = {t->m1[id], t->m2[id]}, v_old[2] = {t->v1[id], t->v2[id]};
		for (int side = 0; side < 2; side++) {
			const float *a = side == 0 ? x1 : x2, *M = side == 0 ? b->E2 : b->E1;
			double bound = b_old[side], sxa;
			double g = anchor_sum(a, M, N, d, off + i, pos, 1.0 / tau_old[side], &bound, &sxa) / (N - 1);
			float u =
				u_update(u_old[side], g, gamma, exp((double)b_old[side] - bound), cfg->upstream_reset);
			double grad =
				-sxa / ((double)u + cfg->eps) / (N - 1) + log((double)u + cfg->eps) + bound + cfg->rho;
			grad = clampd(grad, -cfg->grad_clamp_tau, cfg->grad_clamp_tau);
			float m = (float)(beta1 * m_old[side] + (1.0 - beta1) * grad);
			float v = (float)(beta2 * v_old[side] + (1.0 - beta2) * grad * grad);
			double mh = m / (1.0 - pow(beta1, epoch + 1)), vh = v / (1.0 - pow(beta2, epoch + 1));
			double tau = clampd(tau_old[side] - cfg->lr_tau * mh / (sqrt(vh) + cfg->eps_tau), cfg->tau_min,
					    cfg->tau_max);
			p[FASTCLIP_P_U1 + side] = u;
			p[FASTCLIP_P_TAU1 + side] = (float)tau;
			p[FASTCLIP_P_B1 + side] = (float)bound;
			p[FASTCLIP_P_TAU1_OLD + side] = tau_old[side];
			p[FASTCLIP_P_M1 + side] = m;
			p[FASTCLIP_P_V1 + side] = v;
		}
	}
	return 0;
}

// Adds the gradient of Σ_j exp((a·M_j − pos)·sc − bound)·wgt over j≠excl to ga (w.r.t. the
// anchor a) and gp (w.r.t. the positive the diagonal term pos = a·p came from), and returns the
// term's value; *dls += Σ c·x (its derivative w.r.t. log s when sc = s).
static double anchor_grad(const float *a, const float *M, int n, int d, int excl, double pos, double sc, double bound,
			  double wgt, const float *pvec, double *ga, double *gp, double *dls)
{
	double val = 0.0, csum = 0.0;
	for (int j = 0; j < n; j++) {
		if (j == excl)
			continue;
		const float *mj = M + (size_t)j * d;
		double x = (dot(a, mj, d) - pos) * sc;
		double c = exp(x - bound) * wgt;
		val += c;
		csum += c;
		*dls += c * x;
		for (int k = 0; k < d; k++)
			ga[k] += c * sc * mj[k];
	}
	for (int k = 0; k < d; k++) {
		ga[k] -= csum * sc * pvec[k];
		gp[k] -= csum * sc * a[k];
	}
	return val;
}

// Adds the gradient of Σ_{i≠excl} exp((A·x_i − D)·sc − bound)·wgt w.r.t. the local rows x_i
// (the detached anchor A of another row contrasted against this rank's features) to gx (B, d).
static double negatives_grad(const float *A, double D, const float *X, int B, int d, int excl, double sc, double bound,
			     double wgt, double *gx, double *dls)
{
	double val = 0.0;
	for (int i = 0; i < B; i++) {
		if (i == excl)
			continue;
		double x = (dot(A, X + (size_t)i * d, d) - D) * sc;
		double c = exp(x - bound) * wgt;
		val += c;
		*dls += c * x;
		double *gi = gx + (size_t)i * d;
		for (int k = 0; k < d; k++)
			gi[k] += c * sc * A[k];
	}
	return val;
}

int fastclip_surrogate(const FastclipConfig *cfg, const FastclipBatch *b, const float *pack_local,
		       const float *pack_all, FastclipGrads *out)
{
	if (!cfg || batch_check(b) < 0 || !pack_local || !pack_all || !out || !out->de1 || !out->de2)
		return -EINVAL;
	if (cfg->kind == FASTCLIP_OPENCLIP || (unsigned)cfg->kind >= FASTCLIP_NKINDS)
		return -EINVAL;
	const int B = b->B, N = b->K * b->B, off = b->rank * b->B, d = b->d, w = fastclip_pack_width(cfg->kind);
	const bool v2 = cfg->kind == FASTCLIP_V2;
	const double s = exp(b->log_s);
	double *g1 = calloc((size_t)B * d, sizeof(double)), *g2 = calloc((size_t)B * d, sizeof(double)); // (B, d)
	if (!g1 || !g2) {
		free(g1);
		free(g2);
		return -ENOMEM;
	}
	double loss = 0.0, dls = 0.0, logu = 0.0;
	// term 1: this rank's anchors vs all gathered rows, over its own updated u (mean over B)
	for (int i = 0; i < B; i++) {
		const float *x1 = b->e1 + (size_t)i * d, *x2 = b->e2 + (size_t)i * d, *p = pack_local + (size_t)i * w;
		double pos = dot(x1, x2, d);
		double u1 = p[FASTCLIP_P_U1], u2 = p[FASTCLIP_P_U2];
		double sc1 = v2 ? 1.0 / p[FASTCLIP_P_TAU1_OLD] : s, sc2 = v2 ? 1.0 / p[FASTCLIP_P_TAU2_OLD] : s;
		double bd1 = v2 ? p[FASTCLIP_P_B1] : 0.0, bd2 = v2 ? p[FASTCLIP_P_B2] : 0.0;
		double w1 = 1.0 / (2.0 * B * (N - 1) * (u1 + cfg->eps)),
		       w2 = 1.0 / (2.0 * B * (N - 1) * (u2 + cfg->eps));
		loss += anchor_grad(x1, b->E2, N, d, off + i, pos, sc1, bd1, w1, x2, g1 + (size_t)i * d,
				    g2 + (size_t)i * d, &dls);
		loss += anchor_grad(x2, b->E1, N, d, off + i, pos, sc2, bd2, w2, x1, g2 + (size_t)i * d,
				    g1 + (size_t)i * d, &dls);
		logu += log(u1) + log(u2);
	}
	// term 2: every gathered anchor (detached, its gathered u, τ, bound) vs this rank's rows as
	// negatives, normaliser B(N−1)/N, mean over N anchors
	for (int j = 0; j < N; j++) {
		const float *A1 = b->E1 + (size_t)j * d, *A2 = b->E2 + (size_t)j * d, *p = pack_all + (size_t)j * w;
		double D = dot(A1, A2, d);
		double sc1 = v2 ? 1.0 / p[FASTCLIP_P_TAU1_OLD] : s, sc2 = v2 ? 1.0 / p[FASTCLIP_P_TAU2_OLD] : s;
		double bd1 = v2 ? p[FASTCLIP_P_B1] : 0.0, bd2 = v2 ? p[FASTCLIP_P_B2] : 0.0;
		double w1 = 1.0 / (2.0 * B * (N - 1) * ((double)p[FASTCLIP_P_U1] + cfg->eps));
		double w2 = 1.0 / (2.0 * B * (N - 1) * ((double)p[FASTCLIP_P_U2] + cfg->eps));
		loss += negatives_grad(A1, D, b->e2, B, d, j - off, sc1, bd1, w1, g2, &dls);
		loss += negatives_grad(A2, D, b->e1, B, d, j - off, sc2, bd2, w2, g1, &dls);
	}
	double scale = 1.0;
	out->dlog_s = 0.0;
	if (cfg->kind == FASTCLIP_V0) {
		out->dlog_s = dls;
	} else if (cfg->kind == FASTCLIP_V3) {
		// RGCL-g: L/s_detached + ρ/s + ½·mean(log u1 + log u2)/s
		double extra = cfg->rho + 0.5 * logu / B;
		out->dlog_s = dls / s - extra / s;
		loss = loss / s + extra / s;
		scale = 1.0 / s;
	}
	out->loss = loss;
	for (size_t k = 0; k < (size_t)B * d; k++) {
		out->de1[k] = (float)(g1[k] * scale);
		out->de2[k] = (float)(g2[k] * scale);
	}
	free(g1);
	free(g2);
	return 0;
}
