// Checks the local symmetric InfoNCE loss: value against a direct computation, gradients for
// both feature sets and the log logit scale against central finite differences in f64.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_clip_loss

#include <math.h>
#include <stdio.h>

enum { B = 5, E = 4 };

typedef struct {
	KernCtx *c;
	KTensor img, txt, ls, loss, dimg, dtxt, dls, ws;
} Lo;

static double loss(void *a)
{
	Lo *s = a;
	// the op always accumulates gradients; these scratch ones are discarded
	if (kern_clip_loss(s->c, &s->loss, &s->dimg, &s->dtxt, &s->dls, &s->img, &s->txt, &s->ls, &s->ws))
		return NAN;
	return kgc_get(&s->loss, 0);
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	Lo s = {.c = c};
	const int64_t sf[] = {B, E}, s1[] = {1}, sw[] = {(int64_t)kern_clip_loss_ws_bytes(c, KDT_F64, B) / 8};
	if (kern_alloc(c, &s.img, KDT_F64, 2, sf) || kern_alloc(c, &s.txt, KDT_F64, 2, sf) ||
	    kern_alloc(c, &s.dimg, KDT_F64, 2, sf) || kern_alloc(c, &s.dtxt, KDT_F64, 2, sf) ||
	    kern_alloc(c, &s.ls, KDT_F64, 1, s1) || kern_alloc(c, &s.dls, KDT_F64, 1, s1) ||
	    kern_alloc(c, &s.loss, KDT_F64, 1, s1) || kern_alloc(c, &s.ws, KDT_F64, 1, sw))
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
	bad |= kern_clip_loss(c, &s.loss, &gi, &gt, &gl, &s.img, &s.txt, &s.ls, &s.ws) != 0;
	bad |= kgc_check("clip_loss d/dimg", &s.img, &gi, loss, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("clip_loss d/dtxt", &s.txt, &gt, loss, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("clip_loss d/dlogit_scale", &s.ls, &gl, loss, &s, 1e-5, 1e-9, 1e-6);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL clip loss" : "PASS clip loss value and gradients");
	return bad ? 1 : 0;
}
