// The self-check's loss ops (trainer_selfcheck_sc.h): the features' normalization, OpenCLIP's
// InfoNCE, FastCLIP's three FCCO phases of every version, the logged metrics and the τ update.
#include "trainer_selfcheck_sc.h" // defines: Sc, ScPair, SH, NSH, sc_*

#include "stream.h" // defines: rng_splitmix64

#include <errno.h>  // defines: ENOMEM
#include <math.h>   // defines: NAN, INFINITY, log
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: malloc, free

// the features' normalization and the local contrastive loss with its gradients
void sc_check_loss(Sc *s)
{
	enum { B = 8, DIM = 64 };
	ScPair x, y, nrm, e2, ls, loss, de1, de2, dls;
	sc_alloc(s, &x, KDT_BF16, NSH(B, DIM)), sc_alloc(s, &y, KDT_BF16, NSH(B, DIM)),
		sc_alloc(s, &nrm, KDT_F32, NSH(B));
	sc_alloc(s, &e2, KDT_BF16, NSH(B, DIM)), sc_alloc(s, &ls, KDT_F32, NSH(1)), sc_alloc(s, &loss, KDT_F32, NSH(1));
	sc_alloc(s, &de1, KDT_BF16, NSH(B, DIM)), sc_alloc(s, &de2, KDT_BF16, NSH(B, DIM)),
		sc_alloc(s, &dls, KDT_F32, NSH(1));
	sc_fill(s, &x, -1, 1, 0), sc_fill(s, &e2, -1, 1, 1), sc_fill(s, &ls, 1.5, 4.0, 0), sc_poison(s, &y),
		sc_poison(s, &nrm);
	sc_poison(s, &loss), sc_poison(s, &de1), sc_poison(s, &de2), sc_poison(s, &dls);
	sc_reserve(s, kern_loss_ws_bytes(s->cpu, B, B, DIM), kern_loss_ws_bytes(s->dev, B, B, DIM));
	const char *op = "l2norm";
	if (!s->setup_rc &&
	    !sc_both(s, op, kern_l2norm_fwd(s->cpu, &y.c, &nrm.c, &x.c), kern_l2norm_fwd(s->dev, &y.d, &nrm.d, &x.d)))
		sc_compare(s, op, "out", &y), sc_compare(s, op, "norm", &nrm);
	op = "infonce";
	sc_cpu_to_dev(s, &y);
	KContrastBatch bc = {.e1 = &y.c, .e2 = &e2.c, .E1 = &y.c, .E2 = &e2.c, .log_s = &ls.c};
	KContrastBatch bd = {.e1 = &y.d, .e2 = &e2.d, .E1 = &y.d, .E2 = &e2.d, .log_s = &ls.d};
	if (!s->setup_rc &&
	    !sc_both(s, op, kern_infonce(s->cpu, &bc, &loss.c, KG_SET(&de1.c), KG_SET(&de2.c), KG_SET(&dls.c)),
		     kern_infonce(s->dev, &bd, &loss.d, KG_SET(&de1.d), KG_SET(&de2.d), KG_SET(&dls.d)))) {
		sc_compare(s, op, "loss", &loss), sc_compare(s, op, "dE1", &de1), sc_compare(s, op, "dE2", &de2);
		sc_compare(s, op, "dlog_s", &dls);
	}
	sc_free_all(s, (ScPair *[]){&x, &y, &nrm, &e2, &ls, &loss, &de1, &de2, &dls}, 9);
}

// The gathered batch of rank 1 of 2: E1, E2 (N = 2B, d) unit rows, e1, e2 the views of its rows
typedef struct {
	ScPair E1, E2;
	KTensor e1c, e2c, e1d, e2d;
	KContrastBatch c, d;
} Gathered;

enum { FB = 6, FN = 2 * FB, FD = 64, FROWS = 3 * FN };

static void gathered(Sc *s, Gathered *g, ScPair *log_s)
{
	sc_alloc(s, &g->E1, KDT_BF16, NSH(FN, FD)), sc_alloc(s, &g->E2, KDT_BF16, NSH(FN, FD));
	sc_fill(s, &g->E1, -1, 1, 1), sc_fill(s, &g->E2, -1, 1, 1);
	kern_view(&g->e1c, &g->E1.c, FB * FD, 2, SH(FB, FD)), kern_view(&g->e2c, &g->E2.c, FB * FD, 2, SH(FB, FD));
	kern_view(&g->e1d, &g->E1.d, FB * FD, 2, SH(FB, FD)), kern_view(&g->e2d, &g->E2.d, FB * FD, 2, SH(FB, FD));
	g->c = (KContrastBatch){
		.e1 = &g->e1c, .e2 = &g->e2c, .E1 = &g->E1.c, .E2 = &g->E2.c, .offset = FB, .log_s = &log_s->c};
	g->d = (KContrastBatch){
		.e1 = &g->e1d, .e2 = &g->e2d, .E1 = &g->E1.d, .E2 = &g->E2.d, .offset = FB, .log_s = &log_s->d};
}

