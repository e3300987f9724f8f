// The linear probe (eval.h, "the linear probe"): multinomial logistic regression on frozen features,
// fitted the same way every time: standardised features, full-batch L-BFGS in double, fixed loop order.
#include "eval.h" // defines: EvalProbeOpts, EvalProbeFit, eval_probe_fit, eval_linear_logits

#include <errno.h>  // defines: EINVAL, ENOMEM, EDOM
#include <float.h>  // defines: FLT_MAX
#include <math.h>   // defines: exp, log, sqrt, fabs, isfinite, INFINITY
#include <stdlib.h> // defines: calloc, malloc, free
#include <string.h> // defines: memcpy, memset

enum { HISTORY = 10, MAX_HALVINGS = 50 }; // L-BFGS pairs kept; backtracking steps per line search
#define ARMIJO 1e-4                       // sufficient decrease of the line search
// multiply-adds of one pass below which the threads would cost more than they save (a parallel
// region costs milliseconds on a busy machine, and a fit runs thousands of passes)
#define PARALLEL_WORK (1 << 20)

// the labelled rows, standardised: mean cross-entropy + (l2/2)|W|^2 over theta = [W (K, d) | b (K)]
typedef struct {
	double *x; // (n, d)
	int *y;    // (n) in [0, K)
	int64_t n;
	int d, K;
	double l2;
	double *r;    // (n, K) scratch: softmax - one-hot
	double *loss; // (n)
} Problem;

// f(theta) and its gradient g. Rows are independent and the gradient of class k sums its rows in
// order, so the result is the same bits for any number of threads.
static double objective(const Problem *p, const double *th, double *g)
{
	const int d = p->d, K = p->K;
	const double *W = th, *b = th + (size_t)K * d;
	const int big = (double)p->n * K * d >= PARALLEL_WORK;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (big)
#endif
	for (int64_t i = 0; i < p->n; i++) {
		const double *xi = p->x + (size_t)i * d;
		double *ri = p->r + (size_t)i * K, m = -INFINITY, sum = 0;
		for (int k = 0; k < K; k++) {
			const double *wk = W + (size_t)k * d;
			double s = b[k];
			for (int j = 0; j < d; j++)
				s += wk[j] * xi[j];
			ri[k] = s;
			m = s > m ? s : m;
		}
		for (int k = 0; k < K; k++)
			sum += exp(ri[k] - m);
		const double lse = m + log(sum);
		p->loss[i] = lse - ri[p->y[i]];
		for (int k = 0; k < K; k++)
			ri[k] = exp(ri[k] - lse) - (k == p->y[i]);
	}
	double f = 0, w2 = 0;
	for (int64_t i = 0; i < p->n; i++)
		f += p->loss[i];
	for (size_t k = 0; k < (size_t)K * d; k++)
		w2 += W[k] * W[k];
	const double inv = 1.0 / (double)p->n;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (big)
#endif
	for (int k = 0; k < K; k++) {
		double *gk = g + (size_t)k * d, gb = 0;
		memset(gk, 0, sizeof *gk * (size_t)d);
		for (int64_t i = 0; i < p->n; i++) {
			const double rk = p->r[(size_t)i * K + k], *xi = p->x + (size_t)i * d;
			for (int j = 0; j < d; j++)
				gk[j] += rk * xi[j];
			gb += rk;
		}
		for (int j = 0; j < d; j++)
			gk[j] = gk[j] * inv + p->l2 * W[(size_t)k * d + j];
		g[(size_t)K * d + k] = gb * inv;
	}
	return f * inv + 0.5 * p->l2 * w2;
}

static double dot(const double *a, const double *b, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

static double max_abs(const double *a, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++)
		m = fabs(a[i]) > m ? fabs(a[i]) : m;
	return m;
}

// dir = -H g by the two-loop recursion over the h newest pairs (s, y) (oldest at index `first`, a ring)
static void direction(const double *g, double *dir, double *const *S, double *const *Y, const double *rho, int h,
		      int first, double *alpha, size_t P)
{
	memcpy(dir, g, sizeof *dir * P);
	for (int t = h - 1; t >= 0; t--) {
		const int i = (first + t) % HISTORY;
		alpha[i] = rho[i] * dot(S[i], dir, P);
		for (size_t k = 0; k < P; k++)
			dir[k] -= alpha[i] * Y[i][k];
	}
	if (h) {
		const int i = (first + h - 1) % HISTORY;
		const double gamma = dot(S[i], Y[i], P) / dot(Y[i], Y[i], P);
		for (size_t k = 0; k < P; k++)
			dir[k] *= gamma;
	}
	for (int t = 0; t < h; t++) {
		const int i = (first + t) % HISTORY;
		const double beta = rho[i] * dot(Y[i], dir, P);
		for (size_t k = 0; k < P; k++)
			dir[k] += S[i][k] * (alpha[i] - beta);
	}
	for (size_t k = 0; k < P; k++)
		dir[k] = -dir[k];
}

