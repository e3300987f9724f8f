// The CUDA backend's VideoMAE ops against the CPU backend: the tubelet augment and the normalized-
// pixel target bit for bit (the same table values, flips and double steps), token gather and the
// decoder's input forward and backward (set and add, with and without dpos), the masked MSE, token
// mean pooling bit for bit, and an index row breaking the rule latched by both under the same name.
#include "kcu_twin.h" // defines: KtEnv, KtPair, KT_BOTH, KT_FREE, SH, NSH, kt_*

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Named tolerances (relative L2). Copies, single f32 additions, sums in the CPU twin's order and the
// double-precision target are exact: compared bit for bit. Two outputs sum in another order:
//   dmask_token, a fixed-order column sum over B·Nm rows (kc_colsum) where the CPU adds rows in turn;
//   the MSE loss, per-block double partials where the CPU adds elements in turn (then one f32 rounding)
#define MAE_TOL_DMASK_TOKEN KT_TOL_F32
#define MAE_TOL_MSE_LOSS KT_TOL_F32

// index rows of B clips from the tube mask (host), onto both backends
static int masks(KtEnv *e, KtPair *vis, KtPair *msk, int B, int Ns, int Tp, double ratio)
{
	const int m = kern_mae_mask_count(Ns, ratio), nv = (Ns - m) * Tp, nm = m * Tp;
	int64_t *g = malloc(sizeof(int64_t) * (size_t)B);
	int32_t *v = malloc(sizeof(int32_t) * (size_t)B * nv), *k = malloc(sizeof(int32_t) * (size_t)B * nm);
	for (int b = 0; b < B; b++)
		g[b] = (int64_t)(kt_rand(e) >> 2);
	kt_check(e, kern_mae_tube_mask_batch(kt_rand(e), g, B, Ns, Tp, ratio, v, k) == nm, "tube masks");
	kt_alloc(e, vis, "visible index", KDT_I32, NSH(B, nv));
	kt_alloc(e, msk, "masked index", KDT_I32, NSH(B, nm));
	kt_set(e, vis, v), kt_set(e, msk, k);
	free(g), free(v), free(k);
	return nm;
}

static void clips_case(KtEnv *e, int B, int T, int H, int W, int p, int tt, KDtype dt)
{
	printf("-- tubelets B%d T%d %dx%d p%d tt%d %s\n", B, T, H, W, p, tt, kern_dtype_name(dt));
	const int Ns = (H / p) * (W / p), Tp = T / tt, K = tt * p * p;
	KtPair clips, pos, out, vis, msk, tgt;
	kt_alloc(e, &clips, "clips", KDT_U8, NSH(B, T, H, W, 3));
	kt_alloc(e, &pos, "pos", KDT_I64, NSH(B));
	kt_alloc(e, &out, "tubelets", dt, NSH(B, (int64_t)Tp * Ns, 3 * K));
	uint8_t *px = malloc((size_t)B * T * H * W * 3);
	for (int64_t i = 0; i < (int64_t)B * T * H * W * 3; i++)
		px[i] = (uint8_t)kt_rand(e);
	memset(px, 9, (size_t)T * H * W * 3); // clip 0 constant: a zero variance
	int64_t g[16];
	for (int b = 0; b < B; b++)
		g[b] = (int64_t)(kt_rand(e) >> 2);
	kt_set(e, &clips, px), kt_set(e, &pos, g);
	const uint64_t seed = kt_rand(e);
	for (int flip = 0; flip < 2; flip++) {
		kt_poison(e, &out);
		KT_BOTH(e, kern_augment_tubelet(e->cpu, &out.c, &clips.c, &pos.c, seed, flip, p, tt),
			kern_augment_tubelet(e->dev, &out.d, &clips.d, &pos.d, seed, flip, p, tt));
		kt_same_bits(e, &out);
	}
	const int nm = masks(e, &vis, &msk, B, Ns, Tp, 0.75);
	kt_alloc(e, &tgt, "normalized-pixel target", KDT_F32, NSH(B, nm, 3 * K));
	kt_poison(e, &tgt);
	KT_BOTH(e, kern_mae_target(e->cpu, &tgt.c, &clips.c, &pos.c, &msk.c, seed, 1, p, tt),
		kern_mae_target(e->dev, &tgt.d, &clips.d, &pos.d, &msk.d, seed, 1, p, tt));
	kt_same_bits(e, &tgt);
	free(px);
	KT_FREE(e, &clips, &pos, &out, &vis, &msk, &tgt);
}