// the table: u positive, some rows bad (0, NaN, inf, subnormal: reset to g), for v2 τ, bounds, moments
static void fcco_table(Sc *s, ScPair *table, int tw)
{
	const float bads[4] = {0.0f, NAN, INFINITY, 1e-40f};
	float *t = malloc(sizeof(float) * FROWS * (size_t)tw);
	if (!t)
		return sc_setup_failed(s, "a host buffer", -ENOMEM);
	for (int r = 0; r < FROWS; r++) {
		float *row = t + (size_t)r * tw;
		for (int k = 0; k < 2; k++)
			row[k] = r % 5 == 0 ? bads[(r / 5 + k) % 4] : (float)sc_uniform(s, 0.2, 3.0);
		for (int k = 0; k < 2 && tw >= 10; k++) {
			row[KFCCO_T_TAU1 + k] = (float)sc_uniform(s, 0.05, 0.2);
			row[KFCCO_T_B1 + k] = (float)sc_uniform(s, 0.0, 4.0);
			row[KFCCO_T_M1 + k] = (float)sc_uniform(s, -0.1, 0.1);
			row[KFCCO_T_V1 + k] = (float)sc_uniform(s, 0.0, 0.01);
		}
	}
	sc_set(s, table, t);
	free(t);
}

// gathered packs: positive u, for v2 the old τ and bounds the surrogate reads
static void fcco_packs(Sc *s, ScPair *pack_all, int pw)
{
	float pa[FN * 12];
	for (int r = 0; r < FN; r++)
		for (int k = 0; k < pw; k++)
			pa[r * pw + k] =
				(float)(k == KFCCO_P_TAU1_OLD || k == KFCCO_P_TAU2_OLD ? sc_uniform(s, 0.05, 0.2)
					: k < 2                                        ? sc_uniform(s, 0.3, 2.0)
										       : sc_uniform(s, 0.0, 3.0));
	sc_set(s, pack_all, pa);
}

// FastCLIP's local phase (u from the table), the table's scatter (repeated ids: the later row
// wins, bit for bit) and the surrogate with its gradients, for version v
void sc_check_fcco(Sc *s, KFccoVersion v)
{
	const int tw = kern_fcco_table_width(v), pw = kern_fcco_pack_width(v);
	const KFccoParams p = {.version = v,
			       .gamma = 0.8,
			       .eps = 1e-14,
			       .rho = 6.5,
			       .lr_tau = 0.0133,
			       .beta1 = 0.9,
			       .beta2 = 0.98,
			       .eps_tau = 1e-8,
			       .tau_min = 0.01,
			       .tau_max = 1.0,
			       .grad_clamp = 5.0,
			       .epoch = 1};
	ScPair ls, table, ids, pack, ids_all, pack_all, loss, de1, de2, dls;
	Gathered g;
	sc_alloc(s, &ls, KDT_F32, NSH(1)), sc_fill(s, &ls, 2.5, 4.0, 0), gathered(s, &g, &ls);
	sc_alloc(s, &table, KDT_F32, NSH(FROWS, tw)), sc_alloc(s, &ids, KDT_I64, NSH(FB));
	sc_alloc(s, &pack, KDT_F32, NSH(FB, pw)), sc_alloc(s, &ids_all, KDT_I64, NSH(FN));
	sc_alloc(s, &pack_all, KDT_F32, NSH(FN, pw)), sc_alloc(s, &loss, KDT_F32, NSH(1));
	sc_alloc(s, &de1, KDT_BF16, NSH(FB, FD)), sc_alloc(s, &de2, KDT_BF16, NSH(FB, FD)),
		sc_alloc(s, &dls, KDT_F32, NSH(1));
	int64_t id[FB], ida[FN];
	for (int i = 0; i < FB; i++)
		id[i] = (int64_t)(rng_splitmix64(&s->rng) % FROWS);
	for (int r = 0; r < FN; r++) // repeats
		ida[r] = (int64_t)(rng_splitmix64(&s->rng) % (FN / 2 + 1));
	fcco_table(s, &table, tw), sc_set(s, &ids, id), sc_set(s, &ids_all, ida), sc_poison(s, &pack);
	sc_reserve(s, kern_loss_ws_bytes(s->cpu, FB, FN, FD), kern_loss_ws_bytes(s->dev, FB, FN, FD));
	char op[64];
	snprintf(op, sizeof op, "fcco v%d local", (int)v);
	if (!s->setup_rc && !sc_both(s, op, kern_fcco_local(s->cpu, &g.c, &ids.c, &table.c, &p, &pack.c),
				     kern_fcco_local(s->dev, &g.d, &ids.d, &table.d, &p, &pack.d)))
		sc_compare(s, op, "pack", &pack);
	fcco_packs(s, &pack_all, pw);
	snprintf(op, sizeof op, "fcco v%d scatter", (int)v);
	if (!s->setup_rc && !sc_both(s, op, kern_fcco_scatter(s->cpu, &table.c, &ids_all.c, &pack_all.c, v),
				     kern_fcco_scatter(s->dev, &table.d, &ids_all.d, &pack_all.d, v)))
		sc_same_bits(s, op, "table", &table);
	snprintf(op, sizeof op, "fcco v%d surrogate", (int)v);
	KTensor lpc, lpd; // this rank's rows of the gathered packs as its local pack
	kern_view(&lpc, &pack_all.c, (int64_t)FB * pw, 2, SH(FB, pw)),
		kern_view(&lpd, &pack_all.d, (int64_t)FB * pw, 2, SH(FB, pw));
	sc_poison(s, &loss), sc_poison(s, &de1), sc_poison(s, &de2), sc_poison(s, &dls);
	if (!s->setup_rc && !sc_both(s, op,
				     kern_fcco_surrogate(s->cpu, &g.c, &lpc, &pack_all.c, &p, &loss.c, KG_SET(&de1.c),
							 KG_SET(&de2.c), KG_SET(&dls.c)),
				     kern_fcco_surrogate(s->dev, &g.d, &lpd, &pack_all.d, &p, &loss.d, KG_SET(&de1.d),
							 KG_SET(&de2.d), KG_SET(&dls.d)))) {
		sc_compare(s, op, "loss", &loss), sc_compare(s, op, "de1", &de1), sc_compare(s, op, "de2", &de2);
		sc_compare(s, op, "dlog_s", &dls);
	}
	sc_free_all(s,
		    (ScPair *[]){&ls, &g.E1, &g.E2, &table, &ids, &pack, &ids_all, &pack_all, &loss, &de1, &de2, &dls},
		    12);
}

