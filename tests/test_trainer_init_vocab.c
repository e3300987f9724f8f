// Which vocabulary --init-from weights read, and the refusal of another: a foreign file (open_clip's,
// OpenAI's: no avclip.* metadata) of a 49408-token embedding reads OpenAI's merges, so a training
// manifest of another vocabulary is refused naming bpe_simple_vocab_16e6.txt.gz and OpenAI's
// passes; a file of ours records its vocabulary (avclip.vocab) and only that one passes; a file
// that records none and is not OpenAI-sized is let through (with a warning: nothing to compare).
#include "bpe.h" // defines: BPE_OPENAI_VOCAB_HASH
#include "model.h" // defines: ModelConfig, model_config_preset, model_layout, st_model_save, st_openclip_export, st_openclip_init
#include "testutil.h"      // defines: CHECK, CHECK_OK, EXPECT, test_failures
#include "trainer_start.h" // defines: TrainerVocab, trainer_start_init_report

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static KernCtx *ctx;

// the file's StInitOpts after loading it into a model of cfg
static StInitOpts load(const char *path, const ModelConfig *cfg, ParamSpec *specs, int n, KTensor *p)
{
	StInitOpts io = {0};
	char err[512];
	int rc = st_openclip_init(path, ctx, cfg, specs, n, p, &io, err, sizeof err);
	if (rc)
		fprintf(stderr, "st_openclip_init %s: %s\n", path, err);
	CHECK_OK(rc);
	return io;
}

static int report(const char *path, uint64_t manifest_vocab, const StInitOpts *io, char *err, size_t errlen)
{
	static TrainerConfig c;
	snprintf(c.init_from, sizeof c.init_from, "%s", path);
	snprintf(c.manifest, sizeof c.manifest, "train/manifest");
	snprintf(c.loss_name, sizeof c.loss_name, "fastclip-v3");
	c.loss.tau_init = 0.07;
	TrainerVocab v = {.hash = manifest_vocab};
	snprintf(v.hex, sizeof v.hex, "%016llx", (unsigned long long)manifest_vocab);
	err[0] = 0;
	return trainer_start_init_report(&c, &v, io, err, errlen);
}

int main(void)
{
	CHECK_OK(kern_ctx_create_cpu(&ctx, 1));
	ModelConfig cfg;
	CHECK_OK(model_config_preset(&cfg, "tiny"));
	cfg.image_size = 16, cfg.patch = 8, cfg.frames = 1, cfg.vis_width = 32, cfg.vis_layers = 1, cfg.vis_heads = 2;
	cfg.vocab = 49408, cfg.ctx_len = 8, cfg.txt_width = 32, cfg.txt_layers = 1, cfg.txt_heads = 2,
	cfg.embed_dim = 16;
	int n;
	int64_t floats;
	model_layout(&cfg, NULL, &n, &floats);
	static ParamSpec specs[64];
	CHECK(n <= 64);
	model_layout(&cfg, specs, &n, &floats);
	KTensor p;
	CHECK_OK(kern_alloc(ctx, &p, KDT_F32, 1, &floats));
	CHECK_OK(model_init_params(ctx, &cfg, &p, 3));
	char dir[] = "/tmp/test_init_vocab_XXXXXX", foreign[128], ours[128], err[2048];
	CHECK(mkdtemp(dir));
	snprintf(foreign, sizeof foreign, "%s/openai.safetensors", dir);
	snprintf(ours, sizeof ours, "%s/ours.safetensors", dir);

	// a foreign file of OpenAI's size: OpenAI's merges
	CHECK_OK(st_model_save(foreign, ctx, specs, n, &p, NULL, 0));
	StInitOpts io = load(foreign, &cfg, specs, n, &p);
	EXPECT(io.vocab_hash == 0 && io.file_vocab == 49408, "foreign file: vocab %llx, %d tokens",
	       (unsigned long long)io.vocab_hash, io.file_vocab);
	EXPECT(strstr(io.loaded, "of the model's") != NULL, "no summary: '%s'", io.loaded);
	EXPECT(report(foreign, 0x1234, &io, err, sizeof err) == -EINVAL,
	       "a foreign 49408-token file on another vocabulary passed");
	EXPECT(strstr(err, "bpe_simple_vocab_16e6.txt.gz") && strstr(err, "--bpe"), "the refusal lacks the fix: %s",
	       err);
	EXPECT(report(foreign, BPE_OPENAI_VOCAB_HASH, &io, err, sizeof err) == 0, "OpenAI's vocabulary refused: %s",
	       err);
	EXPECT(report(foreign, 0, &io, err, sizeof err) == 0, "an unknown manifest vocabulary refused: %s", err);

	// a file of ours records its vocabulary: only that one passes, whatever the size
	CHECK_OK(st_openclip_export(ours, ctx, &cfg, specs, n, &p, 0, "00000000000000aa", "train/bpe_merges.txt", err,
				    sizeof err));
	io = load(ours, &cfg, specs, n, &p);
	EXPECT(io.vocab_hash == 0xaa && io.file_vocab == 0, "our file: vocab %llx, file_vocab %d",
	       (unsigned long long)io.vocab_hash, io.file_vocab);
	EXPECT(report(ours, 0xaa, &io, err, sizeof err) == 0, "its own vocabulary refused: %s", err);
	EXPECT(report(ours, BPE_OPENAI_VOCAB_HASH, &io, err, sizeof err) == -EINVAL,
	       "our file on OpenAI's vocabulary passed");
	EXPECT(strstr(err, "bpe 00000000000000aa") != NULL, "the refusal does not name the file's vocabulary: %s", err);

	// ours without a record (an export of a run without --manifest): nothing to compare
	CHECK_OK(st_openclip_export(ours, ctx, &cfg, specs, n, &p, 0, NULL, NULL, err, sizeof err));
	io = load(ours, &cfg, specs, n, &p);
	EXPECT(io.vocab_hash == 0 && io.file_vocab == 0, "unrecorded export: vocab %llx, file_vocab %d",
	       (unsigned long long)io.vocab_hash, io.file_vocab);
	EXPECT(report(ours, 0x1234, &io, err, sizeof err) == 0, "an export without a record refused: %s", err);

	unlink(foreign);
	unlink(ours);
	rmdir(dir);
	kern_free(ctx, &p);
	kern_ctx_destroy(ctx);
	printf("%s\n", test_failures
			       ? "FAILED"
			       : "--init-from: the weights' vocabulary is known or OpenAI's, and another is refused");
	return test_failures ? 1 : 0;
}
