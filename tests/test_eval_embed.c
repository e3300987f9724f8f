// tools/eval's embedding equals the pipeline done by hand for each sample (eval-mode decode,
// the trainer's normalization without flip, one forward), whatever the batch size or decoder
// count; features are unit length; a sample that cannot be decoded fails naming its index.
#include "../tools/eval_embed.h" // defines: eval_embed_manifest, eval_embed_texts, eval_check_manifest
#include "loader.h"              // defines: ld_sample_load, LdFiles, ld_files_free, LdParams, ld_params_default
#include "ld_fixture.h"          // defines: ld_fixture_dataset, ld_fixture_tmpdir
#include "model.h"               // defines: model_init_params
#include "testutil.h"            // defines: CHECK, CHECK_OK, CHECK_EQ_INT
#include "augment_ref.h"         // defines: trainer_augment_batch

#include <errno.h>  // defines: EINVAL, ENOENT, ...
#include <math.h>   // defines: fabs, isnan, log2
#include <stdlib.h> // defines: malloc, free, system, mkdtemp
#include <string.h> // defines: memcmp, strstr, strcmp

static KernCtx *ctx;
static ModelConfig cfg;

static ClipModel *model(int B)
{
	ClipModel *m;
	CHECK_OK(clip_model_create(&m, ctx, &cfg, B, KDT_F32));
	CHECK_OK(model_init_params(ctx, &cfg, &m->params, 5));
	return m;
}

// sample i by hand with a batch-1 model: v, t (E)
static void by_hand(ClipModel *m1, const Manifest *man, uint64_t i, float *v, float *t)
{
	LdParams p;
	ld_params_default(&p);
	p.train = 0;
	p.flip = 0;
	p.frames = cfg.frames;
	p.out_w = p.out_h = cfg.image_size;
	size_t px = (size_t)cfg.frames * cfg.image_size * cfg.image_size * 3;
	uint8_t *clip = malloc(px);
	float *x = malloc(px * sizeof *x);
	int32_t ids[77];
	CHECK(clip && x);
	LdDecoder *d;
	CHECK_OK(ld_decoder_new(&d));
	LdFiles files = {0};
	LdPlan plan;
	char err[256];
	CHECK_OK(ld_sample_load(d, &files, man, i, &p, &plan, clip, err, sizeof err));
	CHECK_EQ_INT(plan.sample, i);
	uint64_t pos = i;
	trainer_augment_batch(clip, 1, cfg.frames, cfg.image_size, cfg.image_size, &pos, 99, 0, x);
	const uint16_t *tok = manifest_tokens(man, i);
	for (int j = 0; j < 77; j++)
		ids[j] = tok[j];
	KTensor vt =
		kern_tensor_make(x, KDT_F32, 5, (const int64_t[]){1, cfg.frames, cfg.image_size, cfg.image_size, 3});
	KTensor tt = kern_tensor_make(ids, KDT_I32, 2, (const int64_t[]){1, 77});
	CHECK_OK(clip_model_forward(m1, &vt, &tt));
	CHECK_OK(kern_download(ctx, v, sizeof(float) * cfg.embed_dim, &m1->vfeat));
	CHECK_OK(kern_download(ctx, t, sizeof(float) * cfg.embed_dim, &m1->tfeat));
	ld_files_free(&files);
	ld_decoder_free(d);
	free(clip);
	free(x);
}

static double max_diff(const float *a, const float *b, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs((double)a[i] - b[i]));
	return m;
}

