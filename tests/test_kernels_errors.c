// Checks that ops refuse bad input with the documented error instead of computing garbage:
// shape and dtype mismatches (-EINVAL), bf16 compute on the CPU (-ENOTSUP), token ids out of
// range (-ERANGE), a too-small workspace; and bf16 conversion rounds to nearest even.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: the ops

#include <errno.h>
#include <math.h>
#include <stdio.h>

static int expect(const char *what, int got, int want)
{
	printf("%-4s %-44s rc %d (want %d)\n", got == want ? "ok" : "FAIL", what, got, want);
	return got != want;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	KTensor in, w, wbad, out, b16, ids, wte, pos, tout, qkv, ao, lse, ws, f2, h2;
	const int64_t s_in[] = {4, 6}, s_w[] = {3, 6}, s_wb[] = {3, 5}, s_o[] = {4, 3}, s_ids[] = {2, 3}, s_wte[] = {10, 6},
		      s_pos[] = {3, 6}, s_to[] = {2, 3, 6}, s_q[] = {1, 40, 12}, s_ao[] = {1, 40, 4}, s_l[] = {1, 1, 40},
		      s_ws[] = {1}, s2[] = {4};
	if (kern_alloc(c, &in, KDT_F32, 2, s_in) || kern_alloc(c, &w, KDT_F32, 2, s_w) ||
	    kern_alloc(c, &wbad, KDT_F32, 2, s_wb) || kern_alloc(c, &out, KDT_F32, 2, s_o) ||
	    kern_alloc(c, &b16, KDT_BF16, 2, s_in) || kern_alloc(c, &ids, KDT_I32, 2, s_ids) ||
	    kern_alloc(c, &wte, KDT_F32, 2, s_wte) || kern_alloc(c, &pos, KDT_F32, 2, s_pos) ||
	    kern_alloc(c, &tout, KDT_F32, 3, s_to) || kern_alloc(c, &qkv, KDT_F32, 3, s_q) ||
	    kern_alloc(c, &ao, KDT_F32, 3, s_ao) || kern_alloc(c, &lse, KDT_F32, 3, s_l) ||
	    kern_alloc(c, &ws, KDT_F32, 1, s_ws) || kern_alloc(c, &f2, KDT_F32, 1, s2) || kern_alloc(c, &h2, KDT_BF16, 1, s2))
		return 1;
	int bad = 0;
	bad |= expect("linear with mis-shaped weight", kern_linear_fwd(c, &out, &in, &wbad, NULL), -EINVAL);
	bad |= expect("linear with bf16 weight vs f32 input", kern_linear_fwd(c, &out, &in, &b16, NULL), -EINVAL);
	bad |= expect("gelu in bf16 on the CPU backend", kern_gelu_fwd(c, &b16, &b16), -ENOTSUP);
	bad |= expect("linear with a good shape", kern_linear_fwd(c, &out, &in, &w, NULL), 0);
	kgc_set(&ids, 4, 10);
	bad |= expect("token id == vocab size", kern_tok_embed_fwd(c, &tout, &ids, &wte, &pos), -ERANGE);
	kgc_set(&ids, 4, -1);
	bad |= expect("negative token id", kern_tok_embed_fwd(c, &tout, &ids, &wte, &pos), -ERANGE);
	kgc_set(&ids, 4, 9);
	bad |= expect("token ids in range", kern_tok_embed_fwd(c, &tout, &ids, &wte, &pos), 0);
	bad |= expect("attention heads not dividing width", kern_attention_fwd(c, &ao, &lse, &qkv, 3, 0, &ws), -EINVAL);
	bad |= expect("attention with a too-small workspace", kern_attention_fwd(c, &ao, &lse, &qkv, 1, 0, &ws), -EINVAL);
	bad |= expect("attention without workspace", kern_attention_fwd(c, &ao, &lse, &qkv, 1, 0, NULL), -EINVAL);
	bad |= expect("upload of the wrong byte count", kern_upload(c, &in, &w, 7), -EINVAL);
	// bf16 keeps 7 fraction bits: 1 + 2^-8 is a tie and rounds to even (1.0), 1 + 3*2^-8 is a
	// tie that rounds up to 1 + 2^-6, -2.5 is exact, NaN stays NaN
	const float vals[4] = {1.0f + 1.0f / 256, 1.0f + 3.0f / 256, -2.5f, NAN};
	const float want[4] = {1.0f, 1.0f + 4.0f / 256, -2.5f, NAN};
	kern_upload(c, &f2, vals, sizeof vals);
	kern_convert(c, &h2, &f2);
	kern_convert(c, &f2, &h2);
	float back[4];
	kern_download(c, back, sizeof back, &f2);
	for (int i = 0; i < 4; i++)
		if (i < 3 ? back[i] != want[i] : !isnan(back[i])) {
			printf("FAIL bf16 round trip of %.9g gave %.9g (want %.9g)\n", vals[i], back[i], want[i]);
			bad = 1;
		}
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL op error handling" : "PASS op error handling");
	return bad;
}
