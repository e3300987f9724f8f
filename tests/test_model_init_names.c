// Each tensor's initial values are keyed by its open_clip name: a layout with an extra tensor
// (inserted in the middle, shifting every later offset and index) initialises every other tensor
// to the same bits, a different seed changes them, and model_init_params matches model_init_host.
#include "model.h" // defines: ModelConfig, ParamSpec, model_config_preset, model_layout, model_init_host, model_init_params
#include "testutil.h" // defines: CHECK, CHECK_OK

#include <stdlib.h> // defines: calloc, malloc, free
#include <string.h> // defines: memcmp, strcmp, snprintf

int main(void)
{
	ModelConfig c;
	CHECK_OK(model_config_preset(&c, "tiny"));
	int n;
	int64_t nf;
	CHECK_OK(model_layout(&c, NULL, &n, &nf));
	ParamSpec *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n + 1, sizeof *b);
	CHECK(a && b);
	CHECK_OK(model_layout(&c, a, &n, &nf));

	// b: a's tensors with a new one ("visual.extra_token", 37 floats, a normal init) in the middle
	const int at = n / 2;
	const int64_t extra = 37;
	for (int i = 0, j = 0; i < n; i++, j++) {
		if (i == at) {
			b[j] = a[i];
			snprintf(b[j].name, sizeof b[j].name, "visual.extra_token");
			b[j].numel = extra;
			j++;
		}
		b[j] = a[i];
	}
	for (int j = 0; j <= n; j++) // contiguous offsets
		b[j].offset = j ? b[j - 1].offset + b[j - 1].numel : 0;
	float *ha = malloc(sizeof(float) * (size_t)nf), *hb = malloc(sizeof(float) * (size_t)(nf + extra));
	float *hs = malloc(sizeof(float) * (size_t)nf);
	CHECK(ha && hb && hs);
	model_init_host(&c, a, n, ha, 7);
	model_init_host(&c, b, n + 1, hb, 7);
	model_init_host(&c, a, n, hs, 8);
	int same = 0, random = 0, reseeded = 0;
	for (int i = 0; i < n; i++) {
		const ParamSpec *sb = &b[i < at ? i : i + 1];
		CHECK(!strcmp(a[i].name, sb->name) && a[i].numel == sb->numel);
		if (memcmp(ha + a[i].offset, hb + sb->offset, sizeof(float) * (size_t)a[i].numel)) {
			printf("FAIL %s (index %d) changed when a tensor was added before it\n", a[i].name, i);
			return 1;
		}
		same++;
		int constant = 1; // a drawn tensor, not a fill: the seed must matter
		for (int64_t k = 1; k < a[i].numel && constant; k++)
			constant = ha[a[i].offset + k] == ha[a[i].offset];
		if (!constant) {
			random++;
			reseeded += memcmp(ha + a[i].offset, hs + a[i].offset, sizeof(float) * (size_t)a[i].numel) != 0;
		}
	}
	CHECK(random > 10 && reseeded == random);

	// the device path puts the same values in the flat buffer
	KernCtx *ctx;
	CHECK_OK(kern_ctx_create_cpu(&ctx, 1));
	KTensor flat;
	CHECK_OK(kern_alloc(ctx, &flat, KDT_F32, 1, &nf));
	CHECK_OK(model_init_params(ctx, &c, &flat, 7));
	CHECK_OK(kern_download(ctx, hs, sizeof(float) * (size_t)nf, &flat));
	CHECK(!memcmp(hs, ha, sizeof(float) * (size_t)nf));
	kern_free(ctx, &flat);
	kern_ctx_destroy(ctx);
	printf("init by name: %d tensors (%d drawn) bit-identical with an extra tensor inserted at %d\n", same, random,
	       at);
	free(a);
	free(b);
	free(ha);
	free(hb);
	free(hs);
	return 0;
}
