// Export to and initialisation from open_clip-named safetensors: metadata with every size, the
// temporal embedding folded for image models, head/activation checks, projection mismatches.
#include "model.h" // defines: st_openclip_export, st_openclip_init, StFile, StTensor, st_open_err, st_find, st_meta, st_write, st_model_load, StLoadOpts

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ParamSpec *spec_named(const ParamSpec *s, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	return NULL;
}

int st_openclip_export(const char *path, KernCtx *ctx, const ModelConfig *c, const ParamSpec *specs, int n,
		       const KTensor *params, int image, const char *vocab, const char *merges, char *err,
		       size_t errlen)
{
	const ParamSpec *pos = spec_named(specs, n, "visual.positional_embedding"),
			*tpos = spec_named(specs, n, "visual.temporal_embedding");
	if (params->dtype != KDT_F32 || !pos || !tpos) {
		snprintf(err, errlen, "export: not a model parameter buffer");
		return -EINVAL;
	}
	size_t bytes = kern_nbytes(params);
	float *host = malloc(bytes);
	StTensor *t = calloc((size_t)n, sizeof *t);
	int rc = (!host || !t) ? -ENOMEM : kern_download(ctx, host, bytes, params);
	if (rc) {
		snprintf(err, errlen, "export: cannot read the parameters: %s", strerror(-rc));
		free(host);
		free(t);
		return rc;
	}
	const int W = c->vis_width;
	if (image) // position 1 + p of frame 0 sees pos[1 + p] + tpos[0]; the class token no temporal term
		for (int64_t p = 1; p < pos->shape[0]; p++)
			for (int d = 0; d < W; d++)
				host[pos->offset + p * W + d] += host[tpos->offset + d];
	int k = st_model_tensors(t, specs, n, host, image ? tpos->name : NULL);
	char v[16][32], line[256];
	ModelConfig lc = *c;
	lc.frames = image ? 1 : c->frames; // the model the file holds: tools/eval --weights reads it
	model_config_str(&lc, line, sizeof line);
	const int vals[] = {c->embed_dim,
			    c->image_size,
			    c->patch,
			    c->vis_width,
			    c->vis_layers,
			    c->vis_heads,
			    c->vis_width / c->vis_heads,
			    image ? 1 : c->frames,
			    c->ctx_len,
			    c->vocab,
			    c->txt_width,
			    c->txt_layers,
			    c->txt_heads,
			    c->mlp_ratio};
	for (int i = 0; i < 14; i++)
		snprintf(v[i], sizeof v[i], "%d", vals[i]);
	const char *meta[2 * 23] = {"format",
				    "pt",
				    "avclip.export",
				    ST_OPENCLIP_FORMAT,
				    "avclip.model",
				    line,
				    "embed_dim",
				    v[0],
				    "vision.image_size",
				    v[1],
				    "vision.patch_size",
				    v[2],
				    "vision.width",
				    v[3],
				    "vision.layers",
				    v[4],
				    "vision.heads",
				    v[5],
				    "vision.head_width",
				    v[6],
				    "vision.frames",
				    v[7],
				    "text.context_length",
				    v[8],
				    "text.vocab_size",
				    v[9],
				    "text.width",
				    v[10],
				    "text.layers",
				    v[11],
				    "text.heads",
				    v[12],
				    "mlp_ratio",
				    v[13],
				    "act",
				    c->act == MODEL_ACT_QUICKGELU ? "quick_gelu" : "gelu",
				    "avclip.image",
				    image ? "1" : "0",
				    "avclip.vocab",
				    vocab ? vocab : "",
				    "avclip.merges",
				    merges ? merges : ""};
	int nm = 21 - (vocab && *vocab ? 0 : 2); // the pairs above, the last two without a vocabulary
	char tt[16];
	snprintf(tt, sizeof tt, "%d", c->tubelet);
	if (c->tubelet != 1) { // the keys only where they say something: other files keep their bytes
		meta[2 * nm] = "vision.tubelet", meta[2 * nm + 1] = tt;
		nm++;
	}
	if (c->pool == MODEL_POOL_MEAN) {
		meta[2 * nm] = "vision.pool", meta[2 * nm + 1] = "mean";
		nm++;
	}
	rc = st_write(path, t, k, meta, nm);
	if (rc)
		snprintf(err, errlen, "export: cannot write %s: %s", path, strerror(-rc));
	free(host);
	free(t);
	return rc;
}

