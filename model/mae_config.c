// VideoMAE's configuration and parameters: the decoder's sizes per encoder preset, the mask ratio, the
// token counts, FLOPs, the parameter table (the video encoder, then the decoder) and its initialisation.
#include "model.h"    // defines: MaeConfig, MaeTokens, model_layout_encoder, model_init_host
#include "flags.h"    // defines: FlagSpec, FLAG_AT, flags_find, flags_set
#include "hash_fnv.h" // defines: fnv1a64_str
#include "stream.h"   // defines: rng_splitmix64

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	int width, layers, heads, frames;
} presets[] = {
	// VideoMAE's decoders: ViT-S 192/4/3, ViT-B 384/4/6, ViT-L 512/4/8, on 16 frames; tiny (the CPU
	// demo's) halves its encoder's width too, with 4 frames
	{"tiny", 32, 2, 2, 4},
	{"vit-s16", 192, 4, 3, 16},
	{"vit-b16", 384, 4, 6, 16},
	{"vit-l14", 512, 4, 8, 16},
};

int mae_config_preset(MaeConfig *mae, ModelConfig *model, const char *preset)
{
	for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
		if (!strcmp(preset, presets[i].name)) {
			*mae = (MaeConfig){.dec_width = presets[i].width,
					   .dec_layers = presets[i].layers,
					   .dec_heads = presets[i].heads,
					   .mask_ratio = 0.9};
			model->frames = presets[i].frames;
			model->tubelet = 2;
			model->pool = MODEL_POOL_MEAN; // the tower it pretrains is fine-tuned and probed on the mean
			return 0;
		}
	return -ENOENT;
}

#define F(f) FLAG_AT(MaeConfig, f)
static const FlagSpec fields[] = {
	{"mask-ratio", FLAG_DOUBLE, F(mask_ratio), 0, 0.999, NULL,
	 .help = "mae: the fraction of each slice's patches masked, the same in every slice (tube masking)"},
	{"mae-decoder-width", FLAG_INT, F(dec_width), 1, 1 << 16, NULL, .help = "mae: the decoder's width"},
	{"mae-decoder-layers", FLAG_INT, F(dec_layers), 1, 1024, NULL, .help = "mae: the decoder's blocks"},
	{"mae-decoder-heads", FLAG_INT, F(dec_heads), 1, 1024, NULL, .help = "mae: the decoder's attention heads"},
};

const FlagSpec *mae_flag_table(int *n)
{
	*n = (int)(sizeof fields / sizeof fields[0]);
	return fields;
}

int mae_tokens(const ModelConfig *c, const MaeConfig *mae, MaeTokens *t)
{
	if (c->patch < 1 || c->tubelet < 1 || c->image_size % c->patch || c->frames % c->tubelet)
		return -EINVAL;
	const int Ns = (c->image_size / c->patch) * (c->image_size / c->patch), Tp = c->frames / c->tubelet;
	const int m = kern_mae_mask_count(Ns, mae->mask_ratio);
	if (m < 0)
		return m;
	*t = (MaeTokens){.Ns = Ns, .Tp = Tp, .N = Ns * Tp, .Nv = (Ns - m) * Tp, .Nm = m * Tp};
	return 0;
}

int mae_config_check(const ModelConfig *c, const MaeConfig *mae, char *msg, size_t len)
{
	MaeTokens t;
	if (mae->dec_width < 1 || mae->dec_layers < 1 || mae->dec_heads < 1 || mae->dec_width % mae->dec_heads) {
		snprintf(msg, len, "--mae-decoder-width %d is not a positive multiple of --mae-decoder-heads %d",
			 mae->dec_width, mae->dec_heads);
		return -EINVAL;
	}
	if (c->tubelet * c->patch * c->patch < 2) {
		snprintf(msg, len, "a tubelet of one pixel has no per-patch variance (--tubelet %d --patch %d)",
			 c->tubelet, c->patch);
		return -EINVAL;
	}
	if (mae_tokens(c, mae, &t) < 0 || t.Nm < 1) {
		snprintf(
			msg, len,
			"--mask-ratio %g masks %s of the %d patches of a slice: VideoMAE needs some masked and some visible",
			mae->mask_ratio, mae_tokens(c, mae, &t) < 0 ? "all" : "none",
			(c->image_size / c->patch) * (c->image_size / c->patch));
		return -EINVAL;
	}
	return 0;
}

void mae_config_str(const MaeConfig *mae, char *buf, size_t len)
{
	snprintf(buf, len, "dec%d/%d/%d mask%.17g", mae->dec_width, mae->dec_layers, mae->dec_heads, mae->mask_ratio);
}

