// Checks Mixup/CutMix (kern_mixup_fwd/bwd) and the per-row scale of drop path (kern_row_scale) on
// the CPU backend: the forward against timm's operation done in pixel space and patchified by the
// test itself (odd batch: the middle row is its own partner), in place equal to out of place, the
// backward by the adjoint identity <M x, r> = <x, Mᵀ r> in f64, KG_ADD, and the row scale against
// finite differences. The modes run on kern_augment's layout and on kern_augment_tubelet's of 2
// frames a token (a VideoMAE encoder fine-tuned with --tubelet 2).
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_mixup_*, kern_row_scale, KMixup

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { B = 3, T = 2, H = 8, W = 12, PS = 4, GW = W / PS, P = (H / PS) * GW, COLS = 3 * PS * PS };
#define NEL ((int64_t)B * T * P * COLS)

static int tt = 1; // frames a token: rows of (T/tt·P, tt·COLS)

// the augment ops' layout (kern_augment_tubelet's; tt 1 is kern_augment's): element of pixel (b, t, y, x, c)
static int64_t at(int b, int t, int y, int x, int c)
{
	const int q = (y / PS) * GW + x / PS, col = ((c * tt + t % tt) * PS + y % PS) * PS + x % PS;
	return (((int64_t)b * (T / tt) + t / tt) * P + q) * (tt * COLS) + col;
}

// timm in pixel space on the test's own patchify: x mixed with x.flip(0)
static void reference(KTensor *want, const KTensor *x, const KMixup *m)
{
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++)
			for (int y = 0; y < H; y++)
				for (int xx = 0; xx < W; xx++)
					for (int c = 0; c < 3; c++) {
						double v = kgc_get(x, at(b, t, y, xx, c)),
						       w = kgc_get(x, at(B - 1 - b, t, y, xx, c));
						int in = y >= m->y0 && y < m->y1 && xx >= m->x0 && xx < m->x1;
						double o = m->cutmix ? (in ? w : v) : m->lam * v + (1 - m->lam) * w;
						kgc_set(want, at(b, t, y, xx, c), o);
					}
}

static int check_mode(KernCtx *c, const KMixup *m, const char *name)
{
	const int64_t sh[] = {B, T / tt * P, tt * COLS};
	KTensor x, out, want, r, dx, f, fo;
	int bad = kern_alloc(c, &x, KDT_F64, 3, sh) | kern_alloc(c, &out, KDT_F64, 3, sh) |
		  kern_alloc(c, &want, KDT_F64, 3, sh) | kern_alloc(c, &r, KDT_F64, 3, sh) |
		  kern_alloc(c, &dx, KDT_F64, 3, sh) | kern_alloc(c, &f, KDT_F32, 3, sh) |
		  kern_alloc(c, &fo, KDT_F32, 3, sh);
	kgc_fill(&x, 41, 2), kgc_fill(&r, 42, 1), kgc_fill(&f, 43, 2);
	reference(&want, &x, m);
	bad |= kern_mixup_fwd(c, &out, &x, m, H, W, PS) != 0;
	const double e_ref = kgc_maxdiff(&out, &want);
	// the adjoint identity, and KG_ADD onto known values
	bad |= kern_mixup_bwd(c, KG_SET(&dx), &r, m, H, W, PS) != 0;
	const double lhs = kgc_dot(&out, &r), rhs = kgc_dot(&x, &dx);
	KTensor acc;
	bad |= kgc_alloc_like(c, &acc, &x, KDT_F64);
	kgc_fill(&acc, 44, 1);
	double worst_add = 0;
	double old[64];
	for (int i = 0; i < 64; i++)
		old[i] = kgc_get(&acc, i * (NEL / 64));
	bad |= kern_mixup_bwd(c, KG_ADD(&acc), &r, m, H, W, PS) != 0;
	for (int i = 0; i < 64; i++)
		worst_add =
			fmax(worst_add, fabs(kgc_get(&acc, i * (NEL / 64)) - old[i] - kgc_get(&dx, i * (NEL / 64))));
	// in place (f32) gives the out-of-place bits
	bad |= kern_mixup_fwd(c, &fo, &f, m, H, W, PS) || kern_mixup_fwd(c, &f, &f, m, H, W, PS) || kern_sync(c);
	const int same = !memcmp(f.data, fo.data, kern_nbytes(&f));
	bad |= !(e_ref < 1e-15) || !(fabs(lhs - rhs) < 1e-12 * fmax(1, fabs(lhs))) || !(worst_add < 1e-12) || !same;
	printf("%-26s tubelet %d vs pixel-space timm %.2g, adjoint %.15g vs %.15g, add %.2g, in place %s: %s\n", name,
	       tt, e_ref, lhs, rhs, worst_add, same ? "same bits" : "DIFFERS", bad ? "FAIL" : "ok");
	KTensor *all[] = {&x, &out, &want, &r, &dx, &f, &fo, &acc};
	for (int i = 0; i < 8; i++)
		kern_free(c, all[i]);
	return bad;
}