// a metadata integer that disagrees with the model: -EINVAL with err naming both
static int check_meta(const StFile *f, const char *path, const char *key, int have, const char *flag, char *err,
		      size_t errlen)
{
	const char *m = st_meta(f, key);
	if (!m || atoi(m) == have)
		return 0;
	snprintf(err, errlen, "%s: the file's %s is %s, this model's %s is %d", path, key, m, flag, have);
	return -EINVAL;
}

static int same_shape(const StTensor *t, const ParamSpec *s)
{
	int same = t->ndim == s->ndim;
	for (int d = 0; same && d < s->ndim; d++)
		same = t->shape[d] == s->shape[d];
	return same;
}

// what st_model_load will take from f: o->loaded, o->tau, o->vocab_hash, o->file_vocab
static void summarize(const StFile *f, const ParamSpec *specs, int n, const StLoadOpts *lo, StInitOpts *o)
{
	const size_t plen = lo->prefix ? strlen(lo->prefix) : 0;
	int found = 0, by_dtype[ST_NDTYPES] = {0};
	int64_t numel = 0;
	const StTensor *big = NULL;
	for (int i = 0; i < n; i++) {
		int skipped = plen && strncmp(specs[i].name, lo->prefix, plen);
		for (int k = 0; k < lo->n_skip; k++)
			skipped |= !strcmp(lo->skip[k], specs[i].name);
		const StTensor *t = skipped ? NULL : st_find(f, specs[i].name);
		if (!t)
			continue;
		found++;
		by_dtype[t->dtype]++;
		numel += specs[i].numel;
		if (!big || (t->ndim > 1 && t->nbytes > big->nbytes))
			big = t;
	}
	size_t l = (size_t)snprintf(o->loaded, sizeof o->loaded, "%d of the model's %d tensors (%lld parameters; ",
				    found, n, (long long)numel);
	for (int d = 0, first = 1; d < ST_NDTYPES && l < sizeof o->loaded; d++)
		if (by_dtype[d]) {
			l += (size_t)snprintf(o->loaded + l, sizeof o->loaded - l, "%s%d %s", first ? "" : ", ",
					      by_dtype[d], st_dtype_name((StDtype)d));
			first = 0;
		}
	if (big && l < sizeof o->loaded) {
		l += (size_t)snprintf(o->loaded + l, sizeof o->loaded - l, " stored; largest %s (", big->name);
		for (int d = 0; d < big->ndim && l < sizeof o->loaded; d++)
			l += (size_t)snprintf(o->loaded + l, sizeof o->loaded - l, "%s%lld", d ? ", " : "",
					      (long long)big->shape[d]);
		if (l < sizeof o->loaded)
			snprintf(o->loaded + l, sizeof o->loaded - l, "))");
	} else if (l < sizeof o->loaded) {
		snprintf(o->loaded + l, sizeof o->loaded - l, ")");
	}
	const StTensor *ls = st_find(f, "logit_scale");
	float v;
	if (ls && ls->dtype == ST_F32 && ls->nbytes == 4 && (memcpy(&v, ls->data, 4), v == v))
		snprintf(o->tau, sizeof o->tau, "the file's logit_scale %.4g (τ %.4g) is not loaded", v,
			 1.0 / exp((double)v));
	else
		snprintf(o->tau, sizeof o->tau, "the file has no f32 logit_scale");
	const char *vh = st_meta(f, "avclip.vocab");
	o->vocab_hash = vh ? strtoull(vh, NULL, 16) : 0;
	// a file of ours (an export, a checkpoint) records its vocabulary or none; only a foreign one
	// (open_clip's, OpenAI's) says what it is by its embedding
	const StTensor *te = st_find(f, "token_embedding.weight");
	const int ours = st_meta(f, "avclip.export") || st_meta(f, "avclip.ckpt");
	o->file_vocab = !ours && te && te->ndim == 2 ? (int)te->shape[0] : 0;
}

