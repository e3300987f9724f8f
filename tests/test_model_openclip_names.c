// Checks the parameter table against open_clip's own state_dict names and shapes (fixture from
// tools/ref/openclip_names.py) for ViT-B-16 and ViT-L-14: every open_clip tensor exists here
// with the same shape and ours adds only visual.temporal_embedding, so weights move both ways.
#include "model.h" // defines: model_layout, ParamSpec

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 512

typedef struct {
	char name[96];
	int ndim;
	long long shape[4];
} Ref;

static int parse_shape(const char *s, Ref *r)
{
	r->ndim = 0;
	if (!strcmp(s, "-"))
		return 0;
	while (*s && r->ndim < 4) {
		char *end;
		r->shape[r->ndim++] = strtoll(s, &end, 10);
		s = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int check(const char *oc_name, const char *preset, Ref *refs, int nr)
{
	ModelConfig cfg;
	model_config_preset(&cfg, preset);
	for (int i = 0; i < nr; i++) // open_clip projects to its own embed width
		if (!strcmp(refs[i].name, "text_projection"))
			cfg.embed_dim = (int)refs[i].shape[1];
	int n;
	int64_t nf;
	model_layout(&cfg, NULL, &n, &nf);
	ParamSpec *s = calloc((size_t)n, sizeof *s);
	model_layout(&cfg, s, &n, &nf);
	int bad = 0, extra = 0;
	for (int i = 0; i < nr; i++) {
		int found = 0;
		for (int j = 0; j < n && !found; j++) {
			if (strcmp(s[j].name, refs[i].name))
				continue;
			found = 1;
			int same = s[j].ndim == refs[i].ndim;
			for (int d = 0; same && d < s[j].ndim; d++)
				same = s[j].shape[d] == refs[i].shape[d];
			if (!same) {
				printf("FAIL %s %s: shape differs from open_clip\n", oc_name, refs[i].name);
				bad = 1;
			}
		}
		if (!found) {
			printf("FAIL %s: open_clip tensor %s has no counterpart\n", oc_name, refs[i].name);
			bad = 1;
		}
	}
	for (int j = 0; j < n; j++) {
		int found = 0;
		for (int i = 0; i < nr && !found; i++)
			found = !strcmp(s[j].name, refs[i].name);
		if (!found && strcmp(s[j].name, "visual.temporal_embedding")) {
			printf("FAIL %s: our tensor %s is not in open_clip\n", oc_name, s[j].name);
			bad = 1;
		}
		extra += !found;
	}
	printf("%-4s %s (preset %s, embed %d): %d open_clip tensors matched, %d of ours extra (temporal)\n",
	       bad ? "FAIL" : "ok", oc_name, preset, cfg.embed_dim, nr, extra);
	free(s);
	return bad || nr == 0 || extra != 1;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "tests/fixtures/model_openclip_names.txt";
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("cannot read %s\n", path);
		return 1;
	}
	static Ref b16[MAXT], l14[MAXT];
	int nb = 0, nl = 0;
	char line[256], model[32], name[96], shape[64];
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || sscanf(line, "%31s %95s %63s", model, name, shape) != 3)
			continue;
		Ref *r = !strcmp(model, "ViT-B-16") && nb < MAXT   ? &b16[nb++]
			 : !strcmp(model, "ViT-L-14") && nl < MAXT ? &l14[nl++]
								   : NULL;
		if (!r)
			continue;
		snprintf(r->name, sizeof r->name, "%s", name);
		parse_shape(shape, r);
	}
	fclose(f);
	int bad = check("ViT-B-16", "vit-b16", b16, nb) | check("ViT-L-14", "vit-l14", l14, nl);
	printf("%s\n", bad ? "FAIL names/shapes differ from open_clip" : "PASS parameter table matches open_clip");
	return bad;
}
