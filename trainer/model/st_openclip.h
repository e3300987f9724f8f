// open_clip interop: weights exported under open_clip's names with every size in the file's
// metadata (so open_clip loads them with strict=True), and a model started from an open_clip or
// OpenAI CLIP file (AVION starts its video tower from CLIP ViT-B/16).
#ifndef ST_OPENCLIP_H
#define ST_OPENCLIP_H
// defines: ST_OPENCLIP_FORMAT, StInitOpts, st_openclip_export, st_openclip_init

#include "kern_ops.h"     // defines: KernCtx, KTensor
#include "model_config.h" // defines: ModelConfig
#include "model_params.h" // defines: ParamSpec

#include <stddef.h>

#define ST_OPENCLIP_FORMAT "1" // metadata avclip.export

// Writes params (the model's flat f32 buffer, specs from model_layout(cfg)) to path as F32
// safetensors under open_clip's names. __metadata__: format pt, avclip.export, avclip.model (the
// configuration line), embed_dim, vision.{image_size, patch_size, width, layers, heads,
// head_width, frames}, text.{context_length, vocab_size, width, layers, heads}, mlp_ratio, act
// (gelu | quick_gelu). image != 0: an image model for open_clip: the temporal embedding of frame
// 0 is added to the patch positions (not the class token's) and not written, vision.frames = 1
// (for a 1-frame model the features are the same). 0 or -errno with a sentence in err.
int st_openclip_export(const char *path, KernCtx *ctx, const ModelConfig *cfg, const ParamSpec *specs, int n,
		       const KTensor *params, int image, char *err, size_t errlen);

typedef struct {
	int skip_mismatched; // leave visual.proj / text_projection as they are when their shapes differ
	char note[512];      // out: what was skipped or kept, for the log ("" when nothing)
} StInitOpts;

// Loads an open_clip / OpenAI CLIP safetensors file into params for the model cfg: every tensor
// by name and shape, except visual.temporal_embedding (CLIP has none: it stays as it is, zero
// after initialisation, as AVION starts) and logit_scale (the loss's --temperature decides).
// The head counts and the activation are checked against the file's metadata when it has them.
// Projections whose widths differ (a 256-d embedding from a 512-d CLIP) are an error naming
// them, or skipped with o->skip_mismatched. 0 or -errno with a sentence in err.
int st_openclip_init(const char *path, KernCtx *ctx, const ModelConfig *cfg, const ParamSpec *specs, int n,
		     KTensor *params, StInitOpts *o, char *err, size_t errlen);

#endif
