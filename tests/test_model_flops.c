// The MFU numerator: model_flops_per_sample against a count from the parameter table (2 FLOPs per
// weight per token of every linear layer of the blocks, the patch embedding per patch, the
// projections once) plus the attention products, for every preset; and vit-b16 at T=4 against the
// figure worked out by hand (162.9 GFLOPs forward per clip); the masked autoencoder's likewise from
// its own table, the encoder on the visible tokens only.
#include <math.h>   // defines: fabs
#include <stdio.h>  // defines: printf
#include <stdlib.h> // defines: calloc
#include <string.h> // defines: strstr, strncmp

#include "model.h" // defines: model_flops_per_sample, model_layout, ParamSpec

static double from_table(const ModelConfig *c)
{
	int n;
	int64_t total;
	model_layout(c, NULL, &n, &total);
	ParamSpec *s = calloc((size_t)n, sizeof *s);
	model_layout(c, s, &n, &total);
	const double P = (double)(c->image_size / c->patch) * (c->image_size / c->patch);
	const double Lv = 1 + c->frames * P, Lt = c->ctx_len;
	double f = 0;
	for (int i = 0; i < n; i++) {
		const int vis = !strncmp(s[i].name, "visual.", 7);
		if (strstr(s[i].name, "resblocks") && s[i].ndim == 2) // in_proj, out_proj, c_fc, c_proj weights
			f += 2.0 * (vis ? Lv : Lt) * (double)s[i].numel;
		else if (!strcmp(s[i].name, "visual.conv1.weight"))
			f += 2.0 * c->frames * P * (double)s[i].numel;
		else if (!strcmp(s[i].name, "visual.proj") || !strcmp(s[i].name, "text_projection"))
			f += 2.0 * (double)s[i].numel;
	}
	free(s);
	f += c->vis_layers * 4.0 * Lv * Lv * c->vis_width + c->txt_layers * 2.0 * Lt * Lt * c->txt_width;
	return f;
}

// the masked autoencoder's count from its own parameter table: the patch embedding over every
// tubelet, the encoder's block weights over the class token and the visible tokens (Le), the decoder's
// over 1 + N (Ld), decoder.embed over Le, the head over the masked tokens, and the attention products
static double mae_from_table(const ModelConfig *c, const MaeConfig *a)
{
	MaeTokens t;
	mae_tokens(c, a, &t);
	int n;
	int64_t total;
	mae_layout(c, a, NULL, &n, &total, NULL);
	ParamSpec *s = calloc((size_t)n, sizeof *s);
	mae_layout(c, a, s, &n, &total, NULL);
	const double Le = 1 + t.Nv, Ld = 1 + t.N;
	double f = 0;
	for (int i = 0; i < n; i++) {
		const int enc = !strncmp(s[i].name, "visual.", 7);
		if (strstr(s[i].name, "resblocks") && s[i].ndim == 2)
			f += 2.0 * (enc ? Le : Ld) * (double)s[i].numel;
		else if (!strcmp(s[i].name, "visual.conv1.weight"))
			f += 2.0 * t.N * (double)s[i].numel;
		else if (!strcmp(s[i].name, "decoder.embed.weight"))
			f += 2.0 * Le * (double)s[i].numel;
		else if (!strcmp(s[i].name, "decoder.head.weight"))
			f += 2.0 * t.Nm * (double)s[i].numel;
	}
	free(s);
	return f + c->vis_layers * 4.0 * Le * Le * c->vis_width + a->dec_layers * 4.0 * Ld * Ld * a->dec_width;
}

int main(void)
{
	const char *presets[] = {"tiny", "vit-s16", "vit-b16", "vit-l14"};
	int bad = 0;
	for (int i = 0; i < 4; i++) {
		ModelConfig c;
		model_config_preset(&c, presets[i]);
		double a = model_flops_per_sample(&c), b = from_table(&c);
		if (fabs(a - b) > 1e-9 * b) {
			printf("FAIL %s: %.6g FLOPs, the parameter table says %.6g\n", presets[i], a, b);
			bad = 1;
		}
	}
	ModelConfig b16;
	model_config_preset(&b16, "vit-b16");
	b16.frames = 4;
	double g = model_flops_per_sample(&b16) / 1e9;
	if (fabs(g - 162.9) > 0.1) {
		printf("FAIL vit-b16 T=4: %.2f GFLOPs forward per clip, want 162.9\n", g);
		bad = 1;
	}
	// mae: VideoMAE ViT-B (16 frames, 2x16x16, ratio 0.9): the encoder on 161 of 1569 tokens
	for (int i = 0; i < 4; i++) {
		ModelConfig c;
		MaeConfig a;
		model_config_preset(&c, presets[i]);
		mae_config_preset(&a, &c, presets[i]);
		double x = mae_flops_per_sample(&c, &a), y = mae_from_table(&c, &a);
		if (fabs(x - y) > 1e-9 * y) {
			printf("FAIL mae %s: %.6g FLOPs, its parameter table says %.6g\n", presets[i], x, y);
			bad = 1;
		}
	}
	ModelConfig v;
	MaeConfig a;
	model_config_preset(&v, "vit-b16");
	mae_config_preset(&a, &v, "vit-b16");
	const double lo = mae_flops_per_sample(&v, &a);
	a.mask_ratio = 0.5;
	if (!(lo < mae_flops_per_sample(&v, &a))) {
		printf("FAIL mae: ratio 0.9 counts no fewer FLOPs than 0.5\n");
		bad = 1;
	}
	if (!bad)
		printf("model FLOPs match the parameter table for every preset, mae's too (vit-b16: %.1f GFLOPs forward per "
		       "16-frame clip at ratio 0.9); vit-b16 T=4: %.2f GFLOPs forward per clip\n",
		       lo / 1e9, g);
	return bad;
}
