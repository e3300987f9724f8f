// The CUDA backend's dense ops against the CPU backend: the linear op with every activation, both
// weight layouts, bias, residual (also in place), its backward with the GELU-backward and bias-
// gradient epilogues (set and add), mixed f32/bf16 storage (the own GEMM), layernorm, the
// residual add, the L2 norm, conversions; f32 and bf16, vector and scalar shapes; attention
// through the table (kernels/cuda/attn).
#include "kcu_twin.h" // defines: KtEnv, KtPair, KT_BOTH, KT_FREE, SH, NSH, kt_*

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *act_name[] = {"none", "gelu", "gelu_tanh", "quickgelu"};

typedef struct {
	int N, IC, OC;
	KDtype in_dt, w_dt, out_dt; // mixed storage takes the own GEMM
} Shape;

// forward with every activation; backward with its epilogues, once setting and once adding
static void linear_case(KtEnv *e, const Shape *s, KAct act, int trans_w, int bias)
{
	char nm[12][96];
	KtPair x, w, b, out, pre, dout, din, dw, db, dinb, res, xpre;
	const int N = s->N, IC = s->IC, OC = s->OC;
	snprintf(nm[0], 96, "N%d IC%d OC%d %s t%d b%d", N, IC, OC, act_name[act], trans_w, bias);
	printf("-- linear %s (%s/%s -> %s)\n", nm[0], kern_dtype_name(s->in_dt), kern_dtype_name(s->w_dt),
	       kern_dtype_name(s->out_dt));
	kt_alloc(e, &x, "in", s->in_dt, NSH(N, IC));
	kt_alloc(e, &w, "w", s->w_dt, 2, trans_w ? SH(OC, IC) : SH(IC, OC));
	kt_alloc(e, &b, "bias", s->w_dt, NSH(OC));
	kt_alloc(e, &out, "out", s->out_dt, NSH(N, OC));
	kt_alloc(e, &pre, "pre", s->out_dt, NSH(N, OC));
	kt_alloc(e, &res, "residual", s->out_dt, NSH(N, OC));
	kt_fill(e, &x, -1.5, 1.5);
	kt_fill(e, &w, -0.5, 0.5);
	kt_fill(e, &b, -0.5, 0.5);
	kt_fill(e, &res, -1, 1);
	kt_poison(e, &out);
	kt_poison(e, &pre);
	KLinear lc = {.out = &out.c,
		      .pre = act ? &pre.c : NULL,
		      .in = &x.c,
		      .w = &w.c,
		      .trans_w = trans_w,
		      .bias = bias ? &b.c : NULL,
		      .act = act,
		      .residual = act ? NULL : &res.c};
	KLinear ld = {.out = &out.d,
		      .pre = act ? &pre.d : NULL,
		      .in = &x.d,
		      .w = &w.d,
		      .trans_w = trans_w,
		      .bias = bias ? &b.d : NULL,
		      .act = act,
		      .residual = act ? NULL : &res.d};
	KT_BOTH(e, kern_linear(e->cpu, &lc), kern_linear(e->dev, &ld));
	kt_compare(e, &out, 0);
	if (act)
		kt_compare(e, &pre, 0);
	else { // the residual add in place: out is the residual
		lc.residual = &res.c, lc.out = &res.c, ld.residual = &res.d, ld.out = &res.d;
		KT_BOTH(e, kern_linear(e->cpu, &lc), kern_linear(e->dev, &ld));
		res.name = "out (in place over residual)";
		kt_compare(e, &res, 0);
	}
	// backward: din over x as if x = act(xpre) (the GELU-backward epilogue and its bias gradient)
	kt_alloc(e, &dout, "dout", s->in_dt, NSH(N, OC));
	kt_alloc(e, &din, "din", s->in_dt, NSH(N, IC));
	kt_alloc(e, &dw, "dw", s->out_dt, 2, trans_w ? SH(OC, IC) : SH(IC, OC));
	kt_alloc(e, &db, "dbias", s->out_dt, NSH(OC));
	kt_alloc(e, &dinb, "din_bias", s->out_dt, NSH(IC));
	kt_alloc(e, &xpre, "in_pre", s->in_dt, NSH(N, IC));
	kt_fill(e, &dout, -1, 1);
	kt_fill(e, &xpre, -2, 2);
	for (int acc = 0; acc < 2; acc++) {
		if (acc) { // KG_ADD onto known values
			kt_fill(e, &dw, -1, 1), kt_fill(e, &db, -1, 1), kt_fill(e, &dinb, -1, 1);
			if (!act)
				kt_fill(e, &din, -1, 1);
		} else {
			kt_poison(e, &dw), kt_poison(e, &db), kt_poison(e, &dinb), kt_poison(e, &din);
		}
		KLinearBwd bc = {.din = {&din.c, act ? 0 : acc},
				 .dw = {&dw.c, acc},
				 .dbias = {bias ? &db.c : NULL, acc},
				 .din_bias = {act ? &dinb.c : NULL, acc},
				 .dout = &dout.c,
				 .in = &x.c,
				 .w = &w.c,
				 .trans_w = trans_w,
				 .in_pre = act ? &xpre.c : NULL,
				 .in_act = act};
		KLinearBwd bd = {.din = {&din.d, act ? 0 : acc},
				 .dw = {&dw.d, acc},
				 .dbias = {bias ? &db.d : NULL, acc},
				 .din_bias = {act ? &dinb.d : NULL, acc},
				 .dout = &dout.d,
				 .in = &x.d,
				 .w = &w.d,
				 .trans_w = trans_w,
				 .in_pre = act ? &xpre.d : NULL,
				 .in_act = act};
		KT_BOTH(e, kern_linear_bwd(e->cpu, &bc), kern_linear_bwd(e->dev, &bd));
		snprintf(nm[1], 96, "din (%s)", acc && !act ? "add" : "set");
		snprintf(nm[2], 96, "dw (%s)", acc ? "add" : "set");
		snprintf(nm[3], 96, "dbias (%s)", acc ? "add" : "set");
		snprintf(nm[4], 96, "din_bias (%s)", acc ? "add" : "set");
		din.name = nm[1], dw.name = nm[2], db.name = nm[3], dinb.name = nm[4];
		kt_compare(e, &din, 0);
		kt_compare(e, &dw, 0);
		if (bias)
			kt_compare(e, &db, 0);
		if (act) // summed from din as stored (kcu_twin.h)
			kt_compare(e, &dinb, s->in_dt == KDT_BF16 ? KT_TOL_BF16_PRE : 0);
	}
	KT_FREE(e, &x, &w, &b, &out, &pre, &dout, &din, &dw, &db, &dinb, &res, &xpre);
}

