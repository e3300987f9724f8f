// tools/eval's multi-view embedding (EGTEA's protocol: C temporal clips x S crops, frames at a
// stride) equals each view decoded and embedded alone by hand, and the combined class scores are
// the class-by-class max of those single-view scores (LaViLa's eval_zeroshot.py); bad view
// settings are refused.
#include "../tools/eval_bench_run.h" // defines: eval_views_max
#include "../tools/eval_embed.h"     // defines: eval_embed_manifest, EvalEmbedOpts
#include "augment_ref.h"             // defines: trainer_augment_batch
#include "loader.h"     // defines: ld_sample_load, LdFiles, ld_files_free, LdParams, ld_params_default, LdCropPos
#include "ld_fixture.h" // defines: ld_fixture_dataset, ld_fixture_tmpdir
#include "model.h"      // defines: model_init_params
#include "testutil.h"   // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>  // defines: EINVAL
#include <math.h>   // defines: fabs, fmax
#include <stdlib.h> // defines: malloc, free, system
#include <string.h> // defines: strstr

enum { CLIPS = 2, CROPS = 3, V = CLIPS * CROPS, STRIDE = 2, K = 3 };

static KernCtx *ctx;
static ModelConfig cfg;

static ClipModel *model(int B)
{
	ClipModel *m;
	CHECK_OK(clip_model_create(&m, ctx, &cfg, B, KDT_F32));
	CHECK_OK(model_init_params(ctx, &cfg, &m->params, 5));
	return m;
}

// view (c, s) of sample i by hand, with the loader's view fields and a batch-1 model: v (E)
static void by_hand(ClipModel *m1, const Manifest *man, uint64_t i, int c, int s, float *v)
{
	const LdCropPos pos[CROPS] = {LD_CROP_START, LD_CROP_CENTRE, LD_CROP_END};
	LdParams p;
	ld_params_default(&p);
	p.train = p.flip = 0;
	p.frames = cfg.frames;
	p.out_w = p.out_h = cfg.image_size;
	p.stride = STRIDE;
	p.view_clips = CLIPS;
	p.view_clip = c;
	p.crop_pos = pos[s];
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
	uint64_t g = i;
	trainer_augment_batch(clip, 1, cfg.frames, cfg.image_size, cfg.image_size, &g, 99, 0, x);
	for (int j = 0; j < 77; j++)
		ids[j] = manifest_tokens(man, i)[j];
	KTensor vt =
		kern_tensor_make(x, KDT_F32, 5, (const int64_t[]){1, cfg.frames, cfg.image_size, cfg.image_size, 3});
	KTensor tt = kern_tensor_make(ids, KDT_I32, 2, (const int64_t[]){1, 77});
	CHECK_OK(clip_model_forward(m1, &vt, &tt));
	CHECK_OK(kern_download(ctx, v, sizeof(float) * cfg.embed_dim, &m1->vfeat));
	ld_files_free(&files);
	ld_decoder_free(d);
	free(clip);
	free(x);
}

static float dot(const float *a, const float *b, int E)
{
	double s = 0;
	for (int k = 0; k < E; k++)
		s += (double)a[k] * b[k];
	return (float)s;
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
			    .gop = 5};
	if (ld_fixture_dataset(dir, &fo, err, sizeof err))
		test_skip(err); // no H.264 encoder in this libav build
	snprintf(path, sizeof path, "%s/manifest.bin", dir);
	Manifest *man;
	CHECK_OK(manifest_open(&man, path, err, sizeof err));
	const int64_t n = (int64_t)manifest_header(man)->n_samples;
	CHECK_OK(kern_ctx_create_cpu(&ctx, 1));
	CHECK_OK(model_config_preset(&cfg, "tiny"));
	cfg.frames = 4;
	const int E = cfg.embed_dim;
	ClipModel *m1 = model(1), *m8 = model(EVAL_EMBED_BLOCK);
	float *vf = malloc(sizeof(float) * n * V * E), *tf = malloc(sizeof(float) * n * E);
	float *hv = malloc(sizeof(float) * n * V * E), cls[K * 64], sv[V * K], mine[K], got[K];
	CHECK(vf && tf && hv && E <= 64);
	EvalEmbedOpts o = {.decoders = 2, .round = 5, .stride = STRIDE, .views_clips = CLIPS, .views_crops = CROPS};
	CHECK_EQ_INT(eval_embed_views(&o), V);
	CHECK_OK(eval_embed_manifest(m8, man, vf, tf, &o, err, sizeof err));
	for (int k = 0; k < K * E; k++) // class features: any fixed vectors
		cls[k] = (float)sin(0.7 * k + 1);
	double worst = 0, worst_score = 0;
	int differ = 0;
	for (int64_t i = 0; i < n; i++) {
		for (int v = 0; v < V; v++) {
			float *h = hv + (i * V + v) * E;
			by_hand(m1, man, (uint64_t)i, v / CROPS, v % CROPS, h);
			for (int e = 0; e < E; e++)
				worst = fmax(worst, fabs(h[e] - vf[(i * V + v) * E + e]));
			differ += v && fabs(h[0] - hv[i * V * E]) > 1e-6; // the views are different clips
			for (int k = 0; k < K; k++)                       // the product's view scores
				sv[v * K + k] = dot(vf + (i * V + v) * E, cls + k * E, E);
		}
		for (int k = 0; k < K; k++) { // the max of the single views' scores, by hand
			mine[k] = -1e30f;
			for (int v = 0; v < V; v++)
				mine[k] = fmaxf(mine[k], dot(hv + (i * V + v) * E, cls + k * E, E));
		}
		eval_views_max(sv, 1, V, K, got);
		for (int k = 0; k < K; k++)
			worst_score = fmax(worst_score, fabs(got[k] - mine[k]));
	}
	printf("%lld samples x %d views: features %.2e, combined scores %.2e from the single views by hand; "
	       "%d views differ from their sample's first\n",
	       (long long)n, V, worst, worst_score, differ);
	CHECK(worst < 1e-4 && worst_score < 1e-4 && differ > n * (V - 2));
	// the text features are the captions' whatever the views (the embedding of one view)
	EvalEmbedOpts one = {.decoders = 1};
	float *tf1 = malloc(sizeof(float) * n * E), *vf1 = malloc(sizeof(float) * n * E);
	CHECK(tf1 && vf1);
	CHECK_OK(eval_embed_manifest(m8, man, vf1, tf1, &one, err, sizeof err));
	for (int64_t k = 0; k < n * E; k++)
		CHECK(fabs(tf1[k] - tf[k]) < 1e-4);
	// refused: two crops (LaViLa's SpatialCrop takes 1 or 3), a damaged list (every view counts)
	o.views_crops = 2;
	CHECK_EQ_INT(eval_embed_manifest(m8, man, vf, tf, &o, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "2 spatial crops: 1 (centre) or 3"));
	unsigned char dmg[64];
	o.views_crops = CROPS;
	o.damaged = dmg;
	CHECK_EQ_INT(eval_embed_manifest(m8, man, vf, tf, &o, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "no damaged-sample list"));

	free(vf);
	free(tf);
	free(hv);
	free(tf1);
	free(vf1);
	clip_model_destroy(m1);
	clip_model_destroy(m8);
	kern_ctx_destroy(ctx);
	manifest_close(man);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(!system(cmd));
	printf("eval views: each view as embedded alone, scores combined by the max, bad settings refused\n");
	return 0;
}
