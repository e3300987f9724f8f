// The CUDA backend's loss ops against the CPU backend: OpenCLIP's gathered InfoNCE, FastCLIP's
// local phase (v0-v3, u resets), table scatter (repeated ids: the later row wins), surrogate
// (v0-v3, set and add), the logged metrics and the temperature's Adam step (with and without the
// clip factor, and with its per-step values from a device tensor: KTempStep.live, what a CUDA
// graph's replay reads); a rank in the middle of a gathered batch, f32 and bf16 features.
#include "kcu_twin.h" // defines: KtEnv, KtPair, KT_BOTH, KT_FREE, SH, NSH, kt_*

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	int B, K, N, d, off;
	KtPair e1, e2, E1, E2, log_s;
} Batch;

// this rank's rows are rows [off, off + B) of the gathered ones
static void batch_make(KtEnv *e, Batch *b, int B, int K, int rank, int d, KDtype dt)
{
	*b = (Batch){.B = B, .K = K, .N = B * K, .d = d, .off = rank * B};
	kt_alloc(e, &b->E1, "E1", dt, NSH(b->N, d));
	kt_alloc(e, &b->E2, "E2", dt, NSH(b->N, d));
	kt_alloc(e, &b->e1, "e1", dt, NSH(B, d));
	kt_alloc(e, &b->e2, "e2", dt, NSH(B, d));
	kt_alloc(e, &b->log_s, "log_s", KDT_F32, NSH(1));
	kt_fill_unit_rows(e, &b->E1), kt_fill_unit_rows(e, &b->E2);
	KT_BOTH(e, kern_view(&b->e1.c, &b->E1.c, (int64_t)b->off * d, 2, SH(B, d)),
		kern_view(&b->e1.d, &b->E1.d, (int64_t)b->off * d, 2, SH(B, d)));
	KT_BOTH(e, kern_view(&b->e2.c, &b->E2.c, (int64_t)b->off * d, 2, SH(B, d)),
		kern_view(&b->e2.d, &b->E2.d, (int64_t)b->off * d, 2, SH(B, d)));
	kt_fill(e, &b->log_s, 1.5, 4.0);
	kt_reserve(e, kern_loss_ws_bytes(e->dev, B, b->N, d) > kern_loss_ws_bytes(e->cpu, B, b->N, d)
			      ? kern_loss_ws_bytes(e->dev, B, b->N, d)
			      : kern_loss_ws_bytes(e->cpu, B, b->N, d));
}

static void batch_free(KtEnv *e, Batch *b)
{
	kt_free(e, &b->E1), kt_free(e, &b->E2), kt_free(e, &b->log_s); // e1, e2 are views
}

static KContrastBatch cb(Batch *b, int dev)
{
	return (KContrastBatch){.e1 = dev ? &b->e1.d : &b->e1.c,
				.e2 = dev ? &b->e2.d : &b->e2.c,
				.E1 = dev ? &b->E1.d : &b->E1.c,
				.E2 = dev ? &b->E2.d : &b->E2.c,
				.offset = b->off,
				.log_s = dev ? &b->log_s.d : &b->log_s.c};
}

static void infonce_case(KtEnv *e, Batch *b, KDtype gdt)
{
	printf("-- infonce B%d N%d d%d off%d %s\n", b->B, b->N, b->d, b->off, kern_dtype_name(b->E1.c.dtype));
	KtPair loss, dE1, dE2, dls;
	kt_alloc(e, &loss, "loss", KDT_F32, NSH(1));
	kt_alloc(e, &dE1, "dE1", gdt, NSH(b->N, b->d));
	kt_alloc(e, &dE2, "dE2", gdt, NSH(b->N, b->d));
	kt_alloc(e, &dls, "dlog_s", KDT_F32, NSH(1));
	KContrastBatch c = cb(b, 0), d = cb(b, 1);
	for (int acc = 0; acc < 2; acc++) {
		KtPair *g[] = {&dE1, &dE2, &dls};
		for (int i = 0; i < 3; i++)
			acc ? kt_fill(e, g[i], -1, 1) : kt_poison(e, g[i]);
		kt_poison(e, &loss);
		KT_BOTH(e,
			kern_infonce(e->cpu, &c, &loss.c, (KGrad){&dE1.c, acc}, (KGrad){&dE2.c, acc},
				     (KGrad){&dls.c, acc}),
			kern_infonce(e->dev, &d, &loss.d, (KGrad){&dE1.d, acc}, (KGrad){&dE2.d, acc},
				     (KGrad){&dls.d, acc}));
		kt_compare(e, &loss, 0), kt_compare(e, &dE1, 0), kt_compare(e, &dE2, 0), kt_compare(e, &dls, 0);
	}
	kt_free(e, &loss), kt_free(e, &dE1), kt_free(e, &dE2), kt_free(e, &dls);
}

