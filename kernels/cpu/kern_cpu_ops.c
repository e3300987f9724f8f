// The CPU backend's model ops: each op body (kern_cpu_*.inc) is built here twice, over float and
// double; each entry stages its bf16 arguments (kern_cpu_stage.c) and runs the body of its type.
#include "kern_cpu.h" // defines: KOMP, KcStage, kst_*, kcpu_threads, kcpu_gemm_f32, kcpu_gemm_f64, kcpu_*

#include <errno.h>
#include <math.h>
#include <string.h>

// The fp32 bodies: the reference every GPU kernel is checked against and the compute path of CPU
// training. Each .inc writes its bodies once over `real`; KS() names each instantiation.
#define real float
#define KS(name) name##_f32
#define KGEMM kcpu_gemm_f32
#define RSQRT sqrtf
#define REXP expf
#define RLOG logf
#define RERF erff
#define RTANH tanhf
#include "kern_cpu_dense.inc"
#include "kern_cpu_embed.inc"
#include "kern_cpu_attn.inc"
#undef real
#undef KS
#undef KGEMM
#undef RSQRT
#undef REXP
#undef RLOG
#undef RERF
#undef RTANH

// The fp64 bodies: the same in double precision, so tests can check every backward pass against
// central finite differences without fp32 noise.
#define real double
#define KS(name) name##_f64
#define KGEMM kcpu_gemm_f64
#define RSQRT sqrt
#define REXP exp
#define RLOG log
#define RERF erf
#define RTANH tanh
#include "kern_cpu_dense.inc"
#include "kern_cpu_embed.inc"
#include "kern_cpu_attn.inc"
#undef real
#undef KS
#undef KGEMM
#undef RSQRT
#undef REXP
#undef RLOG
#undef RERF
#undef RTANH

// the body of op in the staged compute type
#define RAW(s, op) ((s)->f64 ? op##_f64 : op##_f32)
// runs the body only when staging worked
#define RUN(s, call)                                                                                                   \
	do {                                                                                                           \
		if (!(s)->err)                                                                                         \
			call;                                                                                          \
	} while (0)

size_t kcpu_linear_ws_bytes(KernCtx *c)
{
	return 0;
}