int main(void)
{
	char dir[256], err[512], path[400];
	ld_libav_quiet();
	CHECK_OK(ld_fixture_tmpdir(dir, sizeof dir));
	LdFixtureOpts fo = {.videos = 2,
			    .chunks_per_video = 2,
			    .width = 64,
			    .height = 48,
			    .fps = 10,
			    .frames_per_chunk = 20,
			    .gop = 5,
			    .images = 2};
	if (ld_fixture_dataset(dir, &fo, err, sizeof err))
		test_skip(err); // no H.264 encoder in this libav build
	snprintf(path, sizeof path, "%s/manifest.bin", dir);
	Manifest *man;
	CHECK_OK(manifest_open(&man, path, err, sizeof err));
	const int64_t n = (int64_t)manifest_header(man)->n_samples;
	CHECK(n >= 4);
	CHECK_OK(kern_ctx_create_cpu(&ctx, 1));
	CHECK_OK(model_config_preset(&cfg, "tiny"));
	const int E = cfg.embed_dim;

	ClipModel *m1 = model(1), *m3 = model(EVAL_EMBED_BLOCK);
	float *v = malloc(sizeof(float) * n * E), *t = malloc(sizeof(float) * n * E);
	float *v2 = malloc(sizeof(float) * n * E), *t2 = malloc(sizeof(float) * n * E), hv[64], ht[64];
	CHECK(v && t && v2 && t2 && E <= 64);
	EvalEmbedOpts o = {.decoders = 1};
	CHECK_OK(eval_embed_manifest(m3, man, v, t, &o, err, sizeof err));
	double worst = 0;
	for (int64_t i = 0; i < n; i++) {
		by_hand(m1, man, (uint64_t)i, hv, ht);
		worst = fmax(worst, fmax(max_diff(hv, v + i * E, E), max_diff(ht, t + i * E, E)));
		double nv = 0, nt = 0;
		for (int k = 0; k < E; k++) {
			nv += (double)v[i * E + k] * v[i * E + k];
			nt += (double)t[i * E + k] * t[i * E + k];
		}
		CHECK(fabs(nv - 1) < 1e-4 && fabs(nt - 1) < 1e-4);
	}
	printf("%lld samples: largest difference to the pipeline by hand %.2e\n", (long long)n, worst);
	CHECK(worst < 1e-4);
	// more decoders than one: the same features, bit for bit
	o.decoders = 3;
	CHECK_OK(eval_embed_manifest(m3, man, v2, t2, &o, err, sizeof err));
	CHECK(!memcmp(v, v2, sizeof(float) * n * E) && !memcmp(t, t2, sizeof(float) * n * E));
	// any round size (tools/eval --round-size): the same features, bit for bit, because the model
	// runs fixed blocks whatever the round
	for (int r = 1; r <= 17; r += 8) {
		o.round = r;
		CHECK_OK(eval_embed_manifest(m3, man, v2, t2, &o, err, sizeof err));
		CHECK(!memcmp(v, v2, sizeof(float) * n * E) && !memcmp(t, t2, sizeof(float) * n * E));
	}
	o.round = 0;
	// a model of another batch is refused rather than giving batch-dependent features
	ClipModel *mb = model(3);
	CHECK_EQ_INT(eval_embed_manifest(mb, man, v2, t2, &o, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "fixed block"));
	clip_model_destroy(mb);
	// the captions' tokens as prompts give the captions' features
	int32_t *ids = malloc(sizeof *ids * n * 77);
	CHECK(ids);
	for (int64_t i = 0; i < n; i++)
		for (int j = 0; j < 77; j++)
			ids[i * 77 + j] = manifest_tokens(man, (uint64_t)i)[j];
	CHECK_OK(eval_embed_texts(m3, ids, n, t2, err, sizeof err));
	CHECK(max_diff(t, t2, (size_t)n * E) < 1e-5);
	ids[77] = cfg.vocab; // out of the vocabulary
	CHECK_EQ_INT(eval_embed_texts(m3, ids, n, t2, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "prompt 1 has token id"));

	// a model whose text context differs from the captions'
	ModelConfig short_ctx = cfg;
	short_ctx.ctx_len = 16;
	ClipModel *ms;
	CHECK_OK(clip_model_create(&ms, ctx, &short_ctx, EVAL_EMBED_BLOCK, KDT_F32));
	CHECK_EQ_INT(eval_check_manifest(ms, man, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "context 77, the model's text tower 16"));
	clip_model_destroy(ms);

	// a chunk gone: the first sample reading it fails, named
	snprintf(path, sizeof path, "%s/%s", dir, manifest_string(man, manifest_chunk(man, 0)->path_off));
	CHECK(!remove(path));
	int rc = eval_embed_manifest(m3, man, v2, t2, &o, err, sizeof err);
	printf("missing chunk: %d %s\n", rc, err);
	CHECK(rc < 0 && strstr(err, "sample 0:"));

	free(ids);
	free(v);
	free(t);
	free(v2);
	free(t2);
	clip_model_destroy(m1);
	clip_model_destroy(m3);
	kern_ctx_destroy(ctx);
	manifest_close(man);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(!system(cmd));
	printf("eval embedding: same as by hand, batch and decoder independent, errors named\n");
	return 0;
}
