// Parameter table of the dual encoder (open_clip names, AVION's temporal embedding), views into
// the flat buffers, and the seeded initialisation.
#include "model.h"    // defines: ParamSpec, ModelWeights
#include "stream.h"   // defines: rng_splitmix64
#include "hash_fnv.h" // defines: fnv1a64_str

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	ParamSpec *specs; // NULL when only counting or binding
	const KTensor *flat;
	int n;
	int64_t off;
	int err;
	int encoder; // stop after visual.ln_post: the video encoder alone (model_layout_encoder)
} Walk;

// records one tensor: storage shape (nd, shape) for names and files; view shape (vnd, vshape)
// for the ops (vnd < 0: the same)
static void add(Walk *wk, KTensor *dst, int flags, int nd, const int64_t *shape, int vnd, const int64_t *vshape,
		const char *fmt, ...)
{
	int64_t numel = 1;
	for (int i = 0; i < nd; i++)
		numel *= shape[i];
	if (wk->specs) {
		ParamSpec *s = &wk->specs[wk->n];
		memset(s, 0, sizeof *s);
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->name, sizeof s->name, fmt, ap);
		va_end(ap);
		s->ndim = nd;
		for (int i = 0; i < nd; i++)
			s->shape[i] = shape[i];
		s->offset = wk->off;
		s->numel = numel;
		s->flags = flags | (model_param_decays(s->name, nd, WD_OPEN_CLIP) ? 0 : PARAM_NO_DECAY);
	}
	if (dst && wk->flat) {
		if (vnd < 0) {
			vnd = nd;
			vshape = shape;
		}
		if (kern_view(dst, wk->flat, wk->off, vnd, vshape))
			wk->err = -EINVAL;
	}
	wk->n++;
	wk->off += numel;
}

#define SH(...)                                                                                                        \
	(const int64_t[])                                                                                              \
	{                                                                                                              \
		__VA_ARGS__                                                                                            \
	}
#define NSH(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), SH(__VA_ARGS__)

static void walk_blocks(Walk *wk, BlockWeights *bw, const char *prefix, int layers, int W, int mlp)
{
	for (int l = 0; l < layers; l++) {
		BlockWeights *b = bw ? &bw[l] : NULL;
#define BT(field) (b ? &b->field : NULL)
		add(wk, BT(ln1_w), 0, NSH(W), -1, NULL, "%sresblocks.%d.ln_1.weight", prefix, l);
		add(wk, BT(ln1_b), 0, NSH(W), -1, NULL, "%sresblocks.%d.ln_1.bias", prefix, l);
		add(wk, BT(qkv_w), 0, NSH(3 * W, W), -1, NULL, "%sresblocks.%d.attn.in_proj_weight", prefix, l);
		add(wk, BT(qkv_b), 0, NSH(3 * W), -1, NULL, "%sresblocks.%d.attn.in_proj_bias", prefix, l);
		add(wk, BT(out_w), 0, NSH(W, W), -1, NULL, "%sresblocks.%d.attn.out_proj.weight", prefix, l);
		add(wk, BT(out_b), 0, NSH(W), -1, NULL, "%sresblocks.%d.attn.out_proj.bias", prefix, l);
		add(wk, BT(ln2_w), 0, NSH(W), -1, NULL, "%sresblocks.%d.ln_2.weight", prefix, l);
		add(wk, BT(ln2_b), 0, NSH(W), -1, NULL, "%sresblocks.%d.ln_2.bias", prefix, l);
		add(wk, BT(fc_w), 0, NSH(mlp * W, W), -1, NULL, "%sresblocks.%d.mlp.c_fc.weight", prefix, l);
		add(wk, BT(fc_b), 0, NSH(mlp * W), -1, NULL, "%sresblocks.%d.mlp.c_fc.bias", prefix, l);
		add(wk, BT(proj_w), 0, NSH(W, mlp * W), -1, NULL, "%sresblocks.%d.mlp.c_proj.weight", prefix, l);
		add(wk, BT(proj_b), 0, NSH(W), -1, NULL, "%sresblocks.%d.mlp.c_proj.bias", prefix, l);
#undef BT
	}
}

