// Checks the InfoNCE op on a one-rank batch (E = e, the local symmetric InfoNCE): value against a
// direct computation, gradients for both feature sets and log s against finite differences in f64.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_infonce

#include <math.h>
#include <stdio.h>

enum { B = 5, E = 4 };

typedef struct {
	KernCtx *c;
	KTensor img, txt, ls, loss, dimg, dtxt, dls;
} Lo;

static double loss(void *a)
{
	Lo *s = a;
	KContrastBatch b = {.e1 = &s->img, .e2 = &s->txt, .E1 = &s->img, .E2 = &s->txt, .log_s = &s->ls};
	if (kern_infonce(s->c, &b, &s->loss, KG_SET(&s->dimg), KG_SET(&s->dtxt), KG_SET(&s->dls)))
		return NAN;
	return kgc_get(&s->loss, 0);
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	Lo s = {.c = c};
	const int64_t sf[] = {B, E}, s1[] = {1};
	if (kern_ctx_reserve_workspace(c, kern_loss_ws_bytes(c, B, B, E)) || kern_alloc(c, &s.img, KDT_F64, 2, sf) ||
	    kern_alloc(c, &s.txt, KDT_F64, 2, sf) || kern_alloc(c, &s.dimg, KDT_F64, 2, sf) ||
	    kern_alloc(c, &s.dtxt, KDT_F64, 2, sf) || kern_alloc(c, &s.ls, KDT_F64, 1, s1) ||
	    kern_alloc(c, &s.dls, KDT_F64, 1, s1) || kern_alloc(c, &s.loss, KDT_F64, 1, s1))
		return 1;
	kgc_fill(&s.img, 71, 1);
	kgc_fill(&s.txt, 72, 1);
	kgc_set(&s.ls, 0, log(3.0));
	int bad = 0;
	double L = loss(&s);
	// direct: logits = 3 img txt^T, mean of row and column cross-entropies
	double lg[B][B], want = 0;
	for (int i = 0; i < B; i++)
		for (int j = 0; j < B; j++) {
			lg[i][j] = 0;
			for (int k = 0; k < E; k++)
				lg[i][j] += 3 * kgc_get(&s.img, i * E + k) * kgc_get(&s.txt, j * E + k);
		}
	for (int i = 0; i < B; i++) {
		double sr = 0, sc = 0;
		for (int j = 0; j < B; j++) {
			sr += exp(lg[i][j]);
			sc += exp(lg[j][i]);
		}
		want += (log(sr) - lg[i][i] + log(sc) - lg[i][i]) / (2.0 * B);
	}
	if (fabs(L - want) > 1e-12) {
		printf("FAIL loss %.15g want %.15g\n", L, want);
		bad = 1;
	}
	KTensor gi, gt, gl;
	kgc_alloc_like(c, &gi, &s.img, KDT_F64);
	kgc_alloc_like(c, &gt, &s.txt, KDT_F64);
	kgc_alloc_like(c, &gl, &s.ls, KDT_F64);
	KContrastBatch b = {.e1 = &s.img, .e2 = &s.txt, .E1 = &s.img, .E2 = &s.txt, .log_s = &s.ls};
	bad |= kern_infonce(c, &b, &s.loss, KG_SET(&gi), KG_SET(&gt), KG_SET(&gl)) != 0;
	bad |= kgc_check("infonce d/dimg", &s.img, &gi, loss, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("infonce d/dtxt", &s.txt, &gt, loss, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("infonce d/dlog_s", &s.ls, &gl, loss, &s, 1e-5, 1e-9, 1e-6);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL local InfoNCE" : "PASS local InfoNCE value and gradients");
	return bad ? 1 : 0;
}
