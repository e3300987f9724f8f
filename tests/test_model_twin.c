// Checks the whole model (f32) against its PyTorch twin (tools/ref/model_twin.py, float64):
// features, loss and every parameter gradient, each compared with a tolerance looked up by
// tensor name; every parameter must have a reference gradient and every reference a tensor.
#include "model.h" // defines: ClipModel, st_open, st_find, st_meta, st_model_load

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// relative tolerance (max |c - ref| / max |ref|) by name: first matching substring wins
static const struct {
	const char *pattern;
	double tol;
} tols[] = {
	{"out/loss", 2e-6},
	{"out/", 2e-5},
	{"grad/logit_scale", 5e-5},
	{"grad/", 1e-4},
};

static double tol_for(const char *name)
{
	for (size_t i = 0; i < sizeof tols / sizeof tols[0]; i++)
		if (strstr(name, tols[i].pattern))
			return tols[i].tol;
	return 0; // unknown names must be added to the table
}

static int compare(const char *name, const float *got, const StTensor *ref, int64_t n)
{
	if (!ref || ref->dtype != ST_F32 || ref->nbytes != sizeof(float) * (size_t)n) {
		printf("FAIL %-52s reference missing or of the wrong size\n", name);
		return 1;
	}
	const float *r = ref->data;
	double md = 0, mr = 1e-30;
	for (int64_t i = 0; i < n; i++) {
		md = fmax(md, fabs((double)got[i] - r[i]));
		mr = fmax(mr, fabs((double)r[i]));
	}
	double rel = md / mr, tol = tol_for(name);
	int ok = rel <= tol;
	printf("%-4s %-52s rel err %.2e (tol %.0e)\n", ok ? "ok" : "FAIL", name, rel, tol);
	return !ok;
}

static int meta_int(const StFile *f, const char *k)
{
	const char *v = st_meta(f, k);
	return v ? atoi(v) : -1;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "tests/fixtures/model_twin.safetensors";
	StFile *f;
	if (st_open(&f, path)) {
		printf("cannot read %s\n", path);
		return 1;
	}
	if (!st_meta(f, "avclip.twin") || strcmp(st_meta(f, "avclip.twin"), "1")) {
		printf("FAIL %s: twin format version is not 1\n", path);
		return 1;
	}
	ModelConfig cfg = {meta_int(f, "image_size"),
			   meta_int(f, "patch"),
			   meta_int(f, "frames"),
			   meta_int(f, "vis_width"),
			   meta_int(f, "vis_layers"),
			   meta_int(f, "vis_heads"),
			   meta_int(f, "vocab"),
			   meta_int(f, "ctx_len"),
			   meta_int(f, "txt_width"),
			   meta_int(f, "txt_layers"),
			   meta_int(f, "txt_heads"),
			   meta_int(f, "embed_dim"),
			   meta_int(f, "mlp_ratio"),
			   MODEL_ACT_GELU,
			   1,
			   MODEL_POOL_CLS};
	int B = meta_int(f, "batch");
	KernCtx *c;
	ClipModel *m;
	char err[320];
	if (kern_ctx_create_cpu(&c, 2) || clip_model_create(&m, c, &cfg, B, KDT_F32))
		return 1;
	int rc = st_model_load(path, c, m->specs, m->n_specs, &m->params, NULL, err, sizeof err);
	if (rc) {
		printf("FAIL load weights: %s\n", err);
		return 1;
	}
	const StTensor *iv = st_find(f, "input/video"), *it = st_find(f, "input/text");
	KTensor video, text;
	const int64_t sv[] = {B, cfg.frames, cfg.image_size, cfg.image_size, 3}, st[] = {B, cfg.ctx_len};
	if (!iv || !it || kern_alloc(c, &video, KDT_F32, 5, sv) || kern_alloc(c, &text, KDT_I32, 2, st) ||
	    kern_upload(c, &video, iv->data, iv->nbytes) || kern_upload(c, &text, it->data, it->nbytes)) {
		printf("FAIL inputs missing or mis-sized in %s\n", path);
		return 1;
	}
	double loss;
	if (clip_model_infonce_step(m, &video, &text, &loss))
		return 1;
	int bad = 0, compared = 0;
	float lossf = (float)loss, *buf = malloc(kern_nbytes(&m->grads));
	kern_download(c, buf, sizeof(float) * (size_t)B * cfg.embed_dim, &m->vfeat);
	bad |= compare("out/video_features", buf, st_find(f, "out/video_features"), (int64_t)B * cfg.embed_dim);
	kern_download(c, buf, sizeof(float) * (size_t)B * cfg.embed_dim, &m->tfeat);
	bad |= compare("out/text_features", buf, st_find(f, "out/text_features"), (int64_t)B * cfg.embed_dim);
	bad |= compare("out/loss", &lossf, st_find(f, "out/loss"), 1);
	compared += 3;
	kern_download(c, buf, kern_nbytes(&m->grads), &m->grads);
	for (int i = 0; i < m->n_specs; i++) {
		char name[200];
		snprintf(name, sizeof name, "grad/%s", m->specs[i].name);
		bad |= compare(name, buf + m->specs[i].offset, st_find(f, name), m->specs[i].numel);
		compared++;
	}
	// every reference tensor is a weight, an input or one we compared: nothing silently skipped
	int refs = 0;
	for (int i = 0; i < st_count(f); i++) {
		const char *n = st_entry(f, i)->name;
		refs += !strncmp(n, "grad/", 5) || !strncmp(n, "out/", 4);
	}
	if (refs != compared) {
		printf("FAIL %d reference outputs/gradients in the file, %d compared\n", refs, compared);
		bad = 1;
	}
	printf("%d tensors compared, loss C %.7f\n", compared, loss);
	free(buf);
	clip_model_destroy(m);
	kern_ctx_destroy(c);
	st_close(f);
	printf("%s\n",
	       bad ? "FAIL model vs PyTorch twin" : "PASS model vs PyTorch twin: features, loss, every gradient");
	return bad;
}