static int check_args(KernCtx *c)
{
	const int64_t sh[] = {B, T * P, COLS};
	KTensor x, y;
	int bad = kern_alloc(c, &x, KDT_F32, 3, sh) | kern_alloc(c, &y, KDT_F32, 3, sh);
	KMixup box = {.cutmix = 1, .y0 = 2, .y1 = H + 1, .x0 = 0, .x1 = 3}, lam = {.lam = 1.5};
	bad |= kern_mixup_fwd(c, &y, &x, &box, H, W, PS) != -EINVAL;                          // box outside the frame
	bad |= kern_mixup_fwd(c, &y, &x, &lam, H, W, PS) != -EINVAL;                          // lam > 1
	bad |= kern_mixup_fwd(c, &y, &x, &(KMixup){.lam = 0.5}, H, 10, PS) != -EINVAL;        // W not a multiple
	bad |= kern_mixup_bwd(c, KG_ADD(&x), &x, &(KMixup){.lam = 0.5}, H, W, PS) != -EINVAL; // adding in place
	KTensor odd; // rows of a token and a half
	bad |= kern_alloc(c, &odd, KDT_F32, 3, (const int64_t[]){B, T * P, COLS * 3 / 2});
	bad |= kern_mixup_fwd(c, &odd, &odd, &(KMixup){.lam = 0.5}, H, W, PS) != -EINVAL;
	// the refusal names its function and check (the trainer's "step N failed" line carries it)
	const int named = strstr(kern_refusal(), "mixup: ") && strstr(kern_refusal(), "mixup_dims(");
	bad |= !named;
	printf("refusal: \"%s\"\n", kern_refusal());
	kern_free(c, &odd);
	kern_free(c, &x), kern_free(c, &y);
	printf("argument errors: %s\n", bad ? "FAIL" : "ok");
	return bad;
}

// drop path's per-row scale: exact products, KG_ADD, in place, the backward by finite differences
typedef struct {
	KernCtx *c;
	KTensor x, s, out, r;
} Rs;

static double rs_loss(void *a)
{
	Rs *q = a;
	return kern_row_scale(q->c, KG_SET(&q->out), &q->x, &q->s) ? NAN : kgc_dot(&q->out, &q->r);
}

static int check_row_scale(KernCtx *c)
{
	Rs q = {.c = c};
	const int64_t sh[] = {4, 3, 5};
	int bad = kern_alloc(c, &q.x, KDT_F64, 3, sh) | kern_alloc(c, &q.out, KDT_F64, 3, sh) |
		  kern_alloc(c, &q.r, KDT_F64, 3, sh) | kern_alloc(c, &q.s, KDT_F64, 1, (const int64_t[]){4});
	kgc_fill(&q.x, 51, 2), kgc_fill(&q.r, 52, 1);
	const double sc[4] = {0, 1 / 0.9, 1 / 0.9, 0};
	for (int b = 0; b < 4; b++)
		kgc_set(&q.s, b, sc[b]);
	bad |= kern_row_scale(c, KG_SET(&q.out), &q.x, &q.s) != 0;
	for (int i = 0; i < 60; i++)
		bad |= kgc_get(&q.out, i) != kgc_get(&q.x, i) * sc[i / 15];
	KTensor dx;
	bad |= kgc_alloc_like(c, &dx, &q.x, KDT_F64);
	bad |= kern_row_scale(c, KG_SET(&dx), &q.r, &q.s) != 0; // backward: dout·s
	bad |= kgc_check("row_scale dx", &q.x, &dx, rs_loss, &q, 1e-5, 1e-9, 1e-6) != 0;
	bad |= kern_row_scale(c, KG_ADD(&q.out), &q.x, &q.s) != 0; // the residual add, fused
	for (int i = 0; i < 60; i++)
		bad |= fabs(kgc_get(&q.out, i) - 2 * kgc_get(&q.x, i) * sc[i / 15]) > 1e-15;
	bad |= kern_row_scale(c, KG_SET(&q.x), &q.x, &q.s) != 0; // in place
	for (int i = 0; i < 60; i++)
		bad |= fabs(kgc_get(&q.out, i) - 2 * kgc_get(&q.x, i)) > 1e-15;
	bad |= kern_row_scale(c, KG_ADD(&q.x), &q.x, &q.s) != -EINVAL;
	bad |= kern_row_scale(c, KG_SET(&q.out), &q.x, &q.r) != -EINVAL; // scale (B) only
	printf("row_scale: products, KG_ADD, in place, errors %s\n", bad ? "FAIL" : "ok");
	kern_free(c, &q.x), kern_free(c, &q.out), kern_free(c, &q.r), kern_free(c, &q.s), kern_free(c, &dx);
	return bad;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	int bad = 0;
	for (tt = 1; tt <= 2; tt++) {
		bad |= check_mode(c, &(KMixup){.lam = 0.3}, "mixup lam 0.3");
		bad |= check_mode(c, &(KMixup){.lam = 1}, "mixup lam 1");
		bad |= check_mode(c, &(KMixup){.cutmix = 1, .y0 = 1, .y1 = 6, .x0 = 3, .x1 = 10},
				  "cutmix across patches");
		bad |= check_mode(c, &(KMixup){.cutmix = 1, .y0 = 0, .y1 = H, .x0 = 0, .x1 = W}, "cutmix whole frame");
		bad |= check_mode(c, &(KMixup){.cutmix = 1, .y0 = 4, .y1 = 4, .x0 = 2, .x1 = 9}, "cutmix empty box");
	}
	tt = 1;
	bad |= check_args(c);
	bad |= check_row_scale(c);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}
