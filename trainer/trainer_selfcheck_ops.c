// The self-check's model ops (trainer_selfcheck_sc.h): cuBLASLt's linear call classes, layernorm,
// the attention the context runs, and the augmentation that feeds the patch embedding.
#include "trainer_selfcheck_sc.h" // defines: Sc, ScPair, SH, NSH, sc_*

#include "stream.h" // defines: rng_splitmix64

#include <errno.h>  // defines: ENOMEM
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: malloc, free

// cuBLASLt's call classes as the model makes them: W transposed with bias and the MLP's activation
// (an epilogue, or BIAS then an own kernel), W as is with the residual add, and the backward of a
// layer whose input is that activation's output (the activation-gradient epilogue, both bias sums)
void sc_check_linear(Sc *s, KAct act)
{
	enum { N = 37, IC = 64, OC = 96 };
	ScPair x, w, w2, b, out, pre, res, out2, dout, din, dw, db, dinb;
	sc_alloc(s, &x, KDT_BF16, NSH(N, IC)), sc_alloc(s, &w, KDT_BF16, NSH(OC, IC)),
		sc_alloc(s, &w2, KDT_BF16, NSH(IC, OC));
	sc_alloc(s, &b, KDT_BF16, NSH(OC)), sc_alloc(s, &out, KDT_BF16, NSH(N, OC)),
		sc_alloc(s, &pre, KDT_BF16, NSH(N, OC));
	sc_alloc(s, &res, KDT_BF16, NSH(N, OC)), sc_alloc(s, &out2, KDT_BF16, NSH(N, OC));
	sc_alloc(s, &dout, KDT_BF16, NSH(N, IC)), sc_alloc(s, &din, KDT_BF16, NSH(N, OC)),
		sc_alloc(s, &dw, KDT_BF16, NSH(IC, OC));
	sc_alloc(s, &db, KDT_BF16, NSH(IC)), sc_alloc(s, &dinb, KDT_BF16, NSH(OC));
	sc_fill(s, &x, -1.5, 1.5, 0), sc_fill(s, &w, -0.5, 0.5, 0), sc_fill(s, &w2, -0.5, 0.5, 0),
		sc_fill(s, &b, -0.5, 0.5, 0);
	sc_fill(s, &res, -1, 1, 0), sc_fill(s, &dout, -1, 1, 0), sc_poison(s, &out), sc_poison(s, &pre),
		sc_poison(s, &out2);
	const char *op = "linear (bias, activation)";
	KLinear fc = {.out = &out.c, .pre = &pre.c, .in = &x.c, .w = &w.c, .trans_w = 1, .bias = &b.c, .act = act};
	KLinear fd = {.out = &out.d, .pre = &pre.d, .in = &x.d, .w = &w.d, .trans_w = 1, .bias = &b.d, .act = act};
	if (!s->setup_rc && !sc_both(s, op, kern_linear(s->cpu, &fc), kern_linear(s->dev, &fd)))
		sc_compare(s, op, "out", &out), sc_compare(s, op, "pre", &pre);
	op = "linear (residual)";
	KLinear rc = {.out = &out2.c, .in = &x.c, .w = &w2.c, .trans_w = 0, .residual = &res.c};
	KLinear rd = {.out = &out2.d, .in = &x.d, .w = &w2.d, .trans_w = 0, .residual = &res.d};
	if (!s->setup_rc && !sc_both(s, op, kern_linear(s->cpu, &rc), kern_linear(s->dev, &rd)))
		sc_compare(s, op, "out", &out2);
	// the next layer W2 (IC, OC) transposed takes out = act(pre) (N, OC) to (N, IC); its backward from
	// the CPU's forward on both sides
	op = "linear backward";
	sc_cpu_to_dev(s, &out), sc_cpu_to_dev(s, &pre);
	sc_poison(s, &din), sc_poison(s, &dw), sc_poison(s, &db), sc_poison(s, &dinb);
	KLinearBwd bc = {.din = KG_SET(&din.c),
			 .dw = KG_SET(&dw.c),
			 .dbias = KG_SET(&db.c),
			 .din_bias = KG_SET(&dinb.c),
			 .dout = &dout.c,
			 .in = &out.c,
			 .w = &w2.c,
			 .trans_w = 1,
			 .in_pre = &pre.c,
			 .in_act = act};
	KLinearBwd bd = {.din = KG_SET(&din.d),
			 .dw = KG_SET(&dw.d),
			 .dbias = KG_SET(&db.d),
			 .din_bias = KG_SET(&dinb.d),
			 .dout = &dout.d,
			 .in = &out.d,
			 .w = &w2.d,
			 .trans_w = 1,
			 .in_pre = &pre.d,
			 .in_act = act};
	if (!s->setup_rc && !sc_both(s, op, kern_linear_bwd(s->cpu, &bc), kern_linear_bwd(s->dev, &bd))) {
		sc_compare(s, op, "din", &din), sc_compare(s, op, "dw", &dw);
		sc_compare(s, op, "dbias", &db), sc_compare(s, op, "din_bias", &dinb);
	}
	sc_free_all(s, (ScPair *[]){&x, &w, &w2, &b, &out, &pre, &res, &out2, &dout, &din, &dw, &db, &dinb}, 13);
}

