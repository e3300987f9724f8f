// The self-check's classify ops (trainer_selfcheck_sc.h): what --objective classify runs beyond the
// model's ops, on small shapes: the soft-target CE, CutMix, drop path's row scale, dropout, the joint norm.
#include "trainer_selfcheck_sc.h" // defines: Sc, ScPair, SH, NSH, sc_*

#include "stream.h" // defines: rng_splitmix64

// the soft-target CE and its logits' gradient (a label missing on one row), CutMix on the patches,
// the row scale's fused add: held to the twin tests' tolerances
static void check_mix_ce(Sc *s)
{
	enum { N = 5, K = 97, B = 4, T = 2, H = 32, W = 32, P = 16, NP = (H / P) * (W / P) };
	ScPair z, a, b, loss, dz, x, sc, res;
	sc_alloc(s, &z, KDT_F32, NSH(N, K)), sc_alloc(s, &a, KDT_I32, NSH(N)), sc_alloc(s, &b, KDT_I32, NSH(N));
	sc_alloc(s, &loss, KDT_F32, NSH(1)), sc_alloc(s, &dz, KDT_F32, NSH(N, K));
	sc_alloc(s, &x, KDT_BF16, NSH(B, T * NP, 3 * P * P)), sc_alloc(s, &sc, KDT_F32, NSH(B));
	sc_alloc(s, &res, KDT_BF16, NSH(B, T * NP, 3 * P * P));
	int32_t ya[N], yb[N];
	for (int n = 0; n < N; n++)
		ya[n] = n == 1 ? -1 : (int32_t)(rng_splitmix64(&s->rng) % K);
	for (int n = 0; n < N; n++)
		yb[n] = ya[N - 1 - n];
	const float scale[B] = {0, 1 / 0.9f, 1 / 0.9f, 0};
	sc_set(s, &a, ya), sc_set(s, &b, yb), sc_set(s, &sc, scale);
	sc_fill(s, &z, -4, 4, 0), sc_fill(s, &x, -2, 2, 0), sc_fill(s, &res, -1, 1, 0);
	sc_poison(s, &loss), sc_poison(s, &dz);
	const KSoftCe p = {.lam = 0.7, .eps = 0.1, .scale = 1};
	const char *op = "softce";
	if (!s->setup_rc && !sc_both(s, op, kern_softce(s->cpu, &loss.c, NULL, KG_SET(&dz.c), &z.c, &a.c, &b.c, &p),
				     kern_softce(s->dev, &loss.d, NULL, KG_SET(&dz.d), &z.d, &a.d, &b.d, &p)))
		sc_compare(s, op, "loss", &loss), sc_compare(s, op, "dlogits", &dz);
	const KMixup cut = {.cutmix = 1, .y0 = 5, .y1 = 27, .x0 = 3, .x1 = 20};
	op = "cutmix";
	if (!s->setup_rc && !sc_both(s, op, kern_mixup_fwd(s->cpu, &x.c, &x.c, &cut, H, W, P),
				     kern_mixup_fwd(s->dev, &x.d, &x.d, &cut, H, W, P)))
		sc_same_bits(s, op, "patches", &x);
	op = "drop path (row scale)";
	if (!s->setup_rc && !sc_both(s, op, kern_row_scale(s->cpu, KG_ADD(&res.c), &x.c, &sc.c),
				     kern_row_scale(s->dev, KG_ADD(&res.d), &x.d, &sc.d)))
		sc_compare(s, op, "residual + branch", &res);
	sc_free_all(s, (ScPair *[]){&z, &a, &b, &loss, &dz, &x, &sc, &res}, 8);
}

// dropout (the Philox mask and the f32 product: bit for bit, bf16 feature into f32) and the join
// of two norms (one double expression on both)
static void check_dropout_norm(Sc *s)
{
	enum { B = 6, D = 128 };
	ScPair x, pos, out, nc, other;
	sc_alloc(s, &x, KDT_BF16, NSH(B, D)), sc_alloc(s, &pos, KDT_I64, NSH(B)), sc_alloc(s, &out, KDT_F32, NSH(B, D));
	sc_alloc(s, &nc, KDT_F32, NSH(2)), sc_alloc(s, &other, KDT_F32, NSH(2));
	int64_t g[B];
	for (int b = 0; b < B; b++)
		g[b] = (int64_t)(rng_splitmix64(&s->rng) >> 2);
	const float n1[2] = {(float)sc_uniform(s, 1, 3), 1}, n2[2] = {(float)sc_uniform(s, 1, 3), 1};
	sc_set(s, &pos, g), sc_set(s, &nc, n1), sc_set(s, &other, n2);
	sc_fill(s, &x, -2, 2, 0), sc_poison(s, &out);
	const KDropout p = {.rate = 0.5, .seed = rng_splitmix64(&s->rng)};
	const char *op = "dropout";
	if (!s->setup_rc && !sc_both(s, op, kern_dropout(s->cpu, KG_SET(&out.c), &x.c, &pos.c, &p),
				     kern_dropout(s->dev, KG_SET(&out.d), &x.d, &pos.d, &p)))
		sc_same_bits(s, op, "heads' input", &out);
	op = "gradient norm join";
	if (!s->setup_rc && !sc_both(s, op, kern_grad_norm_join(s->cpu, &nc.c, &other.c, 1.0),
				     kern_grad_norm_join(s->dev, &nc.d, &other.d, 1.0)))
		sc_same_bits(s, op, "norm and clip factor", &nc);
	sc_free_all(s, (ScPair *[]){&x, &pos, &out, &nc, &other}, 5);
}

void sc_check_classify(Sc *s)
{
	check_mix_ce(s);
	check_dropout_norm(s);
}
