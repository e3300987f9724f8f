// The distributed step on device buffers: for every loss, K = 2 and 4 forked ranks holding B
// features each give, after the exchange and the bucketed parameter all-reduce, the single-rank
// gradients of the concatenated K·B batch (feature gradients are K× the single-rank ones before
// the 1/K of the averaging) to 1e-5 relative, the same u/τ tables and log s (the temperature's
// Adam step run as the trainer runs it); the bytes logged per step equal DESIGN §7's model.
#include <math.h>   // defines: fabs, log
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: memcmp, memcpy

#include "fastclip.h"           // defines: FastclipExchange, fastclip_exchange_*
#include "test_comm_util.h"     // defines: tc_run, tc_shared, comm_buckets_*
#include "test_fastclip_util.h" // defines: tf_features

enum { B = 4, D = 8, NS = 40, STEPS = 3, P = 1000, MAXK = 4, NTAB = 10 };

typedef struct {
	FastclipKind kind;
	int K;
	float E1[STEPS][MAXK * B * D], E2[STEPS][MAXK * B * D]; // inputs (K·B, d) per step
	int64_t ids[STEPS][MAXK * B];
	// results: [rank] for the K-rank run, rank 0 of a world-1 run for the reference
	float de1[STEPS][MAXK * B * D], de2[STEPS][MAXK * B * D];
	double dlog_s[MAXK][STEPS], log_s[MAXK][STEPS];
	float tab[MAXK][NTAB][NS]; // (rank, table column, sample)
	double bytes[MAXK][STEPS][COMM_NOPS];
	int single;
} Shared;

static void config(FastclipConfig *cfg, FastclipKind kind)
{
	fastclip_config_default(cfg, kind);
	cfg->gamma_min = 0.3;
	cfg->gamma_decay_epochs = 2;
	cfg->tau_init = kind == FASTCLIP_V2 ? 0.05 : 0.07;
	cfg->lr_tau = kind == FASTCLIP_V2 ? 0.0133 : 0.01;
}

// uploads n floats into t (host memory on the CPU backend: a plain copy)
static int put(KernCtx *k, KTensor *t, const void *src, size_t bytes)
{
	return kern_upload(k, t, src, bytes);
}

// the global temperature's Adam step as the trainer runs it (v0, v3)
static int temp_step(KernCtx *k, const FastclipConfig *cfg, KTensor *log_s, KTensor *mv, KTensor *g, int step)
{
	if (cfg->kind != FASTCLIP_V0 && cfg->kind != FASTCLIP_V3)
		return 0;
	const int v3 = cfg->kind == FASTCLIP_V3;
	KTempStep h = {.lr = cfg->lr_tau,
		       .lr_low = v3 ? cfg->lr_tau / 3 : cfg->lr_tau,
		       .tau_low = v3 ? 0.03 : 0,
		       .beta1 = cfg->beta1_tau,
		       .beta2 = cfg->beta2_tau,
		       .eps = cfg->eps_tau,
		       .step = step + 1,
		       .lo = 0,
		       .hi = FASTCLIP_LOG_S_MAX};
	return kern_temp_step(k, log_s, mv, g, NULL, NULL, &h);
}

