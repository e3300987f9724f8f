// Checks model sizes: presets exist with AVION's ViT-B/16 numbers, flags override one size,
// bad values and inconsistent sizes are refused with a message, and the parameter table is
// contiguous with unique open_clip names.
#include "model.h" // defines: ModelConfig, model_layout

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// --tubelet: 1 in every preset and absent from the configuration line (today's checkpoints read the
// same); 2 gives VideoMAE's Conv3d weight (W, 3, 2, p, p), T/2 temporal rows and " tt2" in the line;
// --pool mean reads and writes " meanpool"
static int tubelets(void)
{
	ModelConfig c, back;
	char line[256], msg[160];
	int bad = 0;
	model_config_preset(&c, "tiny");
	model_config_str(&c, line, sizeof line);
	bad |= c.tubelet != 1 || strstr(line, "tt") != NULL;
	bad |= model_config_parse("img32 p8 T2 v64/2/2 V49408 ctx77 t64/2/2 E64 mlp4", &back) || back.tubelet != 1;
	bad |= model_config_set(&c, "tubelet", "3") || model_config_check(&c, msg, sizeof msg) != -EINVAL ||
	       !strstr(msg, "--tubelet");
	printf("refused: %s\n", msg);
	c.frames = 4, c.tubelet = 2;
	model_config_str(&c, line, sizeof line);
	bad |= model_config_parse(line, &back) || memcmp(&back, &c, sizeof c);
	printf("tubelet 2: %s\n", line);
	c.act = MODEL_ACT_QUICKGELU;
	model_config_str(&c, line, sizeof line);
	bad |= model_config_parse(line, &back) || memcmp(&back, &c, sizeof c);
	c.pool = MODEL_POOL_MEAN; // --pool mean: " meanpool" between the tubelet and the activation
	model_config_str(&c, line, sizeof line);
	bad |= model_config_parse(line, &back) || memcmp(&back, &c, sizeof c) ||
	       !strstr(line, "tt2 meanpool quickgelu");
	printf("pool mean: %s\n", line);
	bad |= model_config_parse("img32 p8 T4 v64/2/2 V49408 ctx77 t64/2/2 E64 mlp4 meanpoolx", &back) != -EINVAL;
	bad |= model_config_set(&c, "pool", "cls") || c.pool != MODEL_POOL_CLS ||
	       model_config_set(&c, "pool", "max") != -EINVAL;
	const char *malformed[] = {"img32 p8 T4 v64/2/2 V49408 ctx77 t64/2/2 E64 mlp4 tt1",
				   "img32 p8 T4 v64/2/2 V49408 ctx77 t64/2/2 E64 mlp4 tt",
				   "img32 p8 T4 v64/2/2 V49408 ctx77 t64/2/2 E64 mlp4 tt-2",
				   "img32 p8 T5 v64/2/2 V49408 ctx77 t64/2/2 E64 mlp4 tt2"};
	for (int i = 0; i < 4; i++)
		if (model_config_parse(malformed[i], &back) != -EINVAL) {
			printf("FAIL accepted [%s]\n", malformed[i]);
			bad = 1;
		}
	int n;
	int64_t nf;
	model_layout(&c, NULL, &n, &nf);
	ParamSpec *s = calloc((size_t)n, sizeof *s);
	model_layout(&c, s, &n, &nf);
	for (int i = 0; i < n; i++) {
		if (!strcmp(s[i].name, "visual.conv1.weight"))
			bad |= s[i].ndim != 5 || s[i].shape[1] != 3 || s[i].shape[2] != 2 ||
			       s[i].numel != 64 * 3 * 2 * 8 * 8;
		if (!strcmp(s[i].name, "visual.temporal_embedding"))
			bad |= s[i].shape[0] != 2;
	}
	free(s);
	if (bad)
		printf("FAIL tubelets\n");
	return bad;
}

