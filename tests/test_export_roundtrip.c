// open_clip weights in and out: a checkpoint exported under open_clip's names (tools/export's
// library path) loads back through --init-from's path with the same features: bit for bit with
// the temporal embedding kept, within 1e-6 when it is folded into the positions (--image, a
// 1-frame QuickGELU model). Projection widths that differ are named and skipped only on request;
// a wrong head count or activation against the file's metadata is named, by --init-from and by
// tools/eval --weights, which takes the file's configuration without flags; the checkpoint holds
// no U64 tensor. With --keep DIR it leaves DIR/ckpt and DIR/inputs.safetensors (inputs and our
// features) for tools/ref/openclip_check.py (tests/test_export_openclip.sh).
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tools/eval_model.h" // defines: eval_model_load, eval_model_free
#include "model.h" // defines: ckpt_save, ckpt_latest_path, ClipModel, clip_model_create, clip_model_forward, st_open, st_count, st_entry, st_write, st_openclip_export, st_openclip_init
#include "testutil.h" // defines: CHECK, CHECK_OK, CHECK_EQ_INT

enum { B = 4 };
static KernCtx *ctx;

static void small(ModelConfig *c)
{
	CHECK_OK(model_config_preset(c, "tiny"));
	c->image_size = 16, c->patch = 8, c->frames = 1, c->vis_width = 32, c->vis_layers = 2, c->vis_heads = 2;
	c->vocab = 64, c->ctx_len = 8, c->txt_width = 32, c->txt_layers = 2, c->txt_heads = 2, c->embed_dim = 16;
	c->act = MODEL_ACT_QUICKGELU;
}

static ClipModel *model(const ModelConfig *c, uint64_t seed)
{
	ClipModel *m;
	CHECK_OK(clip_model_create(&m, ctx, c, B, KDT_F32));
	CHECK_OK(model_init_params(ctx, c, &m->params, seed));
	return m;
}

static float video[B * 1 * 16 * 16 * 3];
static int32_t text[B * 8];

// (v | t) features (2, B, E) of the fixed batch
static void features(ClipModel *m, float *out)
{
	const ModelConfig *c = &m->cfg;
	KTensor tv, tt;
	CHECK_OK(kern_alloc(ctx, &tv, KDT_F32, 5, (int64_t[]){B, 1, c->image_size, c->image_size, 3}));
	CHECK_OK(kern_alloc(ctx, &tt, KDT_I32, 2, (int64_t[]){B, c->ctx_len}));
	CHECK_OK(kern_upload(ctx, &tv, video, sizeof video));
	CHECK_OK(kern_upload(ctx, &tt, text, sizeof text));
	CHECK_OK(clip_model_forward(m, &tv, &tt));
	size_t fb = sizeof(float) * B * (size_t)c->embed_dim;
	CHECK_OK(kern_download(ctx, out, fb, &m->vfeat));
	CHECK_OK(kern_download(ctx, out + B * c->embed_dim, fb, &m->tfeat));
	kern_free(ctx, &tv);
	kern_free(ctx, &tt);
}

static double max_diff(const float *a, const float *b, int n)
{
	double d = 0;
	for (int i = 0; i < n; i++)
		d = fmax(d, fabs((double)a[i] - b[i]));
	return d;
}

