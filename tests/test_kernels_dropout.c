// Checks dropout (kern_dropout) and the joint gradient norm (kern_grad_norm_join) on the CPU backend:
// the mask against the contract's Philox draw written out here, each row's mask a function of its
// stream position alone, the kept share, rate 0 and 1, the backward by finite differences and the
// adjoint identity (f64), KG_ADD, in place, bf16 storage, argument errors; the join against one
// kern_grad_norm over the concatenated buffer and the clip rule.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_dropout, KDropout, kern_grad_norm_join, kern_grad_norm, kern_opt_plan_*
#include "stream.h"         // defines: rng_philox4x32

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { B = 4, L = 3, D = 50, INNER = L * D };
#define NEL ((int64_t)B * INNER)
static const int64_t shape[3] = {B, L, D};
static const int64_t g_of[B] = {17, 5000000000LL, 3, 999}; // stream positions: one above 2^32
static const uint64_t seed = 0x1234567890abcdefull;

// the contract written out: word 0 of Philox4x32-10 at {g lo, g hi, 8, i}, key seed; kept below keep
static int kept(uint64_t g, uint32_t i, double keep)
{
	const uint32_t ctr[4] = {(uint32_t)g, (uint32_t)(g >> 32), 8u, i},
		       key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	uint32_t w[4];
	rng_philox4x32(ctr, key, w);
	return (double)(w[0] >> 8) / 16777216.0 < keep;
}

typedef struct {
	KernCtx *c;
	KTensor x, out, r, pos;
	KDropout p;
} Q;

static double loss(void *a)
{
	Q *q = a;
	return kern_dropout(q->c, KG_SET(&q->out), &q->x, &q->pos, &q->p) ? NAN : kgc_dot(&q->out, &q->r);
}

static int alloc_pos(KernCtx *c, KTensor *pos, const int64_t *g, int n)
{
	int64_t nn = n;
	return kern_alloc(c, pos, KDT_I64, 1, &nn) || kern_upload(c, pos, g, sizeof(int64_t) * (size_t)n);
}

// forward against the written-out draw (f64: exact products), backward by FD and the adjoint identity
static int check_f64(KernCtx *c, double rate)
{
	Q q = {.c = c, .p = {.rate = rate, .seed = seed}};
	KTensor dx, acc;
	int bad = kern_alloc(c, &q.x, KDT_F64, 3, shape) | kern_alloc(c, &q.out, KDT_F64, 3, shape) |
		  kern_alloc(c, &q.r, KDT_F64, 3, shape) | kern_alloc(c, &dx, KDT_F64, 3, shape) |
		  kern_alloc(c, &acc, KDT_F64, 3, shape) | alloc_pos(c, &q.pos, g_of, B);
	kgc_fill(&q.x, 61, 2), kgc_fill(&q.r, 62, 1), kgc_fill(&acc, 63, 1);
	bad |= kern_dropout(c, KG_SET(&q.out), &q.x, &q.pos, &q.p) != 0;
	const double keep = 1 - rate;
	int wrong = 0, nkept = 0;
	for (int64_t k = 0; k < NEL; k++) {
		const int in = rate == 0 || kept((uint64_t)g_of[k / INNER], (uint32_t)(k % INNER), keep);
		const double want = in ? (rate == 0 ? kgc_get(&q.x, k) : kgc_get(&q.x, k) * (1 / keep)) : 0;
		wrong += kgc_get(&q.out, k) != want;
		nkept += in;
	}
	bad |= wrong != 0;
	// backward: the same op on dout; FD of <dropout(x), r> and the adjoint <D x, r> = <x, D r>
	bad |= kern_dropout(c, KG_SET(&dx), &q.r, &q.pos, &q.p) != 0;
	const double lhs = kgc_dot(&q.out, &q.r), rhs = kgc_dot(&q.x, &dx);
	bad |= !(fabs(lhs - rhs) <= 1e-12 * fmax(1, fabs(lhs)));
	char name[48];
	snprintf(name, sizeof name, "dropout %.2f dx", rate);
	bad |= kgc_check(name, &q.x, &dx, loss, &q, 1e-5, 1e-9, 1e-6) != 0;
	// KG_ADD onto known values
	double old[16], worst = 0;
	for (int i = 0; i < 16; i++)
		old[i] = kgc_get(&acc, i * (NEL / 16));
	bad |= kern_dropout(c, KG_ADD(&acc), &q.r, &q.pos, &q.p) != 0;
	for (int i = 0; i < 16; i++)
		worst = fmax(worst, fabs(kgc_get(&acc, i * (NEL / 16)) - old[i] - kgc_get(&dx, i * (NEL / 16))));
	bad |= !(worst < 1e-15);
	printf("dropout %.2f (f64): %d of %lld kept, %d differ from the written-out draw, adjoint %.15g vs %.15g, add "
	       "%.2g: %s\n",
	       rate, nkept, (long long)NEL, wrong, lhs, rhs, worst, bad ? "FAIL" : "ok");
	KTensor *all[] = {&q.x, &q.out, &q.r, &dx, &acc, &q.pos};
	for (int i = 0; i < 6; i++)
		kern_free(c, all[i]);
	return bad;
}