// the logged batch metrics: symmetric InfoNCE and the fraction of rows matched first
void sc_check_metrics(Sc *s)
{
	enum { B = 9, D = 64 };
	ScPair e1, e2, ls, m;
	sc_alloc(s, &e1, KDT_BF16, NSH(B, D)), sc_alloc(s, &e2, KDT_BF16, NSH(B, D));
	sc_alloc(s, &ls, KDT_F32, NSH(1)), sc_alloc(s, &m, KDT_F32, NSH(2));
	sc_fill(s, &e1, -1, 1, 1), sc_fill(s, &e2, -1, 1, 1), sc_fill(s, &ls, 1, 4.6, 0), sc_poison(s, &m);
	sc_reserve(s, kern_loss_ws_bytes(s->cpu, B, B, D), kern_loss_ws_bytes(s->dev, B, B, D));
	const char *op = "clip metrics";
	if (!s->setup_rc && !sc_both(s, op, kern_clip_metrics(s->cpu, &m.c, &e1.c, &e2.c, &ls.c),
				     kern_clip_metrics(s->dev, &m.d, &e1.d, &e2.d, &ls.d)))
		sc_compare(s, op, "metrics", &m);
	sc_free_all(s, (ScPair *[]){&e1, &e2, &ls, &m}, 4);
}

// the global temperature's Adam step over four steps, the clip factor applied, v3's lower rate
// below τ = 0.03 crossed (log_s from 3.3 to 3.6), the logit_scale copy written
void sc_check_temp(Sc *s)
{
	ScPair ls, mv, g, copy, nc;
	sc_alloc(s, &ls, KDT_F32, NSH(1)), sc_alloc(s, &mv, KDT_F32, NSH(2)), sc_alloc(s, &g, KDT_BF16, NSH(1));
	sc_alloc(s, &copy, KDT_BF16, NSH(1)), sc_alloc(s, &nc, KDT_F32, NSH(2));
	sc_fill(s, &ls, 3.3, 3.6, 0), sc_fill(s, &mv, 0, 0, 0), sc_poison(s, &copy);
	const char *op = "temperature step";
	for (int step = 1; step <= 4 && !s->setup_rc; step++) {
		sc_fill(s, &g, -2, 2, 0), sc_fill(s, &nc, 0.05, 1, 0);
		const KTempStep h = {.lr = 0.05,
				     .lr_low = 0.05 / 3,
				     .tau_low = 0.03,
				     .beta1 = 0.9,
				     .beta2 = 0.999,
				     .eps = 1e-8,
				     .step = step,
				     .lo = 0.0,
				     .hi = log(100.0)};
		if (sc_both(s, op, kern_temp_step(s->cpu, &ls.c, &mv.c, &g.c, &nc.c, &copy.c, &h),
			    kern_temp_step(s->dev, &ls.d, &mv.d, &g.d, &nc.d, &copy.d, &h)))
			break;
		if (step == 4)
			sc_compare(s, op, "log_s", &ls), sc_compare(s, op, "(m, v)", &mv),
				sc_compare(s, op, "copy", &copy);
	}
	sc_free_all(s, (ScPair *[]){&ls, &mv, &g, &copy, &nc}, 5);
}
