// The CUDA backend's input side against the CPU backend: the augment op (bit-identical: the same
// table values and Philox flips), patchify both ways, the video embeddings, the text embedding
// (duplicate ids, set and add, rows no token uses), the end-token search and row pooling.
#include "kcu_twin.h" // defines: KtEnv, KtPair, KT_BOTH, KT_FREE, SH, NSH, kt_*

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void augment_case(KtEnv *e, int B, int T, int H, int W, int p, KDtype dt, int flip)
{
	printf("-- augment B%d T%d %dx%d p%d %s flip %d\n", B, T, H, W, p, kern_dtype_name(dt), flip);
	const int P = (H / p) * (W / p);
	KtPair clips, pos, out;
	kt_alloc(e, &clips, "clips", KDT_U8, NSH(B, T, H, W, 3));
	kt_alloc(e, &pos, "pos", KDT_I64, NSH(B));
	kt_alloc(e, &out, "augmented patches", dt, NSH(B, (int64_t)T * P, 3 * p * p));
	uint8_t *px = malloc((size_t)B * T * H * W * 3);
	for (int64_t i = 0; i < (int64_t)B * T * H * W * 3; i++)
		px[i] = (uint8_t)kt_rand(e);
	int64_t g[16];
	for (int b = 0; b < B; b++)
		g[b] = (int64_t)(kt_rand(e) >> 2); // stream positions past 2^32 too
	kt_set(e, &clips, px);
	kt_set(e, &pos, g);
	kt_poison(e, &out);
	uint64_t seed = kt_rand(e);
	KT_BOTH(e, kern_augment(e->cpu, &out.c, &clips.c, &pos.c, seed, flip, p),
		kern_augment(e->dev, &out.d, &clips.d, &pos.d, seed, flip, p));
	kt_same_bits(e, &out);
	free(px);
	kt_free(e, &clips), kt_free(e, &pos), kt_free(e, &out);
}

static void patchify_case(KtEnv *e, KDtype dt)
{
	printf("-- patchify %s\n", kern_dtype_name(dt));
	const int B = 2, T = 3, H = 8, W = 12, p = 4, P = (H / p) * (W / p);
	KtPair img, pt, dimg;
	kt_alloc(e, &img, "image", dt, NSH(B, T, H, W, 3));
	kt_alloc(e, &pt, "patches", dt, NSH(B, (int64_t)T * P, 3 * p * p));
	kt_alloc(e, &dimg, "dimage (set)", dt, NSH(B, T, H, W, 3));
	kt_fill(e, &img, -2, 2), kt_poison(e, &pt), kt_poison(e, &dimg);
	KT_BOTH(e, kern_patchify_fwd(e->cpu, &pt.c, &img.c, p), kern_patchify_fwd(e->dev, &pt.d, &img.d, p));
	kt_same_bits(e, &pt);
	KT_BOTH(e, kern_patchify_bwd(e->cpu, KG_SET(&dimg.c), &pt.c, p),
		kern_patchify_bwd(e->dev, KG_SET(&dimg.d), &pt.d, p));
	kt_compare(e, &dimg, 0);
	KT_BOTH(e, kern_patchify_bwd(e->cpu, KG_ADD(&dimg.c), &pt.c, p),
		kern_patchify_bwd(e->dev, KG_ADD(&dimg.d), &pt.d, p));
	dimg.name = "dimage (add)";
	kt_compare(e, &dimg, 0);
	kt_free(e, &img), kt_free(e, &pt), kt_free(e, &dimg);
}