// a row's mask follows its stream position, not its place in the batch; in place equals out of
// place; bf16 storage; rate 1 zeroes; rate 0 copies bits (also bf16 into f32)
static int check_rows(KernCtx *c)
{
	const int64_t rev[B] = {g_of[3], g_of[2], g_of[1], g_of[0]};
	KTensor x, xr, out, outr, pos, posr, bx, bo, fo, ip;
	int bad = kern_alloc(c, &x, KDT_F32, 3, shape) | kern_alloc(c, &xr, KDT_F32, 3, shape) |
		  kern_alloc(c, &out, KDT_F32, 3, shape) | kern_alloc(c, &outr, KDT_F32, 3, shape) |
		  kern_alloc(c, &bx, KDT_BF16, 3, shape) | kern_alloc(c, &bo, KDT_BF16, 3, shape) |
		  kern_alloc(c, &fo, KDT_F32, 3, shape) | kern_alloc(c, &ip, KDT_F32, 3, shape) |
		  alloc_pos(c, &pos, g_of, B) | alloc_pos(c, &posr, rev, B);
	kgc_fill(&x, 71, 3);
	for (int b = 0; b < B; b++) // xr: the rows of x in reverse order, with their positions
		memcpy((float *)xr.data + (size_t)b * INNER, (float *)x.data + (size_t)(B - 1 - b) * INNER,
		       sizeof(float) * INNER);
	const KDropout p = {.rate = 0.3, .seed = seed};
	bad |= kern_dropout(c, KG_SET(&out), &x, &pos, &p) || kern_dropout(c, KG_SET(&outr), &xr, &posr, &p);
	int moved = 1;
	for (int b = 0; b < B; b++)
		moved &= !memcmp((float *)outr.data + (size_t)b * INNER,
				 (float *)out.data + (size_t)(B - 1 - b) * INNER, sizeof(float) * INNER);
	memcpy(ip.data, x.data, kern_nbytes(&x));
	bad |= kern_dropout(c, KG_SET(&ip), &ip, &pos, &p) != 0;
	const int inplace = !memcmp(ip.data, out.data, kern_nbytes(&x));
	// bf16: the f32 result rounded once
	bad |= kern_convert(c, &bx, &x) || kern_dropout(c, KG_SET(&bo), &bx, &pos, &p) ||
	       kern_dropout(c, KG_SET(&fo), &bx, &pos, &p);
	int bf = 1;
	for (int64_t k = 0; k < NEL; k++)
		bf &= ((uint16_t *)bo.data)[k] == kern_bf16_from_f32(((float *)fo.data)[k]);
	// rate 1: zero; rate 0: the input's bits, bf16 into f32 exactly
	bad |= kern_dropout(c, KG_SET(&out), &x, &pos, &(KDropout){.rate = 1, .seed = seed}) != 0;
	int zero = 1;
	for (int64_t k = 0; k < NEL; k++)
		zero &= ((float *)out.data)[k] == 0.0f;
	bad |= kern_dropout(c, KG_SET(&out), &x, &pos, &(KDropout){.rate = 0, .seed = seed}) ||
	       kern_dropout(c, KG_SET(&fo), &bx, &pos, &(KDropout){.rate = 0, .seed = seed});
	int copy = !memcmp(out.data, x.data, kern_nbytes(&x));
	for (int64_t k = 0; k < NEL; k++)
		copy &= ((float *)fo.data)[k] == kern_f32_from_bf16(((uint16_t *)bx.data)[k]);
	// another seed draws another mask
	bad |= kern_dropout(c, KG_SET(&outr), &x, &pos, &(KDropout){.rate = 0.3, .seed = seed + 1}) != 0;
	bad |= kern_dropout(c, KG_SET(&out), &x, &pos, &p) != 0;
	const int reseeded = memcmp(out.data, outr.data, kern_nbytes(&x)) != 0;
	bad |= !moved || !inplace || !bf || !zero || !copy || !reseeded;
	printf("dropout rows: mask moves with its position %s, in place %s, bf16 %s, rate 1 zero %s, rate 0 copy %s, "
	       "seed %s: %s\n",
	       moved ? "ok" : "NO", inplace ? "ok" : "NO", bf ? "ok" : "NO", zero ? "ok" : "NO", copy ? "ok" : "NO",
	       reseeded ? "ok" : "NO", bad ? "FAIL" : "ok");
	// argument errors
	int args = kern_dropout(c, KG_SET(&out), &x, &pos, &(KDropout){.rate = 1.5}) == -EINVAL &&
		   kern_dropout(c, KG_SET(&out), &x, &pos, &(KDropout){.rate = -0.1}) == -EINVAL &&
		   kern_dropout(c, KG_SET(&out), &x, &pos, NULL) == -EINVAL &&
		   kern_dropout(c, KG_ADD(&x), &x, &pos, &p) == -EINVAL && // adding in place
		   kern_dropout(c, KG_SET(&out), &x, &x, &p) == -EINVAL && // positions not I64
		   kern_dropout(c, KG_SET(&out), &x, NULL, &p) == -EINVAL;
	KTensor pos3;
	bad |= alloc_pos(c, &pos3, g_of, 3);
	args &= kern_dropout(c, KG_SET(&out), &x, &pos3, &p) == -EINVAL; // one position per row
	printf("dropout argument errors: %s\n", args ? "ok" : "FAIL");
	bad |= !args;
	KTensor *all[] = {&x, &xr, &out, &outr, &pos, &posr, &bx, &bo, &fo, &ip, &pos3};
	for (int i = 0; i < 11; i++)
		kern_free(c, all[i]);
	return bad;
}

