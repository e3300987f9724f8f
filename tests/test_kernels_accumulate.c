// Checks the accumulate flag of every gradient output of every op: KG_SET writes the result
// whatever the output held (two different garbage fills give the same bits), and KG_ADD adds the
// same result to what the output held (f64, to 1e-12 relative).
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: the ops

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { MAXG = 4 };

// the inputs every case draws from, f64
typedef struct {
	KernCtx *c;
	KTensor x, w, y, pre, mean, rstd, img, patches, vout, ids, tout, pos, px, pout, n, qkv, ao, lse, e, E, ls, pk,
		pka;
	KTensor loss, w5, b4, b5, vx, p55, t25, wte, tp, dx; // shapes of the outputs below, scratch
} In;

typedef struct {
	const char *name;
	int n;                     // gradient outputs
	const KTensor *like[MAXG]; // their shapes
	int (*run)(In *s, KGrad *g);
} Case;

static int lin(In *s, KGrad *g)
{
	return kern_linear_bwd(
		s->c,
		&(KLinearBwd){
			.din = g[0], .dw = g[1], .dbias = g[2], .dout = &s->y, .in = &s->x, .w = &s->w, .trans_w = 1});
}

static int lin_epi(In *s, KGrad *g)
{
	// the epilogue's din is always written (scratch here); its bias gradient takes the flag
	return kern_linear_bwd(s->c, &(KLinearBwd){.din = KG_SET(&s->dx),
						   .din_bias = g[0],
						   .dout = &s->y,
						   .in = &s->x,
						   .w = &s->w,
						   .trans_w = 1,
						   .in_pre = &s->pre,
						   .in_act = KACT_GELU});
}

static int ln(In *s, KGrad *g)
{
	return kern_layernorm_fwd(s->c, &s->pre, &s->mean, &s->rstd, &s->x, &s->w5, &s->b5) ||
	       kern_layernorm_bwd(s->c, g[0], g[1], g[2], &s->pre, &s->x, &s->w5, &s->mean, &s->rstd);
}

static int patch(In *s, KGrad *g)
{
	return kern_patchify_bwd(s->c, g[0], &s->patches, 2);
}

static int vis(In *s, KGrad *g)
{
	return kern_vis_embed_bwd(s->c, g[0], g[1], g[2], g[3], &s->vout);
}

static int tok(In *s, KGrad *g)
{
	return kern_tok_embed_bwd(s->c, g[0], g[1], &s->tout, &s->ids);
}

static int pool(In *s, KGrad *g)
{
	return kern_pool_bwd(s->c, g[0], &s->pout, &s->pos);
}

static int l2(In *s, KGrad *g)
{
	return kern_l2norm_fwd(s->c, &s->pre, &s->n, &s->x) || kern_l2norm_bwd(s->c, g[0], &s->x, &s->pre, &s->n);
}

static int attn(In *s, KGrad *g)
{
	return kern_attention_fwd(s->c, &s->ao, &s->lse, &s->qkv, 2, 1) ||
	       kern_attention_bwd(s->c, g[0], &s->ao, &s->qkv, &s->ao, &s->lse, 2, 1);
}

static int nce(In *s, KGrad *g)
{
	KContrastBatch b = {.e1 = &s->e, .e2 = &s->e, .E1 = &s->E, .E2 = &s->E, .offset = 3, .log_s = &s->ls};
	return kern_infonce(s->c, &b, &s->loss, g[0], g[1], g[2]);
}

static int surrogate(In *s, KGrad *g)
{
	KContrastBatch b = {.e1 = &s->e, .e2 = &s->e, .E1 = &s->E, .E2 = &s->E, .offset = 3, .log_s = &s->ls};
	KFccoParams p = {.version = KFCCO_V0, .gamma = 1, .eps = 1e-14, .rho = 8};
	return kern_fcco_surrogate(s->c, &b, &s->pk, &s->pka, &p, &s->loss, g[0], g[1], g[2]);
}

#define A(t, ...)                                                                                                      \
	(rc |= kern_alloc(c, t, KDT_F64, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8), (int64_t[]){__VA_ARGS__}))

