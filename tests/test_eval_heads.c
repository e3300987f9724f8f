// Classification heads for tools/eval --task classify (tools/eval_heads.c): a checkpoint's
// extra/cls.params is cut into each head's weight (K, W) and bias (K) in the trainer's layout, by
// its recorded class counts or the manifest's; a heads file round-trips; damaged inputs are refused
// with a sentence (no heads, another size, bad metadata, a missing or mis-shaped tensor).
#include "../tools/eval_cls.h" // defines: EvalHeads, eval_heads_from_ckpt, eval_heads_load, eval_heads_save, ...
#include "testutil.h"          // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>  // defines: EINVAL, EBADMSG
#include <stdio.h>  // defines: snprintf, printf
#include <stdlib.h> // defines: mkdtemp
#include <string.h> // defines: strstr, memcmp

enum { W = 3, K0 = 4, K1 = 2 };
static char dir[64], err[1024];

// a labelled manifest: heads verb (K0) and noun (K1), two clips
static Manifest *manifest(void)
{
	ManifestWriter *w;
	int32_t tok[8] = {998, 5, 999};
	uint32_t kf[] = {0};
	CHECK_OK(manifest_writer_new(&w, 8, 1000, 15000, 288));
	manifest_add_video(w, "a", 2000);
	manifest_add_chunk(w, 0, "a/0.mp4", 0, 50, 25, 1, 320, 288, kf, 1);
	for (int i = 0; i < 2; i++)
		manifest_add_clip(w, 0, 0, (uint32_t)i, 0, (uint32_t)(i + 10), tok);
	const char *names[] = {"verb", "noun"};
	const uint32_t n[] = {K0, K1};
	CHECK_OK(manifest_writer_set_heads(w, 2, names, n, NULL));
	const int32_t l[2] = {1, 0};
	CHECK_OK(manifest_set_labels(w, 0, l));
	char path[128];
	snprintf(path, sizeof path, "%s/manifest", dir);
	CHECK_OK(manifest_write(w, path));
	manifest_writer_free(w);
	Manifest *m;
	CHECK_OK(manifest_open(&m, path, err, sizeof err));
	return m;
}

// a checkpoint-like file: extra/cls.params of n floats 0, 1, 2, ...; meta NULL: none recorded
static void ckpt(const char *path, int n, const char *meta)
{
	static float p[256];
	for (int i = 0; i < n; i++)
		p[i] = (float)i;
	StTensor t = {.name = "extra/cls.params",
		      .dtype = ST_F32,
		      .ndim = 1,
		      .shape = {n},
		      .data = p,
		      .nbytes = sizeof(float) * (size_t)n};
	const char *kv[4] = {"avclip.ckpt", "1", "avclip.cls_heads", meta};
	CHECK_OK(st_write(path, &t, 1, kv, meta ? 2 : 1));
}

static void test_ckpt(const Manifest *man)
{
	char path[128];
	snprintf(path, sizeof path, "%s/ckpt.safetensors", dir);
	const int n = K0 * (W + 1) + K1 * (W + 1);
	EvalHeads h;
	for (int recorded = 0; recorded < 2; recorded++) {
		ckpt(path, n, recorded ? "4,2" : NULL);
		CHECK_OK(eval_heads_from_ckpt(&h, path, W, man, err, sizeof err));
		CHECK(h.n == 2 && h.width == W && h.classes[0] == K0 && h.classes[1] == K1);
		CHECK(!strcmp(h.name[0], "verb") && !strcmp(h.name[1], "noun"));
		// the trainer's layout: head.0.weight (K0, W), head.0.bias (K0), head.1.weight, head.1.bias
		CHECK(h.w[0][0] == 0 && h.w[0][K0 * W - 1] == K0 * W - 1);
		CHECK(h.b[0][0] == K0 * W && h.b[0][K0 - 1] == K0 * W + K0 - 1);
		CHECK(h.w[1][0] == K0 * (W + 1) && h.b[1][K1 - 1] == n - 1);
		eval_heads_free(&h);
	}
	ckpt(path, n + 1, NULL); // a float too many for the manifest's classes
	CHECK_EQ_INT(eval_heads_from_ckpt(&h, path, W, man, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "extra/cls.params is F32 of 100 bytes"));
	ckpt(path, n, "4,3"); // recorded counts that do not fit its size
	CHECK_EQ_INT(eval_heads_from_ckpt(&h, path, W, man, err, sizeof err), -EINVAL);
	ckpt(path, n, "4,x");
	CHECK_EQ_INT(eval_heads_from_ckpt(&h, path, W, man, err, sizeof err), -EBADMSG);
	CHECK(strstr(err, "avclip.cls_heads '4,x' is not a list of class counts"));
	const float one = 1; // a checkpoint without heads (contrastive pretraining)
	StTensor t = {.name = "model.params", .dtype = ST_F32, .ndim = 1, .shape = {1}, .data = &one, .nbytes = 4};
	CHECK_OK(st_write(path, &t, 1, NULL, 0));
	CHECK_EQ_INT(eval_heads_from_ckpt(&h, path, W, man, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "holds no classification heads"));
	printf("checkpoint heads: layout, recorded and manifest class counts, 4 refusals\n");
}