// L-BFGS from theta = 0 with a backtracking (Armijo) line search; the fit's record in *fit
static int lbfgs(const Problem *p, const EvalProbeOpts *o, double *th, EvalProbeFit *fit)
{
	const size_t P = (size_t)p->K * p->d + p->K;
	double *buf = calloc(P * (4 + 2 * HISTORY), sizeof *buf);
	if (!buf)
		return -ENOMEM;
	double *g = buf, *gn = g + P, *dir = gn + P, *tn = dir + P, *S[HISTORY], *Y[HISTORY], rho[HISTORY],
	       alpha[HISTORY];
	for (int i = 0; i < HISTORY; i++)
		S[i] = tn + P + (size_t)i * 2 * P, Y[i] = S[i] + P;
	memset(th, 0, sizeof *th * P);
	double f = objective(p, th, g);
	int h = 0, first = 0, it = 0;
	fit->converged = 0;
	for (; it < o->max_iter; it++) {
		if (max_abs(g, P) <= o->tol) {
			fit->converged = 1;
			break;
		}
		direction(g, dir, S, Y, rho, h, first, alpha, P);
		double gd = dot(g, dir, P);
		if (!(gd < 0)) { // not a descent direction: forget the curvature pairs, go down the gradient
			h = 0;
			for (size_t k = 0; k < P; k++)
				dir[k] = -g[k];
			gd = -dot(g, g, P);
		}
		// the first step (no curvature yet) moves theta by at most 1 in length
		double t = h ? 1 : fmin(1, 1 / sqrt(-gd)), fn = f;
		int ok = 0;
		for (int k = 0; k < MAX_HALVINGS && !ok; k++, t *= 0.5) {
			for (size_t j = 0; j < P; j++)
				tn[j] = th[j] + t * dir[j];
			fn = objective(p, tn, gn);
			// sufficient and strict decrease: where f no longer changes in double, a step is not
			// progress, and the search ends instead of wandering on rounding noise
			ok = isfinite(fn) && fn <= f + ARMIJO * t * gd && fn < f;
		}
		if (!ok) // no decrease left at double precision: as close as this search gets
			break;
		const int slot = (first + h) % HISTORY;
		for (size_t j = 0; j < P; j++)
			S[slot][j] = tn[j] - th[j], Y[slot][j] = gn[j] - g[j];
		const double sy = dot(S[slot], Y[slot], P);
		if (sy > 1e-12 * dot(Y[slot], Y[slot], P)) { // keep only pairs of positive curvature
			rho[slot] = 1 / sy;
			if (h < HISTORY)
				h++;
			else
				first = (first + 1) % HISTORY;
		}
		memcpy(th, tn, sizeof *th * P);
		memcpy(g, gn, sizeof *g * P);
		f = fn;
	}
	fit->iters = it;
	fit->loss = f;
	fit->grad_max = max_abs(g, P);
	free(buf);
	return 0;
}

