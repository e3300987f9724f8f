// Checks the FCCO ops against trainer/fastclip's host code for v0-v3, one rank alone and rank 1 of
// three: the local phase (g, u with the bad-u reset, v2's τ update) fastclip_local, the table
// scatter (duplicate ids: the later row wins) and the surrogate's loss, feature gradients and
// dlog s; and that one and three CPU threads give the same bits.
#include "fastclip_ref.h"       // defines: fastclip_local, fastclip_surrogate
#include "kern_gradcheck.h"     // defines: kgc_*
#include "kern_ops.h"           // defines: kern_fcco_*
#include "test_fastclip_util.h" // defines: tf_features, tf_uniform, tf_max_rel_f

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 4, D = 6, NS = 50, KMAX = 3 };

static const char *const names[4] = {"v0", "v1", "v2", "v3"};

static void tables_to(const FastclipTables *t, float *dst, int tw)
{
	const float *cols[10] = {t->u1, t->u2, t->tau1, t->tau2, t->bound1, t->bound2, t->m1, t->m2, t->v1, t->v2};
	for (int64_t i = 0; i < t->n; i++)
		for (int k = 0; k < tw; k++)
			dst[i * tw + k] = cols[k][i];
}

typedef struct {
	float E1[KMAX * B * D], E2[KMAX * B * D];
	int64_t ids[KMAX * B];
	float pack_all[KMAX * B * 12];
	float loss, de1[B * D], de2[B * D], dls, table[NS * 10];
} DevOut;

