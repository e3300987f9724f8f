// --fastclip-upstream-reset reproduces FastCLIP's u update (u_update of tools/ref/fastclip_ref.py,
// FastCLIPLoss.local upstream): u = (1−γ)·u·rescale + γ·g, bad u (< 1e-35, inf, NaN) reset to g only
// when γ < 1. So at γ = 1 (epoch 0) a 0 or tiny u gives g and an inf or NaN u gives NaN (0·inf),
// where the default resets it to g; at γ < 1 both rules agree bit for bit. Checked on the CPU op
// (kern_fcco_local) and on the host twin (fastclip_local), for v3 and v2.
#include "fastclip_ref.h"       // defines: fastclip_local, fastclip_tables_create, FastclipBatch
#include "kern_ops.h"           // defines: kern_fcco_local, KFccoParams
#include "test_fastclip_util.h" // defines: tf_features, tf_uniform

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { B = 6, D = 4, NS = 8 };
static const float u_old[B] = {0.5f, 0.0f, NAN, INFINITY, 1e-38f, 0.25f};
static const int finite_old[B] = {1, 1, 0, 0, 1, 1};

static float E1[B * D], E2[B * D];
static int64_t ids[B] = {0, 1, 2, 3, 4, 5};

// the updated u1 of every sample: op 0 the CPU kernel, 1 the host twin
static int local_u(int op, FastclipKind kind, int epoch, int upstream, float *u)
{
	FastclipConfig cfg;
	fastclip_config_default(&cfg, kind);
	cfg.upstream_reset = upstream;
	FastclipTables t;
	if (fastclip_tables_create(&t, &cfg, NS) < 0)
		return -1;
	for (int i = 0; i < B; i++)
		t.u1[i] = t.u2[i] = u_old[i];
	const double log_s = (double)(float)log(1 / 0.07);
	const int v = kind - FASTCLIP_V0, pw = kern_fcco_pack_width(v), tw = kern_fcco_table_width(v);
	float pack[B * 12];
	int rc = 0;
	if (op == 1) {
		FastclipBatch b = {.B = B,
				   .K = 1,
				   .rank = 0,
				   .d = D,
				   .e1 = E1,
				   .e2 = E2,
				   .E1 = E1,
				   .E2 = E2,
				   .ids = ids,
				   .log_s = log_s};
		rc = fastclip_local(&cfg, &t, epoch, &b, pack);
	} else {
		const float *cols[10] = {t.u1, t.u2, t.tau1, t.tau2, t.bound1, t.bound2, t.m1, t.m2, t.v1, t.v2};
		float tab[NS * 10], lsf = (float)log_s;
		for (int i = 0; i < NS; i++)
			for (int k = 0; k < tw; k++)
				tab[i * tw + k] = cols[k][i];
		KernCtx *c;
		KTensor e1, e2, ls, id, table, pk;
		if (kern_ctx_create_cpu(&c, 1) || kern_ctx_reserve_workspace(c, kern_loss_ws_bytes(c, B, B, D)))
			return -1;
		rc = kern_alloc(c, &e1, KDT_F32, 2, (int64_t[]){B, D}) |
		     kern_alloc(c, &e2, KDT_F32, 2, (int64_t[]){B, D}) |
		     kern_alloc(c, &ls, KDT_F32, 1, (int64_t[]){1}) | kern_alloc(c, &id, KDT_I64, 1, (int64_t[]){B}) |
		     kern_alloc(c, &table, KDT_F32, 2, (int64_t[]){NS, tw}) |
		     kern_alloc(c, &pk, KDT_F32, 2, (int64_t[]){B, pw});
		rc |= kern_upload(c, &e1, E1, sizeof E1) | kern_upload(c, &e2, E2, sizeof E2) |
		      kern_upload(c, &ls, &lsf, 4) | kern_upload(c, &id, ids, sizeof ids) |
		      kern_upload(c, &table, tab, sizeof(float) * NS * tw);
		KFccoParams p = fastclip_fcco_params(&cfg, epoch);
		KContrastBatch b = {.e1 = &e1, .e2 = &e2, .E1 = &e1, .E2 = &e2, .offset = 0, .log_s = &ls};
		rc |= kern_fcco_local(c, &b, &id, &table, &p, &pk);
		rc |= kern_download(c, pack, sizeof(float) * B * pw, &pk);
		kern_ctx_destroy(c);
	}
	for (int i = 0; i < B; i++)
		u[i] = pack[i * pw + KFCCO_P_U1];
	fastclip_tables_free(&t);
	return rc ? -1 : 0;
}

static int same_bits(float a, float b)
{
	return !memcmp(&a, &b, sizeof a);
}

static int check(int op, FastclipKind kind)
{
	const char *what = op ? "host twin" : "CPU op";
	const char *name = kind == FASTCLIP_V2 ? "v2" : "v3";
	FastclipConfig cfg;
	fastclip_config_default(&cfg, kind);
	const int late = cfg.gamma_decay_epochs + 1; // γ = γ_min < 1
	float def1[B], up1[B], def_late[B], up_late[B];
	if (local_u(op, kind, 0, 0, def1) || local_u(op, kind, 0, 1, up1) || local_u(op, kind, late, 0, def_late) ||
	    local_u(op, kind, late, 1, up_late)) {
		printf("FAIL %s %s: the local phase failed\n", what, name);
		return 1;
	}
	int fails = 0;
	for (int i = 0; i < B; i++) {
		// γ = 1: the default resets every bad u to g; upstream gives g (= the default's) for a
		// finite u and NaN for inf or NaN
		int ok1 = isfinite(def1[i]) && (finite_old[i] ? same_bits(up1[i], def1[i]) : isnan(up1[i]));
		// γ < 1: the same rule both ways; a bad u becomes g, the γ = 1 value of the sample
		int bad = !finite_old[i] || u_old[i] < 1e-35f;
		int ok2 = same_bits(up_late[i], def_late[i]) && (!bad || same_bits(def_late[i], def1[i]));
		if (!ok1 || !ok2) {
			printf("FAIL %s %s sample %d (u %g): γ=1 default %g upstream %g; γ<1 default %g upstream %g\n",
			       what, name, i, (double)u_old[i], (double)def1[i], (double)up1[i], (double)def_late[i],
			       (double)up_late[i]);
			fails++;
		}
	}
	if (!fails)
		printf("ok %s %s: γ=1 upstream u %g %g %g %g %g %g (default %g for NaN/inf u)\n", what, name,
		       (double)up1[0], (double)up1[1], (double)up1[2], (double)up1[3], (double)up1[4], (double)up1[5],
		       (double)def1[2]);
	return fails;
}

int main(void)
{
	uint64_t seed = 5;
	tf_features(E1, B, D, &seed);
	tf_features(E2, B, D, &seed);
	int fails = 0;
	for (int op = 0; op < 2; op++)
		fails += check(op, FASTCLIP_V3) + check(op, FASTCLIP_V2);
	printf("%s\n",
	       fails ? "FAILED" : "--fastclip-upstream-reset follows FastCLIP's rule; the default stays finite");
	return fails ? 1 : 0;
}
