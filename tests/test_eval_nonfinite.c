// Evaluation refuses to score what it cannot rank: a model producing NaN features (NaN
// similarities rank like hits) fails naming the sample, and a caption token outside the
// model's vocabulary fails naming the sample and the token (a manifest whose checksums were
// recomputed after a token was changed).
#include "../tools/eval_run.h" // defines: eval_run, EvalOpts, EvalReport
#include "loader.h"            // defines: ld_libav_quiet
#include "ld_fixture.h"        // defines: ld_fixture_dataset, ld_fixture_tmpdir
#include "manifest.h"          // defines: ManifestHeader, manifest_crc32
#include "model.h"             // defines: model_init_params, clip_model_create
#include "testutil.h"          // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>
#include <math.h>
#include <stdlib.h>

// the manifest with sample s's caption token k set to id and both checksums made valid again
static void patch_token(const char *from, const char *to, uint64_t s, int k, uint16_t id)
{
	FILE *f = fopen(from, "rb");
	CHECK(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	uint8_t *b = malloc((size_t)n);
	CHECK(b && fread(b, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	ManifestHeader *h = (ManifestHeader *)b;
	uint16_t *tok = (uint16_t *)(b + h->tokens_off) + s * h->context;
	tok[k] = id;
	h->data_crc = manifest_crc32(0, b + h->header_size, (size_t)n - h->header_size);
	h->header_crc = 0;
	h->header_crc = manifest_crc32(0, h, sizeof *h);
	f = fopen(to, "wb");
	CHECK(f && fwrite(b, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	free(b);
}

int main(void)
{
	char dir[256], err[512], path[400], bad[400];
	ld_libav_quiet();
	CHECK_OK(ld_fixture_tmpdir(dir, sizeof dir));
	LdFixtureOpts fo = {.videos = 1,
			    .chunks_per_video = 1,
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
	KernCtx *ctx;
	ModelConfig cfg;
	ClipModel *m;
	CHECK_OK(kern_ctx_create_cpu(&ctx, 1));
	CHECK_OK(model_config_preset(&cfg, "tiny"));
	cfg.vocab = (int)manifest_header(man)->vocab_size;
	CHECK_OK(clip_model_create(&m, ctx, &cfg, EVAL_EMBED_BLOCK, KDT_F32));
	CHECK_OK(model_init_params(ctx, &cfg, &m->params, 5));
	EvalOpts o = {.embed = {.decoders = 1}};
	EvalReport r;
	CHECK_OK(eval_run(m, man, &o, &r, err, sizeof err));
	printf("finite model: t2v R@1 %.2f over %lld samples\n", r.t2v.r1, (long long)r.n);

	// a NaN in the text projection: every caption feature is NaN
	size_t nb = kern_nbytes(&m->params);
	float *host = malloc(nb);
	CHECK_OK(kern_download(ctx, host, nb, &m->params));
	const ParamSpec *s = NULL;
	for (int i = 0; i < m->n_specs && !s; i++)
		if (!strcmp(m->specs[i].name, "text_projection"))
			s = &m->specs[i];
	CHECK(s);
	host[s->offset] = NAN;
	CHECK_OK(kern_upload(ctx, &m->params, host, nb));
	int rc = eval_run(m, man, &o, &r, err, sizeof err);
	printf("NaN weight: rc %d: %s\n", rc, err);
	CHECK_EQ_INT(rc, -EDOM);
	CHECK(strstr(err, "caption feature of sample 0") && strstr(err, "nan"));
	host[s->offset] = 0.01f;
	CHECK_OK(kern_upload(ctx, &m->params, host, nb));

	// a token id past the model's vocabulary in sample 1's caption (a word: token 2 is its
	// <|endoftext|>, which manifest_open checks)
	snprintf(bad, sizeof bad, "%s/bad-token.bin", dir);
	patch_token(path, bad, 1, 1, (uint16_t)(cfg.vocab + 7));
	Manifest *mb;
	CHECK_OK(manifest_open(&mb, bad, err, sizeof err));
	rc = eval_run(m, mb, &o, &r, err, sizeof err);
	printf("token out of range: rc %d: %s\n", rc, err);
	CHECK_EQ_INT(rc, -EINVAL);
	char want[128];
	snprintf(want, sizeof want, "sample 1: caption token 1 is id %d, outside the model's vocabulary (%d)",
		 cfg.vocab + 7, cfg.vocab);
	CHECK(strstr(err, want));
	manifest_close(mb);
	manifest_close(man);
	free(host);
	clip_model_destroy(m);
	kern_ctx_destroy(ctx);
	snprintf(bad, sizeof bad, "rm -rf %s", dir);
	CHECK(system(bad) == 0);
	return 0;
}
