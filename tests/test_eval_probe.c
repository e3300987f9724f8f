// The linear probe (eval/eval_probe.c) and a head's accuracy (eval/eval_cls.c): a separable problem
// is solved (train and fresh rows all right), the fit is a stationary point of its own objective
// (the gradient recomputed here from the definition), the same bits for 1 and 2 threads and with
// unlabelled rows added, clear refusals; the confusion summary of a hand-made case. With --dump
// FILE it fits the cases in FILE for tests/test_eval_probe_ref.sh (scikit-learn's reference).
#include "eval.h"     // defines: eval_probe_fit, eval_linear_logits, eval_head_accuracy, EvalHeadAcc
#include "testutil.h" // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>  // defines: EINVAL, EDOM
#include <math.h>   // defines: exp, log, fabs, sqrt, NAN
#include <stdio.h>  // defines: fopen, fscanf, printf
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: memcmp, strcmp
#ifdef _OPENMP
#include <omp.h> // defines: omp_set_num_threads
#endif

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double uniform(void) // splitmix64 -> (0, 1)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return ((double)((z ^ (z >> 31)) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

// n rows of d features around K class centres (spread apart by sep) with unit noise; labels i % K
static void blobs(float *x, int *y, int n, int d, int K, double sep, const double *centres)
{
	for (int i = 0; i < n; i++) {
		y[i] = i % K;
		for (int j = 0; j < d; j++)
			x[(size_t)i * d + j] = (float)(sep * centres[y[i] * d + j] + normal() + 3.0 * j); // an offset per feature
	}
}

static const EvalProbeOpts OPTS = {.l2 = 1e-3, .max_iter = 1000, .tol = 1e-7};

static void test_separable(void)
{
	enum { N = 240, D = 6, K = 4 };
	double c[K * D];
	for (int i = 0; i < K * D; i++)
		c[i] = normal();
	float x[N * D], x2[N * D], w[K * D], b[K], logits[N * K];
	int y[N], y2[N];
	blobs(x, y, N, D, K, 8, c);
	blobs(x2, y2, N, D, K, 8, c); // fresh rows of the same classes
	EvalProbeFit fit;
	CHECK_OK(eval_probe_fit(x, N, D, y, K, &OPTS, w, b, &fit));
	CHECK(fit.converged);
	CHECK_EQ_INT(fit.n, N);
	CHECK(fit.train_top1 == 1.0);
	eval_linear_logits(x2, N, D, w, b, K, logits);
	EvalHeadAcc a;
	CHECK_OK(eval_head_accuracy(logits, N, K, y2, &a));
	printf("separable: %d iterations, train top-1 %.3f, fresh rows top-1 %.3f\n", fit.iters, fit.train_top1, a.top1);
	CHECK(a.top1 == 1.0);
	CHECK(a.n_confused == 0 && a.zero_recall == 0);
}

// the gradient of the objective at the fit, from the definition: standardised features z, logits
// W z + b with W = w * sd; mean (softmax - onehot) z + l2 W, and mean (softmax - onehot) for b
static double stationarity(const float *x, const int *y, int n, int d, int K, const float *w, const float *b, double l2)
{
	double mu[64] = {0}, sd[64] = {0}, gmax = 0;
	int m = 0;
	for (int i = 0; i < n; i++)
		if (y[i] >= 0) {
			m++;
			for (int j = 0; j < d; j++)
				mu[j] += x[i * d + j];
		}
	for (int j = 0; j < d; j++)
		mu[j] /= m;
	for (int i = 0; i < n; i++)
		for (int j = 0; y[i] >= 0 && j < d; j++)
			sd[j] += (x[i * d + j] - mu[j]) * (x[i * d + j] - mu[j]);
	for (int j = 0; j < d; j++)
		sd[j] = sqrt(sd[j] / m);
	for (int k = 0; k < K; k++) {
		double gb = 0, gw[64] = {0};
		for (int i = 0; i < n; i++) {
			if (y[i] < 0)
				continue;
			double z[16], mx = -1e300, sum = 0;
			for (int c = 0; c < K; c++) {
				z[c] = b[c];
				for (int j = 0; j < d; j++)
					z[c] += (double)w[c * d + j] * x[i * d + j];
				mx = z[c] > mx ? z[c] : mx;
			}
			for (int c = 0; c < K; c++)
				sum += exp(z[c] - mx);
			const double r = exp(z[k] - mx) / sum - (y[i] == k);
			gb += r;
			for (int j = 0; j < d; j++)
				gw[j] += r * (x[i * d + j] - mu[j]) / sd[j];
		}
		gmax = fmax(gmax, fabs(gb / m));
		for (int j = 0; j < d; j++)
			gmax = fmax(gmax, fabs(gw[j] / m + l2 * w[k * d + j] * sd[j]));
	}
	return gmax;
}

