// Model size presets and per-size overrides. The presets follow AVION (ViT-B/16 video tower,
// 512-wide 12-layer text tower, 256-d embedding) and open_clip's ViT-S/16 and ViT-L/14.
#include "model.h" // defines: ModelConfig, model_flag_table

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h" // defines: FlagSpec, FLAG_AT, flags_find, flags_set

static const struct {
	const char *name;
	ModelConfig cfg;
} presets[] = {
	// the fields in ModelConfig's order, act 0 = MODEL_ACT_GELU, tubelet 1 and pool 0 (the class token)
	// last: plain numbers,
	// because tools/bench/torch_clip.py reads this table
	// tiny: trains on two CPU cores in minutes
	{"tiny", {32, 8, 2, 64, 2, 2, 49408, 77, 64, 2, 2, 64, 4, 0, 1, 0}},
	{"vit-s16", {224, 16, 4, 384, 12, 6, 49408, 77, 384, 12, 6, 256, 4, 0, 1, 0}},
	{"vit-b16", {224, 16, 4, 768, 12, 12, 49408, 77, 512, 12, 8, 256, 4, 0, 1, 0}},
	{"vit-l14", {224, 14, 4, 1024, 24, 16, 49408, 77, 768, 12, 12, 256, 4, 0, 1, 0}},
};

int model_config_preset(ModelConfig *cfg, const char *name)
{
	for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
		if (!strcmp(name, presets[i].name)) {
			*cfg = presets[i].cfg;
			return 0;
		}
	return -ENOENT;
}

#define M(f) FLAG_AT(ModelConfig, f)
#define SIZE_MAX_ (1 << 24)
// the sizes a preset sets and a flag overrides; defaults are the preset's (no .def)
static const FlagSpec fields[] = {
	{"image-size", FLAG_INT, M(image_size), 1, SIZE_MAX_, NULL, .help = "input side in pixels"},
	{"patch", FLAG_INT, M(patch), 1, SIZE_MAX_, NULL, .help = "patch side in pixels"},
	{"frames", FLAG_INT, M(frames), 1, SIZE_MAX_, NULL, .help = "frames per clip"},
	{"vis-width", FLAG_INT, M(vis_width), 1, SIZE_MAX_, NULL, .help = "video tower width"},
	{"vis-layers", FLAG_INT, M(vis_layers), 1, SIZE_MAX_, NULL, .help = "video tower blocks"},
	{"vis-heads", FLAG_INT, M(vis_heads), 1, SIZE_MAX_, NULL, .help = "video tower attention heads"},
	{"vocab", FLAG_INT, M(vocab), 1, SIZE_MAX_, NULL, .help = "text vocabulary size"},
	{"ctx-len", FLAG_INT, M(ctx_len), 1, SIZE_MAX_, NULL, .help = "caption tokens"},
	{"txt-width", FLAG_INT, M(txt_width), 1, SIZE_MAX_, NULL, .help = "text tower width"},
	{"txt-layers", FLAG_INT, M(txt_layers), 1, SIZE_MAX_, NULL, .help = "text tower blocks"},
	{"txt-heads", FLAG_INT, M(txt_heads), 1, SIZE_MAX_, NULL, .help = "text tower attention heads"},
	{"embed-dim", FLAG_INT, M(embed_dim), 1, SIZE_MAX_, NULL, .help = "joint embedding width"},
	{"mlp-ratio", FLAG_INT, M(mlp_ratio), 1, SIZE_MAX_, NULL, .help = "MLP width / model width"},
	{"tubelet", FLAG_INT, M(tubelet), 1, 64, NULL,
	 .help = "frames per video token (VideoMAE's 2x16x16 tubelets: 2; 1 = a token per frame, the presets')"},
	{"act", FLAG_ENUM, M(act), 0, 0, NULL,
	 .help = "MLP activation (gelu: open_clip's; quickgelu for OpenAI CLIP weights)", .choices = "gelu|quickgelu"},
	{"pool", FLAG_ENUM, M(pool), 0, 0, NULL,
	 .help = "the video feature: cls (the class token, CLIP's) or mean (the mean of the other tokens, VideoMAE's; "
		 "--objective mae's default)",
	 .choices = "cls|mean"},
};
enum { N_FIELDS = sizeof fields / sizeof fields[0], N_SIZES = N_FIELDS - 2 }; // act and pool are no sizes

const FlagSpec *model_flag_table(int *n)
{
	*n = N_FIELDS;
	return fields;
}

const char *model_act_name(int act)
{
	return act == MODEL_ACT_QUICKGELU ? "quickgelu" : "gelu";
}

int model_config_set(ModelConfig *cfg, const char *key, const char *value)
{
	const FlagSpec *f = flags_find(fields, N_FIELDS, key);
	char err[160];
	if (!f)
		return -ENOENT;
	return flags_set(f, cfg, value, err, sizeof err) < 0 ? -EINVAL : 0;
}