void sc_check_layernorm(Sc *s)
{
	enum { N = 29, C = 128 };
	ScPair x, w, b, out, mean, rstd, dout, din, dw, db;
	sc_alloc(s, &x, KDT_BF16, NSH(N, C)), sc_alloc(s, &w, KDT_BF16, NSH(C)), sc_alloc(s, &b, KDT_BF16, NSH(C));
	sc_alloc(s, &out, KDT_BF16, NSH(N, C)), sc_alloc(s, &mean, KDT_F32, NSH(N)),
		sc_alloc(s, &rstd, KDT_F32, NSH(N));
	sc_alloc(s, &dout, KDT_BF16, NSH(N, C)), sc_alloc(s, &din, KDT_BF16, NSH(N, C)),
		sc_alloc(s, &dw, KDT_BF16, NSH(C));
	sc_alloc(s, &db, KDT_BF16, NSH(C));
	sc_fill(s, &x, -2, 3, 0), sc_fill(s, &w, 0.5, 1.5, 0), sc_fill(s, &b, -0.5, 0.5, 0),
		sc_fill(s, &dout, -1, 1, 0);
	sc_poison(s, &out), sc_poison(s, &mean), sc_poison(s, &rstd), sc_poison(s, &din), sc_poison(s, &dw),
		sc_poison(s, &db);
	const char *op = "layernorm";
	if (!s->setup_rc && !sc_both(s, op, kern_layernorm_fwd(s->cpu, &out.c, &mean.c, &rstd.c, &x.c, &w.c, &b.c),
				     kern_layernorm_fwd(s->dev, &out.d, &mean.d, &rstd.d, &x.d, &w.d, &b.d)))
		sc_compare(s, op, "out", &out), sc_compare(s, op, "mean", &mean), sc_compare(s, op, "rstd", &rstd);
	op = "layernorm backward";
	sc_cpu_to_dev(s, &mean), sc_cpu_to_dev(s, &rstd);
	if (!s->setup_rc && !sc_both(s, op,
				     kern_layernorm_bwd(s->cpu, KG_SET(&din.c), KG_SET(&dw.c), KG_SET(&db.c), &dout.c,
							&x.c, &w.c, &mean.c, &rstd.c),
				     kern_layernorm_bwd(s->dev, KG_SET(&din.d), KG_SET(&dw.d), KG_SET(&db.d), &dout.d,
							&x.d, &w.d, &mean.d, &rstd.d)))
		sc_compare(s, op, "din", &din), sc_compare(s, op, "dw", &dw), sc_compare(s, op, "db", &db);
	sc_free_all(s, (ScPair *[]){&x, &w, &b, &out, &mean, &rstd, &dout, &din, &dw, &db}, 10);
}