static void gather_case(KtEnv *e, int B, int Ns, int Tp, double ratio, int D, KDtype dt)
{
	printf("-- gather / decoder input B%d N%d ratio %.2f D%d %s\n", B, Ns * Tp, ratio, D, kern_dtype_name(dt));
	const int N = Ns * Tp;
	KtPair vis, msk, x, xv, dx, tok, pos, dec, dxv, dtok, dpos;
	const int nm = masks(e, &vis, &msk, B, Ns, Tp, ratio), nv = N - nm;
	kt_alloc(e, &x, "tokens", dt, NSH(B, N, D));
	kt_alloc(e, &xv, "visible tokens", dt, NSH(B, nv, D));
	kt_alloc(e, &dx, "token_gather dx", dt, NSH(B, N, D));
	kt_alloc(e, &tok, "mask token", dt, NSH(D));
	kt_alloc(e, &pos, "pos", dt, NSH(N, D));
	kt_alloc(e, &dec, "decoder input", dt, NSH(B, N, D));
	kt_alloc(e, &dxv, "dx_vis", dt, NSH(B, nv, D));
	kt_alloc(e, &dtok, "dmask_token", KDT_F32, NSH(D));
	kt_alloc(e, &dpos, "dpos", dt, NSH(N, D));
	kt_fill(e, &x, -1, 1), kt_fill(e, &tok, -1, 1), kt_fill(e, &pos, -1, 1), kt_poison(e, &xv);
	KT_BOTH(e, kern_token_gather_fwd(e->cpu, &xv.c, &x.c, &vis.c),
		kern_token_gather_fwd(e->dev, &xv.d, &x.d, &vis.d));
	kt_same_bits(e, &xv);
	for (int acc = 0; acc < 2; acc++) {
		if (acc)
			kt_fill(e, &dx, -1, 1);
		else
			kt_poison(e, &dx);
		KT_BOTH(e, kern_token_gather_bwd(e->cpu, (KGrad){&dx.c, acc}, &xv.c, &vis.c),
			kern_token_gather_bwd(e->dev, (KGrad){&dx.d, acc}, &xv.d, &vis.d));
		dx.name = acc ? "token_gather dx (add)" : "token_gather dx (set)";
		kt_same_bits(e, &dx);
	}
	kt_poison(e, &dec);
	KT_BOTH(e, kern_mae_decoder_input_fwd(e->cpu, &dec.c, &xv.c, &tok.c, &pos.c, &vis.c, &msk.c),
		kern_mae_decoder_input_fwd(e->dev, &dec.d, &xv.d, &tok.d, &pos.d, &vis.d, &msk.d));
	kt_same_bits(e, &dec);
	for (int acc = 0; acc < 2; acc++) {
		KtPair *gs[] = {&dxv, &dtok, &dpos};
		for (int i = 0; i < 3; i++)
			if (acc)
				kt_fill(e, gs[i], -1, 1);
			else
				kt_poison(e, gs[i]);
		KT_BOTH(e,
			kern_mae_decoder_input_bwd(e->cpu, (KGrad){&dxv.c, acc}, (KGrad){&dtok.c, acc},
						   (KGrad){&dpos.c, acc}, &dec.c, &vis.c, &msk.c),
			kern_mae_decoder_input_bwd(e->dev, (KGrad){&dxv.d, acc}, (KGrad){&dtok.d, acc},
						   (KGrad){&dpos.d, acc}, &dec.d, &vis.d, &msk.d));
		kt_same_bits(e, &dxv), kt_same_bits(e, &dpos);
		kt_compare(e, &dtok, MAE_TOL_DMASK_TOKEN);
	}
	kt_poison(e, &dxv); // a fixed position table: no dpos, the index rows unread
	KT_BOTH(e, kern_mae_decoder_input_bwd(e->cpu, KG_SET(&dxv.c), KG_NONE, KG_NONE, &dec.c, &vis.c, &msk.c),
		kern_mae_decoder_input_bwd(e->dev, KG_SET(&dxv.d), KG_NONE, KG_NONE, &dec.d, &vis.d, &msk.d));
	dxv.name = "dx_vis (no dpos)";
	kt_same_bits(e, &dxv);
	KT_FREE(e, &vis, &msk, &x, &xv, &dx, &tok, &pos, &dec, &dxv, &dtok, &dpos);
}

static void mse_case(KtEnv *e, int64_t rows, int K, KDtype dt, double scale)
{
	printf("-- mae_mse %lldx%d %s scale %g\n", (long long)rows, K, kern_dtype_name(dt), scale);
	KtPair pred, tgt, loss, dp;
	kt_alloc(e, &pred, "pred", dt, NSH(rows, K));
	kt_alloc(e, &tgt, "target", KDT_F32, NSH(rows, K));
	kt_alloc(e, &loss, "mse loss", KDT_F32, NSH(1));
	kt_alloc(e, &dp, "dpred", dt, NSH(rows, K));
	kt_fill(e, &pred, -2, 2), kt_fill(e, &tgt, -2, 2);
	for (int acc = 0; acc < 2; acc++) {
		if (acc)
			kt_fill(e, &dp, -1, 1);
		else
			kt_poison(e, &dp);
		kt_poison(e, &loss);
		KT_BOTH(e, kern_mae_mse(e->cpu, &loss.c, (KGrad){&dp.c, acc}, &pred.c, &tgt.c, scale),
			kern_mae_mse(e->dev, &loss.d, (KGrad){&dp.d, acc}, &pred.d, &tgt.d, scale));
		dp.name = acc ? "dpred (add)" : "dpred (set)";
		kt_same_bits(e, &dp);
		kt_compare(e, &loss, MAE_TOL_MSE_LOSS);
	}
	KT_FREE(e, &pred, &tgt, &loss, &dp);
}