// wdt: the weights' and their gradients' storage; another than dt is mixed storage, which the
// kernels read in their run-time form (one storage: instantiated per type)
static void layernorm_case(KtEnv *e, int N, int C, KDtype dt, KDtype wdt)
{
	printf("-- layernorm N%d C%d %s, weights %s\n", N, C, kern_dtype_name(dt), kern_dtype_name(wdt));
	KtPair x, w, b, out, mean, rstd, dout, din, dw, db;
	kt_alloc(e, &x, "in", dt, NSH(N, C));
	kt_alloc(e, &w, "w", wdt, NSH(C));
	kt_alloc(e, &b, "b", wdt, NSH(C));
	kt_alloc(e, &out, "out", dt, NSH(N, C));
	kt_alloc(e, &mean, "mean", KDT_F32, NSH(N));
	kt_alloc(e, &rstd, "rstd", KDT_F32, NSH(N));
	kt_alloc(e, &dout, "dout", dt, NSH(N, C));
	kt_alloc(e, &din, "din", dt, NSH(N, C));
	kt_alloc(e, &dw, "dw", wdt, NSH(C));
	kt_alloc(e, &db, "db", wdt, NSH(C));
	kt_fill(e, &x, -2, 3), kt_fill(e, &w, 0.5, 1.5), kt_fill(e, &b, -0.5, 0.5), kt_fill(e, &dout, -1, 1);
	kt_poison(e, &out), kt_poison(e, &mean), kt_poison(e, &rstd);
	KT_BOTH(e, kern_layernorm_fwd(e->cpu, &out.c, &mean.c, &rstd.c, &x.c, &w.c, &b.c),
		kern_layernorm_fwd(e->dev, &out.d, &mean.d, &rstd.d, &x.d, &w.d, &b.d));
	kt_compare(e, &out, 0), kt_compare(e, &mean, 0), kt_compare(e, &rstd, 0);
	for (int acc = 0; acc < 2; acc++) {
		if (acc)
			kt_fill(e, &din, -1, 1), kt_fill(e, &dw, -1, 1), kt_fill(e, &db, -1, 1);
		else
			kt_poison(e, &din), kt_poison(e, &dw), kt_poison(e, &db);
		KT_BOTH(e,
			kern_layernorm_bwd(e->cpu, (KGrad){&din.c, acc}, (KGrad){&dw.c, acc}, (KGrad){&db.c, acc},
					   &dout.c, &x.c, &w.c, &mean.c, &rstd.c),
			kern_layernorm_bwd(e->dev, (KGrad){&din.d, acc}, (KGrad){&dw.d, acc}, (KGrad){&db.d, acc},
					   &dout.d, &x.d, &w.d, &mean.d, &rstd.d));
		din.name = acc ? "din (add)" : "din (set)", dw.name = acc ? "dw (add)" : "dw (set)";
		db.name = acc ? "db (add)" : "db (set)";
		kt_compare(e, &din, 0), kt_compare(e, &dw, 0), kt_compare(e, &db, 0);
	}
	KT_FREE(e, &x, &w, &b, &out, &mean, &rstd, &dout, &din, &dw, &db);
}