// the fit of the Kp classes with a labelled row (present[c]: class c's index among them, or -1)
static int fit_present(const float *x, int64_t n, int d, const int *label, int Kp, const int *present,
		       const EvalProbeOpts *o, double *th, double *mu, double *sd, EvalProbeFit *fit)
{
	const int64_t nl = fit->n;
	Problem p = {.n = nl, .d = d, .K = Kp, .l2 = o->l2};
	p.x = malloc(sizeof *p.x * (size_t)nl * d);
	p.y = malloc(sizeof *p.y * (size_t)nl);
	p.r = malloc(sizeof *p.r * (size_t)nl * Kp);
	p.loss = malloc(sizeof *p.loss * (size_t)nl);
	int rc = p.x && p.y && p.r && p.loss ? 0 : -ENOMEM;
	for (int64_t i = 0, r = 0; !rc && i < n; i++)
		if (label[i] >= 0) {
			for (int j = 0; j < d; j++) {
				if (!isfinite(x[(size_t)i * d + j]))
					rc = -EDOM;
				p.x[(size_t)r * d + j] = x[(size_t)i * d + j];
			}
			p.y[r++] = present[label[i]];
		}
	if (!rc) { // standardise: mean 0, standard deviation 1 per feature (a constant one stays 0)
		for (int64_t i = 0; i < nl; i++)
			for (int j = 0; j < d; j++)
				mu[j] += p.x[(size_t)i * d + j];
		for (int j = 0; j < d; j++)
			mu[j] /= (double)nl;
		for (int64_t i = 0; i < nl; i++)
			for (int j = 0; j < d; j++) {
				const double c = p.x[(size_t)i * d + j] - mu[j];
				sd[j] += c * c;
			}
		for (int j = 0; j < d; j++) {
			sd[j] = sqrt(sd[j] / (double)nl);
			sd[j] = sd[j] > 1e-12 * (1 + fabs(mu[j])) ? sd[j] : 1;
		}
		for (int64_t i = 0; i < nl; i++)
			for (int j = 0; j < d; j++)
				p.x[(size_t)i * d + j] = (p.x[(size_t)i * d + j] - mu[j]) / sd[j];
		rc = lbfgs(&p, o, th, fit);
	}
	int64_t right = 0; // training accuracy of the fit (the first highest logit)
	for (int64_t i = 0; !rc && i < nl; i++) {
		const double *xi = p.x + (size_t)i * d;
		double best = -INFINITY;
		int arg = 0;
		for (int k = 0; k < Kp; k++) {
			double s = th[(size_t)Kp * d + k];
			for (int j = 0; j < d; j++)
				s += th[(size_t)k * d + j] * xi[j];
			if (s > best)
				best = s, arg = k;
		}
		right += arg == p.y[i];
	}
	fit->train_top1 = (double)right / (double)nl;
	free(p.x);
	free(p.y);
	free(p.r);
	free(p.loss);
	return rc;
}

int eval_probe_fit(const float *x, int64_t n, int d, const int *label, int K, const EvalProbeOpts *o, float *w,
		   float *b, EvalProbeFit *fit)
{
	if (n < 1 || d < 1 || K < 1 || !o || !(o->l2 >= 0) || o->max_iter < 0 || !(o->tol >= 0))
		return -EINVAL;
	memset(fit, 0, sizeof *fit);
	int *present = malloc(sizeof *present * (size_t)K), Kp = 0;
	if (!present)
		return -ENOMEM;
	for (int c = 0; c < K; c++)
		present[c] = -1;
	int rc = 0;
	for (int64_t i = 0; i < n; i++) {
		if (label[i] >= K) {
			rc = -EINVAL;
			break;
		}
		if (label[i] >= 0) {
			fit->n++;
			present[label[i]] = 0;
		}
	}
	for (int c = 0; c < K; c++)
		present[c] = present[c] ? -1 : Kp++;
	fit->classes = Kp;
	if (!rc && !fit->n)
		rc = -EINVAL;
	const size_t P = (size_t)Kp * d + Kp;
	double *mu = calloc((size_t)d, sizeof *mu), *sd = calloc((size_t)d, sizeof *sd), *th = malloc(sizeof *th * P);
	if (!rc && (!mu || !sd || !th))
		rc = -ENOMEM;
	if (!rc)
		rc = fit_present(x, n, d, label, Kp, present, o, th, mu, sd, fit);
	for (int c = 0; !rc && c < K; c++) { // back to the raw features: w' = w / sd, b' = b - sum w' mu
		const int k = present[c];
		double bk = k < 0 ? -FLT_MAX : th[(size_t)Kp * d + k];
		for (int j = 0; j < d; j++) {
			const double wk = k < 0 ? 0 : th[(size_t)k * d + j] / sd[j];
			w[(size_t)c * d + j] = (float)wk;
			bk -= k < 0 ? 0 : wk * mu[j];
		}
		b[c] = (float)bk;
	}
	free(present);
	free(mu);
	free(sd);
	free(th);
	return rc;
}

void eval_linear_logits(const float *x, int64_t n, int d, const float *w, const float *b, int K, float *out)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if ((double)n * K * d >= PARALLEL_WORK)
#endif
	for (int64_t i = 0; i < n; i++)
		for (int k = 0; k < K; k++) {
			double s = b ? b[k] : 0;
			for (int j = 0; j < d; j++)
				s += (double)w[(size_t)k * d + j] * x[(size_t)i * d + j];
			out[(size_t)i * K + k] = (float)s;
		}
}