static KFccoParams params(KFccoVersion v)
{
	return (KFccoParams){.version = v,
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
}

// a table row: u (some bad: 0, NaN, inf, tiny), and for v2 τ, bound, moments
static void table_row(KtEnv *e, float *row, int tw, int bad)
{
	const float bads[4] = {0.0f, NAN, INFINITY, 1e-40f};
	for (int k = 0; k < 2; k++)
		row[k] = bad ? bads[(bad + k) % 4] : (float)kt_uniform(e, 0.2, 3.0);
	if (tw < 10)
		return;
	for (int k = 0; k < 2; k++) {
		row[KFCCO_T_TAU1 + k] = (float)kt_uniform(e, 0.05, 0.2);
		row[KFCCO_T_B1 + k] = (float)kt_uniform(e, 0.0, 4.0);
		row[KFCCO_T_M1 + k] = (float)kt_uniform(e, -0.1, 0.1);
		row[KFCCO_T_V1 + k] = (float)kt_uniform(e, 0.0, 0.01);
	}
}

// the local pack under FastCLIP's own rule at γ = 1 (--fastclip-upstream-reset): NaN in the same
// places on both backends (where u was inf or NaN), the rest within the f32 tolerance
static void upstream_compare(KtEnv *e, KtPair *p)
{
	int64_t n = kern_numel(&p->c), nans = 0;
	double *a = kt_download_f64(e, p, 0), *b = kt_download_f64(e, p, 1), num = 0, den = 0;
	int same_nan = 1;
	for (int64_t i = 0; i < n; i++) {
		same_nan &= isnan(a[i]) == isnan(b[i]);
		nans += isnan(a[i]) != 0;
		if (!isnan(a[i]) && !isnan(b[i]))
			num += (b[i] - a[i]) * (b[i] - a[i]), den += a[i] * a[i];
	}
	double err = den > 0 ? sqrt(num / den) : sqrt(num);
	kt_check(e, same_nan && err <= KT_TOL_F32,
		 "%s, upstream reset at γ = 1: %lld NaN in the same places, rest rel L2 %.3e", p->name, (long long)nans,
		 err);
	free(a);
	free(b);
}

static void fcco_case(KtEnv *e, Batch *b, KFccoVersion v)
{
	printf("-- fcco v%d B%d N%d d%d off%d %s\n", (int)v, b->B, b->N, b->d, b->off, kern_dtype_name(b->E1.c.dtype));
	const int tw = kern_fcco_table_width(v), pw = kern_fcco_pack_width(v), n = 3 * b->N, B = b->B, N = b->N;
	KFccoParams p = params(v);
	KtPair table, ids, pack, ids_all, pack_all, loss, de1, de2, dls;
	kt_alloc(e, &table, "table", KDT_F32, NSH(n, tw));
	kt_alloc(e, &ids, "ids", KDT_I64, NSH(B));
	kt_alloc(e, &pack, "pack (local)", KDT_F32, NSH(B, pw));
	kt_alloc(e, &ids_all, "ids_all", KDT_I64, NSH(N));
	kt_alloc(e, &pack_all, "pack_all", KDT_F32, NSH(N, pw));
	float *t = malloc(sizeof(float) * (size_t)n * tw), *pa = malloc(sizeof(float) * (size_t)N * pw);
	for (int r = 0; r < n; r++)
		table_row(e, t + (size_t)r * tw, tw, r % 5 == 0 ? 1 + r / 5 % 4 : 0);
	int64_t id[64], ida[256];
	for (int i = 0; i < B; i++)
		id[i] = (int64_t)(kt_rand(e) % (uint64_t)n);
	for (int r = 0; r < N; r++) // repeats: the later row must win
		ida[r] = (int64_t)(kt_rand(e) % (uint64_t)(N / 2 + 1));
	kt_set(e, &table, t), kt_set(e, &ids, id), kt_set(e, &ids_all, ida), kt_poison(e, &pack);
	KContrastBatch c = cb(b, 0), d = cb(b, 1);
	KT_BOTH(e, kern_fcco_local(e->cpu, &c, &ids.c, &table.c, &p, &pack.c),
		kern_fcco_local(e->dev, &d, &ids.d, &table.d, &p, &pack.d));
	kt_compare(e, &pack, 0);
	KFccoParams up = p;
	up.gamma = 1.0, up.upstream_reset = 1;
	KT_BOTH(e, kern_fcco_local(e->cpu, &c, &ids.c, &table.c, &up, &pack.c),
		kern_fcco_local(e->dev, &d, &ids.d, &table.d, &up, &pack.d));
	upstream_compare(e, &pack);
	// gathered packs: positive u, for v2 the old τ and bounds the surrogate reads
	for (int r = 0; r < N; r++)
		for (int k = 0; k < pw; k++)
			pa[r * pw + k] =
				(float)(k == KFCCO_P_TAU1_OLD || k == KFCCO_P_TAU2_OLD ? kt_uniform(e, 0.05, 0.2)
					: k < 2                                        ? kt_uniform(e, 0.3, 2.0)
										       : kt_uniform(e, 0.0, 3.0));
	kt_set(e, &pack_all, pa);
	KT_BOTH(e, kern_fcco_scatter(e->cpu, &table.c, &ids_all.c, &pack_all.c, v),
		kern_fcco_scatter(e->dev, &table.d, &ids_all.d, &pack_all.d, v));
	table.name = "table after scatter";
	kt_same_bits(e, &table);
	// the surrogate: this rank's rows of the gathered packs are its local pack
	kt_alloc(e, &loss, "surrogate loss", KDT_F32, NSH(1));
	kt_alloc(e, &de1, "de1", b->e1.c.dtype, NSH(B, b->d));
	kt_alloc(e, &de2, "de2", b->e1.c.dtype, NSH(B, b->d));
	kt_alloc(e, &dls, "dlog_s", KDT_F32, NSH(1));
	KTensor lp_c, lp_d; // this rank's rows of pack_all as its local pack
	KT_BOTH(e, kern_view(&lp_c, &pack_all.c, (int64_t)b->off * pw, 2, SH(B, pw)),
		kern_view(&lp_d, &pack_all.d, (int64_t)b->off * pw, 2, SH(B, pw)));
	for (int acc = 0; acc < 2; acc++) {
		KtPair *g[] = {&de1, &de2, &dls};
		for (int i = 0; i < 3; i++)
			acc ? kt_fill(e, g[i], -1, 1) : kt_poison(e, g[i]);
		kt_poison(e, &loss);
		KT_BOTH(e,
			kern_fcco_surrogate(e->cpu, &c, &lp_c, &pack_all.c, &p, &loss.c, (KGrad){&de1.c, acc},
					    (KGrad){&de2.c, acc}, (KGrad){&dls.c, acc}),
			kern_fcco_surrogate(e->dev, &d, &lp_d, &pack_all.d, &p, &loss.d, (KGrad){&de1.d, acc},
					    (KGrad){&de2.d, acc}, (KGrad){&dls.d, acc}));
		kt_compare(e, &loss, 0), kt_compare(e, &de1, 0), kt_compare(e, &de2, 0), kt_compare(e, &dls, 0);
	}
	free(t), free(pa);
	KT_FREE(e, &table, &ids, &pack, &ids_all, &pack_all, &loss, &de1, &de2, &dls);
}

static void metrics_case(KtEnv *e, int B, int d, KDtype dt)
{
	printf("-- clip_metrics B%d d%d %s\n", B, d, kern_dtype_name(dt));
	KtPair e1, e2, ls, m;
	kt_alloc(e, &e1, "e1", dt, NSH(B, d));
	kt_alloc(e, &e2, "e2", dt, NSH(B, d));
	kt_alloc(e, &ls, "log_s", KDT_F32, NSH(1));
	kt_alloc(e, &m, "metrics", KDT_F32, NSH(2));
	kt_fill_unit_rows(e, &e1), kt_fill_unit_rows(e, &e2), kt_fill(e, &ls, 1, 4.6), kt_poison(e, &m);
	KT_BOTH(e, kern_clip_metrics(e->cpu, &m.c, &e1.c, &e2.c, &ls.c),
		kern_clip_metrics(e->dev, &m.d, &e1.d, &e2.d, &ls.d));
	kt_compare(e, &m, 0);
	kt_free(e, &e1), kt_free(e, &e2), kt_free(e, &ls), kt_free(e, &m);
}

// with norm_clip: g is the gradient times the clip factor norm_clip[1], an f32 product
static void temp_case(KtEnv *e, int use_nc)
{
	printf("-- temp_step, norm_clip %s\n", use_nc ? "used" : "NULL");
	KtPair ls, mv, g, copy, nc;
	kt_alloc(e, &ls, "log_s", KDT_F32, NSH(1));
	kt_alloc(e, &mv, "(m, v)", KDT_F32, NSH(2));
	kt_alloc(e, &g, "grad", KDT_BF16, NSH(1));
	kt_alloc(e, &copy, "logit_scale copy", KDT_BF16, NSH(1));
	kt_alloc(e, &nc, "norm_clip", KDT_F32, NSH(2));
	kt_fill(e, &ls, 3.3, 3.6), kt_poison(e, &copy);
	for (int step = 1; step <= 4; step++) {
		kt_fill(e, &g, -2, 2), kt_fill(e, &nc, 0.05, 1);
		// v3's rule: a third of the rate once τ ≤ 0.03 (log_s ≥ 3.51), clamped to [0, ln 100]
		KTempStep h = {.lr = 0.05,
			       .lr_low = 0.05 / 3,
			       .tau_low = 0.03,
			       .beta1 = 0.9,
			       .beta2 = 0.999,
			       .eps = 1e-8,
			       .step = step,
			       .lo = 0.0,
			       .hi = log(100.0)};
		KT_BOTH(e, kern_temp_step(e->cpu, &ls.c, &mv.c, &g.c, use_nc ? &nc.c : NULL, &copy.c, &h),
			kern_temp_step(e->dev, &ls.d, &mv.d, &g.d, use_nc ? &nc.d : NULL, &copy.d, &h));
	}
	kt_compare(e, &ls, 0), kt_compare(e, &mv, 0), kt_compare(e, &copy, 0);
	kt_free(e, &ls), kt_free(e, &mv), kt_free(e, &g), kt_free(e, &copy), kt_free(e, &nc);
}

// lr, lr_low and step from a device tensor (the host struct stale): the host values' bits on each
// backend, over steps at a changing rate that cross v3's τ ≤ 0.03 switch
static void temp_live_case(KtEnv *e)
{
	printf("-- temp_step: lr, lr_low and step from a device tensor (KTempStep.live)\n");
	KtPair ls[2], mv[2], copy[2], g, nc, live;
	for (int k = 0; k < 2; k++) {
		kt_alloc(e, &ls[k], k ? "log_s (live values)" : "log_s (host values)", KDT_F32, NSH(1));
		kt_alloc(e, &mv[k], "(m, v)", KDT_F32, NSH(2));
		kt_alloc(e, &copy[k], "logit_scale copy", KDT_BF16, NSH(1));
	}
	kt_alloc(e, &g, "grad", KDT_BF16, NSH(1));
	kt_alloc(e, &nc, "norm_clip", KDT_F32, NSH(2));
	kt_alloc(e, &live, "live", KDT_F64, NSH(KTEMP_LIVE_N));
	kt_fill(e, &ls[0], 3.45, 3.55);
	KT_BOTH(e, kern_copy(e->cpu, &ls[1].c, &ls[0].c), kern_copy(e->dev, &ls[1].d, &ls[0].d));
	for (int step = 1; step <= 5; step++) {
		kt_fill(e, &g, -2, 2), kt_fill(e, &nc, 0.05, 1);
		const double lr = 0.02 * step;
		KTempStep h = {.lr = lr,
			       .lr_low = lr / 3,
			       .tau_low = 0.03,
			       .beta1 = 0.9,
			       .beta2 = 0.999,
			       .eps = 1e-8,
			       .step = step,
			       .lo = 0.0,
			       .hi = log(100.0)};
		double lv[KTEMP_LIVE_N];
		kern_temp_live(&h, lv);
		kt_set(e, &live, lv);
		KTempStep hl = h;
		hl.lr = hl.lr_low = 1.0, hl.step = 1; // stale: the op must take live's
		KT_BOTH(e, kern_temp_step(e->cpu, &ls[0].c, &mv[0].c, &g.c, &nc.c, &copy[0].c, &h),
			kern_temp_step(e->dev, &ls[0].d, &mv[0].d, &g.d, &nc.d, &copy[0].d, &h));
		hl.live = &live.c;
		KT_BOTH(e, kern_temp_step(e->cpu, &ls[1].c, &mv[1].c, &g.c, &nc.c, &copy[1].c, &hl), 0);
		hl.live = &live.d;
		KT_BOTH(e, 0, kern_temp_step(e->dev, &ls[1].d, &mv[1].d, &g.d, &nc.d, &copy[1].d, &hl));
	}
	for (int b = 0; b < 2; b++) {
		KernCtx *c = b ? e->dev : e->cpu;
		int same = kt_same_bytes(c, b ? &ls[0].d : &ls[0].c, b ? &ls[1].d : &ls[1].c) &&
			   kt_same_bytes(c, b ? &mv[0].d : &mv[0].c, b ? &mv[1].d : &mv[1].c) &&
			   kt_same_bytes(c, b ? &copy[0].d : &copy[0].c, b ? &copy[1].d : &copy[1].c);
		kt_check(e, same, "%s: live values give the host values' bits (log_s, m, v, copy)", b ? "CUDA" : "CPU");
	}
	kt_compare(e, &ls[1], 0), kt_compare(e, &mv[1], 0);
	KT_FREE(e, &ls[0], &ls[1], &mv[0], &mv[1], &copy[0], &copy[1], &g, &nc, &live);
}

int main(void)
{
	KtEnv e;
	kt_setup(&e, "test_kcuda_loss");
	Batch b;
	batch_make(&e, &b, 5, 3, 1, 16, KDT_F32);
	infonce_case(&e, &b, KDT_F32);
	for (int v = KFCCO_V0; v <= KFCCO_V3; v++)
		fcco_case(&e, &b, (KFccoVersion)v);
	batch_free(&e, &b);
	batch_make(&e, &b, 6, 2, 0, 20, KDT_BF16);
	infonce_case(&e, &b, KDT_BF16);
	fcco_case(&e, &b, KFCCO_V2);
	fcco_case(&e, &b, KFCCO_V3);
	batch_free(&e, &b);
	batch_make(&e, &b, 4, 1, 0, 8, KDT_F32); // one rank: the local InfoNCE
	infonce_case(&e, &b, KDT_F32);
	batch_free(&e, &b);
	metrics_case(&e, 7, 16, KDT_F32);
	metrics_case(&e, 9, 12, KDT_BF16);
	temp_case(&e, 0);
	temp_case(&e, 1);
	temp_live_case(&e);
	kt_sync(&e, "loss ops");
	return kt_finish(&e);
}