static void vis_case(KtEnv *e, int B, int T, int P, int D, KDtype dt, int acc)
{
	printf("-- vis_embed B%d T%d P%d D%d %s %s\n", B, T, P, D, kern_dtype_name(dt), acc ? "add" : "set");
	const int64_t L = 1 + (int64_t)T * P;
	KtPair x, cls, pos, tpos, out, dx, dcls, dpos, dtpos;
	kt_alloc(e, &x, "x", dt, NSH(B, (int64_t)T * P, D));
	kt_alloc(e, &cls, "cls", dt, NSH(D));
	kt_alloc(e, &pos, "pos", dt, NSH(1 + P, D));
	kt_alloc(e, &tpos, "tpos", dt, NSH(T, D));
	kt_alloc(e, &out, "embedded", dt, NSH(B, L, D));
	kt_alloc(e, &dx, "dx", dt, NSH(B, (int64_t)T * P, D));
	kt_alloc(e, &dcls, "dcls", KDT_F32, NSH(D));
	kt_alloc(e, &dpos, "dpos", KDT_F32, NSH(1 + P, D));
	kt_alloc(e, &dtpos, "dtpos", KDT_F32, NSH(T, D));
	kt_fill(e, &x, -1, 1), kt_fill(e, &cls, -1, 1), kt_fill(e, &pos, -1, 1), kt_fill(e, &tpos, -1, 1);
	kt_poison(e, &out);
	KT_BOTH(e, kern_vis_embed_fwd(e->cpu, &out.c, &x.c, &cls.c, &pos.c, &tpos.c),
		kern_vis_embed_fwd(e->dev, &out.d, &x.d, &cls.d, &pos.d, &tpos.d));
	kt_compare(e, &out, 0);
	KtPair *g[] = {&dx, &dcls, &dpos, &dtpos};
	for (int i = 0; i < 4; i++)
		if (acc)
			kt_fill(e, g[i], -1, 1);
		else
			kt_poison(e, g[i]);
	// the dout of the backward: the forward's output
	KT_BOTH(e,
		kern_vis_embed_bwd(e->cpu, (KGrad){&dx.c, acc}, (KGrad){acc ? &dcls.c : NULL, acc},
				   (KGrad){&dpos.c, acc}, (KGrad){&dtpos.c, acc}, &out.c),
		kern_vis_embed_bwd(e->dev, (KGrad){&dx.d, acc}, (KGrad){acc ? &dcls.d : NULL, acc},
				   (KGrad){&dpos.d, acc}, (KGrad){&dtpos.d, acc}, &out.d));
	kt_compare(e, &dx, 0), kt_compare(e, &dpos, 0), kt_compare(e, &dtpos, 0);
	if (acc)
		kt_compare(e, &dcls, 0);
	KT_FREE(e, &x, &cls, &pos, &tpos, &out, &dx, &dcls, &dpos, &dtpos);
}

