// Checks the embedding ops: patch rearrangement (against direct indexing, and its scatter
// backward), class token + spatial + temporal position embedding, token embedding, argmax
// and row pooling — backward of each against central finite differences in f64.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_patchify_*, kern_vis_embed_*, kern_tok_embed_*, kern_pool_*

#include <math.h>
#include <stdio.h>

enum { B = 2, T = 3, H = 4, W = 6, C = 3, PS = 2, P = 6, Dm = 5, L = 7, V = 11 };

typedef struct {
	KernCtx *c;
	KTensor img, patches, rp;            // patchify
	KTensor x, cls, pos, tpos, vout, rv; // vis_embed
	KTensor ids, wte, tp, tout, rt;      // tok_embed
	KTensor px, ppos, pout, rpool;       // pool
} Em;

static double loss_patch(void *a)
{
	Em *s = a;
	return kern_patchify_fwd(s->c, &s->patches, &s->img, PS) ? NAN : kgc_dot(&s->patches, &s->rp);
}

static double loss_vis(void *a)
{
	Em *s = a;
	return kern_vis_embed_fwd(s->c, &s->vout, &s->x, &s->cls, &s->pos, &s->tpos) ? NAN : kgc_dot(&s->vout, &s->rv);
}

static double loss_tok(void *a)
{
	Em *s = a;
	return kern_tok_embed_fwd(s->c, &s->tout, &s->ids, &s->wte, &s->tp) ? NAN : kgc_dot(&s->tout, &s->rt);
}

static double loss_pool(void *a)
{
	Em *s = a;
	return kern_pool_fwd(s->c, &s->pout, &s->px, &s->ppos) ? NAN : kgc_dot(&s->pout, &s->rpool);
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
	Em s = {.c = c};
	const KDtype d = KDT_F64;
	ALLOC(&s.img, d, B, T, H, W, C);
	ALLOC(&s.patches, d, B, T * P, C * PS * PS);
	ALLOC(&s.rp, d, B, T * P, C * PS * PS);
	ALLOC(&s.x, d, B, T * P, Dm);
	ALLOC(&s.cls, d, Dm);
	ALLOC(&s.pos, d, 1 + P, Dm);
	ALLOC(&s.tpos, d, T, Dm);
	ALLOC(&s.vout, d, B, 1 + T * P, Dm);
	ALLOC(&s.rv, d, B, 1 + T * P, Dm);
	ALLOC(&s.ids, KDT_I32, B, L);
	ALLOC(&s.wte, d, V, Dm);
	ALLOC(&s.tp, d, L + 2, Dm);
	ALLOC(&s.tout, d, B, L, Dm);
	ALLOC(&s.rt, d, B, L, Dm);
	ALLOC(&s.px, d, B, L, Dm);
	ALLOC(&s.ppos, KDT_I32, B);
	ALLOC(&s.pout, d, B, Dm);
	ALLOC(&s.rpool, d, B, Dm);
	kgc_fill(&s.img, 31, 1);
	kgc_fill(&s.rp, 32, 1);
	kgc_fill(&s.x, 33, 1);
	kgc_fill(&s.cls, 34, 1);
	kgc_fill(&s.pos, 35, 1);
	kgc_fill(&s.tpos, 36, 1);
	kgc_fill(&s.rv, 37, 1);
	kgc_fill(&s.wte, 38, 1);
	kgc_fill(&s.tp, 39, 1);
	kgc_fill(&s.rt, 40, 1);
	kgc_fill(&s.px, 41, 1);
	kgc_fill(&s.rpool, 42, 1);
	// ids with repeats (the embedding gradient must add them up); the max id marks the end token
	const int ids[B * L] = {1, 4, 4, 9, 0, 0, 0, 2, 3, 3, 3, 7, 10, 5};
	for (int i = 0; i < B * L; i++)
		kgc_set(&s.ids, i, ids[i]);
	int bad = 0;

	// patchify forward: patch q of frame (b,t), element (ch, i, j)
	loss_patch(&s);
	int b = 1, t = 2, q = 4, ch = 2, i = 1, j = 0, py = q / (W / PS), px = q % (W / PS);
	double want = kgc_get(&s.img, ((((int64_t)b * T + t) * H + py * PS + i) * W + px * PS + j) * C + ch);
	double got = kgc_get(&s.patches, (((int64_t)b * T + t) * P + q) * C * PS * PS + (ch * PS + i) * PS + j);
	if (want != got) {
		printf("FAIL patchify forward %g vs %g\n", got, want);
		bad = 1;
	}
	KTensor dimg, dx, dcls, dpos, dtpos, dwte, dtp, dpx;
	kgc_alloc_like(c, &dimg, &s.img, d);
	kgc_alloc_like(c, &dx, &s.x, d);
	kgc_alloc_like(c, &dcls, &s.cls, d);
	kgc_alloc_like(c, &dpos, &s.pos, d);
	kgc_alloc_like(c, &dtpos, &s.tpos, d);
	kgc_alloc_like(c, &dwte, &s.wte, d);
	kgc_alloc_like(c, &dtp, &s.tp, d);
	kgc_alloc_like(c, &dpx, &s.px, d);
	bad |= kern_patchify_bwd(c, KG_SET(&dimg), &s.rp, PS) != 0;
	bad |= kgc_check("patchify d/dimg", &s.img, &dimg, loss_patch, &s, 1e-5, 1e-9, 1e-6);
	bad |= kern_vis_embed_bwd(c, KG_SET(&dx), KG_SET(&dcls), KG_SET(&dpos), KG_SET(&dtpos), &s.rv) != 0;
	bad |= kgc_check("vis_embed d/dx", &s.x, &dx, loss_vis, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("vis_embed d/dcls", &s.cls, &dcls, loss_vis, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("vis_embed d/dpos", &s.pos, &dpos, loss_vis, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("vis_embed d/dtpos", &s.tpos, &dtpos, loss_vis, &s, 1e-5, 1e-9, 1e-6);
	bad |= kern_tok_embed_bwd(c, KG_SET(&dwte), KG_SET(&dtp), &s.rt, &s.ids) != 0;
	bad |= kgc_check("tok_embed d/dwte", &s.wte, &dwte, loss_tok, &s, 1e-5, 1e-9, 1e-6);
	bad |= kgc_check("tok_embed d/dpos", &s.tp, &dtp, loss_tok, &s, 1e-5, 1e-9, 1e-6);

	bad |= kern_argmax_rows(c, &s.ppos, &s.ids) != 0;
	if (kgc_get(&s.ppos, 0) != 3 || kgc_get(&s.ppos, 1) != 5) {
		printf("FAIL argmax rows %g %g (want 3 5)\n", kgc_get(&s.ppos, 0), kgc_get(&s.ppos, 1));
		bad = 1;
	}
	loss_pool(&s);
	if (kgc_get(&s.pout, Dm + 2) != kgc_get(&s.px, (1 * L + 5) * Dm + 2)) {
		printf("FAIL pool forward\n");
		bad = 1;
	}
	bad |= kern_pool_bwd(c, KG_SET(&dpx), &s.rpool, &s.ppos) != 0;
	bad |= kgc_check("pool d/dx", &s.px, &dpx, loss_pool, &s, 1e-5, 1e-9, 1e-6);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL embedding ops" : "PASS patchify, vis_embed, tok_embed, argmax, pool");
	return bad ? 1 : 0;
}
