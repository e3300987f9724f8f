// Checks the VideoMAE ops on the CPU backend: token gather and the decoder's input (backward of each
// against central finite differences in f64, KG_SET's zero rows, KG_ADD), index rows that break the
// rule latching -ERANGE, the masked MSE (value and finite differences), the tubelet augment against
// the frame augment re-indexed, the normalized-pixel target against a two-pass reference, and token
// mean pooling (value, finite differences, KG_SET and KG_ADD).
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_token_gather_*, kern_mae_*, kern_augment_tubelet
#include "stream.h"         // defines: rng_philox4x32

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2, TP = 2, NS = 6, N = TP * NS, NV = 6, NM = 6, D = 5, K3 = 12 };

typedef struct {
	KernCtx *c;
	KTensor x, vis, msk, gout, rg;  // gather
	KTensor xv, tok, pos, dout, rd; // decoder input
	KTensor pred, target, loss;     // mse
} Mae;

static int bad;
#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                    \
			printf(__VA_ARGS__);                                                                           \
			printf("\n");                                                                                  \
			bad = 1;                                                                                       \
		}                                                                                                      \
	} while (0)

static double loss_gather(void *a)
{
	Mae *s = a;
	return kern_token_gather_fwd(s->c, &s->gout, &s->x, &s->vis) ? NAN : kgc_dot(&s->gout, &s->rg);
}

static double loss_dec(void *a)
{
	Mae *s = a;
	return kern_mae_decoder_input_fwd(s->c, &s->dout, &s->xv, &s->tok, &s->pos, &s->vis, &s->msk)
		       ? NAN
		       : kgc_dot(&s->dout, &s->rd);
}

static double loss_mse(void *a)
{
	Mae *s = a;
	return kern_mae_mse(s->c, &s->loss, KG_NONE, &s->pred, &s->target, 1.0) ? NAN : kgc_get(&s->loss, 0);
}

static void fill_const(KTensor *t, double v)
{
	for (int64_t i = 0; i < kern_numel(t); i++)
		kgc_set(t, i, v);
}

static void gather(Mae *s)
{
	KernCtx *c = s->c;
	KTensor dx, dx2;
	kgc_alloc_like(c, &dx, &s->x, KDT_F64);
	kgc_alloc_like(c, &dx2, &s->x, KDT_F64);
	loss_gather(s);
	const int b = 1, m = 4, k = 3, n = (int)kgc_get(&s->vis, b * NV + m);
	CHECK(kgc_get(&s->gout, (b * NV + m) * D + k) == kgc_get(&s->x, (b * N + n) * D + k), "gather forward");
	fill_const(&dx, 7.0); // KG_SET must overwrite every row, the unnamed ones with 0
	CHECK(kern_token_gather_bwd(c, KG_SET(&dx), &s->rg, &s->vis) == 0, "gather backward");
	bad |= kgc_check("token_gather d/dx", &s->x, &dx, loss_gather, s, 1e-5, 1e-9, 1e-6);
	fill_const(&dx2, 1.0);
	CHECK(kern_token_gather_bwd(c, KG_ADD(&dx2), &s->rg, &s->vis) == 0, "gather backward (add)");
	int off = 0;
	for (int64_t i = 0; i < kern_numel(&dx); i++)
		off += kgc_get(&dx2, i) != 1.0 + kgc_get(&dx, i);
	CHECK(off == 0, "KG_ADD is 1 + KG_SET's result (%d elements differ)", off);
	kern_free(c, &dx), kern_free(c, &dx2);
}

