// The CUDA backend's classification fine-tuning ops against the CPU backend: the soft-target
// cross-entropy (labelled and unlabelled rows, set and add, rows output, K above one block's
// threads), Mixup/CutMix out of place, in place and its backward adding, the per-row scale (set,
// the fused residual add, in place), dropout (bit for bit: the same Philox mask and f32 product;
// set, add, in place, bf16 into f32) and the joint gradient norm; f32 and bf16; a bad class id
// latched on both.
#include "kcu_twin.h" // defines: KtEnv, KtPair, KT_BOTH, KT_FREE, NSH, kt_*

#include <errno.h>
#include <stdio.h>
#include <string.h>

// both backends compute the loss in double and store f32 (the row sums' order differs)
#define TOL_SOFTCE_LOSS 1e-6

static void softce_case(KtEnv *e, int N, int K, KDtype dt, double lam, double eps)
{
	printf("-- softce N%d K%d %s lam %.2f eps %.2f\n", N, K, kern_dtype_name(dt), lam, eps);
	KtPair z, a, b, loss, rows, dz;
	kt_alloc(e, &z, "logits", dt, NSH(N, K));
	kt_alloc(e, &a, "a", KDT_I32, NSH(N));
	kt_alloc(e, &b, "b", KDT_I32, NSH(N));
	kt_alloc(e, &loss, "softce loss", KDT_F32, NSH(1));
	kt_alloc(e, &rows, "softce rows", KDT_F32, NSH(N));
	kt_alloc(e, &dz, "dlogits (set)", dt, NSH(N, K));
	int32_t ya[N], yb[N];
	for (int n = 0; n < N; n++) // every fifth row without a label, its partner's too
		ya[n] = n % 5 == 2 ? -1 : (int32_t)(kt_rand(e) % (uint64_t)K);
	for (int n = 0; n < N; n++)
		yb[n] = ya[N - 1 - n];
	kt_set(e, &a, ya), kt_set(e, &b, yb);
	kt_fill(e, &z, -4, 4), kt_poison(e, &dz), kt_poison(e, &rows), kt_poison(e, &loss);
	const KSoftCe p = {.lam = lam, .eps = eps, .scale = 0.75};
	KT_BOTH(e, kern_softce(e->cpu, &loss.c, &rows.c, KG_SET(&dz.c), &z.c, &a.c, &b.c, &p),
		kern_softce(e->dev, &loss.d, &rows.d, KG_SET(&dz.d), &z.d, &a.d, &b.d, &p));
	kt_compare(e, &loss, TOL_SOFTCE_LOSS), kt_compare(e, &rows, TOL_SOFTCE_LOSS), kt_compare(e, &dz, 0);
	kt_fill(e, &dz, -1, 1);
	dz.name = "dlogits (add)";
	KT_BOTH(e, kern_softce(e->cpu, &loss.c, NULL, KG_ADD(&dz.c), &z.c, &a.c, &b.c, &p),
		kern_softce(e->dev, &loss.d, NULL, KG_ADD(&dz.d), &z.d, &a.d, &b.d, &p));
	kt_compare(e, &dz, 0);
	KT_FREE(e, &z, &a, &b, &loss, &rows, &dz);
}

static void softce_error_case(KtEnv *e)
{
	printf("-- softce: a class id outside [-1, K)\n");
	KtPair z, a, loss;
	kt_alloc(e, &z, "logits", KDT_F32, NSH(4, 6));
	kt_alloc(e, &a, "a", KDT_I32, NSH(4));
	kt_alloc(e, &loss, "loss", KDT_F32, NSH(1));
	kt_set(e, &a, (const int32_t[]){0, 5, 6, -1});
	const KSoftCe p = {.lam = 1, .scale = 1};
	KT_BOTH(e, kern_softce(e->cpu, &loss.c, NULL, KG_NONE, &z.c, &a.c, &a.c, &p),
		kern_softce(e->dev, &loss.d, NULL, KG_NONE, &z.d, &a.d, &a.d, &p));
	int rc = kern_sync(e->cpu), rd = kern_sync(e->dev);
	kt_check(e, rc == -ERANGE && rd == -ERANGE, "both latch -ERANGE (%d, %d)", rc, rd);
	kt_check(e, strstr(kern_error_message(e->dev), "softce") && strstr(kern_error_message(e->dev), "row 2"),
		 "named: %s", kern_error_message(e->dev));
	kern_error_clear(e->cpu), kern_error_clear(e->dev);
	KT_FREE(e, &z, &a, &loss);
}