static void eltwise_case(KtEnv *e, int64_t n, KDtype dt)
{
	printf("-- add, l2norm, convert n%lld %s\n", (long long)n, kern_dtype_name(dt));
	KtPair a, b, o, cv, x, y, nrm, dy, dx;
	kt_alloc(e, &a, "a", dt, NSH(n));
	kt_alloc(e, &b, "b", dt == KDT_F32 ? KDT_BF16 : KDT_F32, NSH(n));
	kt_alloc(e, &o, "a + b", dt, NSH(n));
	kt_fill(e, &a, -1, 1), kt_fill(e, &b, -1, 1), kt_poison(e, &o);
	KT_BOTH(e, kern_add(e->cpu, &o.c, &a.c, &b.c), kern_add(e->dev, &o.d, &a.d, &b.d));
	kt_compare(e, &o, 0);
	KT_BOTH(e, kern_add(e->cpu, &a.c, &a.c, &b.c), kern_add(e->dev, &a.d, &a.d, &b.d));
	a.name = "a += b (in place)";
	kt_compare(e, &a, 0);
	kt_alloc(e, &cv, dt == KDT_F32 ? "convert f32 -> bf16" : "convert bf16 -> f32",
		 dt == KDT_F32 ? KDT_BF16 : KDT_F32, NSH(n));
	kt_poison(e, &cv);
	KT_BOTH(e, kern_convert(e->cpu, &cv.c, &a.c), kern_convert(e->dev, &cv.d, &a.d));
	kt_same_bits(e, &cv);
	KT_BOTH(e, kern_copy(e->cpu, &o.c, &a.c), kern_copy(e->dev, &o.d, &a.d));
	o.name = "copy";
	kt_same_bits(e, &o);
	KT_BOTH(e, kern_zero(e->cpu, &o.c), kern_zero(e->dev, &o.d));
	o.name = "zero";
	kt_same_bits(e, &o);
	// L2 norm over rows of 24 (n a multiple of 24 here)
	const int64_t C = 24, N = n / C;
	kt_alloc(e, &x, "l2 in", dt, NSH(N, C));
	kt_alloc(e, &y, "l2 out", dt, NSH(N, C));
	kt_alloc(e, &nrm, "l2 norm", KDT_F32, NSH(N));
	kt_alloc(e, &dy, "l2 dout", dt, NSH(N, C));
	kt_alloc(e, &dx, "l2 din (add)", dt, NSH(N, C));
	kt_fill(e, &x, -1, 1), kt_fill(e, &dy, -1, 1), kt_fill(e, &dx, -1, 1), kt_poison(e, &y), kt_poison(e, &nrm);
	KT_BOTH(e, kern_l2norm_fwd(e->cpu, &y.c, &nrm.c, &x.c), kern_l2norm_fwd(e->dev, &y.d, &nrm.d, &x.d));
	kt_compare(e, &y, 0), kt_compare(e, &nrm, 0);
	KT_BOTH(e, kern_l2norm_bwd(e->cpu, KG_ADD(&dx.c), &dy.c, &y.c, &nrm.c),
		kern_l2norm_bwd(e->dev, KG_ADD(&dx.d), &dy.d, &y.d, &nrm.d));
	kt_compare(e, &dx, 0);
	kt_poison(e, &dx);
	KT_BOTH(e, kern_l2norm_bwd(e->cpu, KG_SET(&dx.c), &dy.c, &y.c, &nrm.c),
		kern_l2norm_bwd(e->dev, KG_SET(&dx.d), &dy.d, &y.d, &nrm.d));
	dx.name = "l2 din (set)";
	kt_compare(e, &dx, 0);
	KT_FREE(e, &a, &b, &o, &cv, &x, &y, &nrm, &dy, &dx);
}