static void decoder_input(Mae *s)
{
	KernCtx *c = s->c;
	KTensor dxv, dtok, dpos, dxv2;
	kgc_alloc_like(c, &dxv, &s->xv, KDT_F64);
	kgc_alloc_like(c, &dxv2, &s->xv, KDT_F64);
	kgc_alloc_like(c, &dtok, &s->tok, KDT_F64);
	kgc_alloc_like(c, &dpos, &s->pos, KDT_F64);
	loss_dec(s);
	const int b = 1, j = 2, k = 4, n = (int)kgc_get(&s->msk, b * NM + j);
	CHECK(kgc_get(&s->dout, (b * (NV + NM) + NV + j) * D + k) == kgc_get(&s->tok, k) + kgc_get(&s->pos, n * D + k),
	      "decoder input forward: a mask token row");
	fill_const(&dpos, 7.0), fill_const(&dtok, 7.0), fill_const(&dxv, 7.0);
	CHECK(kern_mae_decoder_input_bwd(c, KG_SET(&dxv), KG_SET(&dtok), KG_SET(&dpos), &s->rd, &s->vis, &s->msk) == 0,
	      "decoder input backward");
	bad |= kgc_check("mae_decoder_input d/dx_vis", &s->xv, &dxv, loss_dec, s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("mae_decoder_input d/dmask_token", &s->tok, &dtok, loss_dec, s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("mae_decoder_input d/dpos", &s->pos, &dpos, loss_dec, s, 1e-5, 1e-9, 1e-6);
	CHECK(kern_mae_decoder_input_bwd(c, KG_SET(&dxv2), KG_NONE, KG_NONE, &s->rd, &s->vis, &s->msk) == 0 &&
		      !memcmp(dxv.data, dxv2.data, kern_nbytes(&dxv)),
	      "decoder input backward without dpos: the same dx_vis");
	kern_free(c, &dxv), kern_free(c, &dxv2), kern_free(c, &dtok), kern_free(c, &dpos);
}

// a row that is not ascending, then one outside [0, N): latched under the op's name at the next sync
static void bad_rows(Mae *s)
{
	KernCtx *c = s->c;
	const int32_t ok0 = (int32_t)kgc_get(&s->vis, 3), ok1 = (int32_t)kgc_get(&s->vis, NV + 1);
	const int32_t cases[2][2] = {{(int32_t)kgc_get(&s->vis, 2), -1}, {N, -1}}; // [3] = [2]; [NV + 1] = N
	for (int t = 0; t < 2; t++) {
		const int at = t == 0 ? 3 : NV + 1;
		kgc_set(&s->vis, at, cases[t][0]);
		CHECK(kern_token_gather_fwd(c, &s->gout, &s->x, &s->vis) == 0, "a content error returns 0 at once");
		int rc = kern_sync(c);
		CHECK(rc == -ERANGE && strstr(kern_error_message(c), "token_gather"), "bad row %d: %d '%s'", t, rc,
		      kern_error_message(c));
		printf("ok   index rule latched: %s\n", kern_error_message(c));
		kern_error_clear(c);
		kgc_set(&s->vis, 3, ok0), kgc_set(&s->vis, NV + 1, ok1);
	}
	const double msk0 = kgc_get(&s->msk, 0);
	kgc_set(&s->msk, 0, N + 3);
	KTensor tgt, clips, pos;
	kern_alloc(c, &clips, KDT_U8, 5, (int64_t[]){B, 4, 6, 4, 3}); // T'·Ns = 2·(3·2) = N with p 2, tt 2
	kern_alloc(c, &pos, KDT_I64, 1, (int64_t[]){B});
	kern_alloc(c, &tgt, KDT_F32, 3, (int64_t[]){B, NM, 24});
	CHECK(kern_mae_target(c, &tgt, &clips, &pos, &s->msk, 1, 1, 2, 2) == 0 && kern_sync(c) == -ERANGE &&
		      strstr(kern_error_message(c), "mae_target"),
	      "mae_target: %s", kern_error_message(c));
	kern_error_clear(c);
	CHECK(kern_mae_decoder_input_fwd(c, &s->dout, &s->xv, &s->tok, &s->pos, &s->vis, &s->msk) == 0 &&
		      kern_sync(c) == -ERANGE && strstr(kern_error_message(c), "mae_decoder_input"),
	      "mae_decoder_input: %s", kern_error_message(c));
	kern_error_clear(c);
	kgc_set(&s->msk, 0, msk0);
	kern_free(c, &tgt), kern_free(c, &clips), kern_free(c, &pos);
}

static void mse(Mae *s)
{
	KernCtx *c = s->c;
	KTensor dp, dp3;
	kgc_alloc_like(c, &dp, &s->pred, KDT_F64);
	kgc_alloc_like(c, &dp3, &s->pred, KDT_F64);
	double want = 0;
	for (int64_t i = 0; i < kern_numel(&s->pred); i++)
		want += pow(kgc_get(&s->pred, i) - kgc_get(&s->target, i), 2);
	want /= (double)kern_numel(&s->pred);
	CHECK(kern_mae_mse(c, &s->loss, KG_SET(&dp), &s->pred, &s->target, 1.0) == 0, "mse");
	CHECK(fabs(kgc_get(&s->loss, 0) - want) <= 1e-15 * want, "mse loss %.17g, want %.17g", kgc_get(&s->loss, 0),
	      want);
	bad |= kgc_check("mae_mse d/dpred", &s->pred, &dp, loss_mse, s, 1e-5, 1e-10, 1e-6);
	CHECK(kern_mae_mse(c, NULL, KG_SET(&dp3), &s->pred, &s->target, 3.0) == 0, "mse without a loss");
	double worst = 0;
	for (int64_t i = 0; i < kern_numel(&dp); i++)
		worst = fmax(worst, fabs(kgc_get(&dp3, i) - 3 * kgc_get(&dp, i)));
	CHECK(worst <= 1e-15, "the upstream scale multiplies dpred (off by %g)", worst);
	kern_free(c, &dp), kern_free(c, &dp3);
}

static int flips(uint64_t seed, uint64_t g)
{
	const uint32_t ctr[4] = {(uint32_t)g, (uint32_t)(g >> 32), 3, 0},
		       key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	uint32_t out[4];
	rng_philox4x32(ctr, key, out);
	return (int)(out[0] & 1u);
}

// the tubelet augment is the frame augment re-indexed; the target against a two-pass reference
static void tubelets(KernCtx *c)
{
	enum { CB = 4, T = 4, H = 8, W = 12, P = 4, TT = 2, PN = (H / P) * (W / P), KT = TT * P * P };
	KTensor clips, pos, a1, a1b, a2, idx, tgt;
	const int64_t sc[] = {CB, T, H, W, 3}, n = (int64_t)CB * T * H * W * 3;
	kern_alloc(c, &clips, KDT_U8, 5, sc);
	kern_alloc(c, &pos, KDT_I64, 1, (int64_t[]){CB});
	kern_alloc(c, &a1, KDT_F32, 3, (int64_t[]){CB, T * PN, 3 * P * P});
	kern_alloc(c, &a1b, KDT_F32, 3, (int64_t[]){CB, T * PN, 3 * P * P});
	kern_alloc(c, &a2, KDT_F32, 3, (int64_t[]){CB, T / TT * PN, 3 * KT});
	uint8_t *px = clips.data;
	uint64_t r = 77;
	for (int64_t i = 0; i < n; i++)
		px[i] = (uint8_t)(rng_splitmix64(&r) >> 40);
	memset(px + 3 * T * H * W * 3, 200, (size_t)T * H * W * 3); // clip 3 constant: its target is 0
	int64_t *g = pos.data, flipped = 0;
	for (int b = 0; b < CB; b++)
		g[b] = 11 + 3 * b, flipped += flips(5, (uint64_t)g[b]);
	CHECK(flipped > 0 && flipped < CB, "the positions flip some clips and not others (%lld)", (long long)flipped);
	CHECK(kern_augment(c, &a1, &clips, &pos, 5, 1, P) == 0 &&
		      kern_augment_tubelet(c, &a1b, &clips, &pos, 5, 1, P, 1) == 0 &&
		      !memcmp(a1.data, a1b.data, kern_nbytes(&a1)),
	      "tubelet 1 is kern_augment byte for byte");
	CHECK(kern_augment_tubelet(c, &a2, &clips, &pos, 5, 1, P, TT) == 0, "tubelet augment");
	const float *f1 = a1.data, *f2 = a2.data;
	int off = 0;
	for (int b = 0; b < CB; b++)
		for (int t = 0; t < T; t++)
			for (int q = 0; q < PN; q++)
				for (int e = 0; e < 3 * P * P; e++) { // e = (ch·p + i)·p + j of frame t
					const int ch = e / (P * P), ij = e % (P * P), tp = t / TT, dt = t % TT;
					off += f1[((int64_t)(b * T + t) * PN + q) * 3 * P * P + e] !=
					       f2[((int64_t)(b * (T / TT) + tp) * PN + q) * 3 * KT +
						  (ch * TT + dt) * P * P + ij];
				}
	CHECK(off == 0, "tubelet element ((c·tt + dt)·p + i)·p + j is frame t'·tt + dt's (c·p + i)·p + j (%d differ)",
	      off);
	// the target of 3 tokens per clip, against mean and unbiased variance of v/255 in two passes
	kern_alloc(c, &idx, KDT_I32, 2, (int64_t[]){CB, 3});
	kern_alloc(c, &tgt, KDT_F32, 3, (int64_t[]){CB, 3, 3 * KT});
	int32_t *ix = idx.data;
	for (int b = 0; b < CB; b++)
		ix[b * 3] = b, ix[b * 3 + 1] = PN + 1 + b, ix[b * 3 + 2] = 2 * PN - 1;
	CHECK(kern_mae_target(c, &tgt, &clips, &pos, &idx, 5, 1, P, TT) == 0 && kern_sync(c) == 0, "mae_target");
	const float *o = tgt.data;
	double worst = 0, zeros = 0;
	for (int b = 0; b < CB; b++)
		for (int m = 0; m < 3; m++) {
			const int tok = ix[b * 3 + m], tp = tok / PN, q = tok % PN, py = q / (W / P), qx = q % (W / P);
			for (int ch = 0; ch < 3; ch++) {
				double v[KT], mean = 0, var = 0;
				for (int k = 0; k < KT; k++) { // k = (dt·p + i)·p + j
					int dt = k / (P * P), i = k / P % P, x = qx * P + k % P;
					if (flips(5, (uint64_t)g[b]))
						x = W - 1 - x;
					v[k] = px[((((int64_t)b * T + tp * TT + dt) * H + py * P + i) * W + x) * 3 +
						  ch] /
					       255.0;
					mean += v[k] / KT;
				}
				for (int k = 0; k < KT; k++)
					var += (v[k] - mean) * (v[k] - mean) / (KT - 1);
				for (int k = 0; k < KT; k++) {
					double want = (v[k] - mean) / (sqrt(var) + 1e-6);
					double got = o[((int64_t)(b * 3 + m) * KT + k) * 3 + ch];
					worst = fmax(worst, fabs(got - want) / fmax(1, fabs(want)));
					if (b == 3)
						zeros = fmax(zeros, fabs(got));
				}
			}
		}
	CHECK(worst <= 2e-6, "target against the two-pass reference: %g (f32 rounding allows ~1.2e-7)", worst);
	CHECK(zeros == 0, "a constant tubelet's target is 0 (got %g)", zeros);
	printf("%-4s tubelet augment and normalized-pixel target (worst relative %.3g)\n", bad ? "FAIL" : "ok", worst);
	kern_free(c, &clips), kern_free(c, &pos), kern_free(c, &a1), kern_free(c, &a1b), kern_free(c, &a2);
	kern_free(c, &idx), kern_free(c, &tgt);
}

// token mean pooling: the value by hand, backward against finite differences, KG_SET's zero rows
// before first and KG_ADD
typedef struct {
	KernCtx *c;
	KTensor x, out, r;
	int first;
} Mean;

static double loss_mean(void *a)
{
	Mean *m = a;
	return kern_token_mean_fwd(m->c, &m->out, &m->x, m->first) ? NAN : kgc_dot(&m->out, &m->r);
}

static void token_mean(KernCtx *c)
{
	enum { MB = 3, ML = 5, MD = 4 };
	for (int first = 0; first < 2; first++) {
		Mean m = {.c = c, .first = first};
		KTensor dx, dx2;
		kern_alloc(c, &m.x, KDT_F64, 3, (const int64_t[]){MB, ML, MD});
		kern_alloc(c, &m.out, KDT_F64, 2, (const int64_t[]){MB, MD});
		kern_alloc(c, &m.r, KDT_F64, 2, (const int64_t[]){MB, MD});
		kgc_fill(&m.x, 61 + first, 1), kgc_fill(&m.r, 63, 1);
		kgc_alloc_like(c, &dx, &m.x, KDT_F64), kgc_alloc_like(c, &dx2, &m.x, KDT_F64);
		loss_mean(&m);
		double want = 0; // row b = 2, column 1 by hand
		for (int t = first; t < ML; t++)
			want += kgc_get(&m.x, (2 * ML + t) * MD + 1);
		want /= ML - first;
		CHECK(fabs(kgc_get(&m.out, 2 * MD + 1) - want) < 1e-15, "token_mean forward (first %d)", first);
		fill_const(&dx, 7.0);
		CHECK(kern_token_mean_bwd(c, KG_SET(&dx), &m.r, first) == 0, "token_mean backward");
		bad |= kgc_check("token_mean d/dx", &m.x, &dx, loss_mean, &m, 1e-5, 1e-9, 1e-6);
		fill_const(&dx2, 1.0);
		CHECK(kern_token_mean_bwd(c, KG_ADD(&dx2), &m.r, first) == 0, "token_mean backward (add)");
		int off = 0;
		for (int64_t i = 0; i < kern_numel(&dx); i++)
			off += kgc_get(&dx2, i) != 1.0 + kgc_get(&dx, i) ||
			       (first && i % (ML * MD) < MD && kgc_get(&dx, i));
		CHECK(off == 0, "KG_ADD is 1 + KG_SET's result, rows before first 0 (%d elements differ)", off);
		CHECK(kern_token_mean_fwd(c, &m.out, &m.x, ML) == -EINVAL, "first = L refused");
		kern_free(c, &m.x), kern_free(c, &m.out), kern_free(c, &m.r), kern_free(c, &dx), kern_free(c, &dx2);
	}
	printf("%-4s token mean pooling (first 0 and 1)\n", bad ? "FAIL" : "ok");
}

#define ALLOC(t, dt, ...)                                                                                              \
	do {                                                                                                           \
		const int64_t sh_[] = {__VA_ARGS__};                                                                   \
		if (kern_alloc(c, t, dt, (int)(sizeof sh_ / sizeof sh_[0]), sh_))                                      \
			return 1;                                                                                      \
	} while (0)

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	Mae s = {.c = c};
	const KDtype d = KDT_F64;
	ALLOC(&s.x, d, B, N, D);
	ALLOC(&s.vis, KDT_I32, B, NV);
	ALLOC(&s.msk, KDT_I32, B, NM);
	ALLOC(&s.gout, d, B, NV, D);
	ALLOC(&s.rg, d, B, NV, D);
	ALLOC(&s.xv, d, B, NV, D);
	ALLOC(&s.tok, d, D);
	ALLOC(&s.pos, d, N, D);
	ALLOC(&s.dout, d, B, NV + NM, D);
	ALLOC(&s.rd, d, B, NV + NM, D);
	ALLOC(&s.pred, d, B, NM, K3);
	ALLOC(&s.target, d, B, NM, K3);
	ALLOC(&s.loss, d, 1);
	const int64_t g[B] = {3, 8};
	if (kern_mae_tube_mask_batch(1, g, B, NS, TP, 0.5, s.vis.data, s.msk.data) != NM)
		return 1;
	kgc_fill(&s.x, 51, 1), kgc_fill(&s.rg, 52, 1), kgc_fill(&s.xv, 53, 1), kgc_fill(&s.tok, 54, 1);
	kgc_fill(&s.pos, 55, 1), kgc_fill(&s.rd, 56, 1), kgc_fill(&s.pred, 57, 2), kgc_fill(&s.target, 58, 2);
	gather(&s);
	decoder_input(&s);
	mse(&s);
	bad_rows(&s);
	tubelets(c);
	token_mean(c);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL VideoMAE ops" : "PASS VideoMAE ops");
	return bad;
}
