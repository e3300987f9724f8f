// Weight-decay groups live in the parameter table: open_clip's and FastCLIP's rule by default
// (decay every tensor of >= 2 dimensions whose name has no bn/ln/bias/logit_scale, so token,
// positional and temporal embeddings are decayed), the earlier avclip rule on request.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h" // defines: model_layout, model_params_set_wd_groups, PARAM_NO_DECAY

static int decayed(const ParamSpec *s, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return !(s[i].flags & PARAM_NO_DECAY);
	return -1;
}

int main(void)
{
	ModelConfig cfg;
	model_config_preset(&cfg, "tiny");
	int n;
	int64_t nf;
	model_layout(&cfg, NULL, &n, &nf);
	ParamSpec *s = calloc((size_t)n, sizeof *s);
	if (!s)
		return 1;
	model_layout(&cfg, s, &n, &nf);
	static const struct {
		const char *name;
		int open_clip, avclip;
	} want[] = {
		{"token_embedding.weight", 1, 0},
		{"positional_embedding", 1, 0},
		{"visual.positional_embedding", 1, 0},
		{"visual.temporal_embedding", 1, 0},
		{"visual.class_embedding", 0, 0},
		{"visual.conv1.weight", 1, 1},
		{"visual.proj", 1, 1},
		{"text_projection", 1, 1},
		{"transformer.resblocks.0.attn.in_proj_weight", 1, 1},
		{"transformer.resblocks.0.attn.in_proj_bias", 0, 0},
		{"visual.transformer.resblocks.1.mlp.c_fc.weight", 1, 1},
		{"visual.transformer.resblocks.1.ln_2.weight", 0, 0},
		{"ln_final.weight", 0, 0},
		{"visual.ln_pre.bias", 0, 0},
		{"logit_scale", 0, 0},
	};
	int bad = 0;
	for (int rule = 0; rule < 2; rule++) {
		WdGroups g;
		if (rule && (wd_groups_parse("avclip", &g) || model_params_set_wd_groups(s, n, g)))
			return 1;
		for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
			int d = decayed(s, n, want[i].name), w = rule ? want[i].avclip : want[i].open_clip;
			if (d != w) {
				printf("FAIL --wd-groups %s: %s decayed=%d, want %d\n", rule ? "avclip" : "open_clip",
				       want[i].name, d, w);
				bad = 1;
			}
		}
	}
	WdGroups g;
	bad |= wd_groups_parse("bogus", &g) == 0 || model_params_set_wd_groups(s, n, (WdGroups)7) == 0;
	free(s);
	printf("%s\n",
	       bad ? "FAIL weight-decay groups" : "PASS weight-decay groups: open_clip by default, avclip on request");
	return bad;
}