int main(void)
{
	ModelConfig c;
	char msg[160];
	int bad = 0;
	const char *names[] = {"tiny", "vit-s16", "vit-b16", "vit-l14"};
	for (int i = 0; i < 4; i++)
		if (model_config_preset(&c, names[i]) || model_config_check(&c, msg, sizeof msg)) {
			printf("FAIL preset %s\n", names[i]);
			bad = 1;
		}
	bad |= model_config_preset(&c, "vit-x99") != -ENOENT;
	model_config_preset(&c, "vit-b16");
	if (c.vis_width != 768 || c.vis_layers != 12 || c.vis_heads != 12 || c.txt_width != 512 || c.txt_layers != 12 ||
	    c.txt_heads != 8 || c.embed_dim != 256 || c.ctx_len != 77) {
		printf("FAIL vit-b16 preset is not AVION's sizes\n");
		bad = 1;
	}
	bad |= model_config_set(&c, "frames", "16") != 0 || c.frames != 16;
	bad |= model_config_set(&c, "frames", "0") != -EINVAL;
	bad |= model_config_set(&c, "frames", "4x") != -EINVAL;
	bad |= model_config_set(&c, "no-such-size", "4") != -ENOENT;
	model_config_set(&c, "vis-heads", "7");
	if (model_config_check(&c, msg, sizeof msg) != -EINVAL || !strstr(msg, "--vis-heads")) {
		printf("FAIL heads not dividing width accepted (msg '%s')\n", msg);
		bad = 1;
	}
	printf("refused: %s\n", msg);
	model_config_preset(&c, "vit-b16");
	model_config_set(&c, "image-size", "200");
	if (model_config_check(&c, msg, sizeof msg) != -EINVAL || !strstr(msg, "--patch")) {
		printf("FAIL image size not a multiple of the patch accepted\n");
		bad = 1;
	}
	printf("refused: %s\n", msg);

	// the table: contiguous, unique names, expected count and sizes for vit-b16
	model_config_preset(&c, "vit-b16");
	int n;
	int64_t nf;
	model_layout(&c, NULL, &n, &nf);
	ParamSpec *s = calloc((size_t)n, sizeof *s);
	model_layout(&c, s, &n, &nf);
	int64_t off = 0;
	for (int i = 0; i < n; i++) {
		if (s[i].offset != off) {
			printf("FAIL %s not contiguous\n", s[i].name);
			bad = 1;
		}
		off += s[i].numel;
		for (int j = 0; j < i; j++)
			if (!strcmp(s[i].name, s[j].name)) {
				printf("FAIL duplicate name %s\n", s[i].name);
				bad = 1;
			}
	}
	int want_n = 6 + 12 * 12 + 3 + 2 + 12 * 12 + 3 + 1;
	// video: cls, pos (197), temporal (4), conv, ln_pre, 12 blocks, ln_post, proj
	int64_t blk_v =
		12LL * (4 * 768 + 3 * 768 * 768 + 3 * 768 + 768 * 768 + 768 + 2 * 4 * 768 * 768 + 4 * 768 + 768);
	int64_t blk_t =
		12LL * (4 * 512 + 3 * 512 * 512 + 3 * 512 + 512 * 512 + 512 + 2 * 4 * 512 * 512 + 4 * 512 + 512);
	int64_t want_f = 768 + 197 * 768 + 4 * 768 + 768 * 3 * 256 + 2 * 768 + blk_v + 2 * 768 + 768 * 256 +
			 49408 * 512 + 77 * 512 + blk_t + 2 * 512 + 512 * 256 + 1;
	printf("vit-b16: %d tensors, %lld parameters\n", n, (long long)nf);
	if (n != want_n || nf != want_f || off != nf) {
		printf("FAIL vit-b16 table: %d tensors (want %d), %lld floats (want %lld)\n", n, want_n, (long long)nf,
		       (long long)want_f);
		bad = 1;
	}
	// open_clip's rule (the table's default): 4 matrices per block, conv1, visual.proj,
	// text_projection and the four 2-D embeddings (visual positional and temporal, token, text
	// positional); avclip's rule leaves the embeddings out
	const WdGroups rules[2] = {WD_OPEN_CLIP, WD_AVCLIP};
	const int want_decay[2] = {4 * 24 + 3 + 4, 4 * 24 + 3};
	for (int r = 0; r < 2; r++) {
		if (r > 0)
			model_params_set_wd_groups(s, n, rules[r]);
		int decay = 0;
		for (int i = 0; i < n; i++)
			decay += !(s[i].flags & PARAM_NO_DECAY);
		if (decay != want_decay[r]) {
			printf("FAIL --wd-groups %s: %d tensors with weight decay, want %d\n", wd_groups_name(rules[r]),
			       decay, want_decay[r]);
			bad = 1;
		}
	}
	free(s);
	bad |= tubelets();
	printf("%s\n", bad ? "FAIL model config" : "PASS model config, presets and parameter table");
	return bad;
}
