// FastCLIP v0-v3 surrogate gradients against central finite differences of the surrogate value,
// for one rank alone (K=1) and for rank 1 of a K=2 view (gathered rows held fixed, as detached).
#include <math.h>   // defines: exp, log, fabs
#include <stdio.h>  // defines: printf
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memcpy

#include "fastclip_ref.h"       // defines: fastclip_local, fastclip_surrogate
#include "test_fastclip_util.h" // defines: tf_features, tf_max_rel

enum { B = 3, D = 5, NS = 40 };

static double value(const FastclipConfig *cfg, FastclipBatch *b, const float *pl, const float *pa, float *w1, float *w2)
{
	FastclipGrads g = {.de1 = w1, .de2 = w2};
	if (fastclip_surrogate(cfg, b, pl, pa, &g) < 0)
		return NAN;
	return g.loss;
}

static int check(FastclipKind kind, int K, uint64_t seed)
{
	FastclipConfig cfg;
	fastclip_config_default(&cfg, kind);
	cfg.tau_init = 0.25; // moderate scale keeps the finite-difference truncation error small
	int N = K * B, rank = K - 1, w = fastclip_pack_width(kind);
	float E1[K * B * D], E2[K * B * D], pl[B * 12], pa[K * B * 12], de1[B * D], de2[B * D], t1[B * D], t2[B * D];
	int64_t ids_all[K * B];
	tf_features(E1, N, D, &seed);
	tf_features(E2, N, D, &seed);
	for (int j = 0; j < N; j++)
		ids_all[j] = 3 * j + 1;
	FastclipTables tab;
	if (fastclip_tables_create(&tab, &cfg, NS) < 0)
		return 1;
	for (int i = 0; i < NS; i++)
		tab.u1[i] = tab.u2[i] = (float)(0.5 + tf_uniform(&seed)); // a previous step's estimates
	float e1[B * D], e2[B * D];
	memcpy(e1, E1 + rank * B * D, sizeof(e1));
	memcpy(e2, E2 + rank * B * D, sizeof(e2));
	FastclipBatch b = {
		.B = B, .K = K, .rank = rank, .d = D, .e1 = e1, .e2 = e2, .E1 = E1, .E2 = E2, .log_s = log(4.0)};
	// every rank's pack, computed as each rank would (epoch 1: γ < 1, moments used)
	for (int r = 0; r < K; r++) {
		FastclipBatch br = b;
		br.rank = r;
		br.e1 = E1 + r * B * D;
		br.e2 = E2 + r * B * D;
		br.ids = ids_all + r * B;
		if (fastclip_local(&cfg, &tab, 1, &br, pa + r * B * w) < 0) {
			printf("fastclip_local failed\n");
			return 1;
		}
	}
	memcpy(pl, pa + rank * B * w, sizeof(float) * B * w);
	FastclipGrads g = {.de1 = de1, .de2 = de2};
	if (fastclip_surrogate(&cfg, &b, pl, pa, &g) < 0)
		return 1;
	double an[2 * B * D + 1], fd[2 * B * D + 1];
	const double h = 1e-3;
	for (int side = 0; side < 2; side++) {
		float *x = side == 0 ? e1 : e2;
		for (int k = 0; k < B * D; k++) {
			float x0 = x[k], xp = (float)(x0 + h), xm = (float)(x0 - h);
			x[k] = xp;
			double lp = value(&cfg, &b, pl, pa, t1, t2);
			x[k] = xm;
			double lm = value(&cfg, &b, pl, pa, t1, t2);
			x[k] = x0;
			fd[side * B * D + k] = (lp - lm) / ((double)xp - xm);
			an[side * B * D + k] = side == 0 ? de1[k] : de2[k];
		}
	}
	int n = 2 * B * D;
	if (kind == FASTCLIP_V0 || kind == FASTCLIP_V3) {
		double ls = b.log_s;
		b.log_s = ls + h;
		double lp = value(&cfg, &b, pl, pa, t1, t2);
		b.log_s = ls - h;
		double lm = value(&cfg, &b, pl, pa, t1, t2);
		b.log_s = ls;
		fd[n] = (lp - lm) / (2 * h);
		an[n] = g.dlog_s;
		if (kind == FASTCLIP_V3) {
			// v3 divides L by a detached s: the value's derivative has an extra −L/s
			double s = exp(ls), logu = 0.0;
			for (int i = 0; i < B; i++)
				logu += log(pl[i * w + FASTCLIP_P_U1]) + log(pl[i * w + FASTCLIP_P_U2]);
			double extra = (cfg.rho + 0.5 * logu / B) / s;
			an[n] = g.dlog_s - (g.loss - extra);
		}
		n++;
	}
	double rel = tf_max_rel(an, fd, n, 1e-6);
	printf("%-12s K=%d loss=%.6f dlog_s=%.6g max rel err %.3g\n", fastclip_kind_name(kind), K, g.loss, g.dlog_s,
	       rel);
	fastclip_tables_free(&tab);
	return rel < 2e-5 ? 0 : 1;
}

int main(void)
{
	int fail = 0;
	for (int kind = FASTCLIP_V0; kind <= FASTCLIP_V3; kind++)
		for (int K = 1; K <= 2; K++)
			fail |= check((FastclipKind)kind, K, 0x9e3779b97f4a7c15ull + 17 * kind + K);
	printf(fail ? "FAIL: a FastCLIP gradient differs from finite differences\n" : "all FastCLIP gradients match\n");
	return fail;
}
