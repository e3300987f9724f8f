// Checks that model weights survive a safetensors round trip byte for byte under open_clip
// names and shapes, that metadata comes back, and that a prefix load touches only that tower.
#include "model.h" // defines: ClipModel, st_open, st_find, st_meta, st_model_save, st_model_load

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	KernCtx *c;
	ModelConfig cfg;
	ClipModel *a, *b;
	if (kern_ctx_create_cpu(&c, 2) || model_config_preset(&cfg, "tiny"))
		return 1;
	cfg.vocab = 500;
	if (clip_model_create(&a, c, &cfg, 1, KDT_F32) || clip_model_create(&b, c, &cfg, 1, KDT_F32) ||
	    model_init_params(c, &cfg, &a->params, 1) || model_init_params(c, &cfg, &b->params, 2))
		return 1;
	char path[] = "/tmp/test_st_roundtrip_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	const char *meta[] = {"format", "pt", "avclip.model", "tiny"};
	int bad = 0, rc = st_model_save(path, c, a->specs, a->n_specs, &a->params, meta, 2);
	if (rc) {
		printf("FAIL save: %d\n", rc);
		return 1;
	}
	StFile *f;
	if (st_open(&f, path)) {
		printf("FAIL reopen\n");
		return 1;
	}
	const StTensor *t = st_find(f, "visual.conv1.weight"), *ls = st_find(f, "logit_scale");
	if (st_count(f) != a->n_specs || !t || t->ndim != 4 || t->shape[1] != 3 || t->shape[2] != cfg.patch || !ls ||
	    ls->ndim != 0 || !st_meta(f, "format") || strcmp(st_meta(f, "avclip.model"), "tiny")) {
		printf("FAIL file contents: %d tensors, conv1 %s, logit_scale %s\n", st_count(f),
		       t ? "found" : "missing", ls ? "found" : "missing");
		bad = 1;
	}
	st_close(f);

	// prefix load: only the video tower changes
	size_t nb = kern_nbytes(&a->params);
	float *pa = malloc(nb), *pb = malloc(nb), *pb0 = malloc(nb);
	kern_download(c, pb0, nb, &b->params);
	char err[256];
	StLoadOpts vis = {.prefix = "visual."};
	rc = st_model_load(path, c, b->specs, b->n_specs, &b->params, &vis, err, sizeof err);
	kern_download(c, pa, nb, &a->params);
	kern_download(c, pb, nb, &b->params);
	int64_t text_start = a->specs[0].offset;
	for (int i = 0; i < a->n_specs; i++)
		if (!strcmp(a->specs[i].name, "token_embedding.weight"))
			text_start = a->specs[i].offset;
	if (rc || memcmp(pa, pb, sizeof(float) * (size_t)text_start) ||
	    memcmp(pb + text_start, pb0 + text_start, nb - sizeof(float) * (size_t)text_start)) {
		printf("FAIL prefix load (rc %d: %s)\n", rc, err);
		bad = 1;
	}
	// full load: byte-equal
	rc = st_model_load(path, c, b->specs, b->n_specs, &b->params, NULL, err, sizeof err);
	kern_download(c, pb, nb, &b->params);
	if (rc || memcmp(pa, pb, nb)) {
		printf("FAIL full load not byte-equal (rc %d: %s)\n", rc, err);
		bad = 1;
	}
	unlink(path);
	free(pa);
	free(pb);
	free(pb0);
	clip_model_destroy(a);
	clip_model_destroy(b);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL safetensors round trip" : "PASS safetensors round trip with open_clip names");
	return bad;
}