// attention through the backend's table (kernels/cuda/attn's own kernel): bf16, head dims 64 and
// 128; the backward from the CPU's out and lse on both sides, as test_kattn does (the two forwards'
// bf16 outputs differ by a rounding, which dS's cancellation would magnify)
static void attention_case(KtEnv *e, int B, int T, int H, int hd, int causal)
{
	printf("-- attention B%d T%d H%d hd%d%s\n", B, T, H, hd, causal ? " causal" : "");
	const int64_t D = (int64_t)H * hd;
	KtPair qkv, out, lse, dout, dqkv;
	kt_alloc(e, &qkv, "qkv", KDT_BF16, NSH(B, T, 3 * D));
	kt_alloc(e, &out, "attention out", KDT_BF16, NSH(B, T, D));
	kt_alloc(e, &lse, "lse", KDT_F32, NSH(B, H, T));
	kt_alloc(e, &dout, "dout", KDT_BF16, NSH(B, T, D));
	kt_alloc(e, &dqkv, "dqkv", KDT_BF16, NSH(B, T, 3 * D));
	size_t wc = kern_attention_ws_bytes(e->cpu, KDT_BF16, B, T, H, hd);
	size_t wd = kern_attention_ws_bytes(e->dev, KDT_BF16, B, T, H, hd);
	kt_reserve(e, wc > wd ? wc : wd);
	kt_fill(e, &qkv, -1, 1), kt_fill(e, &dout, -1, 1), kt_poison(e, &out), kt_poison(e, &lse);
	KT_BOTH(e, kern_attention_fwd(e->cpu, &out.c, &lse.c, &qkv.c, H, causal),
		kern_attention_fwd(e->dev, &out.d, &lse.d, &qkv.d, H, causal));
	kt_compare(e, &out, 0), kt_compare(e, &lse, 0);
	KtPair *from_cpu[] = {&out, &lse};
	for (int i = 0; i < 2; i++) {
		size_t n = kern_nbytes(&from_cpu[i]->c);
		void *h = malloc(n);
		int rc = kern_download(e->cpu, h, n, &from_cpu[i]->c); // in this order: not as two arguments
		KT_BOTH(e, rc, kern_upload(e->dev, &from_cpu[i]->d, h, n));
		free(h);
	}
	for (int acc = 0; acc < 2; acc++) {
		acc ? kt_fill(e, &dqkv, -1, 1) : kt_poison(e, &dqkv);
		KT_BOTH(e,
			kern_attention_bwd(e->cpu, (KGrad){&dqkv.c, acc}, &dout.c, &qkv.c, &out.c, &lse.c, H, causal),
			kern_attention_bwd(e->dev, (KGrad){&dqkv.d, acc}, &dout.d, &qkv.d, &out.d, &lse.d, H, causal));
		dqkv.name = acc ? "dqkv (add)" : "dqkv (set)";
		kt_compare(e, &dqkv, 0);
	}
	KT_FREE(e, &qkv, &out, &lse, &dout, &dqkv);
}