// the attention the context runs (its own kernel, or cuDNN's): the video tower's (full) and the
// text tower's (causal), head dim 64; the backward from the CPU's forward on both sides
void sc_check_attention(Sc *s, int causal)
{
	enum { B = 2, T = 33, H = 2, HD = 64, D = H * HD };
	char op[64], impl[32];
	sc_attn_short(s->dev, impl, sizeof impl);
	snprintf(op, sizeof op, "attention (%s%s)", impl, causal ? ", causal" : "");
	ScPair qkv, out, lse, dout, dqkv;
	sc_alloc(s, &qkv, KDT_BF16, NSH(B, T, 3 * D)), sc_alloc(s, &out, KDT_BF16, NSH(B, T, D));
	sc_alloc(s, &lse, KDT_F32, NSH(B, H, T)), sc_alloc(s, &dout, KDT_BF16, NSH(B, T, D));
	sc_alloc(s, &dqkv, KDT_BF16, NSH(B, T, 3 * D));
	sc_reserve(s, kern_attention_ws_bytes(s->cpu, KDT_BF16, B, T, H, HD),
		   kern_attention_ws_bytes(s->dev, KDT_BF16, B, T, H, HD));
	sc_fill(s, &qkv, -1, 1, 0), sc_fill(s, &dout, -1, 1, 0), sc_poison(s, &out), sc_poison(s, &lse),
		sc_poison(s, &dqkv);
	if (!s->setup_rc && !sc_both(s, op, kern_attention_fwd(s->cpu, &out.c, &lse.c, &qkv.c, H, causal),
				     kern_attention_fwd(s->dev, &out.d, &lse.d, &qkv.d, H, causal)))
		sc_compare(s, op, "out", &out), sc_compare(s, op, "lse", &lse);
	char bop[80];
	snprintf(bop, sizeof bop, "%s backward", op);
	sc_cpu_to_dev(s, &out), sc_cpu_to_dev(s, &lse);
	if (!s->setup_rc &&
	    !sc_both(s, bop, kern_attention_bwd(s->cpu, KG_SET(&dqkv.c), &dout.c, &qkv.c, &out.c, &lse.c, H, causal),
		     kern_attention_bwd(s->dev, KG_SET(&dqkv.d), &dout.d, &qkv.d, &out.d, &lse.d, H, causal)))
		sc_compare(s, bop, "dqkv", &dqkv);
	sc_free_all(s, (ScPair *[]){&qkv, &out, &lse, &dout, &dqkv}, 5);
}

// the augmentation (u8 clips to normalized, flipped patches): the same table values and Philox
// flips on both, so the bits must agree
void sc_check_augment(Sc *s)
{
	enum { B = 3, T = 2, H = 32, W = 48, P = 16, NP = (H / P) * (W / P) };
	ScPair clips, pos, out;
	sc_alloc(s, &clips, KDT_U8, NSH(B, T, H, W, 3)), sc_alloc(s, &pos, KDT_I64, NSH(B));
	sc_alloc(s, &out, KDT_BF16, NSH(B, T * NP, 3 * P * P));
	uint8_t *px = malloc((size_t)B * T * H * W * 3);
	int64_t g[B];
	if (!px) {
		sc_setup_failed(s, "a host buffer", -ENOMEM);
		return sc_free_all(s, (ScPair *[]){&clips, &pos, &out}, 3);
	}
	for (size_t i = 0; i < (size_t)B * T * H * W * 3; i++)
		px[i] = (uint8_t)(rng_splitmix64(&s->rng) >> 56);
	for (int b = 0; b < B; b++)
		g[b] = (int64_t)(rng_splitmix64(&s->rng) >> 2); // stream positions past 2^32 too
	sc_set(s, &clips, px), sc_set(s, &pos, g), sc_poison(s, &out);
	free(px);
	const uint64_t seed = rng_splitmix64(&s->rng);
	const char *op = "augment";
	if (!s->setup_rc && !sc_both(s, op, kern_augment(s->cpu, &out.c, &clips.c, &pos.c, seed, 1, P),
				     kern_augment(s->dev, &out.d, &clips.d, &pos.d, seed, 1, P)))
		sc_same_bits(s, op, "patches", &out);
	sc_free_all(s, (ScPair *[]){&clips, &pos, &out}, 3);
}
