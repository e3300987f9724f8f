// Loading the evaluated model. A trainer checkpoint stores the flat parameters as one tensor
// (model.params) and its configuration as metadata, so a mismatch is explained here by walking
// both parameter layouts and naming the first tensor whose shape differs.
#include "eval_model.h" // defines: EvalModel, eval_model_load, ...

#include <errno.h>    // defines: EINVAL, ENOENT, EBADMSG, ENOMEM, errno
#include <stdio.h>    // defines: snprintf, fopen, fscanf
#include <stdlib.h>   // defines: calloc, free
#include <string.h>   // defines: strcmp, strchr, strerror, memset
#include <sys/stat.h> // defines: stat, S_ISDIR

#include "bpe.h"   // defines: BPE_OPENAI_VOCAB_HASH
#include "model.h" // defines: CKPT_MARKER, ParamSpec, model_layout, model_init_params, StFile, st_open_err, model_params_check_finite, st_find, st_meta, st_close, st_model_load, StLoadOpts

void eval_config_str(const ModelConfig *c, char *buf, size_t len)
{
	model_config_str(c, buf, len); // the checkpoint's "avclip.model" metadata
}

int eval_config_parse(const char *s, ModelConfig *c)
{
	return model_config_parse(s, c);
}

static void shape_str(char *buf, size_t len, const ParamSpec *p)
{
	size_t o = (size_t)snprintf(buf, len, "(");
	for (int i = 0; i < p->ndim && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "", (long long)p->shape[i]);
	if (o < len)
		snprintf(buf + o, len - o, p->ndim == 1 ? ",)" : ")");
}

static ParamSpec *layout(const ModelConfig *c, int *n)
{
	int64_t nf;
	model_layout(c, NULL, n, &nf);
	ParamSpec *s = calloc((size_t)*n, sizeof *s);
	if (s)
		model_layout(c, s, n, &nf);
	return s;
}

void eval_config_diff(const ModelConfig *have, const char *have_name, const ModelConfig *want, const char *want_name,
		      char *msg, size_t len)
{
	msg[0] = 0;
	int nh, nw;
	ParamSpec *h = layout(have, &nh), *w = layout(want, &nw);
	if (!h || !w) {
		snprintf(msg, len, "out of memory comparing model configurations");
		goto out;
	}
	for (int i = 0; i < nw; i++) {
		int j = 0;
		while (j < nh && strcmp(h[j].name, w[i].name))
			j++;
		char a[64], b[64];
		shape_str(b, sizeof b, &w[i]);
		if (j == nh) {
			snprintf(msg, len, "tensor %s %s of %s is not in %s", w[i].name, b, want_name, have_name);
			goto out;
		}
		shape_str(a, sizeof a, &h[j]);
		if (strcmp(a, b)) {
			snprintf(msg, len, "tensor %s is %s in %s, %s in %s", w[i].name, a, have_name, b, want_name);
			goto out;
		}
	}
	if (nh != nw) {
		snprintf(msg, len, "%s has %d tensors, %s %d", have_name, nh, want_name, nw);
		goto out;
	}
	// equal shapes everywhere: a head count or the activation differs
	static const char *keys[] = {"vis-heads", "txt-heads"};
	const int hv[] = {have->vis_heads, have->txt_heads}, wv[] = {want->vis_heads, want->txt_heads};
	for (int k = 0; k < 2; k++)
		if (hv[k] != wv[k]) {
			snprintf(msg, len, "--%s is %d in %s, %d in %s", keys[k], hv[k], have_name, wv[k], want_name);
			goto out;
		}
	if (have->act != want->act)
		snprintf(msg, len, "--act is %s in %s, %s in %s", model_act_name(have->act), have_name,
			 model_act_name(want->act), want_name);
out:
	free(h);
	free(w);
}

static int is_file(const char *p, int dir)
{
	struct stat st;
	return !stat(p, &st) && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

// RUN_DIR, RUN_DIR/ckpt or a file -> the file to read
static int resolve(const char *path, char *file, size_t cap, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st)) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(file, cap, "%s", path);
		return 0;
	}
	char sub[4200];
	snprintf(sub, sizeof sub, "%s/ckpt/%s", path, CKPT_MARKER);
	if (is_file(sub, 0)) {
		snprintf(sub, sizeof sub, "%s/ckpt", path);
		return ckpt_latest_path(sub, file, cap, err, errlen);
	}
	snprintf(sub, sizeof sub, "%s/%s", path, CKPT_MARKER);
	if (is_file(sub, 0))
		return ckpt_latest_path(path, file, cap, err, errlen);
	snprintf(err, errlen, "%s holds no checkpoint (neither %s/ckpt/%s nor %s/%s): has the trainer saved one yet?",
		 path, path, CKPT_MARKER, path, CKPT_MARKER);
	return -ENOENT;
}