int mae_config_parse(const char *s, MaeConfig *mae)
{
	MaeConfig t;
	int used = 0;
	if (sscanf(s, "dec%d/%d/%d mask%lf%n", &t.dec_width, &t.dec_layers, &t.dec_heads, &t.mask_ratio, &used) != 4 ||
	    s[used] || t.dec_width < 1 || t.dec_layers < 1 || t.dec_heads < 1 || !(t.mask_ratio >= 0) ||
	    !(t.mask_ratio < 1))
		return -EINVAL;
	*mae = t;
	return 0;
}

double mae_flops_per_sample(const ModelConfig *c, const MaeConfig *mae)
{
	MaeTokens t;
	if (mae_tokens(c, mae, &t) < 0)
		return 0;
	const double K3 = 3.0 * c->tubelet * c->patch * c->patch, Wv = c->vis_width, Dd = mae->dec_width,
		     m = c->mlp_ratio, Le = 1 + t.Nv, Ld = 1 + t.N;
	// per block: qkv (3W²), out (W²), fc and proj (2mW²) per token, then q·kᵀ and p·v (2·L²·W)
	const double eblock = 2 * Le * Wv * Wv * (4 + 2 * m) + 4 * Le * Le * Wv;
	const double dblock = 2 * Ld * Dd * Dd * (4 + 2 * m) + 4 * Ld * Ld * Dd;
	const double stem = 2 * t.N * K3 * Wv, embed = 2 * Le * Wv * Dd, head = 2 * t.Nm * Dd * K3;
	return stem + c->vis_layers * eblock + embed + mae->dec_layers * dblock + head;
}

// ---- the parameter table ----
typedef struct {
	ParamSpec *specs; // NULL: count
	int n;
	int64_t off;
} Table;

static void add(Table *t, int nd, const int64_t *shape, const char *fmt, ...)
{
	int64_t numel = 1;
	for (int i = 0; i < nd; i++)
		numel *= shape[i];
	if (t->specs) {
		ParamSpec *s = &t->specs[t->n];
		memset(s, 0, sizeof *s);
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->name, sizeof s->name, fmt, ap);
		va_end(ap);
		s->ndim = nd;
		memcpy(s->shape, shape, sizeof(int64_t) * (size_t)nd);
		s->offset = t->off;
		s->numel = numel;
		s->flags = model_param_decays(s->name, nd, WD_OPEN_CLIP) ? 0 : PARAM_NO_DECAY;
	}
	t->n++;
	t->off += numel;
}

#define SH(...)                                                                                                        \
	(const int64_t[])                                                                                              \
	{                                                                                                              \
		__VA_ARGS__                                                                                            \
	}
#define NSH(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), SH(__VA_ARGS__)

int mae_layout(const ModelConfig *c, const MaeConfig *mae, ParamSpec *specs, int *n_specs, int64_t *n_floats,
	       int64_t *n_encoder)
{
	int ne;
	int64_t fe;
	model_layout_encoder(c, specs, &ne, &fe);
	Table t = {.specs = specs, .n = ne, .off = fe};
	const int64_t Dd = mae->dec_width, W = c->vis_width, mW = (int64_t)c->mlp_ratio * Dd,
		      K3 = 3LL * c->tubelet * c->patch * c->patch;
	add(&t, NSH(Dd), "decoder.mask_token");
	add(&t, NSH(Dd, W), "decoder.embed.weight");
	for (int l = 0; l < mae->dec_layers; l++) {
		const char *p = "decoder.transformer.resblocks";
		add(&t, NSH(Dd), "%s.%d.ln_1.weight", p, l);
		add(&t, NSH(Dd), "%s.%d.ln_1.bias", p, l);
		add(&t, NSH(3 * Dd, Dd), "%s.%d.attn.in_proj_weight", p, l);
		add(&t, NSH(3 * Dd), "%s.%d.attn.in_proj_bias", p, l);
		add(&t, NSH(Dd, Dd), "%s.%d.attn.out_proj.weight", p, l);
		add(&t, NSH(Dd), "%s.%d.attn.out_proj.bias", p, l);
		add(&t, NSH(Dd), "%s.%d.ln_2.weight", p, l);
		add(&t, NSH(Dd), "%s.%d.ln_2.bias", p, l);
		add(&t, NSH(mW, Dd), "%s.%d.mlp.c_fc.weight", p, l);
		add(&t, NSH(mW), "%s.%d.mlp.c_fc.bias", p, l);
		add(&t, NSH(Dd, mW), "%s.%d.mlp.c_proj.weight", p, l);
		add(&t, NSH(Dd), "%s.%d.mlp.c_proj.bias", p, l);
	}
	add(&t, NSH(Dd), "decoder.ln.weight");
	add(&t, NSH(Dd), "decoder.ln.bias");
	add(&t, NSH(K3, Dd), "decoder.head.weight");
	add(&t, NSH(K3), "decoder.head.bias");
	*n_specs = t.n;
	*n_floats = t.off;
	if (n_encoder)
		*n_encoder = fe;
	return 0;
}

