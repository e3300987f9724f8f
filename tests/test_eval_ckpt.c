// tools/eval's model loading: a run directory, its ckpt/ folder and a checkpoint file give the
// saved weights and step; another configuration is refused naming the tensor and both shapes;
// a missing or broken checkpoint and open_clip weights without a configuration get clear errors.
#include "../tools/eval_model.h" // defines: eval_model_load, eval_config_parse, eval_config_str
#include "model.h"               // defines: ckpt_save, CkptTarget, CkptState, st_model_save
#include "testutil.h"            // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>    // defines: EINVAL, ENOENT, ...
#include <stdlib.h>   // defines: malloc, free, system, mkdtemp
#include <string.h>   // defines: memcmp, strstr, strcmp
#include <sys/stat.h> // defines: mkdir

static KernCtx *ctx;
static char dir[] = "/tmp/test_eval_ckpt_XXXXXX";

static int same_params(const ClipModel *a, const ClipModel *b)
{
	size_t n = kern_nbytes(&a->params);
	return n == kern_nbytes(&b->params) && !memcmp(a->params.data, b->params.data, n); // CPU backend: host memory
}

static void expect_err(const char *path, const ModelConfig *want, int rc_want, const char *needle)
{
	EvalModel em;
	char err[1024] = "";
	int rc = eval_model_load(&em, ctx, path, want, 2, err, sizeof err);
	if (rc != rc_want || !strstr(err, needle)) {
		fprintf(stderr, "%s: got %d '%s', expected %d with '%s'\n", path, rc, err, rc_want, needle);
		exit(1);
	}
	printf("ok: %s\n", err);
}

int main(void)
{
	CHECK(mkdtemp(dir));
	CHECK_OK(kern_ctx_create_cpu(&ctx, 1));
	ModelConfig cfg;
	CHECK_OK(model_config_preset(&cfg, "tiny"));
	char s[200];
	ModelConfig back;
	eval_config_str(&cfg, s, sizeof s);
	CHECK_OK(eval_config_parse(s, &back));
	CHECK(!memcmp(&back, &cfg, sizeof cfg));
	CHECK_EQ_INT(eval_config_parse("img32 p8 T2", &back), -EINVAL);

	// a trained-looking model saved the way the trainer saves it
	ClipModel *m;
	CHECK_OK(clip_model_create(&m, ctx, &cfg, 2, KDT_F32));
	CHECK_OK(model_init_params(ctx, &cfg, &m->params, 7));
	char run[256], ck[300], err[1024];
	snprintf(run, sizeof run, "%s/run", dir);
	snprintf(ck, sizeof ck, "%s/ckpt", run);
	CHECK(!mkdir(run, 0755) && !mkdir(ck, 0755));
	CkptTarget t = {.ctx = ctx, .cfg = &cfg, .specs = m->specs, .n_specs = m->n_specs, .params = &m->params};
	CkptState st = {.step = 42};
	CHECK_OK(ckpt_save(ck, &t, &st, 0, err, sizeof err));

	char file[400];
	snprintf(file, sizeof file, "%s/ckpt-00000042.safetensors", ck);
	const char *paths[] = {run, ck, file};
	for (int i = 0; i < 3; i++) {
		EvalModel em;
		CHECK_OK(eval_model_load(&em, ctx, paths[i], NULL, 3, err, sizeof err));
		CHECK_EQ_INT(em.step, 42);
		CHECK(same_params(em.model, m));
		CHECK_EQ_INT(em.model->B, 3);
		CHECK(strstr(em.source, "ckpt-00000042.safetensors"));
		eval_model_free(&em);
		// the same configuration asked for explicitly is fine
		CHECK_OK(eval_model_load(&em, ctx, paths[i], &cfg, 1, err, sizeof err));
		eval_model_free(&em);
	}

	// another configuration: the first tensor whose shape differs, with both shapes
	ModelConfig wide = cfg;
	wide.vis_width = 32;
	expect_err(run, &wide, -EINVAL,
		   "tensor visual.class_embedding is (64,) in the checkpoint, (32,) in the requested model");
	ModelConfig deep = cfg;
	deep.txt_layers = 3;
	expect_err(run, &deep, -EINVAL,
		   "tensor transformer.resblocks.2.ln_1.weight (64,) of the requested model is not in the checkpoint");
	ModelConfig heads = cfg;
	heads.vis_heads = 4;
	expect_err(file, &heads, -EINVAL, "vis-heads is 2 in the checkpoint, 4 in the requested model");

	// nothing there, or not a checkpoint
	char empty[300], junk[300], missing[300];
	snprintf(empty, sizeof empty, "%s/empty", dir);
	CHECK(!mkdir(empty, 0755));
	expect_err(empty, NULL, -ENOENT, "holds no checkpoint");
	snprintf(missing, sizeof missing, "%s/nope", dir);
	expect_err(missing, NULL, -ENOENT, "No such file");
	snprintf(junk, sizeof junk, "%s/junk.safetensors", dir);
	FILE *f = fopen(junk, "w");
	CHECK(f && fputs("not a safetensors file at all", f) >= 0 && !fclose(f));
	expect_err(junk, NULL, -EBADMSG, "not a safetensors checkpoint or weights file");
	// LATEST naming a file that is gone
	char lost[300], marker[400];
	snprintf(lost, sizeof lost, "%s/lost", dir);
	CHECK(!mkdir(lost, 0755));
	snprintf(marker, sizeof marker, "%s/LATEST", lost);
	f = fopen(marker, "w");
	CHECK(f && fputs("ckpt-00000001.safetensors\n", f) >= 0 && !fclose(f));
	expect_err(lost, NULL, -ENOENT, "ckpt-00000001.safetensors: No such file");

	// open_clip-named weights: need a configuration; a shape mismatch names the tensor
	char w[300];
	snprintf(w, sizeof w, "%s/weights.safetensors", dir);
	CHECK_OK(st_model_save(w, ctx, m->specs, m->n_specs, &m->params, NULL, 0));
	expect_err(w, NULL, -EINVAL, "without a model configuration");
	EvalModel em;
	CHECK_OK(eval_model_load(&em, ctx, w, &cfg, 2, err, sizeof err));
	CHECK(same_params(em.model, m));
	CHECK_EQ_INT(em.step, -1);
	eval_model_free(&em);
	expect_err(w, &wide, -EINVAL, "visual.class_embedding");

	// an initialisation is reproducible from its seed
	CHECK_OK(eval_model_init(&em, ctx, &cfg, 7, 2, err, sizeof err));
	CHECK(same_params(em.model, m));
	CHECK(!strcmp(em.source, "init:7"));
	eval_model_free(&em);

	clip_model_destroy(m);
	kern_ctx_destroy(ctx);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(!system(cmd));
	printf("eval model loading: run dir, ckpt dir, file, weights, and every mismatch explained\n");
	return 0;
}