static int create(EvalModel *em, KernCtx *ctx, const ModelConfig *cfg, int batch, char *err, size_t errlen)
{
	char msg[160];
	if (model_config_check(cfg, msg, sizeof msg)) {
		snprintf(err, errlen, "model: %s", msg);
		return -EINVAL;
	}
	em->cfg = *cfg;
	int rc = clip_model_create(&em->model, ctx, cfg, batch, KDT_F32);
	if (rc)
		snprintf(err, errlen, "cannot create the model with batch %d: %s", batch, strerror(-rc));
	return rc;
}

// -EINVAL with a sentence when the requested configuration is not the file's (what: "checkpoint",
// "weights"): the first tensor or size that differs, then both configurations
static int config_agrees(const ModelConfig *have, const ModelConfig *want, const char *source, const char *what,
			 char *err, size_t errlen)
{
	if (!memcmp(want, have, sizeof *have))
		return 0;
	char a[160], b[160], d[400], name[32];
	snprintf(name, sizeof name, "the %s", what);
	eval_config_str(have, a, sizeof a);
	eval_config_str(want, b, sizeof b);
	eval_config_diff(have, name, want, "the requested model", d, sizeof d);
	snprintf(err, errlen,
		 "%s was written for another model: %s (%s [%s], requested [%s]); "
		 "leave out --model, --act and the size flags to use the file's",
		 source, d, what, a, b);
	return -EINVAL;
}

// an --objective mae checkpoint: its video encoder in a dual encoder whose other tensors (text
// tower, visual.proj, logit_scale) keep their initialisation from seed 0 (mae_encoder_to_clip)
static int load_mae(EvalModel *em, KernCtx *ctx, StFile *f, const ModelConfig *want, int batch, char *err,
		    size_t errlen)
{
	ModelConfig have;
	MaeConfig mae;
	if (mae_file_config(f, &have, &mae) < 0) {
		snprintf(err, errlen, "%s: the masked autoencoder's configuration [%s, %s] is not readable", em->source,
			 st_meta(f, "avclip.model") ? st_meta(f, "avclip.model") : "none",
			 st_meta(f, "avclip.mae") ? st_meta(f, "avclip.mae") : "none");
		return -EBADMSG;
	}
	int rc = want ? config_agrees(&have, want, em->source, "checkpoint", err, errlen) : 0;
	if (rc || (rc = create(em, ctx, &have, batch, err, errlen)))
		return rc;
	int n;
	int64_t nf, ne;
	mae_layout(&have, &mae, NULL, &n, &nf, &ne);
	ParamSpec *specs = calloc((size_t)n, sizeof *specs);
	float *host = malloc(kern_nbytes(&em->model->params));
	const StTensor *p = st_find(f, "model.params"), *s = st_find(f, "state.step");
	if (!specs || !host) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
	} else if (!p || p->dtype != ST_F32 || p->nbytes != sizeof(float) * (size_t)nf) {
		snprintf(err, errlen,
			 "%s: tensor model.params is %s of %zu bytes, the masked autoencoder needs f32 of %zu",
			 em->source, p ? st_dtype_name(p->dtype) : "missing", p ? p->nbytes : 0,
			 sizeof(float) * (size_t)nf);
		rc = -EINVAL;
	} else {
		mae_layout(&have, &mae, specs, &n, &nf, NULL);
		if (!(rc = model_params_check_finite(specs, n, p->data, nf, em->source, err, errlen)) &&
		    !(rc = mae_encoder_to_clip(&have, p->data, ne, host, 0)) &&
		    (rc = kern_upload(ctx, &em->model->params, host, kern_nbytes(&em->model->params))))
			snprintf(err, errlen, "uploading the weights: %s", strerror(-rc));
	}
	if (!rc && s && s->dtype == ST_I64 && s->nbytes == 8)
		memcpy(&em->step, s->data, 8);
	em->mae = !rc;
	free(specs);
	free(host);
	return rc;
}

// a trainer checkpoint: model.params (flat f32) + the configuration it was written for
static int load_ckpt(EvalModel *em, KernCtx *ctx, StFile *f, const ModelConfig *want, int batch, char *err,
		     size_t errlen)
{
	const char *mc = st_meta(f, "avclip.model");
	ModelConfig have;
	if (!mc || eval_config_parse(mc, &have)) {
		snprintf(err, errlen, "%s: the checkpoint's model configuration [%s] is not readable", em->source,
			 mc ? mc : "none");
		return -EBADMSG;
	}
	int rc = want ? config_agrees(&have, want, em->source, "checkpoint", err, errlen) : 0;
	if (rc)
		return rc;
	rc = create(em, ctx, &have, batch, err, errlen);
	if (rc)
		return rc;
	const StTensor *p = st_find(f, "model.params"), *s = st_find(f, "state.step");
	size_t bytes = kern_nbytes(&em->model->params);
	if (!p || p->dtype != ST_F32 || p->nbytes != bytes) {
		snprintf(err, errlen, "%s: tensor model.params is %s of %zu bytes, the model [%s] needs f32 of %zu",
			 em->source, p ? st_dtype_name(p->dtype) : "missing", p ? p->nbytes : 0, mc, bytes);
		return -EINVAL;
	}
	if (s && s->dtype == ST_I64 && s->nbytes == 8)
		memcpy(&em->step, s->data, 8);
	if ((rc = model_params_check_finite(em->model->specs, em->model->n_specs, p->data,
					    (int64_t)(bytes / sizeof(float)), em->source, err, errlen)))
		return rc;
	rc = kern_upload(ctx, &em->model->params, p->data, bytes);
	if (rc)
		snprintf(err, errlen, "uploading the weights: %s", strerror(-rc));
	return rc;
}