static void test_stationary_and_deterministic(void)
{
	// overlapping classes: the optimum is inside, where the penalty and the loss balance
	enum { N = 3000, D = 40, K = 10, EXTRA = 50 };
	static double c[K * D];
	static float x[(N + EXTRA) * D], w1[K * D], b1[K], w2[K * D], b2[K], w3[K * D], b3[K];
	static int y[N + EXTRA];
	for (int i = 0; i < K * D; i++)
		c[i] = normal();
	blobs(x, y, N, D, K, 0.6, c);
	EvalProbeFit f1, f2, f3;
	const EvalProbeOpts o = {.l2 = 1e-2, .max_iter = 1000, .tol = 1e-8};
#ifdef _OPENMP
	omp_set_num_threads(1);
#endif
	CHECK_OK(eval_probe_fit(x, N, D, y, K, &o, w1, b1, &f1));
#ifdef _OPENMP
	omp_set_num_threads(2); // N * K * D > 2^20: the passes run on both threads
#endif
	CHECK_OK(eval_probe_fit(x, N, D, y, K, &o, w2, b2, &f2));
	CHECK(f1.converged && f2.converged);
	CHECK(!memcmp(w1, w2, sizeof w1) && !memcmp(b1, b2, sizeof b1));
	CHECK_EQ_INT(f1.iters, f2.iters);
	const double g = stationarity(x, y, N, D, K, w1, b1, o.l2);
	printf("overlapping: %d iterations, train top-1 %.3f, max |gradient| recomputed %.2e (fit's %.2e)\n", f1.iters,
	       f1.train_top1, g, f1.grad_max);
	CHECK(g < 1e-6); // tol 1e-8 in double; the float weights add ~1e-7 relative
	CHECK(f1.train_top1 > 0.2 && f1.train_top1 < 1.0);
	// unlabelled rows (any features, finite) change nothing
	for (int i = N; i < N + EXTRA; i++) {
		y[i] = -1;
		for (int j = 0; j < D; j++)
			x[i * D + j] = (float)(100 * normal());
	}
	CHECK_OK(eval_probe_fit(x, N + EXTRA, D, y, K, &o, w3, b3, &f3));
	CHECK(!memcmp(w1, w3, sizeof w1) && !memcmp(b1, b3, sizeof b1));
}

static void test_refusals(void)
{
	float x[4 * 2] = {0, 1, 2, 3, 4, 5, 6, 7}, w[3 * 2], b[3];
	int y[4] = {0, 1, 2, 0}, bad[4] = {0, 3, 1, 2}, none[4] = {-1, -1, -1, -1};
	EvalProbeFit f;
	CHECK_EQ_INT(eval_probe_fit(x, 4, 2, bad, 3, &OPTS, w, b, &f), -EINVAL);
	CHECK_EQ_INT(eval_probe_fit(x, 4, 2, none, 3, &OPTS, w, b, &f), -EINVAL);
	EvalProbeOpts neg = OPTS;
	neg.l2 = -1;
	CHECK_EQ_INT(eval_probe_fit(x, 4, 2, y, 3, &neg, w, b, &f), -EINVAL);
	x[3] = NAN;
	CHECK_EQ_INT(eval_probe_fit(x, 4, 2, y, 3, &OPTS, w, b, &f), -EDOM);
	x[3] = 3;
	// a constant feature stays 0 after standardising: no division by zero
	float xc[4 * 2] = {5, 0, 5, 1, 5, 2, 5, 3};
	CHECK_OK(eval_probe_fit(xc, 4, 2, y, 3, &OPTS, w, b, &f));
	CHECK(w[0] == 0 && w[2] == 0 && w[4] == 0);
}

