// Synthetic batches: counter-based hashing of (seed, pair, element), so every batch is
// reproducible without any RNG state to checkpoint.
#include "model.h" // defines: model_synth_batch, model_synth_step

#include <errno.h>
#include <stdlib.h>
#include <string.h> // defines: memset

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

int model_synth_batch(KernCtx *ctx, const ModelConfig *cfg, uint64_t seed, uint64_t step, int pool, KTensor *video,
		      KTensor *text)
{
	if (!video || !text || video->ndim != 5 || text->ndim != 2 || text->dtype != KDT_I32 || pool <= 0 ||
	    (video->dtype != KDT_F32 && video->dtype != KDT_F64) || text->shape[0] != video->shape[0] ||
	    cfg->ctx_len < 4)
		return -EINVAL;
	int64_t B = video->shape[0], per = kern_numel(video) / B, L = text->shape[1];
	float *px = malloc(sizeof(float) * (size_t)(per * B));
	int32_t *ids = calloc((size_t)(B * L), sizeof *ids);
	if (!px || !ids) {
		free(px);
		free(ids);
		return -ENOMEM;
	}
	for (int64_t b = 0; b < B; b++) {
		uint64_t k = mix(seed ^ mix(step * 1000003ull + (uint64_t)b)) % (uint64_t)pool;
		uint64_t key = mix(seed * 31 + k);
		for (int64_t i = 0; i < per; i++)
			px[b * per + i] = (float)((double)(mix(key + (uint64_t)i) >> 11) / 4503599627370496.0 - 1.0);
		int64_t n = 3 + (int64_t)(mix(key ^ 0xabcdefull) % (uint64_t)(L - 3)); // tokens incl. the end token
		for (int64_t i = 0; i < n - 1; i++)
			ids[b * L + i] = 1 + (int32_t)(mix(key + 7777 + (uint64_t)i) % (uint64_t)(cfg->vocab - 2));
		ids[b * L + n - 1] = cfg->vocab - 1;
	}
	int rc;
	if (video->dtype == KDT_F32) {
		rc = kern_upload(ctx, video, px, kern_nbytes(video));
	} else {
		KTensor tmp;
		int64_t n = per * B;
		rc = kern_alloc(ctx, &tmp, KDT_F32, 1, &n);
		if (!rc)
			rc = kern_upload(ctx, &tmp, px, sizeof(float) * (size_t)n);
		if (!rc)
			rc = kern_convert(ctx, video, &tmp);
		kern_free(ctx, &tmp);
	}
	if (!rc)
		rc = kern_upload(ctx, text, ids, kern_nbytes(text));
	free(px);
	free(ids);
	return rc;
}

int model_synth_step(KernCtx *c, const ModelConfig *cfg, int B, KDtype dt, uint64_t wseed, uint64_t bseed,
		     ModelSynthStep *r)
{
	const int64_t sv[] = {B, cfg->frames, cfg->image_size, cfg->image_size, 3}, st[] = {B, cfg->ctx_len};
	memset(r, 0, sizeof *r);
	int rc = clip_model_create(&r->m, c, cfg, B, dt);
	rc = rc ? rc : model_init_params(c, cfg, &r->m->params, wseed);
	rc = rc ? rc : clip_model_sync_weights(r->m);
	rc = rc ? rc : kern_alloc(c, &r->video, KDT_F32, 5, sv);
	rc = rc ? rc : kern_alloc(c, &r->text, KDT_I32, 2, st);
	rc = rc ? rc : model_synth_batch(c, cfg, bseed, 1, 64, &r->video, &r->text);
	return rc ? rc : clip_model_infonce_step(r->m, &r->video, &r->text, &r->loss);
}

void model_synth_step_free(KernCtx *c, ModelSynthStep *r)
{
	kern_free(c, &r->video), kern_free(c, &r->text);
	if (r->m)
		clip_model_destroy(r->m);
	r->m = NULL;
}