static void test_file(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/heads.safetensors", dir);
	EvalHeads h = {.n = 2, .width = W, .classes = {K0, K1}, .name = {"verb", "noun"}}, g;
	for (int k = 0; k < 2; k++) {
		h.w[k] = malloc(sizeof(float) * (size_t)h.classes[k] * W);
		h.b[k] = malloc(sizeof(float) * (size_t)h.classes[k]);
		for (int i = 0; i < h.classes[k] * W; i++)
			h.w[k][i] = (float)(k * 100 + i) / 7;
		for (int i = 0; i < h.classes[k]; i++)
			h.b[k][i] = -(float)i / 3;
	}
	CHECK_OK(eval_heads_save(&h, path, err, sizeof err));
	CHECK_OK(eval_heads_load(&g, path, err, sizeof err));
	CHECK(g.n == 2 && g.width == W && g.classes[0] == K0 && g.classes[1] == K1);
	CHECK(!strcmp(g.name[0], "verb") && !strcmp(g.name[1], "noun"));
	for (int k = 0; k < 2; k++)
		CHECK(!memcmp(g.w[k], h.w[k], sizeof(float) * (size_t)h.classes[k] * W) &&
		      !memcmp(g.b[k], h.b[k], sizeof(float) * (size_t)h.classes[k]));
	eval_heads_free(&g);
	// damaged files: metadata that lies about a shape, a missing tensor, no metadata
	StTensor t[4];
	const char *kv[2] = {"avclip.heads", "verb:4,noun:3"};
	for (int k = 0; k < 2; k++) {
		t[2 * k] = (StTensor){.dtype = ST_F32,
				      .ndim = 2,
				      .shape = {h.classes[k], W},
				      .data = h.w[k],
				      .nbytes = sizeof(float) * (size_t)h.classes[k] * W};
		t[2 * k + 1] = (StTensor){.dtype = ST_F32,
					  .ndim = 1,
					  .shape = {h.classes[k]},
					  .data = h.b[k],
					  .nbytes = sizeof(float) * (size_t)h.classes[k]};
		snprintf(t[2 * k].name, sizeof t[2 * k].name, "head.%d.weight", k);
		snprintf(t[2 * k + 1].name, sizeof t[2 * k + 1].name, "head.%d.bias", k);
	}
	CHECK_OK(st_write(path, t, 4, kv, 1));
	CHECK_EQ_INT(eval_heads_load(&g, path, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "head 1 needs F32 head.1.weight (3, width)"));
	kv[1] = "verb:4,noun:2";
	CHECK_OK(st_write(path, t, 3, kv, 1));
	CHECK_EQ_INT(eval_heads_load(&g, path, err, sizeof err), -EINVAL);
	CHECK_OK(st_write(path, t, 4, NULL, 0));
	CHECK_EQ_INT(eval_heads_load(&g, path, err, sizeof err), -EBADMSG);
	CHECK(strstr(err, "no avclip.heads metadata"));
	kv[1] = "verb:4";
	CHECK_OK(st_write(path, t, 4, kv, 1)); // two heads' tensors, one declared
	CHECK_EQ_INT(eval_heads_load(&g, path, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "holds 4 tensors, 1 heads need 2"));
	eval_heads_free(&h);
	printf("heads file: round trip, 4 refusals\n");
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_eval_heads.XXXXXX");
	CHECK(mkdtemp(dir));
	Manifest *man = manifest();
	test_ckpt(man);
	test_file();
	manifest_close(man);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return 0;
}