static void test_head_summary(void)
{
	// 4 classes; rows: (label, predicted) = (0,0) (0,1) (0,1) (1,1) (1,0) (2,1) (2,1) (-1,3); class 3 never labelled
	const int label[] = {0, 0, 0, 1, 1, 2, 2, -1}, pred[] = {0, 1, 1, 1, 0, 1, 1, 3};
	float s[8 * 4] = {0};
	for (int i = 0; i < 8; i++)
		s[i * 4 + pred[i]] = 1;
	s[1 * 4 + 0] = 0.5f; // row 1: label 0 second: in its top-5
	EvalHeadAcc a;
	CHECK_OK(eval_head_accuracy(s, 8, 4, label, &a));
	CHECK_EQ_INT(a.n, 7);
	CHECK(fabs(a.top1 - 2.0 / 7) < 1e-12);
	CHECK(a.top5 == 1.0);                                            // 4 classes: every label is in the top 4
	CHECK(fabs(a.mean_class - (1.0 / 3 + 1.0 / 2 + 0) / 3) < 1e-12); // recalls 1/3, 1/2, 0
	CHECK_EQ_INT(a.present, 3);
	CHECK(a.chance_top1 == 0.25 && a.chance_top5 == 1.0);
	CHECK_EQ_INT(a.majority, 0);
	CHECK(fabs(a.majority_top1 - 3.0 / 7) < 1e-12);
	// mistakes: 0->1 twice, 2->1 twice, 1->0 once: by count, then (truth, pred)
	CHECK_EQ_INT(a.n_confused, 3);
	CHECK(a.confused[0].truth == 0 && a.confused[0].pred == 1 && a.confused[0].count == 2);
	CHECK(a.confused[1].truth == 2 && a.confused[1].pred == 1 && a.confused[1].count == 2);
	CHECK(a.confused[2].truth == 1 && a.confused[2].pred == 0 && a.confused[2].count == 1);
	CHECK_EQ_INT(a.n_worst, 3);
	CHECK(a.worst[0].cls == 2 && a.worst[1].cls == 0 && a.worst[2].cls == 1);
	CHECK(a.best[0].cls == 1 && a.best[0].right == 1 && a.best[0].n == 2);
	CHECK_EQ_INT(a.zero_recall, 1);
	const int none[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
	CHECK_EQ_INT(eval_head_accuracy(s, 8, 4, none, &a), -EINVAL);
}

// --dump FILE: cases "case N D K L2" then N rows "label f1 .. fD"; prints each fit's weights,
// biases and the probabilities of its rows
static int dump(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	int n, d, K;
	double l2;
	while (fscanf(f, " case %d %d %d %lf", &n, &d, &K, &l2) == 4) {
		float *x = malloc(sizeof *x * (size_t)n * d), *w = malloc(sizeof *w * (size_t)K * d),
		      *b = malloc(sizeof *b * (size_t)K), *l = malloc(sizeof *l * (size_t)n * K);
		int *y = malloc(sizeof *y * (size_t)n);
		for (int i = 0; i < n; i++) {
			if (fscanf(f, "%d", &y[i]) != 1)
				return 1;
			for (int j = 0; j < d; j++)
				if (fscanf(f, "%f", &x[(size_t)i * d + j]) != 1)
					return 1;
		}
		EvalProbeOpts o = {.l2 = l2, .max_iter = 5000, .tol = 1e-8};
		EvalProbeFit fit;
		if (eval_probe_fit(x, n, d, y, K, &o, w, b, &fit))
			return 1;
		eval_linear_logits(x, n, d, w, b, K, l);
		printf("fit %d %d %.9g %.3g\n", fit.iters, fit.converged, fit.loss, fit.grad_max);
		for (int i = 0; i < n; i++) {
			double m = -1e300, sum = 0;
			for (int k = 0; k < K; k++)
				m = l[i * K + k] > m ? l[i * K + k] : m;
			for (int k = 0; k < K; k++)
				sum += exp(l[i * K + k] - m);
			for (int k = 0; k < K; k++)
				printf("%.9g%c", exp(l[i * K + k] - m) / sum, k + 1 < K ? ' ' : '\n');
		}
		free(x);
		free(w);
		free(b);
		free(l);
		free(y);
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--dump"))
		return dump(argv[2]);
	test_separable();
	test_stationary_and_deterministic();
	test_refusals();
	test_head_summary();
	printf("linear probe: separable solved, stationary, deterministic over threads, refusals; head summary\n");
	return 0;
}
