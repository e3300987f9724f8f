// Checks AdamW and LAMB against the PyTorch twin (tools/ref/optim_twin.py): torch.optim.AdamW
// with param groups, clip_grad_norm_ and a warmup+cosine LambdaLR, and LAMB written in torch,
// over four steps; parameters compared by name after the last step.
#include "kern_gradcheck.h" // defines: kgc_get
#include "model.h"          // defines: Optimizer, st_open, st_find, st_meta

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double meta_d(const StFile *f, const char *k)
{
	const char *v = st_meta(f, k);
	return v ? atof(v) : NAN;
}

static int run(KernCtx *c, const StFile *f, OptKind kind)
{
	// the twin's tensors: "w" decayed, "b" (1-D) and "emb" (embedding) not
	ParamSpec sp[3] = {
		{.name = "w", .ndim = 2, .shape = {6, 5}, .offset = 0, .numel = 30},
		{.name = "b", .ndim = 1, .shape = {5}, .offset = 30, .numel = 5, .flags = PARAM_NO_DECAY},
		{.name = "emb", .ndim = 2, .shape = {7, 3}, .offset = 35, .numel = 21, .flags = PARAM_NO_DECAY}};
	const int64_t n = 56;
	OptConfig oc = {.kind = kind,
			.lr = meta_d(f, "lr"),
			.lr_min = meta_d(f, "lr_min"),
			.warmup_steps = (int64_t)meta_d(f, "warmup"),
			.total_steps = (int64_t)meta_d(f, "total"),
			.beta1 = meta_d(f, "beta1"),
			.beta2 = meta_d(f, "beta2"),
			.eps = meta_d(f, "eps"),
			.weight_decay = meta_d(f, "wd"),
			.clip_norm = meta_d(f, "clip")};
	int steps = (int)meta_d(f, "steps");
	Optimizer *o;
	KTensor p, g;
	if (optim_create(&o, c, &oc, sp, 3, n) || kern_alloc(c, &p, KDT_F32, 1, &n) ||
	    kern_alloc(c, &g, KDT_F32, 1, &n)) {
		printf("FAIL optimizer settings from the fixture refused\n");
		return 1;
	}
	float host[56];
	int bad = 0;
	for (int s = -1; s < steps && !bad; s++) { // s = -1 loads the initial values
		for (int i = 0; i < 3; i++) {
			char name[200];
			if (s < 0)
				snprintf(name, sizeof name, "init/%.60s", sp[i].name);
			else
				snprintf(name, sizeof name, "grad%d/%.60s", s, sp[i].name);
			const StTensor *t = st_find(f, name);
			if (!t || t->nbytes != 4 * (size_t)sp[i].numel) {
				printf("FAIL fixture lacks %s\n", name);
				bad = 1;
				break;
			}
			memcpy(host + sp[i].offset, t->data, t->nbytes);
		}
		if (bad)
			break;
		if (s < 0) {
			kern_upload(c, &p, host, sizeof host);
		} else {
			kern_upload(c, &g, host, sizeof host);
			bad |= optim_step(o, &p, NULL, &g) != 0;
		}
	}
	for (int i = 0; i < 3 && !bad; i++) {
		char name[200];
		snprintf(name, sizeof name, "%s/%.60s", kind == OPT_LAMB ? "lamb" : "adamw", sp[i].name);
		const StTensor *t = st_find(f, name);
		if (!t || t->nbytes != 4 * (size_t)sp[i].numel) {
			printf("FAIL fixture lacks %s\n", name);
			bad = 1;
			break;
		}
		const float *r = t->data;
		double md = 0;
		for (int64_t k = 0; k < sp[i].numel; k++)
			md = fmax(md, fabs(kgc_get(&p, sp[i].offset + k) - r[k]));
		int ok = md < 2e-6;
		printf("%-4s %-10s max |C - torch| %.2e\n", ok ? "ok" : "FAIL", name, md);
		bad |= !ok;
	}
	optim_destroy(o);
	kern_free(c, &p);
	kern_free(c, &g);
	return bad;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "tests/fixtures/model_optim_twin.safetensors";
	StFile *f;
	KernCtx *c;
	if (st_open(&f, path) || kern_ctx_create_cpu(&c, 2)) {
		printf("cannot read %s\n", path);
		return 1;
	}
	if (!st_meta(f, "avclip.optim_twin") || strcmp(st_meta(f, "avclip.optim_twin"), "1")) {
		printf("FAIL %s: format version is not 1\n", path);
		return 1;
	}
	int bad = run(c, f, OPT_ADAMW) | run(c, f, OPT_LAMB);
	st_close(f);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL optimizers vs PyTorch twin" : "PASS AdamW and LAMB match the PyTorch twin");
	return bad;
}