// the device ops for rank `rank` of K with nt threads; returns -1 on an op error
static int device(int nt, FastclipKind kind, const FastclipConfig *cfg, int epoch, int K, int rank, const DevOut *in,
		  const float *table0, double log_s, DevOut *out)
{
	KernCtx *c;
	const int N = K * B, v = kind - FASTCLIP_V0, pw = kern_fcco_pack_width(v), tw = kern_fcco_table_width(v);
	KTensor e1, e2, E1, E2, ls, ids, ids_all, tab, pack, pack_all, loss, de1, de2, dls;
	if (kern_ctx_create_cpu(&c, nt) || kern_ctx_reserve_workspace(c, kern_loss_ws_bytes(c, B, N, D)))
		return -1;
	int rc = kern_alloc(c, &e1, KDT_F32, 2, (int64_t[]){B, D}) | kern_alloc(c, &e2, KDT_F32, 2, (int64_t[]){B, D}) |
		 kern_alloc(c, &E1, KDT_F32, 2, (int64_t[]){N, D}) | kern_alloc(c, &E2, KDT_F32, 2, (int64_t[]){N, D}) |
		 kern_alloc(c, &ls, KDT_F32, 1, (int64_t[]){1}) | kern_alloc(c, &ids, KDT_I64, 1, (int64_t[]){B}) |
		 kern_alloc(c, &ids_all, KDT_I64, 1, (int64_t[]){N}) |
		 kern_alloc(c, &tab, KDT_F32, 2, (int64_t[]){NS, tw}) |
		 kern_alloc(c, &pack, KDT_F32, 2, (int64_t[]){B, pw}) |
		 kern_alloc(c, &pack_all, KDT_F32, 2, (int64_t[]){N, pw}) |
		 kern_alloc(c, &loss, KDT_F32, 1, (int64_t[]){1}) | kern_alloc(c, &de1, KDT_F32, 2, (int64_t[]){B, D}) |
		 kern_alloc(c, &de2, KDT_F32, 2, (int64_t[]){B, D}) | kern_alloc(c, &dls, KDT_F32, 1, (int64_t[]){1});
	if (rc)
		return -1;
	float lsf = (float)log_s;
	rc |= kern_upload(c, &E1, in->E1, sizeof(float) * N * D) | kern_upload(c, &E2, in->E2, sizeof(float) * N * D);
	rc |= kern_upload(c, &ls, &lsf, 4) | kern_upload(c, &ids_all, in->ids, sizeof(int64_t) * N);
	rc |= kern_upload(c, &tab, table0, sizeof(float) * NS * tw);
	double b1, b2;
	fastclip_tau_betas(cfg, epoch, &b1, &b2);
	KFccoParams p = {.version = v,
			 .gamma = fastclip_gamma(cfg, epoch),
			 .eps = cfg->eps,
			 .rho = cfg->rho,
			 .lr_tau = cfg->lr_tau,
			 .beta1 = b1,
			 .beta2 = b2,
			 .eps_tau = cfg->eps_tau,
			 .tau_min = cfg->tau_min,
			 .tau_max = cfg->tau_max,
			 .grad_clamp = cfg->grad_clamp_tau,
			 .epoch = epoch,
			 .upstream_reset = cfg->upstream_reset};
	// every rank's local phase, as each rank would run it, gathered into pack_all
	for (int r = 0; r < K && !rc; r++) {
		KTensor pr;
		rc |= kern_upload(c, &e1, in->E1 + r * B * D, sizeof(float) * B * D);
		rc |= kern_upload(c, &e2, in->E2 + r * B * D, sizeof(float) * B * D);
		rc |= kern_upload(c, &ids, in->ids + r * B, sizeof(int64_t) * B);
		KContrastBatch b = {.e1 = &e1, .e2 = &e2, .E1 = &E1, .E2 = &E2, .offset = r * B, .log_s = &ls};
		rc |= kern_fcco_local(c, &b, &ids, &tab, &p, &pack);
		rc |= kern_view(&pr, &pack_all, (int64_t)r * B * pw, 2, (int64_t[]){B, pw}) | kern_copy(c, &pr, &pack);
	}
	KTensor pl;
	rc |= kern_upload(c, &e1, in->E1 + rank * B * D, sizeof(float) * B * D);
	rc |= kern_upload(c, &e2, in->E2 + rank * B * D, sizeof(float) * B * D);
	rc |= kern_view(&pl, &pack_all, (int64_t)rank * B * pw, 2, (int64_t[]){B, pw});
	KContrastBatch b = {.e1 = &e1, .e2 = &e2, .E1 = &E1, .E2 = &E2, .offset = rank * B, .log_s = &ls};
	rc |= kern_fcco_surrogate(c, &b, &pl, &pack_all, &p, &loss, KG_SET(&de1), KG_SET(&de2), KG_SET(&dls));
	rc |= kern_fcco_scatter(c, &tab, &ids_all, &pack_all, v);
	rc |= kern_download(c, out->pack_all, sizeof(float) * N * pw, &pack_all);
	rc |= kern_download(c, &out->loss, 4, &loss) | kern_download(c, &out->dls, 4, &dls);
	rc |= kern_download(c, out->de1, sizeof out->de1, &de1) | kern_download(c, out->de2, sizeof out->de2, &de2);
	rc |= kern_download(c, out->table, sizeof(float) * NS * tw, &tab);
	kern_ctx_destroy(c);
	return rc ? -1 : 0;
}