static int rank_fn(Comm *c, void *arg)
{
	Shared *s = arg;
	const int me = comm_rank(c), Bl = s->single ? s->K * B : B;
	FastclipConfig cfg;
	config(&cfg, s->kind);
	KernCtx *k;
	FastclipExchange *x;
	KTensor e1, e2, ids, ls, mv, loss, grads;
	const int64_t sh[2] = {Bl, D}, nb = Bl, one = 1, two = 2, np = P;
	if (kern_ctx_create_cpu(&k, 1) < 0 || fastclip_exchange_create(&x, &cfg, c, k, Bl, D, KDT_F32, NS) < 0 ||
	    kern_alloc(k, &e1, KDT_F32, 2, sh) < 0 || kern_alloc(k, &e2, KDT_F32, 2, sh) < 0 ||
	    kern_alloc(k, &ids, KDT_I64, 1, &nb) < 0 || kern_alloc(k, &ls, KDT_F32, 1, &one) < 0 ||
	    kern_alloc(k, &mv, KDT_F32, 1, &two) < 0 || kern_alloc(k, &loss, KDT_F32, 1, &one) < 0 ||
	    kern_alloc(k, &grads, KDT_F32, 1, &np) < 0)
		return 2;
	// a stand-in model: log s first in the flat gradient buffer (as the model's logit_scale is last),
	// then the rest; two gradient groups in backward order
	KTensor dls;
	kern_view(&dls, &grads, P - 1, 1, &one);
	int64_t off[2] = {P - 1, 0}, len[2] = {1, P - 1};
	CommBuckets *bk;
	if (comm_buckets_create(&bk, c, k, &grads, off, len, 2, 400 * sizeof(float)) < 0)
		return 4;
	const float ls0 = (float)log(1.0 / cfg.tau_init);
	put(k, &ls, &ls0, sizeof ls0);
	static float host[P], de[MAXK * B * D];
	for (int step = 0; step < STEPS; step++) {
		comm_stats_reset(c);
		const size_t row0 = (size_t)me * Bl;
		if (put(k, &e1, s->E1[step] + row0 * D, sizeof(float) * Bl * D) ||
		    put(k, &e2, s->E2[step] + row0 * D, sizeof(float) * Bl * D) ||
		    put(k, &ids, s->ids[step] + row0, sizeof(int64_t) * Bl))
			return 5;
		int rc = fastclip_exchange_run(x, k, &e1, &e2, &ids, &ls, step, &loss, &dls);
		if (rc < 0) {
			printf("rank %d: step failed: %d %s\n", me, rc, comm_error(c));
			return 5;
		}
		// the model's backward would produce these; a stand-in gradient that differs per rank
		float *g = grads.data;
		for (int i = 0; i < P - 1; i++)
			g[i] = (float)(me + 1) * 0.001f * (float)i;
		if (comm_buckets_ready(bk, k, off[0], len[0]) < 0 || comm_buckets_ready(bk, k, off[1], len[1]) < 0 ||
		    comm_buckets_finish(bk, k) < 0)
			return 6;
		for (int i = 0; i < P - 1; i++) {
			float want = s->single ? 0.001f * (float)i : 0.0f;
			if (!s->single) {
				for (int r = 0; r < comm_world(c); r++)
					want += (float)(r + 1) * 0.001f * (float)i;
				want /= (float)comm_world(c);
			}
			if (g[i] != want)
				return 7;
		}
		s->dlog_s[me][step] = g[P - 1];
		if (temp_step(k, &cfg, &ls, &mv, &dls, step) < 0 || kern_sync(k) < 0)
			return 8;
		s->log_s[me][step] = *(const float *)ls.data;
		if (kern_download(k, de, sizeof(float) * Bl * D, fastclip_exchange_de1(x)) < 0)
			return 9;
		memcpy(s->de1[step] + row0 * D, de, sizeof(float) * Bl * D);
		if (kern_download(k, de, sizeof(float) * Bl * D, fastclip_exchange_de2(x)) < 0)
			return 9;
		memcpy(s->de2[step] + row0 * D, de, sizeof(float) * Bl * D);
		for (int op = 0; op < COMM_NOPS; op++)
			s->bytes[me][step][op] = comm_stats(c)->bytes[op];
	}
	KTensor *tab = fastclip_exchange_table(x);
	if (tab) { // columns of the (NS, width) table
		const int w = (int)tab->shape[1];
		if (kern_download(k, host, kern_nbytes(tab), tab) < 0)
			return 10;
		for (int col = 0; col < w; col++)
			for (int i = 0; i < NS; i++)
				s->tab[me][col][i] = host[i * w + col];
	}
	comm_buckets_free(bk);
	fastclip_exchange_free(x);
	kern_ctx_destroy(k);
	return 0;
}

static double rel(const float *a, const float *b, size_t n, double scale_a)
{
	double mx = 0.0, md = 0.0;
	for (size_t i = 0; i < n; i++) {
		mx = fmax(mx, fabs(b[i]));
		md = fmax(md, fabs(a[i] * scale_a - b[i]));
	}
	return md / (mx + 1e-30);
}