// T: tokens a frame position (T'), tt: frames a token (kern_augment_tubelet's rows of 3·tt·p·p)
static void mixup_case(KtEnv *e, int B, int T, int tt, int Hh, int Ww, int p, KDtype dt, const KMixup *m)
{
	printf("-- %s B%d T'%d tubelet %d %dx%d p%d %s\n", m->cutmix ? "cutmix" : "mixup", B, T, tt, Hh, Ww, p,
	       kern_dtype_name(dt));
	const int64_t P = (int64_t)(Hh / p) * (Ww / p), C = 3 * (int64_t)tt * p * p;
	KtPair x, out, dx;
	kt_alloc(e, &x, "x", dt, NSH(B, T * P, C));
	kt_alloc(e, &out, "mixup out", dt, NSH(B, T * P, C));
	kt_alloc(e, &dx, "mixup dx (add)", dt, NSH(B, T * P, C));
	kt_fill(e, &x, -2, 2), kt_poison(e, &out), kt_fill(e, &dx, -1, 1);
	KT_BOTH(e, kern_mixup_fwd(e->cpu, &out.c, &x.c, m, Hh, Ww, p),
		kern_mixup_fwd(e->dev, &out.d, &x.d, m, Hh, Ww, p));
	kt_compare(e, &out, 0);
	KT_BOTH(e, kern_mixup_bwd(e->cpu, KG_ADD(&dx.c), &out.c, m, Hh, Ww, p),
		kern_mixup_bwd(e->dev, KG_ADD(&dx.d), &out.d, m, Hh, Ww, p));
	kt_compare(e, &dx, 0);
	KT_BOTH(e, kern_mixup_fwd(e->cpu, &x.c, &x.c, m, Hh, Ww, p), kern_mixup_fwd(e->dev, &x.d, &x.d, m, Hh, Ww, p));
	x.name = "mixup in place";
	kt_compare(e, &x, 0);
	KT_FREE(e, &x, &out, &dx);
}

static void row_scale_case(KtEnv *e, int B, int L, int D, KDtype dt)
{
	printf("-- row_scale B%d L%d D%d %s\n", B, L, D, kern_dtype_name(dt));
	KtPair x, s, out, res;
	kt_alloc(e, &x, "branch", dt, NSH(B, L, D));
	kt_alloc(e, &s, "scale", KDT_F32, NSH(B));
	kt_alloc(e, &out, "row_scale out", dt, NSH(B, L, D));
	kt_alloc(e, &res, "residual += branch·s", dt, NSH(B, L, D));
	float sc[B];
	for (int b = 0; b < B; b++)
		sc[b] = b % 3 == 1 ? 0.0f : (float)(1 / 0.9);
	kt_set(e, &s, sc);
	kt_fill(e, &x, -1, 1), kt_fill(e, &res, -1, 1), kt_poison(e, &out);
	KT_BOTH(e, kern_row_scale(e->cpu, KG_SET(&out.c), &x.c, &s.c),
		kern_row_scale(e->dev, KG_SET(&out.d), &x.d, &s.d));
	kt_compare(e, &out, 0);
	KT_BOTH(e, kern_row_scale(e->cpu, KG_ADD(&res.c), &x.c, &s.c),
		kern_row_scale(e->dev, KG_ADD(&res.d), &x.d, &s.d));
	kt_compare(e, &res, 0);
	KT_BOTH(e, kern_row_scale(e->cpu, KG_SET(&x.c), &x.c, &s.c), kern_row_scale(e->dev, KG_SET(&x.d), &x.d, &s.d));
	x.name = "row_scale in place";
	kt_compare(e, &x, 0);
	KT_FREE(e, &x, &s, &out, &res);
}

