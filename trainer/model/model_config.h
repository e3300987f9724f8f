// Sizes of the dual-encoder model: presets (tiny, vit-s16, vit-b16, vit-l14) and per-size
// overrides by long flag name, checked for consistency with a message saying what is wrong.
#ifndef MODEL_CONFIG_H
#define MODEL_CONFIG_H
// defines: ModelConfig, MODEL_ACT_GELU, MODEL_ACT_QUICKGELU, model_config_preset, model_config_set, model_config_check,
//          model_config_keys, model_config_str, model_config_parse, model_act_name

#include <stddef.h>

typedef struct {
	// video tower: T frames of image_size^2, patch^2 patches, joint space-time attention
	int image_size, patch, frames, vis_width, vis_layers, vis_heads;
	// text tower: causal, context ctx_len, end-token pooling
	int vocab, ctx_len, txt_width, txt_layers, txt_heads;
	int embed_dim; // shared embedding both towers project to
	int mlp_ratio; // MLP hidden = mlp_ratio * width
	int act;       // MLP activation: MODEL_ACT_GELU (open_clip's default) or MODEL_ACT_QUICKGELU (OpenAI's weights)
} ModelConfig;

enum { MODEL_ACT_GELU = 0, MODEL_ACT_QUICKGELU = 1 };

// fills cfg from a preset name; -ENOENT for an unknown name
int model_config_preset(ModelConfig *cfg, const char *name);
// sets one size by its flag name without dashes ("vis-width", "frames", ...), or "act" to gelu |
// quickgelu; -ENOENT unknown key, -EINVAL when value is not a positive integer (or an activation)
int model_config_set(ModelConfig *cfg, const char *key, const char *value);
// 0 when consistent; otherwise -EINVAL and a sentence in msg
int model_config_check(const ModelConfig *cfg, char *msg, size_t len);
// the flag names model_config_set knows, space separated
const char *model_config_keys(void);
// "gelu" | "quickgelu"
const char *model_act_name(int act);
// the one-line form checkpoints carry ("img224 p16 T4 v768/12/12 ... mlp4[ quickgelu]") and back;
// parse: -EINVAL for a malformed or inconsistent line
void model_config_str(const ModelConfig *c, char *buf, size_t len);
int model_config_parse(const char *s, ModelConfig *c);

#endif