// ---- initialisation ----
static double uniform01(uint64_t *s)
{
	return ((double)(rng_splitmix64(s) >> 11) + 0.5) / 9007199254740992.0;
}

static int ends(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

// one decoder tensor: VideoMAE's _init_weights (nn.Linear: xavier_uniform_ weight, zero bias;
// nn.LayerNorm: 1, 0) and its mask token (trunc_normal_ std 0.02, whose ±2 cut a normal of this
// width never reaches in practice: a plain normal here)
static void init_decoder(const ParamSpec *s, float *d, uint64_t st)
{
	if (ends(s->name, "bias"))
		return (void)memset(d, 0, sizeof(float) * (size_t)s->numel);
	if (ends(s->name, "ln_1.weight") || ends(s->name, "ln_2.weight") || !strcmp(s->name, "decoder.ln.weight")) {
		for (int64_t k = 0; k < s->numel; k++)
			d[k] = 1;
		return;
	}
	if (!strcmp(s->name, "decoder.mask_token")) {
		for (int64_t k = 0; k < s->numel; k++) {
			double u1 = uniform01(&st), u2 = uniform01(&st);
			d[k] = (float)(0.02 * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
		}
		return;
	}
	const double a = sqrt(6.0 / (double)(s->shape[0] + s->shape[1])); // (out, in) matrices
	for (int64_t k = 0; k < s->numel; k++)
		d[k] = (float)(a * (2 * uniform01(&st) - 1));
}

void mae_init_host(const ModelConfig *c, const MaeConfig *mae, const ParamSpec *specs, int n, float *host,
		   uint64_t seed)
{
	int ne = 0;
	while (ne < n && !strncmp(specs[ne].name, "visual.", 7))
		ne++;
	model_init_host(c, specs, ne, host, seed);
	for (int i = ne; i < n; i++) {
		uint64_t st = seed * 0x9e3779b97f4a7c15ull ^ fnv1a64_str(specs[i].name) * 0xd1b54a32d192ed03ull;
		init_decoder(&specs[i], host + specs[i].offset, st);
	}
}

int mae_init_params(KernCtx *ctx, const ModelConfig *c, const MaeConfig *mae, KTensor *flat, uint64_t seed)
{
	int n;
	int64_t nf;
	mae_layout(c, mae, NULL, &n, &nf, NULL);
	if ((flat->dtype != KDT_F32 && flat->dtype != KDT_F64) || kern_numel(flat) != nf)
		return -EINVAL;
	ParamSpec *specs = calloc((size_t)n, sizeof *specs);
	float *host = malloc(sizeof(float) * (size_t)nf);
	int rc = specs && host ? 0 : -ENOMEM;
	if (!rc) {
		mae_layout(c, mae, specs, &n, &nf, NULL);
		mae_init_host(c, mae, specs, n, host, seed);
	}
	if (!rc && flat->dtype == KDT_F32) {
		rc = kern_upload(ctx, flat, host, sizeof(float) * (size_t)nf);
	} else if (!rc) { // an f64 model (gradient checks) starts from the same f32 values
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

int mae_file_config(const StFile *f, ModelConfig *model, MaeConfig *mae)
{
	const char *ob = st_meta(f, "avclip.objective"), *mc = st_meta(f, "avclip.model"),
		   *ma = st_meta(f, "avclip.mae");
	if (!ob || strcmp(ob, "mae"))
		return 0;
	char msg[200];
	if (!mc || !ma || model_config_parse(mc, model) || mae_config_parse(ma, mae) ||
	    mae_config_check(model, mae, msg, sizeof msg))
		return -EBADMSG;
	return 1;
}

int mae_encoder_to_clip(const ModelConfig *c, const float *mae_params, int64_t n_encoder, float *clip_host,
			uint64_t seed)
{
	int n;
	int64_t nf;
	model_layout(c, NULL, &n, &nf);
	ParamSpec *specs = calloc((size_t)n, sizeof *specs);
	if (!specs)
		return -ENOMEM;
	model_layout(c, specs, &n, &nf);
	int k = 0; // the initialisation of every tensor past the encoder (keyed by name: its own values)
	while (k < n && specs[k].offset < n_encoder)
		k++;
	model_init_host(c, specs + k, n - k, clip_host, seed);
	free(specs);
	memcpy(clip_host, mae_params, sizeof(float) * (size_t)n_encoder);
	return 0;
}
