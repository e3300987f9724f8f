// Checks the tiled attention backward (recomputed from the saved log-sum-exp) against central
// finite differences in f64, with and without the causal mask, at a length spanning a partial tile.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_attention_*

#include <math.h>
#include <stdio.h>

typedef struct {
	KernCtx *c;
	KTensor qkv, out, lse, r;
	int heads, causal;
} At;

static double loss(void *a)
{
	At *s = a;
	if (kern_attention_fwd(s->c, &s->out, &s->lse, &s->qkv, s->heads, s->causal))
		return NAN;
	return kgc_dot(&s->out, &s->r);
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	const int B = 2, T = 37, H = 2, hd = 3; // T = one full tile of 32 plus 5
	const int64_t sq[] = {B, T, 3 * H * hd}, so[] = {B, T, H * hd}, sl[] = {B, H, T};
	At s = {.c = c, .heads = H};
	if (kern_ctx_reserve_workspace(c, kern_attention_ws_bytes(c, KDT_F64, B, T, H, hd)) ||
	    kern_alloc(c, &s.qkv, KDT_F64, 3, sq) || kern_alloc(c, &s.out, KDT_F64, 3, so) ||
	    kern_alloc(c, &s.r, KDT_F64, 3, so) || kern_alloc(c, &s.lse, KDT_F64, 3, sl))
		return 1;
	kgc_fill(&s.qkv, 51, 1.5);
	kgc_fill(&s.r, 52, 1);
	KTensor dqkv;
	kgc_alloc_like(c, &dqkv, &s.qkv, KDT_F64);
	int bad = 0;
	for (int causal = 0; causal < 2; causal++) {
		s.causal = causal;
		loss(&s);
		bad |= kern_attention_bwd(c, KG_SET(&dqkv), &s.r, &s.qkv, &s.out, &s.lse, H, causal) != 0;
		bad |= kgc_check(causal ? "attention causal d/dqkv" : "attention d/dqkv", &s.qkv, &dqkv, loss, &s, 1e-5,
				 1e-9, 1e-6);
	}
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL attention backward" : "PASS attention backward vs finite differences");
	return bad ? 1 : 0;
}
