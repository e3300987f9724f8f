// The model tools/eval scores: from a trainer checkpoint (RUN_DIR, its ckpt/ folder or one
// ckpt-*.safetensors file), open_clip-named safetensors weights, or a seeded initialisation.
#ifndef TOOLS_EVAL_MODEL_H
#define TOOLS_EVAL_MODEL_H
// defines: EvalModel, eval_model_load, eval_model_file_config, eval_model_init, eval_model_free, eval_config_parse, eval_config_str,
//          eval_config_diff

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t, uint64_t

#include "kern_ops.h" // defines: KernCtx
#include "model.h"    // defines: ClipModel, ModelConfig

typedef struct {
	ClipModel *model;
	ModelConfig cfg;
	int64_t step;      // optimizer steps of the checkpoint; -1 for weights or an initialisation
	char source[1024]; // the file the weights came from, or "init:SEED"
	// the vocabulary its captions were tokenized with, as the file records it ("avclip.vocab",
	// "%016llx"; "" none: open_clip's files, older checkpoints) and that vocabulary's merges file
	char vocab[20], merges[1024];
	int vocab_assumed; // 1: the file records none, vocab is OpenAI's for an open_clip file of 49408 tokens
	// 1: an --objective mae checkpoint: its video encoder; the text tower, visual.proj and
	// logit_scale are an untrained initialisation (seed 0)
	int mae;
} EvalModel;

// the configuration the checkpoint or weights at path (as eval_model_load resolves it) records in
// its "avclip.model" metadata: 1 and *cfg, 0 none (or unreadable: eval_model_load says which),
// -errno with a sentence in err when there is no such file or it is not safetensors
int eval_model_file_config(const char *path, ModelConfig *cfg, char *err, size_t errlen);

// path: a directory holding ckpt/LATEST (a run) or LATEST (checkpoints), a checkpoint file (of
// --objective mae too: its encoder, em->mae), or a safetensors file of open_clip-named tensors. want: the configuration asked for, which must be
// the one the file records ("avclip.model": checkpoints, tools/export's weights); NULL takes the
// file's own (a weights file without "avclip.model" metadata then needs one). Errors with a
// sentence in err: -ENOENT no checkpoint there, -EINVAL the checkpoint was written for another
// configuration (the first tensor whose shape differs, both shapes) or a tensor is missing or
// mis-shaped, -EBADMSG not a safetensors file, other -errno from the file system.
int eval_model_load(EvalModel *em, KernCtx *ctx, const char *path, const ModelConfig *want, int batch, char *err,
		    size_t errlen);
// an untrained model (model_init_params with seed): the chance baseline
int eval_model_init(EvalModel *em, KernCtx *ctx, const ModelConfig *cfg, uint64_t seed, int batch, char *err,
		    size_t errlen);
void eval_model_free(EvalModel *em);

// the checkpoint's "avclip.model" string ("img32 p8 T2 v64/2/2 V49408 ctx77 t64/2/2 E64 mlp4") both
// ways; parse: 0 or -EINVAL
int eval_config_parse(const char *s, ModelConfig *cfg);
void eval_config_str(const ModelConfig *c, char *buf, size_t len);
// a sentence naming the first parameter tensor whose shape differs between the configurations
// (or the first size that differs when every shape agrees); "" when they are equal
void eval_config_diff(const ModelConfig *have, const char *have_name, const ModelConfig *want, const char *want_name,
		      char *msg, size_t len);

#endif