// the kept share over many rows: within 5 binomial standard deviations of keep
static int check_share(KernCtx *c, double rate)
{
	enum { R = 512, C = 256 };
	int64_t sh[2] = {R, C}, g[R];
	for (int b = 0; b < R; b++)
		g[b] = 1000 + 7 * b;
	KTensor x, out, pos;
	int bad = kern_alloc(c, &x, KDT_F32, 2, sh) | kern_alloc(c, &out, KDT_F32, 2, sh) | alloc_pos(c, &pos, g, R);
	for (int64_t k = 0; k < (int64_t)R * C; k++)
		((float *)x.data)[k] = 1.0f;
	bad |= kern_dropout(c, KG_SET(&out), &x, &pos, &(KDropout){.rate = rate, .seed = 5}) != 0;
	const double keep = 1 - rate, n = (double)R * C;
	double nk = 0;
	int scale_ok = 1;
	for (int64_t k = 0; k < (int64_t)R * C; k++) {
		const float v = ((float *)out.data)[k];
		nk += v != 0;
		scale_ok &= v == 0 || v == (float)(1 / keep);
	}
	const double sd = sqrt(n * keep * (1 - keep));
	bad |= !scale_ok || !(fabs(nk - n * keep) <= 5 * sd);
	printf("dropout %.2f share: %.0f of %.0f kept (expected %.0f, sd %.1f), scale 1/keep %s: %s\n", rate, nk, n,
	       n * keep, sd, scale_ok ? "ok" : "NO", bad ? "FAIL" : "ok");
	kern_free(c, &x), kern_free(c, &out), kern_free(c, &pos);
	return bad;
}