static int inputs(KernCtx *c, In *s)
{
	int rc = 0;
	s->c = c;
	A(&s->x, 6, 5), A(&s->w, 4, 5), A(&s->y, 6, 4), A(&s->pre, 6, 5), A(&s->mean, 6), A(&s->rstd, 6);
	A(&s->img, 2, 2, 4, 4, 3), A(&s->patches, 2, 8, 12), A(&s->vout, 2, 1 + 2 * 4, 5), A(&s->tout, 2, 3, 5);
	A(&s->px, 2, 3, 5), A(&s->pout, 2, 5), A(&s->n, 6), A(&s->qkv, 2, 7, 12), A(&s->ao, 2, 7, 4);
	A(&s->lse, 2, 2, 7), A(&s->e, 3, 4), A(&s->E, 6, 4), A(&s->ls, 1), A(&s->pk, 3, 2), A(&s->pka, 6, 2);
	A(&s->loss, 1), A(&s->w5, 5), A(&s->b4, 4), A(&s->b5, 5), A(&s->vx, 2, 8, 5), A(&s->p55, 5, 5),
		A(&s->t25, 2, 5);
	A(&s->wte, 9, 5), A(&s->tp, 4, 5), A(&s->dx, 6, 5);
	rc |= kern_alloc(c, &s->ids, KDT_I32, 2, (int64_t[]){2, 3}) |
	      kern_alloc(c, &s->pos, KDT_I32, 1, (int64_t[]){2});
	KTensor *fill[] = {&s->x,  &s->w,    &s->y,   &s->pre, &s->patches, &s->vout, &s->tout,
			   &s->px, &s->pout, &s->qkv, &s->e,   &s->E,       &s->w5,   &s->b5};
	for (size_t i = 0; i < sizeof fill / sizeof fill[0]; i++)
		kgc_fill(fill[i], 10 + i, 1);
	kgc_set(&s->ls, 0, 1.5);
	for (int i = 0; i < 6; i++)
		kgc_set(&s->ids, i, (i * 7) % 9);
	kgc_set(&s->pos, 0, 2), kgc_set(&s->pos, 1, 0);
	for (int i = 0; i < 12; i++)
		kgc_set(&s->pka, i, 0.5 + 0.1 * i);
	for (int i = 0; i < 6; i++)
		kgc_set(&s->pk, i, kgc_get(&s->pka, 6 + i));
	size_t ws = kern_attention_ws_bytes(c, KDT_F64, 2, 7, 2, 2) + kern_loss_ws_bytes(c, 3, 6, 4);
	return rc | kern_ctx_reserve_workspace(c, ws);
}

static int run_case(In *s, const Case *k)
{
	KernCtx *c = s->c;
	KTensor set1[MAXG], set2[MAXG], add[MAXG], base[MAXG];
	KGrad g1[MAXG] = {0}, g2[MAXG] = {0}, ga[MAXG] = {0};
	for (int i = 0; i < k->n; i++) {
		if (kgc_alloc_like(c, &set1[i], k->like[i], KDT_F64) ||
		    kgc_alloc_like(c, &set2[i], k->like[i], KDT_F64) ||
		    kgc_alloc_like(c, &add[i], k->like[i], KDT_F64) || kgc_alloc_like(c, &base[i], k->like[i], KDT_F64))
			return 1;
		kgc_fill(&set1[i], 100 + i, 7);
		kgc_fill(&set2[i], 200 + i, -3);
		kgc_fill(&base[i], 300 + i, 2);
		kern_copy(c, &add[i], &base[i]);
		g1[i] = KG_SET(&set1[i]), g2[i] = KG_SET(&set2[i]), ga[i] = KG_ADD(&add[i]);
	}
	int bad = k->run(s, g1) | k->run(s, g2) | k->run(s, ga) | kern_sync(c);
	for (int i = 0; i < k->n; i++) {
		int64_t n = kern_numel(k->like[i]);
		int same = memcmp(set1[i].data, set2[i].data, kern_nbytes(&set1[i])) == 0;
		double e = 0, mx = 1e-300;
		for (int64_t j = 0; j < n; j++) {
			double want = kgc_get(&base[i], j) + kgc_get(&set1[i], j);
			e = fmax(e, fabs(kgc_get(&add[i], j) - want));
			mx = fmax(mx, fabs(want));
		}
		int ok = same && e <= 1e-12 * mx;
		printf("%-4s %-18s output %d: KG_SET %s the old contents, KG_ADD - (old + set) %.2g\n",
		       ok ? "ok" : "FAIL", k->name, i, same ? "ignores" : "DEPENDS ON", e / mx);
		bad |= !ok;
		kern_free(c, &set1[i]), kern_free(c, &set2[i]), kern_free(c, &add[i]), kern_free(c, &base[i]);
	}
	return bad;
}

int main(void)
{
	KernCtx *c;
	In s;
	if (kern_ctx_create_cpu(&c, 2) || inputs(c, &s))
		return 1;
	const Case cases[] = {
		{"linear_bwd", 3, {&s.x, &s.w, &s.b4}, lin},
		{"linear_bwd epilog", 1, {&s.b5}, lin_epi},
		{"layernorm_bwd", 3, {&s.x, &s.b5, &s.b5}, ln},
		{"patchify_bwd", 1, {&s.img}, patch},
		{"vis_embed_bwd", 4, {&s.vx, &s.b5, &s.p55, &s.t25}, vis},
		{"tok_embed_bwd", 2, {&s.wte, &s.tp}, tok},
		{"pool_bwd", 1, {&s.px}, pool},
		{"l2norm_bwd", 1, {&s.x}, l2},
		{"attention_bwd", 1, {&s.qkv}, attn},
		{"infonce", 3, {&s.E, &s.E, &s.ls}, nce},
		{"fcco_surrogate", 3, {&s.e, &s.e, &s.ls}, surrogate},
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		bad |= run_case(&s, &cases[i]);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL accumulate flags" : "PASS every gradient output writes (KG_SET) or adds (KG_ADD)");
	return bad;
}