// the file's head counts and activation against the model's (the text tower's not with visual_only)
static int check_heads(const StFile *f, const char *path, const ModelConfig *c, int visual_only, char *err,
		       size_t errlen)
{
	const char *act = st_meta(f, "act");
	int rc;
	if ((rc = check_meta(f, path, "vision.heads", c->vis_heads, "--vis-heads", err, errlen)) ||
	    (rc = check_meta(f, path, "vision.tubelet", c->tubelet, "--tubelet", err, errlen)) ||
	    (!visual_only && (rc = check_meta(f, path, "text.heads", c->txt_heads, "--txt-heads", err, errlen))))
		return rc;
	const char *pool = st_meta(f, "vision.pool"), *mine = c->pool == MODEL_POOL_MEAN ? "mean" : "cls";
	if (strcmp(pool ? pool : "cls", mine)) { // the feature the file's tower was trained to give
		snprintf(err, errlen, "%s: the file's vision.pool is %s, this model's --pool is %s (pass --pool %s)",
			 path, pool ? pool : "cls (none recorded)", mine, pool ? pool : "cls");
		return -EINVAL;
	}
	if (act && strcmp(act, c->act == MODEL_ACT_QUICKGELU ? "quick_gelu" : "gelu")) {
		snprintf(err, errlen, "%s: the file's act is %s, this model's --act is %s", path, act,
			 model_act_name(c->act));
		return -EINVAL;
	}
	return 0;
}

// projections whose widths differ from the model's: named in `named`, appended to skip
static void mismatched_projections(const StFile *f, const ParamSpec *specs, int n, const char **skip, int *n_skip,
				   char *named, size_t len)
{
	static const char *const proj[2] = {"visual.proj", "text_projection"};
	for (int i = 0; i < 2; i++) {
		const ParamSpec *s = spec_named(specs, n, proj[i]);
		const StTensor *t = st_find(f, proj[i]);
		if (!s || !t || same_shape(t, s))
			continue;
		size_t l = strlen(named);
		snprintf(named + l, len - l, "%s%s (%lld x %lld in the file, %lld x %lld here)", l ? ", " : "", proj[i],
			 (long long)t->shape[0], (long long)(t->ndim > 1 ? t->shape[1] : 1), (long long)s->shape[0],
			 (long long)s->shape[1]);
		skip[(*n_skip)++] = proj[i];
	}
}

int st_openclip_init(const char *path, KernCtx *ctx, const ModelConfig *c, const ParamSpec *specs, int n,
		     KTensor *params, StInitOpts *o, char *err, size_t errlen)
{
	o->note[0] = o->loaded[0] = o->tau[0] = 0;
	o->vocab_hash = 0;
	o->file_vocab = 0;
	StFile *f;
	int rc = st_open_as(&f, path, "not a valid safetensors file", err, errlen);
	if (rc)
		return rc;
	const char *skip[3] = {"logit_scale", "visual.proj"};
	StLoadOpts lo = {.skip = skip, .n_skip = o->visual_only ? 2 : 1, .prefix = o->visual_only ? "visual." : NULL};
	char named[256] = "";
	rc = check_heads(f, path, c, o->visual_only, err, errlen);
	if (!rc && !o->visual_only)
		mismatched_projections(f, specs, n, skip, &lo.n_skip, named, sizeof named);
	summarize(f, specs, n, &lo, o);
	st_close(f);
	if (!rc && named[0] && !o->skip_mismatched) {
		snprintf(err, errlen,
			 "%s: projection widths differ: %s; pass --init-skip-mismatched to keep them at "
			 "their initial values",
			 path, named);
		rc = -EINVAL;
	}
	if (rc || (rc = st_model_load(path, ctx, specs, n, params, &lo, err, errlen)))
		return rc;
	if (named[0])
		snprintf(o->note, sizeof o->note, "kept at their initial values (widths differ): %s", named);
	else if (o->visual_only)
		snprintf(o->note, sizeof o->note,
			 "the video tower only (visual.* but visual.proj, which classify does not use); the text "
			 "tower, text_projection and logit_scale keep their initial values");
	return 0;
}