// the join of two plans' norms equals one norm over both buffers; the clip rule; NaN stays NaN
static int check_join(KernCtx *c)
{
	const int64_t n1 = 5000, n2 = 300, n = n1 + n2;
	KTensor g, g1, g2, nc, nc2, ncall;
	int bad = kern_alloc(c, &g, KDT_F32, 1, &n) | kern_alloc(c, &nc, KDT_F32, 1, (const int64_t[]){2}) |
		  kern_alloc(c, &nc2, KDT_F32, 1, (const int64_t[]){2}) |
		  kern_alloc(c, &ncall, KDT_F32, 1, (const int64_t[]){2});
	kgc_fill(&g, 81, 0.01);
	bad |= kern_view(&g1, &g, 0, 1, &n1) | kern_view(&g2, &g, n1, 1, &n2);
	KOptSegment s1 = {.offset = 0, .length = n1}, s2 = {.offset = 0, .length = n2},
		    sa[2] = {s1, {.offset = n1, .length = n2}};
	KOptPlan *p1, *p2, *pa;
	bad |= kern_opt_plan_create(c, &p1, &s1, 1, n1) | kern_opt_plan_create(c, &p2, &s2, 1, n2) |
	       kern_opt_plan_create(c, &pa, sa, 2, n);
	float a[2], all[2], want[2];
	int ok = 1;
	const double clips[3] = {0, 0.05, 100};
	for (int k = 0; k < 3 && !bad; k++) {
		bad |= kern_grad_norm(c, p1, &nc, &g1, 0) | kern_grad_norm(c, p2, &nc2, &g2, 0) |
		       kern_grad_norm(c, pa, &ncall, &g, clips[k]) | kern_grad_norm_join(c, &nc, &nc2, clips[k]);
		bad |= kern_download(c, a, sizeof a, &nc) | kern_download(c, all, sizeof all, &ncall);
		const double rel = fabs(a[0] - all[0]) / all[0], frel = fabs(a[1] - all[1]) / all[1];
		ok &= rel < 1e-6 && frel < 1e-6;
		printf("grad_norm_join clip %g: %.9g (one norm over both: %.9g, rel %.2g), factor %.9g (%.9g)\n",
		       clips[k], a[0], all[0], rel, a[1], all[1]);
	}
	// the rule by hand: 3 and 4 make 5; clip 2.5 gives 2.5 / (5 + 1e-6); a NaN part gives NaN
	const float three[2] = {3, 1}, four[2] = {4, 1}, nan2[2] = {NAN, NAN};
	bad |= kern_upload(c, &nc, three, sizeof three) | kern_upload(c, &nc2, four, sizeof four) |
	       kern_grad_norm_join(c, &nc, &nc2, 2.5) | kern_download(c, a, sizeof a, &nc);
	want[0] = 5.0f, want[1] = (float)(2.5 / (5 + 1e-6));
	ok &= a[0] == want[0] && a[1] == want[1];
	bad |= kern_upload(c, &nc, three, sizeof three) | kern_upload(c, &nc2, nan2, sizeof nan2) |
	       kern_grad_norm_join(c, &nc, &nc2, 0) | kern_download(c, a, sizeof a, &nc);
	ok &= isnan(a[0]) && isnan(a[1]);
	ok &= kern_grad_norm_join(c, &nc, &nc, 0) == -EINVAL && kern_grad_norm_join(c, &nc, &nc2, -1) == -EINVAL &&
	      kern_grad_norm_join(c, &nc, &g1, 0) == -EINVAL;
	printf("grad_norm_join: by hand, NaN, argument errors: %s\n", ok && !bad ? "ok" : "FAIL");
	kern_opt_plan_destroy(p1), kern_opt_plan_destroy(p2), kern_opt_plan_destroy(pa);
	kern_free(c, &g), kern_free(c, &nc), kern_free(c, &nc2), kern_free(c, &ncall);
	return bad || !ok;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	int bad = 0;
	bad |= check_f64(c, 0.5);
	bad |= check_f64(c, 0.1);
	bad |= check_f64(c, 0);
	bad |= check_rows(c);
	bad |= check_share(c, 0.5);
	bad |= check_share(c, 0.1);
	bad |= check_join(c);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}