static void walk(const ModelConfig *c, Walk *wk, ModelWeights *w)
{
	const int Wv = c->vis_width, Wt = c->txt_width, E = c->embed_dim, p = c->patch, tt = c->tubelet;
	const int P = (c->image_size / p) * (c->image_size / p);
#define WT(field) (w ? &w->field : NULL)
	add(wk, WT(cls), 0, NSH(Wv), -1, NULL, "visual.class_embedding");
	add(wk, WT(pos), 0, NSH(1 + P, Wv), -1, NULL, "visual.positional_embedding");
	add(wk, WT(tpos), 0, NSH(c->frames / tt, Wv), -1, NULL, "visual.temporal_embedding");
	if (tt == 1) // open_clip's Conv2d
		add(wk, WT(conv), 0, NSH(Wv, 3, p, p), NSH(Wv, 3 * p * p), "visual.conv1.weight");
	else // VideoMAE's Conv3d (OC, c, dt, i, j)
		add(wk, WT(conv), 0, NSH(Wv, 3, tt, p, p), NSH(Wv, 3 * tt * p * p), "visual.conv1.weight");
	add(wk, WT(ln_pre_w), 0, NSH(Wv), -1, NULL, "visual.ln_pre.weight");
	add(wk, WT(ln_pre_b), 0, NSH(Wv), -1, NULL, "visual.ln_pre.bias");
	walk_blocks(wk, w ? w->vblk : NULL, "visual.transformer.", c->vis_layers, Wv, c->mlp_ratio);
	add(wk, WT(ln_post_w), 0, NSH(Wv), -1, NULL, "visual.ln_post.weight");
	add(wk, WT(ln_post_b), 0, NSH(Wv), -1, NULL, "visual.ln_post.bias");
	if (wk->encoder)
		return;
	add(wk, WT(vproj), 0, NSH(Wv, E), -1, NULL, "visual.proj");
	add(wk, WT(wte), 0, NSH(c->vocab, Wt), -1, NULL, "token_embedding.weight");
	add(wk, WT(txt_pos), 0, NSH(c->ctx_len, Wt), -1, NULL, "positional_embedding");
	walk_blocks(wk, w ? w->tblk : NULL, "transformer.", c->txt_layers, Wt, c->mlp_ratio);
	add(wk, WT(ln_final_w), 0, NSH(Wt), -1, NULL, "ln_final.weight");
	add(wk, WT(ln_final_b), 0, NSH(Wt), -1, NULL, "ln_final.bias");
	add(wk, WT(tproj), 0, NSH(Wt, E), -1, NULL, "text_projection");
	add(wk, WT(logit_scale), 0, 0, NULL, NSH(1), "logit_scale");
#undef WT
}

int model_layout(const ModelConfig *cfg, ParamSpec *specs, int *n_specs, int64_t *n_floats)
{
	Walk wk = {.specs = specs};
	walk(cfg, &wk, NULL);
	*n_specs = wk.n;
	*n_floats = wk.off;
	return 0;
}

int model_layout_encoder(const ModelConfig *cfg, ParamSpec *specs, int *n_specs, int64_t *n_floats)
{
	Walk wk = {.specs = specs, .encoder = 1};
	walk(cfg, &wk, NULL);
	*n_specs = wk.n;
	*n_floats = wk.off;
	return 0;
}

static int bind(ModelWeights *w, const ModelConfig *cfg, const KTensor *flat, int encoder)
{
	memset(w, 0, sizeof *w);
	w->vblk = calloc((size_t)cfg->vis_layers, sizeof *w->vblk);
	w->tblk = calloc((size_t)cfg->txt_layers, sizeof *w->tblk);
	if (!w->vblk || !w->tblk) {
		model_weights_release(w);
		return -ENOMEM;
	}
	Walk wk = {.flat = flat, .encoder = encoder};
	walk(cfg, &wk, w);
	if (wk.err)
		model_weights_release(w);
	return wk.err;
}

int model_weights_bind(ModelWeights *w, const ModelConfig *cfg, const KTensor *flat)
{
	return bind(w, cfg, flat, 0);
}

int model_weights_bind_encoder(ModelWeights *w, const ModelConfig *cfg, const KTensor *flat)
{
	return bind(w, cfg, flat, 1);
}

void model_weights_release(ModelWeights *w)
{
	free(w->vblk);
	free(w->tblk);
	w->vblk = w->tblk = NULL;
}

// ---- weight-decay groups ----
int model_param_decays(const char *name, int ndim, WdGroups g)
{
	if (g == WD_AVCLIP) // embeddings: the class token, positions, tokens
		return ndim >= 2 && !strstr(name, "embedding") && strcmp(name, "logit_scale") != 0;
	// open_clip main.py: exclude = p.ndim < 2 or "bn"/"ln"/"bias"/"logit_scale" in name
	return ndim >= 2 && !strstr(name, "bn") && !strstr(name, "ln") && !strstr(name, "bias") &&
	       !strstr(name, "logit_scale");
}

int model_params_set_wd_groups(ParamSpec *specs, int n, WdGroups g)
{
	if (g != WD_OPEN_CLIP && g != WD_AVCLIP)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		specs[i].flags = (specs[i].flags & ~PARAM_NO_DECAY) |
				 (model_param_decays(specs[i].name, specs[i].ndim, g) ? 0 : PARAM_NO_DECAY);
	return 0;
}

