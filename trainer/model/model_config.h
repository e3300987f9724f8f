// Sizes of the dual-encoder model: presets (tiny, vit-s16, vit-b16, vit-l14) and per-size
// overrides by long flag name, checked for consistency with a message saying what is wrong.
#ifndef MODEL_CONFIG_H
#define MODEL_CONFIG_H
// defines: ModelConfig, model_config_preset, model_config_set, model_config_check, model_config_keys

#include <stddef.h>

typedef struct {
	// video tower: T frames of image_size^2, patch^2 patches, joint space-time attention
	int image_size, patch, frames, vis_width, vis_layers, vis_heads;
	// text tower: causal, context ctx_len, end-token pooling
	int vocab, ctx_len, txt_width, txt_layers, txt_heads;
	int embed_dim; // shared embedding both towers project to
	int mlp_ratio; // MLP hidden = mlp_ratio * width
} ModelConfig;

// fills cfg from a preset name; -ENOENT for an unknown name
int model_config_preset(ModelConfig *cfg, const char *name);
// sets one size by its flag name without dashes ("vis-width", "frames", ...); -ENOENT unknown
// key, -EINVAL when value is not a positive integer
int model_config_set(ModelConfig *cfg, const char *key, const char *value);
// 0 when consistent; otherwise -EINVAL and a sentence in msg
int model_config_check(const ModelConfig *cfg, char *msg, size_t len);
// the flag names model_config_set knows, space separated
const char *model_config_keys(void);

#endif
