// Checks that ops refuse bad arguments at once with the documented error instead of computing
// garbage: shapes (-EINVAL), the dtype class of each argument (-EINVAL), epilogue combinations
// the contract forbids, optimizer segment tables, and a workspace smaller than the op needs (-ENOSPC).
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: the ops

#include <errno.h>
#include <stdio.h>

static int expect(const char *what, int got, int want)
{
	printf("%-4s %-52s rc %d (want %d)\n", got == want ? "ok" : "FAIL", what, got, want);
	return got != want;
}

#define A(t, dt, ...)                                                                                                  \
	(rc |= kern_alloc(c, t, dt, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8), (int64_t[]){__VA_ARGS__}))

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	KTensor in, w, wbad, wi, out, b16, in64, dout, dpre, pre, x3, m16, r1, qkv, ao, lse, e, E, pk, tab, ids, ls;
	int rc = 0;
	A(&in, KDT_F32, 4, 6), A(&w, KDT_F32, 3, 6), A(&wbad, KDT_F32, 3, 5), A(&wi, KDT_I32, 3, 6);
	A(&out, KDT_F32, 4, 3), A(&b16, KDT_BF16, 3, 6), A(&in64, KDT_F64, 4, 6), A(&dout, KDT_F32, 4, 3);
	A(&dpre, KDT_F32, 4, 6), A(&pre, KDT_F32, 4, 6), A(&x3, KDT_F32, 4, 3), A(&m16, KDT_BF16, 4),
		A(&r1, KDT_F32, 4);
	A(&qkv, KDT_F32, 1, 40, 12), A(&ao, KDT_F32, 1, 40, 4), A(&lse, KDT_F32, 1, 1, 40);
	A(&e, KDT_F32, 2, 3), A(&E, KDT_F32, 4, 3), A(&pk, KDT_F32, 2, 3), A(&tab, KDT_F32, 9, 2), A(&ids, KDT_I64, 2);
	A(&ls, KDT_F32, 1);
	if (rc)
		return 1;
	int bad = 0;
	KLinear l = {.out = &out, .in = &in, .w = &w, .trans_w = 1};
	bad |= expect("linear with a good shape", kern_linear(c, &l), 0);
	l.w = &b16;
	bad |= expect("linear with a bf16 weight (dtype per argument)", kern_linear(c, &l), 0);
	l.w = &wbad;
	bad |= expect("linear with a mis-shaped weight", kern_linear(c, &l), -EINVAL);
	l.w = &wi;
	bad |= expect("linear with an i32 weight", kern_linear(c, &l), -EINVAL);
	l.w = &w;
	l.trans_w = 0;
	bad |= expect("linear with the weight's layout flag wrong", kern_linear(c, &l), -EINVAL);
	l = (KLinear){.out = &out, .in = &in64, .w = &w, .trans_w = 1};
	bad |= expect("f64 input with an f32 weight", kern_linear(c, &l), -EINVAL);
	l = (KLinear){.out = &out, .in = &in, .w = &w, .trans_w = 1, .act = KACT_GELU, .residual = &x3};
	bad |= expect("residual after an activation", kern_linear(c, &l), -EINVAL);
	l = (KLinear){.out = &out, .in = &in, .w = &w, .trans_w = 1, .act = (KAct)7};
	bad |= expect("unknown activation", kern_linear(c, &l), -EINVAL);
	KLinearBwd lb = {.din = KG_ADD(&dpre),
			 .dw = KG_SET(&w),
			 .dout = &dout,
			 .in = &in,
			 .w = &w,
			 .trans_w = 1,
			 .in_pre = &pre,
			 .in_act = KACT_GELU};
	bad |= expect("GELU-backward epilogue into an accumulated din", kern_linear_bwd(c, &lb), -EINVAL);
	lb.din = KG_SET(&dpre);
	bad |= expect("GELU-backward epilogue into a written din", kern_linear_bwd(c, &lb), 0);
	lb = (KLinearBwd){
		.din = KG_SET(&dpre), .din_bias = KG_SET(&r1), .dout = &dout, .in = &in, .w = &w, .trans_w = 1};
	bad |= expect("input bias gradient without an activation", kern_linear_bwd(c, &lb), -EINVAL);
	bad |= expect("layernorm with bf16 statistics", kern_layernorm_fwd(c, &in, &m16, &r1, &in, &in, &in),
		      -EINVAL); // STAT must be f32
	bad |= expect("attention heads not dividing the width", kern_attention_fwd(c, &ao, &lse, &qkv, 3, 0), -EINVAL);
	bad |= expect("attention without a reserved workspace", kern_attention_fwd(c, &ao, &lse, &qkv, 1, 0), -ENOSPC);
	kern_ctx_reserve_workspace(c, kern_attention_ws_bytes(c, KDT_F32, 1, 40, 1, 4));
	bad |= expect("attention with the workspace reserved", kern_attention_fwd(c, &ao, &lse, &qkv, 1, 0), 0);
	bad |= expect("upload of the wrong byte count", kern_upload(c, &in, &w, 7), -EINVAL);
	// FastCLIP: a pack of the wrong width, gathered rows that are not a multiple of the local ones
	kern_ctx_reserve_workspace(c, kern_loss_ws_bytes(c, 2, 4, 3));
	KContrastBatch b = {.e1 = &e, .e2 = &e, .E1 = &E, .E2 = &E, .offset = 2, .log_s = &ls};
	KFccoParams p = {.version = KFCCO_V3, .gamma = 1, .eps = 1e-14, .rho = 8};
	bad |= expect("fcco_local with a pack of the wrong width", kern_fcco_local(c, &b, &ids, &tab, &p, &pk),
		      -EINVAL);
	KTensor pk2;
	if (kern_alloc(c, &pk2, KDT_F32, 2, (int64_t[]){2, 2}))
		return 1;
	bad |= expect("fcco_local with the v3 pack width", kern_fcco_local(c, &b, &ids, &tab, &p, &pk2), 0);
	b.offset = 1;
	bad |= expect("fcco_local with a rank offset inside a block", kern_fcco_local(c, &b, &ids, &tab, &p, &pk2),
		      -EINVAL);
	// optimizer segment tables must be sorted, disjoint and inside the buffer
	KOptPlan *plan;
	KOptSegment sg[2] = {{.offset = 0, .length = 8}, {.offset = 6, .length = 4}};
	bad |= expect("overlapping optimizer segments", kern_opt_plan_create(c, &plan, sg, 2, 20), -EINVAL);
	sg[1].offset = 8;
	bad |= expect("a segment past the buffer's end", kern_opt_plan_create(c, &plan, sg, 2, 10), -EINVAL);
	sg[1].flags = 64;
	bad |= expect("an unknown segment flag", kern_opt_plan_create(c, &plan, sg, 2, 20), -EINVAL);
	sg[1].flags = KSEG_LAMB | KSEG_DECAY;
	bad |= expect("a good segment table", kern_opt_plan_create(c, &plan, sg, 2, 20), 0);
	KTensor p20;
	if (kern_alloc(c, &p20, KDT_F32, 1, (int64_t[]){20}))
		return 1;
	KOptHyper h = {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .step = 1};
	bad |= expect("an optimizer step", kern_optimizer(c, plan, &h, &p20, NULL, &p20, &p20, &p20, NULL), 0);
	h.step = 0;
	bad |= expect("an optimizer step numbered 0", kern_optimizer(c, plan, &h, &p20, NULL, &p20, &p20, &p20, NULL),
		      -EINVAL);
	kern_opt_plan_destroy(plan);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL op argument checks" : "PASS op argument checks");
	return bad;
}