// token ids with many repeats (a small vocabulary, a padding id), each row's end token the largest
static void text_case(KtEnv *e, int B, int L, int V, int D, int Lmax, KDtype dt)
{
	printf("-- text B%d L%d V%d D%d Lmax%d %s\n", B, L, V, D, Lmax, kern_dtype_name(dt));
	KtPair ids, wte, pos, out, dwte, dpos, eot, pooled, dx;
	kt_alloc(e, &ids, "ids", KDT_I32, NSH(B, L));
	kt_alloc(e, &wte, "wte", dt, NSH(V, D));
	kt_alloc(e, &pos, "pos", dt, NSH(Lmax, D));
	kt_alloc(e, &out, "token embedding", dt, NSH(B, L, D));
	kt_alloc(e, &dwte, "dwte", KDT_F32, NSH(V, D));
	kt_alloc(e, &dpos, "dpos", KDT_F32, NSH(Lmax, D));
	kt_alloc(e, &eot, "end positions", KDT_I32, NSH(B));
	kt_alloc(e, &pooled, "pooled", dt, NSH(B, D));
	kt_alloc(e, &dx, "pool dx", dt, NSH(B, L, D));
	int32_t *id = malloc(sizeof(int32_t) * (size_t)B * L);
	for (int b = 0; b < B; b++) {
		int end = 1 + (int)(kt_rand(e) % (uint64_t)(L - 1));
		for (int l = 0; l < L; l++)
			id[b * L + l] = l < end ? (int32_t)(kt_rand(e) % (uint64_t)(V - 1)) : 0;
		id[b * L + end] = V - 1;
		if (kt_rand(e) % 2) // a tie: the first maximum wins
			id[b * L + end - 1] = V - 1;
	}
	kt_set(e, &ids, id);
	kt_fill(e, &wte, -1, 1), kt_fill(e, &pos, -1, 1), kt_poison(e, &out);
	KT_BOTH(e, kern_tok_embed_fwd(e->cpu, &out.c, &ids.c, &wte.c, &pos.c),
		kern_tok_embed_fwd(e->dev, &out.d, &ids.d, &wte.d, &pos.d));
	kt_compare(e, &out, 0);
	for (int acc = 0; acc < 2; acc++) {
		if (acc)
			kt_fill(e, &dwte, -1, 1), kt_fill(e, &dpos, -1, 1);
		else
			kt_poison(e, &dwte), kt_poison(e, &dpos);
		KT_BOTH(e, kern_tok_embed_bwd(e->cpu, (KGrad){&dwte.c, acc}, (KGrad){&dpos.c, acc}, &out.c, &ids.c),
			kern_tok_embed_bwd(e->dev, (KGrad){&dwte.d, acc}, (KGrad){&dpos.d, acc}, &out.d, &ids.d));
		dwte.name = acc ? "dwte (add)" : "dwte (set)", dpos.name = acc ? "dpos (add)" : "dpos (set)";
		kt_compare(e, &dwte, 0), kt_compare(e, &dpos, 0);
	}
	// the runs' two-level order is fixed: under other thread and block orders, the same bits
	void *bits[2];
	for (int run = 0; run < 2; run++) {
		kt_reschedule(e, kt_rand(e));
		int rc = kern_tok_embed_bwd(e->dev, KG_SET(&dwte.d), KG_SET(&dpos.d), &out.d, &ids.d);
		kt_check(e, rc == 0 && kern_stream_sync(e->dev) == 0, "dwte: backward %d runs", run);
		bits[run] = kt_bits(e, &dwte.d);
	}
	kt_check(e, !memcmp(bits[0], bits[1], kern_nbytes(&dwte.d)), "dwte: two runs, the same bits");
	free(bits[0]), free(bits[1]);
	kt_poison(e, &eot);
	KT_BOTH(e, kern_argmax_rows(e->cpu, &eot.c, &ids.c), kern_argmax_rows(e->dev, &eot.d, &ids.d));
	kt_same_bits(e, &eot);
	kt_poison(e, &pooled);
	KT_BOTH(e, kern_pool_fwd(e->cpu, &pooled.c, &out.c, &eot.c), kern_pool_fwd(e->dev, &pooled.d, &out.d, &eot.d));
	kt_same_bits(e, &pooled);
	kt_poison(e, &dx);
	KT_BOTH(e, kern_pool_bwd(e->cpu, KG_SET(&dx.c), &pooled.c, &eot.c),
		kern_pool_bwd(e->dev, KG_SET(&dx.d), &pooled.d, &eot.d));
	dx.name = "pool dx (set)";
	kt_compare(e, &dx, 0);
	KT_BOTH(e, kern_pool_bwd(e->cpu, KG_ADD(&dx.c), &pooled.c, &eot.c),
		kern_pool_bwd(e->dev, KG_ADD(&dx.d), &pooled.d, &eot.d));
	dx.name = "pool dx (add)";
	kt_compare(e, &dx, 0);
	free(id);
	KT_FREE(e, &ids, &wte, &pos, &out, &dwte, &dpos, &eot, &pooled, &dx);
}

int main(void)
{
	KtEnv e;
	kt_setup(&e, "test_kcuda_embed");
	augment_case(&e, 3, 2, 16, 24, 8, KDT_BF16, 1); // 16-byte stores
	augment_case(&e, 3, 2, 16, 24, 8, KDT_F32, 1);
	augment_case(&e, 2, 3, 12, 8, 4, KDT_BF16, 1); // element stores
	augment_case(&e, 2, 1, 8, 8, 8, KDT_F32, 0);
	patchify_case(&e, KDT_F32);
	patchify_case(&e, KDT_BF16);
	vis_case(&e, 3, 2, 5, 16, KDT_BF16, 0);
	vis_case(&e, 3, 2, 5, 16, KDT_BF16, 1);
	vis_case(&e, 2, 4, 3, 12, KDT_F32, 1);
	vis_case(&e, 40, 4, 9, 8, KDT_F32, 0); // several row slices per column sum
	text_case(&e, 3, 7, 11, 16, 9, KDT_F32);
	text_case(&e, 8, 77, 300, 24, 77, KDT_BF16);
	text_case(&e, 2, 5, 70000, 8, 6, KDT_F32);  // ids over 16 bits: a five-pass sort
	text_case(&e, 32, 77, 40, 40, 77, KDT_F32); // runs across windows of sorted positions, a padding run of ~1200
	kt_sync(&e, "embedding ops");
	return kt_finish(&e);
}
