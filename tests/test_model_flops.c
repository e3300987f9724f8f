// The MFU numerator: model_flops_per_sample against a count from the parameter table (2 FLOPs per
// weight per token of every linear layer of the blocks, the patch embedding per patch, the
// projections once) plus the attention products, for every preset; and vit-b16 at T=4 against the
// figure worked out by hand (162.9 GFLOPs forward per clip).
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
	if (!bad)
		printf("model FLOPs match the parameter table for every preset; vit-b16 T=4: %.2f GFLOPs forward per clip\n",
		       g);
	return bad;
}