int kcpu_linear(KernCtx *c, const KLinear *a, int64_t N, int IC, int OC)
{
	KcStage s;
	kst_begin(&s, c, a->in->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *in = kst_in(&s, a->in), *w = kst_in(&s, a->w), *b = kst_in(&s, a->bias);
	const void *res = kst_in(&s, a->residual);
	void *out = kst_out(&s, a->out, 0), *pre = kst_out(&s, a->pre, 0);
	RUN(&s, RAW(&s, linear_fwd)(c, out, pre, in, w, a->trans_w, b, res, a->act, N, IC, OC));
	return kst_end(&s);
}

int kcpu_linear_bwd(KernCtx *c, const KLinearBwd *a, int64_t N, int IC, int OC)
{
	KcStage s;
	kst_begin(&s, c, a->in->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *dout = kst_in(&s, a->dout), *in = kst_in(&s, a->in), *w = kst_in(&s, a->w);
	const void *in_pre = kst_in(&s, a->in_pre);
	void *din = kst_out(&s, a->din.t, a->din.acc), *dw = kst_out(&s, a->dw.t, a->dw.acc);
	void *db = kst_out(&s, a->dbias.t, a->dbias.acc), *dinb = kst_out(&s, a->din_bias.t, a->din_bias.acc);
	RUN(&s, RAW(&s, linear_bwd)(c, din, a->din.acc, dw, a->dw.acc, db, a->dbias.acc, dinb, a->din_bias.acc, dout,
				    in, w, a->trans_w, in_pre, a->in_act, N, IC, OC));
	return kst_end(&s);
}

int kcpu_layernorm_fwd(KernCtx *c, KTensor *out, KTensor *mean, KTensor *rstd, const KTensor *in, const KTensor *w,
		       const KTensor *b, int64_t N, int C)
{
	KcStage s;
	kst_begin(&s, c, in->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *x = kst_in(&s, in), *wp = kst_in(&s, w), *bp = kst_in(&s, b);
	void *o = kst_out(&s, out, 0);
	RUN(&s, RAW(&s, layernorm_fwd)(c, o, mean->data, rstd->data, x, wp, bp, N, C));
	return kst_end(&s);
}

int kcpu_layernorm_bwd(KernCtx *c, KGrad din, KGrad dw, KGrad db, const KTensor *dout, const KTensor *in,
		       const KTensor *w, const KTensor *mean, const KTensor *rstd, int64_t N, int C)
{
	KcStage s;
	kst_begin(&s, c, in->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *dy = kst_in(&s, dout), *x = kst_in(&s, in), *wp = kst_in(&s, w);
	void *dx = kst_out(&s, din.t, din.acc), *dwp = kst_out(&s, dw.t, dw.acc), *dbp = kst_out(&s, db.t, db.acc);
	RUN(&s,
	    RAW(&s, layernorm_bwd)(c, dx, din.acc, dwp, dw.acc, dbp, db.acc, dy, x, wp, mean->data, rstd->data, N, C));
	return kst_end(&s);
}

int kcpu_add(KernCtx *c, KTensor *out, const KTensor *a, const KTensor *b, int64_t n)
{
	KcStage s;
	kst_begin(&s, c, a->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *pa = kst_in(&s, a), *pb = kst_in(&s, b);
	void *o = kst_out(&s, out, 0);
	RUN(&s, RAW(&s, add)(c, o, pa, pb, n));
	return kst_end(&s);
}

int kcpu_patchify(KernCtx *c, KTensor *patches, KGrad dimg, const KTensor *img, int patch)
{
	const KTensor *shape = img ? img : dimg.t; // (B, T, H, W, C)
	KcStage s;
	kst_begin(&s, c, shape->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	int B = (int)shape->shape[0], T = (int)shape->shape[1], H = (int)shape->shape[2], W = (int)shape->shape[3];
	int C = (int)shape->shape[4];
	if (img) {
		void *pim = (void *)kst_in(&s, img), *pp = kst_out(&s, patches, 0);
		RUN(&s, RAW(&s, patchify)(c, pp, pim, 0, B, T, H, W, C, patch, 0));
	} else {
		void *pp = (void *)kst_in(&s, patches), *pim = kst_out(&s, dimg.t, dimg.acc);
		RUN(&s, RAW(&s, patchify)(c, pp, pim, dimg.acc, B, T, H, W, C, patch, 1));
	}
	return kst_end(&s);
}

int kcpu_vis_embed_fwd(KernCtx *c, KTensor *out, const KTensor *x, const KTensor *cls, const KTensor *pos,
		       const KTensor *tpos, int B, int T, int P, int D)
{
	KcStage s;
	kst_begin(&s, c, x->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *px = kst_in(&s, x), *pc = kst_in(&s, cls), *pp = kst_in(&s, pos), *pt = kst_in(&s, tpos);
	void *o = kst_out(&s, out, 0);
	RUN(&s, RAW(&s, vis_embed_fwd)(c, o, px, pc, pp, pt, B, T, P, D));
	return kst_end(&s);
}

int kcpu_vis_embed_bwd(KernCtx *c, KGrad dx, KGrad dcls, KGrad dpos, KGrad dtpos, const KTensor *dout, int B, int T,
		       int P, int D)
{
	KcStage s;
	kst_begin(&s, c, dout->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *dy = kst_in(&s, dout);
	void *a = kst_out(&s, dx.t, dx.acc), *b = kst_out(&s, dcls.t, dcls.acc), *p = kst_out(&s, dpos.t, dpos.acc);
	void *t = kst_out(&s, dtpos.t, dtpos.acc);
	RUN(&s, RAW(&s, vis_embed_bwd)(c, a, dx.acc, b, dcls.acc, p, dpos.acc, t, dtpos.acc, dy, B, T, P, D));
	return kst_end(&s);
}

// the first id outside [0, V), or -1
static int64_t bad_id(const int32_t *ids, int64_t n, int64_t V)
{
	for (int64_t i = 0; i < n; i++)
		if (ids[i] < 0 || ids[i] >= V)
			return i;
	return -1;
}

int kcpu_tok_embed_fwd(KernCtx *c, KTensor *out, const KTensor *ids, const KTensor *wte, const KTensor *pos)
{
	const int32_t *id = ids->data;
	int64_t bad = bad_id(id, kern_numel(ids), wte->shape[0]);
	if (bad >= 0) {
		kern_latch(c, -ERANGE, "tok_embed", "token id %d at [%lld] is outside the vocabulary [0, %lld)",
			   id[bad], (long long)bad, (long long)wte->shape[0]);
		return 0;
	}
	KcStage s;
	kst_begin(&s, c, wte->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *pw = kst_in(&s, wte), *pp = kst_in(&s, pos);
	void *o = kst_out(&s, out, 0);
	RUN(&s, RAW(&s, tok_embed_fwd)(c, o, id, pw, pp, (int)ids->shape[0], (int)ids->shape[1], (int)wte->shape[1]));
	return kst_end(&s);
}

int kcpu_tok_embed_bwd(KernCtx *c, KGrad dwte, KGrad dpos, const KTensor *dout, const KTensor *ids)
{
	const int32_t *id = ids->data;
	int64_t V = dwte.t->shape[0], bad = bad_id(id, kern_numel(ids), V);
	if (bad >= 0) {
		kern_latch(c, -ERANGE, "tok_embed_bwd", "token id %d at [%lld] is outside the vocabulary [0, %lld)",
			   id[bad], (long long)bad, (long long)V);
		return 0;
	}
	KcStage s;
	kst_begin(&s, c, dwte.t->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *dy = kst_in(&s, dout);
	void *pw = kst_out(&s, dwte.t, dwte.acc), *pp = kst_out(&s, dpos.t, dpos.acc);
	RUN(&s, RAW(&s, tok_embed_bwd)(c, pw, dwte.acc, pp, dpos.acc, dy, id, (int)ids->shape[0], (int)ids->shape[1],
				       (int)dwte.t->shape[1], V, dpos.t->shape[0]));
	return kst_end(&s);
}

int kcpu_argmax_rows(KernCtx *c, KTensor *pos, const KTensor *ids)
{
	const int32_t *id = ids->data;
	int32_t *out = pos->data;
	int64_t B = ids->shape[0], L = ids->shape[1];
	for (int64_t b = 0; b < B; b++) {
		int64_t best = 0;
		for (int64_t l = 1; l < L; l++)
			if (id[b * L + l] > id[b * L + best])
				best = l;
		out[b] = (int32_t)best;
	}
	return 0;
}

// -1 when every pos is inside [0, L), else the first bad row (latched under op's name)
static int pool_pos_bad(KernCtx *c, const KTensor *pos, int64_t L, const char *op)
{
	const int32_t *p = pos->data;
	for (int64_t b = 0; b < kern_numel(pos); b++)
		if (p[b] < 0 || p[b] >= L) {
			kern_latch(c, -ERANGE, op, "row %lld pools position %d outside [0, %lld)", (long long)b, p[b],
				   (long long)L);
			return 1;
		}
	return 0;
}

int kcpu_pool_fwd(KernCtx *c, KTensor *out, const KTensor *x, const KTensor *pos)
{
	if (pool_pos_bad(c, pos, x->shape[1], "pool"))
		return 0;
	KcStage s;
	kst_begin(&s, c, x->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *px = kst_in(&s, x);
	void *o = kst_out(&s, out, 0);
	RUN(&s, RAW(&s, pool_fwd)(c, o, px, pos->data, (int)x->shape[0], (int)x->shape[1], (int)x->shape[2]));
	return kst_end(&s);
}

int kcpu_pool_bwd(KernCtx *c, KGrad dx, const KTensor *dout, const KTensor *pos)
{
	const KTensor *x = dx.t;
	if (pool_pos_bad(c, pos, x->shape[1], "pool_bwd"))
		return 0;
	KcStage s;
	kst_begin(&s, c, x->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *dy = kst_in(&s, dout);
	void *pd = kst_out(&s, dx.t, dx.acc);
	RUN(&s, RAW(&s, pool_bwd)(c, pd, dx.acc, dy, pos->data, (int)x->shape[0], (int)x->shape[1], (int)x->shape[2]));
	return kst_end(&s);
}

int kcpu_l2norm_fwd(KernCtx *c, KTensor *out, KTensor *norm, const KTensor *in, int64_t N, int C)
{
	KcStage s;
	kst_begin(&s, c, in->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *x = kst_in(&s, in);
	void *o = kst_out(&s, out, 0);
	RUN(&s, RAW(&s, l2norm_fwd)(c, o, norm->data, x, N, C));
	return kst_end(&s);
}

int kcpu_l2norm_bwd(KernCtx *c, KGrad din, const KTensor *dout, const KTensor *out, const KTensor *norm, int64_t N,
		    int C)
{
	KcStage s;
	kst_begin(&s, c, out->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *dy = kst_in(&s, dout), *y = kst_in(&s, out);
	void *dx = kst_out(&s, din.t, din.acc);
	RUN(&s, RAW(&s, l2norm_bwd)(c, dx, din.acc, dy, y, norm->data, N, C));
	return kst_end(&s);
}

size_t kcpu_attention_ws_bytes(KernCtx *c, KDtype dt, int B, int T, int H, int hd)
{
	return (dt == KDT_F64 ? attention_ws_bytes_f64 : attention_ws_bytes_f32)(c, B, T, H, hd);
}

int kcpu_attention_fwd(KernCtx *c, KTensor *out, KTensor *lse, const KTensor *qkv, int B, int T, int H, int hd,
		       int causal)
{
	KcStage s;
	kst_begin(&s, c, qkv->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *q = kst_in(&s, qkv);
	void *o = kst_out(&s, out, 0);
	RUN(&s, RAW(&s, attention_fwd)(c, o, lse->data, q, B, T, H, hd, causal, c->ws));
	return kst_end(&s);
}

int kcpu_attention_bwd(KernCtx *c, KGrad dqkv, const KTensor *dout, const KTensor *qkv, const KTensor *out,
		       const KTensor *lse, int B, int T, int H, int hd, int causal)
{
	KcStage s;
	kst_begin(&s, c, qkv->dtype == KDT_F64 ? KDT_F64 : KDT_F32);
	const void *dy = kst_in(&s, dout), *q = kst_in(&s, qkv), *o = kst_in(&s, out);
	void *dq = kst_out(&s, dqkv.t, dqkv.acc);
	RUN(&s, RAW(&s, attention_bwd)(c, dq, dqkv.acc, dy, q, o, lse->data, B, T, H, hd, causal, c->ws));
	return kst_end(&s);
}