// a repeated index: both backends latch -ERANGE with the same message at the next sync
static void bad_row_case(KtEnv *e)
{
	printf("-- an index row that is not ascending\n");
	KtPair x, out, idx;
	kt_alloc(e, &x, "x", KDT_F32, NSH(2, 8, 8));
	kt_alloc(e, &out, "out", KDT_F32, NSH(2, 3, 8));
	kt_alloc(e, &idx, "idx", KDT_I32, NSH(2, 3));
	const int32_t rows[6] = {0, 2, 5, 1, 4, 4};
	kt_set(e, &idx, rows);
	KT_BOTH(e, kern_token_gather_fwd(e->cpu, &out.c, &x.c, &idx.c),
		kern_token_gather_fwd(e->dev, &out.d, &x.d, &idx.d));
	int rc = kern_sync(e->cpu), rd = kern_sync(e->dev);
	char msg[256];
	snprintf(msg, sizeof msg, "%s", kern_error_message(e->cpu));
	kt_check(e, rc == -ERANGE && rd == -ERANGE && !strcmp(msg, kern_error_message(e->dev)),
		 "cpu %d '%s', cuda %d '%s'", rc, msg, rd, kern_error_message(e->dev));
	printf("latched on both: %s\n", msg);
	kern_error_clear(e->cpu), kern_error_clear(e->dev);
	KT_FREE(e, &x, &out, &idx);
}

// token mean pooling: a sum in token order and one division on both, so bit for bit (set and add)
static void mean_case(KtEnv *e, int B, int L, int D, int first, KDtype dt)
{
	printf("-- token mean B%d L%d D%d first %d %s\n", B, L, D, first, kern_dtype_name(dt));
	KtPair x, out, dout, dx;
	kt_alloc(e, &x, "tokens", dt, NSH(B, L, D));
	kt_alloc(e, &out, "token_mean", dt, NSH(B, D));
	kt_alloc(e, &dout, "dout", dt, NSH(B, D));
	kt_alloc(e, &dx, "token_mean dx", dt, NSH(B, L, D));
	kt_fill(e, &x, -2, 2), kt_fill(e, &dout, -1, 1);
	kt_poison(e, &out), kt_poison(e, &dx);
	KT_BOTH(e, kern_token_mean_fwd(e->cpu, &out.c, &x.c, first), kern_token_mean_fwd(e->dev, &out.d, &x.d, first));
	kt_same_bits(e, &out);
	KT_BOTH(e, kern_token_mean_bwd(e->cpu, KG_SET(&dx.c), &dout.c, first),
		kern_token_mean_bwd(e->dev, KG_SET(&dx.d), &dout.d, first));
	kt_same_bits(e, &dx);
	KT_BOTH(e, kern_token_mean_bwd(e->cpu, KG_ADD(&dx.c), &dout.c, first),
		kern_token_mean_bwd(e->dev, KG_ADD(&dx.d), &dout.d, first));
	kt_same_bits(e, &dx);
	KT_FREE(e, &x, &out, &dout, &dx);
}

int main(void)
{
	KtEnv e;
	kt_setup(&e, "test_kcuda_mae");
	clips_case(&e, 3, 4, 32, 32, 16, 2, KDT_BF16); // VideoMAE's 2x16x16 tubelets, 16-byte stores
	clips_case(&e, 2, 4, 8, 12, 4, 2, KDT_F32);    // element stores
	clips_case(&e, 2, 3, 8, 8, 4, 1, KDT_F32);     // one-frame tubelets (kern_augment)
	gather_case(&e, 3, 98, 2, 0.9, 24, KDT_BF16);  // VideoMAE's ratio, 8-element rows
	gather_case(&e, 2, 6, 2, 0.5, 5, KDT_F32);
	gather_case(&e, 40, 9, 1, 0.75, 8, KDT_F32); // several row slices in dmask_token's column sum
	mse_case(&e, 3 * 176, 24, KDT_BF16, 1.0);
	mse_case(&e, 7, 5, KDT_F32, 0.25);
	mse_case(&e, 2000, 96, KDT_F32, 1.0);      // 47 blocks of partials
	mean_case(&e, 3, 1 + 98, 24, 1, KDT_BF16); // the tower's --pool mean: the class token skipped
	mean_case(&e, 2, 7, 5, 0, KDT_F32);
	bad_row_case(&e);
	kt_sync(&e, "VideoMAE ops");
	return kt_finish(&e);
}