static void dropout_case(KtEnv *e, int B, int D, KDtype dt, KDtype odt, double rate)
{
	printf("-- dropout B%d D%d %s -> %s rate %.2f\n", B, D, kern_dtype_name(dt), kern_dtype_name(odt), rate);
	KtPair x, pos, out, acc;
	kt_alloc(e, &x, "x", dt, NSH(B, D));
	kt_alloc(e, &pos, "positions", KDT_I64, NSH(B));
	kt_alloc(e, &out, "dropout out", odt, NSH(B, D));
	kt_alloc(e, &acc, "dropout add", odt, NSH(B, D));
	int64_t g[B];
	for (int b = 0; b < B; b++) // stream positions, some above 2^32
		g[b] = (int64_t)(kt_rand(e) >> (b % 2 ? 20 : 40));
	kt_set(e, &pos, g);
	kt_fill(e, &x, -2, 2), kt_poison(e, &out), kt_fill(e, &acc, -1, 1);
	const KDropout p = {.rate = rate, .seed = kt_rand(e)};
	KT_BOTH(e, kern_dropout(e->cpu, KG_SET(&out.c), &x.c, &pos.c, &p),
		kern_dropout(e->dev, KG_SET(&out.d), &x.d, &pos.d, &p));
	kt_same_bits(e, &out);
	KT_BOTH(e, kern_dropout(e->cpu, KG_ADD(&acc.c), &x.c, &pos.c, &p),
		kern_dropout(e->dev, KG_ADD(&acc.d), &x.d, &pos.d, &p));
	kt_same_bits(e, &acc);
	if (dt == odt) {
		KT_BOTH(e, kern_dropout(e->cpu, KG_SET(&x.c), &x.c, &pos.c, &p),
			kern_dropout(e->dev, KG_SET(&x.d), &x.d, &pos.d, &p));
		x.name = "dropout in place";
		kt_same_bits(e, &x);
	}
	KT_FREE(e, &x, &pos, &out, &acc);
}

// both compute the joint norm in double from the same f32 parts and store f32
static void norm_join_case(KtEnv *e, double clip)
{
	printf("-- grad_norm_join clip %g\n", clip);
	KtPair a, b;
	kt_alloc(e, &a, "norm_clip joined", KDT_F32, NSH(2));
	kt_alloc(e, &b, "other", KDT_F32, NSH(2));
	kt_set(e, &a, (const float[]){(float)kt_uniform(e, 0.1, 2), 1});
	kt_set(e, &b, (const float[]){(float)kt_uniform(e, 0.1, 2), 1});
	KT_BOTH(e, kern_grad_norm_join(e->cpu, &a.c, &b.c, clip), kern_grad_norm_join(e->dev, &a.d, &b.d, clip));
	kt_same_bits(e, &a);
	KT_FREE(e, &a, &b);
}

int main(void)
{
	KtEnv e;
	kt_setup(&e, "test_kcuda_cls");
	softce_case(&e, 13, 97, KDT_F32, 0.62, 0.1);  // EK-100's 97 verbs
	softce_case(&e, 9, 300, KDT_BF16, 0.3, 0.1);  // 300 nouns: more classes than a block's threads
	softce_case(&e, 6, 5, KDT_F32, 1.0, 0.0);     // no mixing, no smoothing
	softce_case(&e, 7, 700, KDT_BF16, 0.5, 0.25); // odd N: the middle row is its own partner
	softce_error_case(&e);
	const KMixup mix = {.lam = 0.37}, cut = {.cutmix = 1, .y0 = 3, .y1 = 13, .x0 = 5, .x1 = 16};
	mixup_case(&e, 4, 2, 1, 16, 16, 4, KDT_F32, &mix);
	mixup_case(&e, 5, 2, 1, 16, 24, 8, KDT_BF16, &mix);
	mixup_case(&e, 4, 2, 1, 16, 16, 4, KDT_BF16, &cut);
	mixup_case(&e, 3, 1, 1, 16, 24, 8, KDT_F32, &cut);
	mixup_case(&e, 3, 2, 2, 16, 24, 8, KDT_F32, &cut);
	mixup_case(&e, 4, 1, 2, 16, 16, 4, KDT_BF16, &mix);
	row_scale_case(&e, 6, 5, 24, KDT_F32);
	row_scale_case(&e, 5, 7, 40, KDT_BF16);
	dropout_case(&e, 6, 768, KDT_F32, KDT_F32, 0.5); // AVION's rate before the head, ViT-B's width
	dropout_case(&e, 5, 40, KDT_BF16, KDT_BF16, 0.1);
	dropout_case(&e, 4, 64, KDT_BF16, KDT_F32, 0.5); // the bf16 feature into the f32 heads' input
	dropout_case(&e, 3, 33, KDT_F32, KDT_F32, 0);
	dropout_case(&e, 3, 33, KDT_F32, KDT_F32, 1);
	norm_join_case(&e, 0);
	norm_join_case(&e, 0.5);
	kt_sync(&e, "classification ops");
	return kt_finish(&e);
}