int main(int argc, char **argv)
{
	const char *keep = argc > 2 && !strcmp(argv[1], "--keep") ? argv[2] : NULL;
	char dir[256], ck[300], fv[300], fi[300], err[1024];
	if (keep)
		snprintf(dir, sizeof dir, "%s", keep);
	else
		CHECK(mkdtemp(strcpy(dir, "/tmp/test_export_XXXXXX")));
	snprintf(ck, sizeof ck, "%s/ckpt", dir);
	snprintf(fv, sizeof fv, "%s/video.safetensors", dir);
	snprintf(fi, sizeof fi, "%s/image.safetensors", dir);
	mkdir(ck, 0755);
	CHECK_OK(kern_ctx_create_cpu(&ctx, 1));
	ModelConfig cfg;
	small(&cfg);
	uint64_t s = 99;
	for (size_t i = 0; i < sizeof video / sizeof *video; i++)
		video[i] = (float)((double)((s = s * 6364136223846793005ull + 1442695040888963407ull) >> 11) /
					   9007199254740992.0 * 2 -
				   1);
	for (int b = 0; b < B; b++)
		for (int j = 0; j < 8; j++)
			text[b * 8 + j] = j < 2 + b ? 1 + (b * 7 + j * 5) % 60 : j == 2 + b ? 63 : 0;

	// the trained model: a temporal embedding that is not zero, so folding it matters
	ClipModel *a = model(&cfg, 3);
	float tp[32];
	for (int d = 0; d < 32; d++)
		tp[d] = 0.05f * (float)(d % 7) - 0.1f;
	CHECK_OK(kern_upload(ctx, &a->w.tpos, tp, sizeof tp));
	float f0[2 * B * 16], f1[2 * B * 16];
	features(a, f0);
	CkptTarget tg = {.ctx = ctx, .cfg = &cfg, .specs = a->specs, .n_specs = a->n_specs, .params = &a->params};
	CkptState st = {.step = 7, .stream_pos = 1ull << 63, .rng = {~0ull, 1, 2, 3}};
	CHECK_OK(ckpt_save(ck, &tg, &st, 0, err, sizeof err));

	// the checkpoint: dtypes every safetensors reader opens (no U64)
	char cpath[400];
	CHECK_OK(ckpt_latest_path(ck, cpath, sizeof cpath, err, sizeof err));
	StFile *f;
	CHECK_OK(st_open(&f, cpath));
	for (int i = 0; i < st_count(f); i++)
		if (st_entry(f, i)->dtype == ST_U64) {
			printf("FAIL checkpoint tensor %s is U64\n", st_entry(f, i)->name);
			return 1;
		}
	st_close(f);

	// export as tools/export does: from the checkpoint on disk
	EvalModel em;
	CHECK_OK(eval_model_load(&em, ctx, ck, NULL, 1, err, sizeof err));
	CHECK_OK(st_openclip_export(fv, ctx, &em.cfg, em.model->specs, em.model->n_specs, &em.model->params, 0, NULL,
				    NULL, err, sizeof err));
	CHECK_OK(st_openclip_export(fi, ctx, &em.cfg, em.model->specs, em.model->n_specs, &em.model->params, 1, NULL,
				    NULL, err, sizeof err));
	eval_model_free(&em);
	CHECK_OK(st_open(&f, fi));
	CHECK(!st_find(f, "visual.temporal_embedding") && !strcmp(st_meta(f, "vision.heads"), "2") &&
	      !strcmp(st_meta(f, "act"), "quick_gelu") && !strcmp(st_meta(f, "vision.frames"), "1"));
	st_close(f);

	// in again through --init-from's path, into models initialised from another seed
	StInitOpts io = {0};
	ClipModel *b = model(&cfg, 11);
	CHECK_OK(st_openclip_init(fv, ctx, &cfg, b->specs, b->n_specs, &b->params, &io, err, sizeof err));
	features(b, f1);
	double dv = max_diff(f0, f1, 2 * B * 16);
	printf("export -> init-from, temporal embedding kept: max |diff| %.3g\n", dv);
	CHECK(dv == 0);
	ClipModel *c = model(&cfg, 12); // its temporal embedding starts at zero: the folded file has none
	CHECK_OK(st_openclip_init(fi, ctx, &cfg, c->specs, c->n_specs, &c->params, &io, err, sizeof err));
	features(c, f1);
	double di = max_diff(f0, f1, 2 * B * 16);
	printf("export --image -> init-from (temporal embedding folded): max |diff| %.3g\n", di);
	CHECK(di < 1e-6);

	// projections of another width: named; kept at their initial values only on request
	ModelConfig wide = cfg;
	wide.embed_dim = 24;
	ClipModel *d = model(&wide, 13);
	int rc = st_openclip_init(fv, ctx, &wide, d->specs, d->n_specs, &d->params, &io, err, sizeof err);
	printf("embed 24 from 16: %s\n", err);
	CHECK(rc == -EINVAL && strstr(err, "visual.proj") && strstr(err, "text_projection") &&
	      strstr(err, "--init-skip-mismatched"));
	io.skip_mismatched = 1;
	CHECK_OK(st_openclip_init(fv, ctx, &wide, d->specs, d->n_specs, &d->params, &io, err, sizeof err));
	CHECK(strstr(io.note, "visual.proj") && strstr(io.note, "text_projection"));
	io.skip_mismatched = 0;
	// the head count and the activation against the file's metadata
	ModelConfig heads = cfg;
	heads.vis_heads = 4;
	ClipModel *e = model(&heads, 14);
	rc = st_openclip_init(fv, ctx, &heads, e->specs, e->n_specs, &e->params, &io, err, sizeof err);
	printf("4 heads from 2: %s\n", err);
	CHECK(rc == -EINVAL && strstr(err, "vision.heads is 2") && strstr(err, "--vis-heads is 4"));
	ModelConfig gelu = cfg;
	gelu.act = MODEL_ACT_GELU;
	ClipModel *g = model(&gelu, 15);
	rc = st_openclip_init(fv, ctx, &gelu, g->specs, g->n_specs, &g->params, &io, err, sizeof err);
	printf("gelu from quick_gelu: %s\n", err);
	CHECK(rc == -EINVAL && strstr(err, "quick_gelu"));

	// tools/eval --weights: the configuration comes from the file's metadata (no flags: a
	// QuickGELU model with the trainer's features), and one that contradicts it is refused
	CHECK_OK(eval_model_load(&em, ctx, fv, NULL, B, err, sizeof err));
	CHECK(!memcmp(&em.cfg, &cfg, sizeof cfg) && em.cfg.act == MODEL_ACT_QUICKGELU);
	features(em.model, f1);
	double de = max_diff(f0, f1, 2 * B * 16);
	printf("export -> eval --weights without flags: %s, max |diff| %.3g\n", model_act_name(em.cfg.act), de);
	CHECK(de == 0);
	eval_model_free(&em);
	CHECK_OK(eval_model_load(&em, ctx, fv, &cfg, B, err, sizeof err)); // flags that agree
	eval_model_free(&em);
	rc = eval_model_load(&em, ctx, fv, &heads, B, err, sizeof err);
	printf("eval --weights --vis-heads 4: %s\n", err);
	CHECK(rc == -EINVAL && strstr(err, "--vis-heads is 2 in the weights, 4 in the requested model"));
	rc = eval_model_load(&em, ctx, fv, &gelu, B, err, sizeof err);
	printf("eval --weights --act gelu: %s\n", err);
	CHECK(rc == -EINVAL && strstr(err, "--act is quickgelu in the weights, gelu in the requested model"));
	// what the check prevents: the same weights run as GELU give other features
	CHECK_OK(kern_copy(ctx, &g->params, &a->params));
	features(g, f1);
	double dg = max_diff(f0, f1, 2 * B * 16);
	printf("the same weights as GELU: max |diff| %.3g\n", dg);
	CHECK(dg > 1e-4);

	if (keep) { // inputs and our features for the open_clip / PyTorch check
		StTensor t[4] = {
			{.name = "input/video",
			 .dtype = ST_F32,
			 .ndim = 5,
			 .shape = {B, 1, 16, 16, 3},
			 .data = video,
			 .nbytes = sizeof video},
			{.name = "input/text",
			 .dtype = ST_I32,
			 .ndim = 2,
			 .shape = {B, 8},
			 .data = text,
			 .nbytes = sizeof text},
			{.name = "out/video_features",
			 .dtype = ST_F32,
			 .ndim = 2,
			 .shape = {B, 16},
			 .data = f0,
			 .nbytes = sizeof f0 / 2},
			{.name = "out/text_features",
			 .dtype = ST_F32,
			 .ndim = 2,
			 .shape = {B, 16},
			 .data = f0 + B * 16,
			 .nbytes = sizeof f0 / 2},
		};
		char ip[300];
		snprintf(ip, sizeof ip, "%s/inputs.safetensors", dir);
		CHECK_OK(st_write(ip, t, 4, NULL, 0));
	} else {
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		CHECK(system(cmd) == 0);
	}
	ClipModel *all[] = {a, b, c, d, e, g};
	for (int i = 0; i < 6; i++)
		clip_model_destroy(all[i]);
	kern_ctx_destroy(ctx);
	printf("PASS open_clip weights out and in: same features, mismatches named\n");
	return 0;
}