// the launches of one MLP layer's exact-GELU ops, bf16: one product and one pass each
static void launch_case(KtEnv *e)
{
	printf("-- launches of the linear op (exact GELU, bf16)\n");
	const int N = 200, IC = 24, OC = 40; // N below one row slice of the column sums: one kernel
	KtPair x, w, b, out, pre, dout, din, dinb, res;
	kt_alloc(e, &x, "in", KDT_BF16, NSH(N, IC));
	kt_alloc(e, &w, "w", KDT_BF16, 2, SH(OC, IC));
	kt_alloc(e, &b, "bias", KDT_BF16, NSH(OC));
	kt_alloc(e, &out, "out", KDT_BF16, NSH(N, OC));
	kt_alloc(e, &pre, "pre", KDT_BF16, NSH(N, OC));
	kt_alloc(e, &res, "residual", KDT_BF16, NSH(N, OC));
	kt_alloc(e, &dout, "dout", KDT_BF16, NSH(N, OC));
	kt_alloc(e, &din, "din", KDT_BF16, NSH(N, IC));
	kt_alloc(e, &dinb, "din_bias", KDT_BF16, NSH(IC));
	kt_fill(e, &x, -1, 1), kt_fill(e, &w, -1, 1), kt_fill(e, &b, -1, 1), kt_fill(e, &res, -1, 1);
	kt_fill(e, &dout, -1, 1);
	KLinear fc = {
		.out = &out.d, .pre = &pre.d, .in = &x.d, .w = &w.d, .trans_w = 1, .bias = &b.d, .act = KACT_GELU};
	int64_t l0 = kern_ctx_launches(e->dev);
	int rc = kern_linear(e->dev, &fc);
	kt_check(e, !rc && kern_ctx_launches(e->dev) - l0 == 2, "forward: product + GELU, 2 launches (%lld)",
		 (long long)(kern_ctx_launches(e->dev) - l0));
	KLinear rl = {.out = &out.d, .in = &x.d, .w = &w.d, .trans_w = 1, .bias = &b.d, .residual = &res.d};
	l0 = kern_ctx_launches(e->dev);
	rc = kern_linear(e->dev, &rl);
	kt_check(e, !rc && kern_ctx_launches(e->dev) - l0 == 1, "the residual add: 1 launch (%lld)",
		 (long long)(kern_ctx_launches(e->dev) - l0));
	KLinearBwd bw = {.din = KG_SET(&din.d),
			 .din_bias = KG_SET(&dinb.d),
			 .dout = &dout.d,
			 .in = &x.d,
			 .w = &w.d,
			 .trans_w = 1,
			 .in_pre = &x.d,
			 .in_act = KACT_GELU};
	l0 = kern_ctx_launches(e->dev);
	rc = kern_linear_bwd(e->dev, &bw);
	kt_check(e, !rc && kern_ctx_launches(e->dev) - l0 == 2, "din: product + GELU' with the column sums, 2 (%lld)",
		 (long long)(kern_ctx_launches(e->dev) - l0));
	kt_check(e, kern_ctx_launches(e->cpu) == 0, "the CPU backend counts none");
	KT_FREE(e, &x, &w, &b, &out, &pre, &dout, &din, &dinb, &res);
}

