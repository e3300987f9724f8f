// OpenCLIP InfoNCE gradient (gather-with-gradient) against central finite differences: a local
// row moves both the rank's feature and its gathered copy; a remote row moves only the copy.
#include <math.h>   // defines: log
#include <stdio.h>  // defines: printf
#include <string.h> // defines: memcpy

#include "fastclip_ref.h"       // defines: fastclip_openclip
#include "test_fastclip_util.h" // defines: tf_features, tf_max_rel

enum { B = 3, D = 4 };

static double value(FastclipBatch *b)
{
	float t1[4 * B * D], t2[4 * B * D];
	double l, dls;
	if (fastclip_openclip(b, &l, t1, t2, &dls) < 0)
		return NAN;
	return l;
}

static int check(int K, uint64_t seed)
{
	int N = K * B, rank = K - 1, off = rank * B;
	float E1[4 * B * D], E2[4 * B * D], dE1[4 * B * D], dE2[4 * B * D], e1[B * D], e2[B * D];
	tf_features(E1, N, D, &seed);
	tf_features(E2, N, D, &seed);
	memcpy(e1, E1 + off * D, sizeof(e1));
	memcpy(e2, E2 + off * D, sizeof(e2));
	FastclipBatch b = {
		.B = B, .K = K, .rank = rank, .d = D, .e1 = e1, .e2 = e2, .E1 = E1, .E2 = E2, .log_s = log(3.0)};
	double loss, dls;
	if (fastclip_openclip(&b, &loss, dE1, dE2, &dls) < 0)
		return 1;
	double an[2 * 4 * B * D + 1], fd[2 * 4 * B * D + 1];
	const double h = 1e-3;
	int n = 0;
	for (int side = 0; side < 2; side++) {
		float *X = side == 0 ? E1 : E2, *x = side == 0 ? e1 : e2, *dX = side == 0 ? dE1 : dE2;
		for (int k = 0; k < N * D; k++) {
			int row = k / D;
			float *loc = row >= off && row < off + B ? &x[k - off * D] : NULL;
			float x0 = X[k], xp = (float)(x0 + h), xm = (float)(x0 - h);
			X[k] = xp;
			if (loc)
				*loc = xp;
			double lp = value(&b);
			X[k] = xm;
			if (loc)
				*loc = xm;
			double lm = value(&b);
			X[k] = x0;
			if (loc)
				*loc = x0;
			fd[n] = (lp - lm) / ((double)xp - xm);
			an[n++] = dX[k];
		}
	}
	double ls = b.log_s;
	b.log_s = ls + h;
	double lp = value(&b);
	b.log_s = ls - h;
	double lm = value(&b);
	b.log_s = ls;
	fd[n] = (lp - lm) / (2 * h);
	an[n++] = dls;
	double rel = tf_max_rel(an, fd, n, 1e-6);
	printf("openclip K=%d loss=%.6f dlog_s=%.6g max rel err %.3g\n", K, loss, dls, rel);
	return rel < 2e-5 ? 0 : 1;
}

int main(void)
{
	int fail = check(1, 12345) | check(2, 777) | check(4, 4242);
	printf(fail ? "FAIL: openclip gradient differs from finite differences\n" : "openclip gradients match\n");
	return fail;
}