int model_config_check(const ModelConfig *c, char *msg, size_t len)
{
	for (size_t i = 0; i < N_SIZES; i++) {
		int v = *(const int *)((const char *)c + fields[i].off);
		if (v <= 0) {
			snprintf(msg, len, "--%s must be positive (is %d)", fields[i].name, v);
			return -EINVAL;
		}
	}
	if (c->frames % c->tubelet) {
		snprintf(msg, len, "--frames %d is not a multiple of --tubelet %d", c->frames, c->tubelet);
		return -EINVAL;
	}
	if (c->image_size % c->patch) {
		snprintf(msg, len, "--image-size %d is not a multiple of --patch %d", c->image_size, c->patch);
		return -EINVAL;
	}
	if (c->vis_width % c->vis_heads) {
		snprintf(msg, len, "--vis-width %d is not a multiple of --vis-heads %d", c->vis_width, c->vis_heads);
		return -EINVAL;
	}
	if (c->txt_width % c->txt_heads) {
		snprintf(msg, len, "--txt-width %d is not a multiple of --txt-heads %d", c->txt_width, c->txt_heads);
		return -EINVAL;
	}
	if (c->pool != MODEL_POOL_CLS && c->pool != MODEL_POOL_MEAN) {
		snprintf(msg, len, "--pool %d is not cls or mean", c->pool);
		return -EINVAL;
	}
	if (c->act != MODEL_ACT_GELU && c->act != MODEL_ACT_QUICKGELU) {
		snprintf(msg, len, "--act %d is not gelu or quickgelu", c->act);
		return -EINVAL;
	}
	if (c->vocab < 2) {
		snprintf(msg, len, "--vocab %d leaves no room for an end token", c->vocab);
		return -EINVAL;
	}
	return 0;
}

void model_config_str(const ModelConfig *c, char *buf, size_t len)
{
	// GELU, a tubelet of 1 and the class token add nothing, so checkpoints written before --act,
	// --tubelet and --pool read the same
	char tt[16] = "";
	if (c->tubelet != 1)
		snprintf(tt, sizeof tt, " tt%d", c->tubelet);
	snprintf(buf, len, "img%d p%d T%d v%d/%d/%d V%d ctx%d t%d/%d/%d E%d mlp%d%s%s%s", c->image_size, c->patch,
		 c->frames, c->vis_width, c->vis_layers, c->vis_heads, c->vocab, c->ctx_len, c->txt_width,
		 c->txt_layers, c->txt_heads, c->embed_dim, c->mlp_ratio, tt,
		 c->pool == MODEL_POOL_MEAN ? " meanpool" : "", c->act == MODEL_ACT_QUICKGELU ? " quickgelu" : "");
}

int model_config_parse(const char *s, ModelConfig *c)
{
	ModelConfig t = {.tubelet = 1};
	int used = 0, more = 0;
	if (sscanf(s, "img%d p%d T%d v%d/%d/%d V%d ctx%d t%d/%d/%d E%d mlp%d%n", &t.image_size, &t.patch, &t.frames,
		   &t.vis_width, &t.vis_layers, &t.vis_heads, &t.vocab, &t.ctx_len, &t.txt_width, &t.txt_layers,
		   &t.txt_heads, &t.embed_dim, &t.mlp_ratio, &used) != 13)
		return -EINVAL;
	// " tt1" is never written: a tubelet of 1 has one spelling, the absent one
	if (!strncmp(s + used, " tt", 3) && (sscanf(s + used, " tt%d%n", &t.tubelet, &more) != 1 || t.tubelet == 1 ||
					     s[used + 3] < '1' || s[used + 3] > '9'))
		return -EINVAL;
	used += more;
	if (!strncmp(s + used, " meanpool", 9) && (!s[used + 9] || s[used + 9] == ' ')) {
		t.pool = MODEL_POOL_MEAN;
		used += 9;
	}
	if (!strcmp(s + used, " quickgelu"))
		t.act = MODEL_ACT_QUICKGELU;
	else if (s[used])
		return -EINVAL;
	char msg[160];
	if (model_config_check(&t, msg, sizeof msg))
		return -EINVAL;
	*c = t;
	return 0;
}

double model_flops_per_sample(const ModelConfig *c)
{
	const double P = (double)(c->image_size / c->patch) * (c->image_size / c->patch),
		     TP = (double)(c->frames / c->tubelet) * P;
	const double Lv = 1 + TP, Lt = c->ctx_len, Wv = c->vis_width, Wt = c->txt_width, m = c->mlp_ratio;
	// per block: qkv (3W²), out (W²), fc and proj (2mW²) per token, then q·kᵀ and p·v (2·L²·W)
	const double vblock = 2 * Lv * Wv * Wv * (4 + 2 * m) + 4 * Lv * Lv * Wv;
	const double tblock = 2 * Lt * Wt * Wt * (4 + 2 * m) + 4 * Lt * Lt * Wt * 0.5;
	const double stem = 2 * TP * 3.0 * c->tubelet * c->patch * c->patch * Wv; // the patch embedding
	const double heads = 2 * Wv * c->embed_dim + 2 * Wt * c->embed_dim;
	return stem + c->vis_layers * vblock + c->txt_layers * tblock + heads;
}
