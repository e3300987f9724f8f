// The model's parameters: one table walk gives every tensor its open_clip name, shape, offset
// in one flat f32 buffer and weight-decay group, so names, layout and views cannot drift apart.
#ifndef MODEL_PARAMS_H
#define MODEL_PARAMS_H
// defines: ParamSpec, BlockWeights, ModelWeights, PARAM_NO_DECAY, WdGroups, model_layout, model_weights_bind,
//          model_weights_release, model_init_params, model_param_decays, model_params_set_wd_groups,
//          wd_groups_parse, wd_groups_name

#include "kern_ops.h"     // defines: KernCtx, KTensor
#include "model_config.h" // defines: ModelConfig

#include <stdint.h>

// PARAM_NO_DECAY: the optimizer applies no weight decay to the tensor (and LAMB's trust ratio is 1).
// The decision is made here, per tensor, by the grouping rule in force, so every optimizer
// (and a fused one over the flat buffer) reads it from the table.
enum { PARAM_NO_DECAY = 1 };

// Which tensors are decayed.
// WD_OPEN_CLIP (default): open_clip's and FastCLIP's rule: every tensor of 2 or more dimensions
//   whose name contains none of "bn", "ln", "bias", "logit_scale" (token, positional and
//   temporal embeddings are decayed).
// WD_AVCLIP: this project's earlier rule: no decay on 1-D tensors, embeddings and logit_scale.
typedef enum { WD_OPEN_CLIP = 0, WD_AVCLIP = 1 } WdGroups;

typedef struct {
	char name[96];    // open_clip state_dict name, e.g. visual.transformer.resblocks.0.attn.in_proj_weight
	int ndim;         // open_clip shape (logit_scale is 0-D, conv1.weight is (W, 3, p, p))
	int64_t shape[4];
	int64_t offset;   // in floats, into the flat parameter buffer
	int64_t numel;
	int flags;
} ParamSpec;

typedef struct {
	KTensor ln1_w, ln1_b, qkv_w, qkv_b, out_w, out_b; // qkv_w (3W, W), out_w (W, W)
	KTensor ln2_w, ln2_b, fc_w, fc_b, proj_w, proj_b; // fc_w (4W, W), proj_w (W, 4W)
} BlockWeights;

// views into one flat buffer (parameters, or gradients with the same layout)
typedef struct {
	KTensor cls, pos, tpos;      // (Wv), (1+P, Wv), (T, Wv): class token, spatial and temporal positions
	KTensor conv;                // (Wv, 3*p*p): the patch embedding as a linear layer
	KTensor ln_pre_w, ln_pre_b, ln_post_w, ln_post_b;
	KTensor vproj;               // (Wv, E)
	BlockWeights *vblk;          // vis_layers
	KTensor wte, txt_pos;        // (V, Wt), (ctx, Wt)
	KTensor ln_final_w, ln_final_b;
	KTensor tproj;               // (Wt, E)
	KTensor logit_scale;         // (1): log of the inverse temperature
	BlockWeights *tblk;          // txt_layers
} ModelWeights;

// specs: room for every tensor, or NULL to count; returns 0 and the tensor and float counts.
// Decay flags follow WD_OPEN_CLIP.
int model_layout(const ModelConfig *cfg, ParamSpec *specs, int *n_specs, int64_t *n_floats);
// views of every tensor into flat (f32 or f64, n_floats elements); -EINVAL if flat is too small
int model_weights_bind(ModelWeights *w, const ModelConfig *cfg, const KTensor *flat);
void model_weights_release(ModelWeights *w);
// deterministic initialisation from a seed (open_clip's scheme; temporal embedding zero,
// logit_scale = ln(1/0.07)); every tensor draws from its own stream, so adding a tensor
// does not change the others
int model_init_params(KernCtx *ctx, const ModelConfig *cfg, KTensor *flat, uint64_t seed);
// 1 when the tensor (open_clip name, dimensions of its open_clip shape) is decayed under g
int model_param_decays(const char *name, int ndim, WdGroups g);
// rewrites every spec's PARAM_NO_DECAY flag for rule g; -EINVAL for an unknown rule
int model_params_set_wd_groups(ParamSpec *specs, int n, WdGroups g);
// "open_clip" | "avclip"; -EINVAL when unknown
int wd_groups_parse(const char *name, WdGroups *out);
const char *wd_groups_name(WdGroups g);

#endif