int wd_groups_parse(const char *name, WdGroups *out)
{
	if (!strcmp(name, "open_clip"))
		*out = WD_OPEN_CLIP;
	else if (!strcmp(name, "avclip"))
		*out = WD_AVCLIP;
	else
		return -EINVAL;
	return 0;
}

const char *wd_groups_name(WdGroups g)
{
	return g == WD_AVCLIP ? "avclip" : "open_clip";
}

// ---- initialisation ----
static double normal(uint64_t *s)
{
	double u1 = ((double)(rng_splitmix64(s) >> 11) + 1) / 9007199254740993.0;
	double u2 = (double)(rng_splitmix64(s) >> 11) / 9007199254740992.0;
	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static int ends(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

// standard deviation of a tensor's normal init; 0 = constant `fill`
static double init_std(const ModelConfig *c, const ParamSpec *s, double *fill)
{
	int vis = !strncmp(s->name, "visual.", 7);
	double W = vis ? c->vis_width : c->txt_width, L = vis ? c->vis_layers : c->txt_layers;
	double attn_std = pow(W, -0.5), proj_std = pow(W, -0.5) * pow(2 * L, -0.5), fc_std = pow(2 * W, -0.5);
	*fill = 0;
	if (ends(s->name, "ln_1.weight") || ends(s->name, "ln_2.weight") || ends(s->name, "ln_pre.weight") ||
	    ends(s->name, "ln_post.weight") || ends(s->name, "ln_final.weight")) {
		*fill = 1;
		return 0;
	}
	if (!strcmp(s->name, "logit_scale")) {
		*fill = log(1 / 0.07);
		return 0;
	}
	if (ends(s->name, "bias") || !strcmp(s->name, "visual.temporal_embedding")) // AVION: temporal starts at 0
		return 0;
	if (!strcmp(s->name, "token_embedding.weight"))
		return 0.02;
	if (!strcmp(s->name, "positional_embedding"))
		return 0.01;
	if (!strcmp(s->name, "visual.class_embedding") || !strcmp(s->name, "visual.positional_embedding") ||
	    !strcmp(s->name, "visual.proj") || !strcmp(s->name, "text_projection") || ends(s->name, "in_proj_weight"))
		return attn_std;
	if (!strcmp(s->name, "visual.conv1.weight"))
		return pow(3.0 * c->tubelet * c->patch * c->patch, -0.5);
	if (ends(s->name, "out_proj.weight") || ends(s->name, "c_proj.weight"))
		return proj_std;
	if (ends(s->name, "c_fc.weight"))
		return fc_std;
	return attn_std;
}

// FNV-1a of the tensor's open_clip name: its init stream's key, so a tensor's initial values do
// not depend on where it sits in the layout or on which other tensors exist
static uint64_t name_key(const char *name)
{
	return fnv1a64_str(name);
}

void model_init_host(const ModelConfig *cfg, const ParamSpec *specs, int n, float *host, uint64_t seed)
{
	for (int i = 0; i < n; i++) {
		double fill, std = init_std(cfg, &specs[i], &fill);
		uint64_t st = seed * 0x9e3779b97f4a7c15ull ^ name_key(specs[i].name) * 0xd1b54a32d192ed03ull;
		float *d = host + specs[i].offset;
		for (int64_t k = 0; k < specs[i].numel; k++)
			d[k] = (float)(std > 0 ? std * normal(&st) : fill);
	}
}

int model_init_params(KernCtx *ctx, const ModelConfig *cfg, KTensor *flat, uint64_t seed)
{
	int n;
	int64_t nf;
	model_layout(cfg, NULL, &n, &nf);
	if ((flat->dtype != KDT_F32 && flat->dtype != KDT_F64) || kern_numel(flat) != nf)
		return -EINVAL;
	ParamSpec *specs = calloc((size_t)n, sizeof *specs);
	float *host = malloc(sizeof(float) * (size_t)nf);
	if (!specs || !host) {
		free(specs);
		free(host);
		return -ENOMEM;
	}
	model_layout(cfg, specs, &n, &nf);
	model_init_host(cfg, specs, n, host, seed);
	int rc;
	if (flat->dtype == KDT_F32) {
		rc = kern_upload(ctx, flat, host, sizeof(float) * (size_t)nf);
	} else { // f64 models (gradient checks) start from the same f32 values
		KTensor tmp;
		rc = kern_alloc(ctx, &tmp, KDT_F32, 1, &nf);
		if (!rc)
			rc = kern_upload(ctx, &tmp, host, sizeof(float) * (size_t)nf);
		if (!rc)
			rc = kern_convert(ctx, flat, &tmp);
		kern_free(ctx, &tmp);
	}
	free(specs);
	free(host);
	return rc;
}