// a product cuBLASLt takes no types for is counted each time and its shape named once
static void slow_path_case(KtEnv *e)
{
	printf("-- slow paths: mixed storage, twice\n");
	char line[256];
	while (kern_ctx_slow_path_note(e->dev, line, sizeof line)) // the shapes of the cases before
		;
	KtPair x, w, out;
	kt_alloc(e, &x, "in", KDT_F32, NSH(3, 13));
	kt_alloc(e, &w, "w", KDT_BF16, 2, SH(13, 6));
	kt_alloc(e, &out, "out", KDT_BF16, NSH(3, 6));
	kt_fill(e, &x, -1, 1), kt_fill(e, &w, -1, 1);
	KLinear l = {.out = &out.d, .in = &x.d, .w = &w.d};
	const int64_t n0 = kern_ctx_slow_paths(e->dev);
	int rc = kern_linear(e->dev, &l) || kern_linear(e->dev, &l);
	kt_check(e, !rc && kern_ctx_slow_paths(e->dev) == n0 + 2, "each own GEMM counted (%lld)",
		 (long long)(kern_ctx_slow_paths(e->dev) - n0));
	int got = kern_ctx_slow_path_note(e->dev, line, sizeof line);
	kt_check(e, got && strstr(line, "own GEMM NN 3x6x13 f32,bf16->bf16"), "its shape named: %s", got ? line : "-");
	kt_check(e, !kern_ctx_slow_path_note(e->dev, line, sizeof line), "once");
	kt_check(e, kern_ctx_slow_paths(e->cpu) == 0, "the CPU backend has none");
	KT_FREE(e, &x, &w, &out);
}

int main(void)
{
	KtEnv e;
	kt_setup(&e, "test_kcuda_dense");
	const Shape shapes[] = {
		{26, 24, 40, KDT_F32, KDT_F32, KDT_F32}, {26, 24, 40, KDT_BF16, KDT_BF16, KDT_BF16},
		{6, 5, 7, KDT_BF16, KDT_BF16, KDT_BF16}, {300, 16, 8, KDT_BF16, KDT_BF16, KDT_F32},
		{9, 11, 5, KDT_F32, KDT_BF16, KDT_BF16}, // mixed storage: the own GEMM
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		for (int act = KACT_NONE; act <= KACT_QUICKGELU; act++)
			linear_case(&e, &shapes[i], (KAct)act, (act + (int)i) % 2, act != KACT_GELU || i % 2);
	layernorm_case(&e, 37, 48, KDT_BF16, KDT_BF16);
	layernorm_case(&e, 37, 20, KDT_F32, KDT_F32);
	layernorm_case(&e, 600, 24, KDT_F32, KDT_F32);   // several row slices in the column sums
	layernorm_case(&e, 600, 64, KDT_BF16, KDT_BF16); // the same, 8 columns a thread (16-byte loads)
	layernorm_case(&e, 37, 48, KDT_BF16, KDT_F32);   // mixed storage: the run-time form
	eltwise_case(&e, 24 * 41, KDT_BF16);
	eltwise_case(&e, 24 * 43, KDT_F32);
	attention_case(&e, 2, 33, 2, 64, 0);
	attention_case(&e, 1, 20, 2, 64, 1);
	attention_case(&e, 1, 17, 1, 128, 0);
	slow_path_case(&e);
	launch_case(&e);
	kt_sync(&e, "dense ops");
	return kt_finish(&e);
}
