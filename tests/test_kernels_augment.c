// Checks the augment op against the trainer's host augmentation followed by the patchify op:
// bit-for-bit equal in f32 for random clips, with and without flips, for positions above 2^32
// (the counter's high word), and its bf16 output is the rounded f32 one.
#include "kern_gradcheck.h" // defines: kgc_get
#include "kern_ops.h"       // defines: kern_augment, kern_patchify_fwd
#include "augment_ref.h"    // defines: trainer_augment_batch, trainer_augment_flips

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 5, T = 2, H = 24, W = 16, P = 8 };

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 3))
		return 1;
	const int64_t n = (int64_t)B * T * H * W * 3, np = (int64_t)(H / P) * (W / P);
	KTensor clips, pos, vid, ref, out, out16;
	const int64_t sc[] = {B, T, H, W, 3}, sp[] = {B, T * np, 3 * P * P};
	if (kern_alloc(c, &clips, KDT_U8, 5, sc) || kern_alloc(c, &pos, KDT_I64, 1, (int64_t[]){B}) ||
	    kern_alloc(c, &vid, KDT_F32, 5, sc) || kern_alloc(c, &ref, KDT_F32, 3, sp) ||
	    kern_alloc(c, &out, KDT_F32, 3, sp) || kern_alloc(c, &out16, KDT_BF16, 3, sp))
		return 1;
	uint8_t *px = malloc((size_t)n);
	float *host = malloc(sizeof(float) * (size_t)n);
	uint64_t g[B], s = 0x9e3779b97f4a7c15ull;
	for (int64_t i = 0; i < n; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		px[i] = (uint8_t)(s >> 24);
	}
	for (int b = 0; b < B; b++)
		g[b] = (b < 2 ? 7 : (1ull << 32) + 3) + 5 * (uint64_t)b; // low and high counter words
	int bad = kern_upload(c, &clips, px, (size_t)n) || kern_upload(c, &pos, g, sizeof g);
	const uint64_t seed = 20261130;
	int flipped = 0;
	for (int b = 0; b < B; b++)
		flipped += trainer_augment_flips(seed, g[b]);
	for (int flip = 0; flip <= 1; flip++) {
		trainer_augment_batch(px, B, T, H, W, g, seed, flip, host);
		bad |= kern_upload(c, &vid, host, sizeof(float) * (size_t)n) || kern_patchify_fwd(c, &ref, &vid, P) ||
		       kern_augment(c, &out, &clips, &pos, seed, flip, P) ||
		       kern_augment(c, &out16, &clips, &pos, seed, flip, P);
		int same = memcmp(out.data, ref.data, kern_nbytes(&ref)) == 0;
		int64_t off16 = 0;
		for (int64_t i = 0; i < kern_numel(&ref); i++)
			off16 += ((uint16_t *)out16.data)[i] != kern_bf16_from_f32(((float *)ref.data)[i]);
		printf("%-4s flip %d (%d of %d clips flipped): f32 %s trainer_augment + patchify; bf16: %lld not RNE\n",
		       same && !off16 ? "ok" : "FAIL", flip, flip ? flipped : 0, B,
		       same ? "==" : "!=", (long long)off16);
		bad |= !same || off16;
	}
	if (flipped == 0 || flipped == B) {
		printf("FAIL the test's positions should flip some clips and not others (%d of %d)\n", flipped, B);
		bad = 1;
	}
	free(px);
	free(host);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL augment op" : "PASS augment op equals trainer_augment + patchify bit for bit");
	return bad;
}