static int check(FastclipKind kind, int K)
{
	Shared *ref = tc_shared(sizeof(Shared)), *dist = tc_shared(sizeof(Shared));
	uint64_t seed = 1234 + 7 * kind + K;
	ref->kind = kind;
	ref->K = K;
	for (int step = 0; step < STEPS; step++) {
		tf_features(ref->E1[step], K * B, D, &seed);
		tf_features(ref->E2[step], K * B, D, &seed);
		for (int i = 0; i < K * B; i++) // distinct ids per step, rotating through the dataset
			ref->ids[step][i] = (step * 13 + i * 3) % NS;
	}
	memcpy(dist, ref, sizeof(Shared));
	ref->single = 1;
	int codes[MAXK] = {0};
	if (tc_run(1, 1 << 14, 10.0, 30.0, rank_fn, ref, codes) < 0 || codes[0]) {
		printf("single-rank run failed (exit %d)\n", codes[0]);
		return 1;
	}
	if (tc_run(K, 1 << 14, 10.0, 30.0, rank_fn, dist, codes) < 0)
		return 1;
	for (int r = 0; r < K; r++)
		if (codes[r]) {
			printf("%s K=%d rank %d exit %d\n", fastclip_kind_name(kind), K, r, codes[r]);
			return 1;
		}
	int fail = 0;
	double worst = 0.0;
	const size_t nf = (size_t)K * B * D;
	const int w = fastclip_pack_width(kind);
	for (int step = 0; step < STEPS; step++) {
		// rank gradients are K× the single-rank ones; the parameter all-reduce averages them
		worst = fmax(worst, rel(dist->de1[step], ref->de1[step], nf, 1.0 / K));
		worst = fmax(worst, rel(dist->de2[step], ref->de2[step], nf, 1.0 / K));
		for (int r = 0; r < K; r++) {
			double dl = fabs(dist->dlog_s[r][step] - ref->dlog_s[0][step]) /
				    (fabs(ref->dlog_s[0][step]) + 1e-12);
			double ls = fabs(dist->log_s[r][step] - ref->log_s[0][step]) / fabs(ref->log_s[0][step]);
			if ((kind != FASTCLIP_V1 && kind != FASTCLIP_V2 && dl > 1e-5) || ls > 1e-6) {
				printf("%s K=%d step %d rank %d: dlog_s %.9g vs %.9g, log_s %.9g vs %.9g\n",
				       fastclip_kind_name(kind), K, step, r, dist->dlog_s[r][step],
				       ref->dlog_s[0][step], dist->log_s[r][step], ref->log_s[0][step]);
				fail = 1;
			}
			// DESIGN §7 / REFERENCES: features 2(K−1)Bd, ids (K−1)B, u (K−1)B·w, params 2P(K−1)/K
			double ag = (K - 1) * 2.0 * B * D * 4, rs = 0.0, ar = 2.0 * (K - 1) * P * 4 / K;
			if (kind == FASTCLIP_OPENCLIP)
				rs = (K - 1) * 2.0 * B * D * 4;
			else
				ag += (K - 1) * (double)B * 8 + (K - 1) * (double)B * w * 4;
			const double *by = dist->bytes[r][step];
			if (fabs(by[COMM_ALLGATHER] - ag) > 1e-6 || fabs(by[COMM_REDUCE_SCATTER] - rs) > 1e-6 ||
			    fabs(by[COMM_ALLREDUCE] - ar) > 1e-6) {
				printf("%s K=%d rank %d bytes: allgather %.0f (model %.0f) reduce_scatter %.0f (%.0f) allreduce %.0f (%.0f)\n",
				       fastclip_kind_name(kind), K, r, by[COMM_ALLGATHER], ag, by[COMM_REDUCE_SCATTER],
				       rs, by[COMM_ALLREDUCE], ar);
				fail = 1;
			}
		}
	}
	if (worst > 1e-5) {
		printf("%s K=%d: feature gradients differ from the single-rank batch: %.3g\n", fastclip_kind_name(kind),
		       K, worst);
		fail = 1;
	}
	int ntab = kind == FASTCLIP_OPENCLIP ? 0 : kind == FASTCLIP_V2 ? NTAB : 2;
	for (int r = 0; r < K; r++)
		for (int k = 0; k < ntab; k++) {
			if (memcmp(dist->tab[r][k], dist->tab[0][k], sizeof(float) * NS) != 0) {
				printf("%s K=%d: table %d differs between rank %d and rank 0\n",
				       fastclip_kind_name(kind), K, k, r);
				fail = 1;
			}
			for (int i = 0; i < NS; i++)
				if (fabs(dist->tab[r][k][i] - ref->tab[0][k][i]) >
				    1e-5 * fabs(ref->tab[0][k][i]) + 1e-30) {
					printf("%s K=%d: table %d[%d] %.9g vs single %.9g\n", fastclip_kind_name(kind),
					       K, k, i, dist->tab[r][k][i], ref->tab[0][k][i]);
					fail = 1;
					break;
				}
		}
	printf("%-12s K=%d: worst feature-gradient rel err %.3g, bytes/step/rank %.0f%s\n", fastclip_kind_name(kind), K,
	       worst,
	       dist->bytes[0][0][COMM_ALLGATHER] + dist->bytes[0][0][COMM_REDUCE_SCATTER] +
		       dist->bytes[0][0][COMM_ALLREDUCE],
	       fail ? "  FAIL" : "");
	munmap(ref, sizeof(Shared));
	munmap(dist, sizeof(Shared));
	return fail;
}

int main(void)
{
	int fail = 0;
	for (int kind = 0; kind < FASTCLIP_NKINDS; kind++)
		for (int K = 2; K <= 4; K += 2)
			fail |= check((FastclipKind)kind, K);
	printf(fail ? "FAIL: the distributed step differs from the single-rank batch\n"
		    : "every loss: K=2,4 ranks match the single-rank batch\n");
	return fail;
}