static int check(FastclipKind kind, int K, int rank, uint64_t seed)
{
	FastclipConfig cfg;
	fastclip_config_default(&cfg, kind);
	const int N = K * B, epoch = 2, v = kind - FASTCLIP_V0, pw = kern_fcco_pack_width(v),
		  tw = kern_fcco_table_width(v);
	const double log_s = (double)(float)log(1 / 0.07);
	DevOut in = {0}, d1 = {0}, d3 = {0};
	tf_features(in.E1, N, D, &seed);
	tf_features(in.E2, N, D, &seed);
	for (int j = 0; j < N; j++)
		in.ids[j] = 1 + 3 * j;
	in.ids[N - 1] = in.ids[0]; // a repeated sample: the later row wins in the scatter
	FastclipTables t;
	if (fastclip_tables_create(&t, &cfg, NS) < 0)
		return 1;
	for (int i = 0; i < NS; i++) {
		t.u1[i] = (float)(0.2 + tf_uniform(&seed));
		t.u2[i] = (float)(0.2 + tf_uniform(&seed));
		if (kind == FASTCLIP_V2) {
			t.tau1[i] = (float)(0.02 + 0.05 * tf_uniform(&seed));
			t.tau2[i] = (float)(0.02 + 0.05 * tf_uniform(&seed));
			t.bound1[i] = (float)(5 * tf_uniform(&seed)), t.bound2[i] = (float)(5 * tf_uniform(&seed));
			t.m1[i] = (float)(tf_uniform(&seed) - 0.5), t.m2[i] = (float)(tf_uniform(&seed) - 0.5);
			t.v1[i] = (float)tf_uniform(&seed), t.v2[i] = (float)tf_uniform(&seed);
		}
	}
	t.u1[in.ids[1]] = 0.0f, t.u2[in.ids[1]] = NAN, t.u1[in.ids[2]] = INFINITY, t.u2[in.ids[2]] = 1e-38f; // resets
	float table0[NS * 10];
	tables_to(&t, table0, tw);
	// host: every rank's pack, the surrogate of `rank`, the scatter
	float hp[KMAX * B * 12], hde1[B * D], hde2[B * D], htab[NS * 10];
	for (int r = 0; r < K; r++) {
		FastclipBatch br = {.B = B,
				    .K = K,
				    .rank = r,
				    .d = D,
				    .e1 = in.E1 + r * B * D,
				    .e2 = in.E2 + r * B * D,
				    .E1 = in.E1,
				    .E2 = in.E2,
				    .ids = in.ids + r * B,
				    .log_s = log_s};
		if (fastclip_local(&cfg, &t, epoch, &br, hp + r * B * pw) < 0)
			return 1;
	}
	FastclipBatch b = {.B = B,
			   .K = K,
			   .rank = rank,
			   .d = D,
			   .e1 = in.E1 + rank * B * D,
			   .e2 = in.E2 + rank * B * D,
			   .E1 = in.E1,
			   .E2 = in.E2,
			   .log_s = log_s};
	FastclipGrads g = {.de1 = hde1, .de2 = hde2};
	if (fastclip_surrogate(&cfg, &b, hp + rank * B * pw, hp, &g) < 0 ||
	    fastclip_tables_scatter(&t, N, in.ids, hp) < 0)
		return 1;
	tables_to(&t, htab, tw);
	fastclip_tables_free(&t);
	if (device(1, kind, &cfg, epoch, K, rank, &in, table0, log_s, &d1) ||
	    device(3, kind, &cfg, epoch, K, rank, &in, table0, log_s, &d3)) {
		printf("FAIL %s: a device op failed\n", names[v]);
		return 1;
	}
	float hl = (float)g.loss, hd = (float)g.dlog_s;
	double e[6] = {tf_max_rel_f(d1.pack_all, hp, (int64_t)N * pw),
		       tf_max_rel_f(d1.table, htab, (int64_t)NS * tw),
		       tf_max_rel_f(&d1.loss, &hl, 1),
		       tf_max_rel_f(d1.de1, hde1, B * D),
		       tf_max_rel_f(d1.de2, hde2, B * D),
		       tf_max_rel_f(&d1.dls, &hd, 1)};
	int same = memcmp(&d1, &d3, sizeof d1) == 0, ok = same;
	for (int i = 0; i < 6; i++)
		ok &= e[i] <= 1e-6;
	printf("%-4s %s K=%d rank %d: rel err pack %.2g table %.2g loss %.2g de1 %.2g de2 %.2g dlog_s %.2g; "
	       "1 vs 3 threads %s\n",
	       ok ? "ok" : "FAIL", names[v], K, rank, e[0], e[1], e[2], e[3], e[4], e[5], same ? "equal" : "DIFFER");
	return !ok;
}

int main(void)
{
	int bad = 0;
	for (FastclipKind k = FASTCLIP_V0; k <= FASTCLIP_V3; k++)
		bad |= check(k, 1, 0, 11 + (uint64_t)k) | check(k, 3, 1, 21 + (uint64_t)k);
	printf("%s\n", bad ? "FAIL FCCO ops vs trainer/fastclip" : "PASS FCCO ops equal trainer/fastclip's host code");
	return bad;
}