int eval_model_load(EvalModel *em, KernCtx *ctx, const char *path, const ModelConfig *want, int batch, char *err,
		    size_t errlen)
{
	memset(em, 0, sizeof *em);
	em->step = -1;
	int rc = resolve(path, em->source, sizeof em->source, err, errlen);
	if (rc)
		return rc;
	StFile *f;
	if ((rc = st_open_as(&f, em->source, "not a safetensors checkpoint or weights file", err, errlen)))
		return rc;
	const char *vocab = st_meta(f, "avclip.vocab"), *merges = st_meta(f, "avclip.merges");
	snprintf(em->vocab, sizeof em->vocab, "%s", vocab ? vocab : "");
	snprintf(em->merges, sizeof em->merges, "%s", merges ? merges : "");
	// a foreign file (open_clip's, OpenAI's: no avclip.* metadata) of a 49408-token embedding reads
	// OpenAI CLIP's vocabulary
	const StTensor *te = st_find(f, "token_embedding.weight");
	if (!vocab && !st_meta(f, "avclip.export") && !st_meta(f, "avclip.ckpt") && te && te->ndim == 2 &&
	    te->shape[0] == 49408) {
		snprintf(em->vocab, sizeof em->vocab, "%016llx", (unsigned long long)BPE_OPENAI_VOCAB_HASH);
		snprintf(em->merges, sizeof em->merges,
			 "bpe_simple_vocab_16e6.txt.gz (OpenAI CLIP's merges, as open_clip ships them)");
		em->vocab_assumed = 1;
	}
	if (st_meta(f, "avclip.ckpt") && st_meta(f, "avclip.objective")) {
		rc = load_mae(em, ctx, f, want, batch, err, errlen);
	} else if (st_meta(f, "avclip.ckpt")) {
		rc = load_ckpt(em, ctx, f, want, batch, err, errlen);
	} else {
		// open_clip-named weights: the configuration tools/export recorded, which the caller's
		// may only agree with (a QuickGELU file evaluated as GELU, or with another head count,
		// would run with every shape right and every feature wrong); else the caller's
		ModelConfig cfg, have;
		const char *mc = st_meta(f, "avclip.model");
		int recorded = mc && !eval_config_parse(mc, &have);
		if (mc && !recorded) {
			snprintf(err, errlen, "%s: the file's model configuration [%s] is not readable", em->source,
				 mc);
			rc = -EBADMSG;
		} else if (recorded) {
			cfg = have;
			if (want)
				rc = config_agrees(&have, want, em->source, "weights", err, errlen);
		} else if (want) {
			cfg = *want;
		} else {
			snprintf(err, errlen,
				 "%s holds weights without a model configuration: pass --model (and sizes)",
				 em->source);
			rc = -EINVAL;
		}
		if (!rc)
			rc = create(em, ctx, &cfg, batch, err, errlen);
		if (!rc) {
			StLoadOpts o = {0};
			ClipModel *m = em->model;
			rc = st_model_load(em->source, ctx, m->specs, m->n_specs, &m->params, &o, err, errlen);
		}
	}
	st_close(f);
	if (rc)
		eval_model_free(em);
	return rc;
}

int eval_model_file_config(const char *path, ModelConfig *cfg, char *err, size_t errlen)
{
	char file[1024];
	int rc = resolve(path, file, sizeof file, err, errlen);
	StFile *f;
	if (rc || (rc = st_open_as(&f, file, "not a safetensors checkpoint or weights file", err, errlen)))
		return rc;
	const char *mc = st_meta(f, "avclip.model");
	rc = mc && !eval_config_parse(mc, cfg);
	st_close(f);
	return rc;
}

int eval_model_init(EvalModel *em, KernCtx *ctx, const ModelConfig *cfg, uint64_t seed, int batch, char *err,
		    size_t errlen)
{
	memset(em, 0, sizeof *em);
	em->step = -1;
	snprintf(em->source, sizeof em->source, "init:%llu", (unsigned long long)seed);
	int rc = create(em, ctx, cfg, batch, err, errlen);
	if (!rc && (rc = model_init_params(ctx, cfg, &em->model->params, seed)))
		snprintf(err, errlen, "initialising the model: %s", strerror(-rc));
	if (rc)
		eval_model_free(em);
	return rc;
}

void eval_model_free(EvalModel *em)
{
	clip_model_destroy(em->model);
	em->model = NULL;
}
