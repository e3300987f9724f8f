// Classification heads for tools/eval (eval_cls.h): read from a trainer --objective classify
// checkpoint (its extra/cls.params) or a heads file, and the probe's heads written as one.
#include "eval_cls.h" // defines: EvalHeads, eval_heads_from_ckpt, eval_heads_load, eval_heads_save, eval_heads_free
#include "errbuf.h"   // defines: err_fmt

#include <errno.h>  // defines: EINVAL, ENOMEM, EBADMSG
#include <stdio.h>  // defines: snprintf, rename, remove
#include <stdlib.h> // defines: malloc, free, strtol
#include <string.h> // defines: memcpy, strcmp, strchr, strerror

void eval_heads_free(EvalHeads *h)
{
	for (int k = 0; k < EVAL_CLS_HEADS; k++) {
		free(h->w[k]);
		free(h->b[k]);
	}
	memset(h, 0, sizeof *h);
}

// "97,300" (checkpoints) or "verb:97,noun:300" (heads files) into counts and names ("" none); the
// number of heads, or -1 for anything else
static int parse_heads_meta(const char *s, int *classes, char names[][32])
{
	int n = 0;
	while (s && *s) {
		if (n == EVAL_CLS_HEADS)
			return -1;
		const char *colon = strchr(s, ':'), *comma = strchr(s, ',');
		names[n][0] = 0;
		if (colon && (!comma || colon < comma)) {
			if (colon == s || colon - s >= 32)
				return -1;
			memcpy(names[n], s, (size_t)(colon - s));
			names[n][colon - s] = 0;
			s = colon + 1;
		}
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s || v < 1 || v > MANIFEST_MAX_CLASSES || (*end && *end != ','))
			return -1;
		classes[n++] = (int)v;
		s = *end ? end + 1 : end;
	}
	return n ? n : -1;
}

static int alloc_head(EvalHeads *h, int k)
{
	h->w[k] = malloc(sizeof(float) * (size_t)h->classes[k] * h->width);
	h->b[k] = malloc(sizeof(float) * (size_t)h->classes[k]);
	return h->w[k] && h->b[k] ? 0 : -ENOMEM;
}

int eval_heads_from_ckpt(EvalHeads *h, const char *file, int width, const Manifest *man, char *err, size_t errlen)
{
	memset(h, 0, sizeof *h);
	StFile *f;
	int rc = st_open_as(&f, file, "not a safetensors checkpoint", err, errlen);
	if (rc)
		return rc;
	const StTensor *t = st_find(f, "extra/cls.params");
	const char *meta = st_meta(f, "avclip.cls_heads");
	char names[EVAL_CLS_HEADS][32];
	h->width = width;
	if (!t) {
		rc = err_fmt(
			err, errlen, -EINVAL,
			"%s holds no classification heads (trainer --objective classify writes them): give --heads "
			"FILE, or measure its frozen features with --task probe",
			file);
	} else if (meta) { // the class counts the trainer recorded
		if ((h->n = parse_heads_meta(meta, h->classes, names)) < 0)
			rc = err_fmt(err, errlen, -EBADMSG,
				     "%s: avclip.cls_heads '%.60s' is not a list of class counts", file, meta);
	} else { // a checkpoint from before the trainer recorded them: the manifest's
		h->n = (int)manifest_label_heads(man);
		for (int k = 0; k < h->n; k++)
			h->classes[k] = (int)manifest_label_classes(man, (uint32_t)k);
	}
	size_t want = 0;
	for (int k = 0; !rc && k < h->n; k++)
		want += (size_t)h->classes[k] * (width + 1);
	if (!rc && (t->dtype != ST_F32 || t->nbytes != want * sizeof(float)))
		rc = err_fmt(err, errlen, -EINVAL,
			     "%s: extra/cls.params is %s of %zu bytes; %d head%s of %d-wide weights and biases for %s "
			     "need f32 of %zu (the checkpoint's classes or model differ from %s)",
			     file, st_dtype_name(t->dtype), t->nbytes, h->n, h->n == 1 ? "" : "s", width,
			     meta ? "its recorded classes" : "the manifest's classes", want * sizeof(float),
			     meta ? "the model's" : "the manifest's");
	for (int k = 0; !rc && k < h->n; k++)
		if ((rc = alloc_head(h, k)))
			err_fmt(err, errlen, rc, "out of memory for the heads");
	const float *p = t && !rc ? t->data : NULL;
	for (int k = 0; p && k < h->n; k++) { // head by head: weight (K, W), then bias (K)
		const size_t K = (size_t)h->classes[k];
		memcpy(h->w[k], p, sizeof(float) * K * width);
		memcpy(h->b[k], p + K * width, sizeof(float) * K);
		p += K * (width + 1);
		snprintf(h->name[k], sizeof h->name[k], "%s", manifest_label_head_name(man, (uint32_t)k));
	}
	st_close(f);
	if (rc)
		eval_heads_free(h);
	return rc;
}

int eval_heads_load(EvalHeads *h, const char *path, char *err, size_t errlen)
{
	memset(h, 0, sizeof *h);
	StFile *f;
	int rc = st_open_as(&f, path, "not a safetensors heads file", err, errlen);
	if (rc)
		return rc;
	const char *meta = st_meta(f, "avclip.heads");
	if (!meta || (h->n = parse_heads_meta(meta, h->classes, h->name)) < 0)
		rc = err_fmt(err, errlen, -EBADMSG,
			     "%s: no avclip.heads metadata (\"name:classes,...\"): not a heads file of tools/eval "
			     "--save-heads",
			     path);
	for (int k = 0; !rc && k < h->n; k++) {
		char wn[32], bn[32];
		snprintf(wn, sizeof wn, "head.%d.weight", k);
		snprintf(bn, sizeof bn, "head.%d.bias", k);
		const StTensor *w = st_find(f, wn), *b = st_find(f, bn);
		const int K = h->classes[k];
		if (!k && w && w->ndim == 2)
			h->width = (int)w->shape[1];
		if (!w || !b || w->dtype != ST_F32 || b->dtype != ST_F32 || w->ndim != 2 || w->shape[0] != K ||
		    w->shape[1] != h->width || b->ndim != 1 || b->shape[0] != K || h->width < 1)
			rc = err_fmt(err, errlen, -EINVAL,
				     "%s: head %d needs F32 %s (%d, width) and %s (%d,) as its avclip.heads says (%s)",
				     path, k, wn, K, bn, K, meta);
		else if (!(rc = alloc_head(h, k))) {
			memcpy(h->w[k], w->data, w->nbytes);
			memcpy(h->b[k], b->data, b->nbytes);
		}
	}
	if (!rc && st_count(f) != 2 * h->n)
		rc = err_fmt(err, errlen, -EINVAL, "%s holds %d tensors, %d heads need %d", path, st_count(f), h->n,
			     2 * h->n);
	st_close(f);
	if (rc)
		eval_heads_free(h);
	return rc;
}

int eval_heads_save(const EvalHeads *h, const char *path, char *err, size_t errlen)
{
	StTensor t[2 * EVAL_CLS_HEADS];
	char meta[256] = "", tmp[4200];
	size_t o = 0;
	for (int k = 0; k < h->n; k++) {
		t[2 * k] = (StTensor){.dtype = ST_F32,
				      .ndim = 2,
				      .shape = {h->classes[k], h->width},
				      .data = h->w[k],
				      .nbytes = sizeof(float) * (size_t)h->classes[k] * h->width};
		t[2 * k + 1] = (StTensor){.dtype = ST_F32,
					  .ndim = 1,
					  .shape = {h->classes[k]},
					  .data = h->b[k],
					  .nbytes = sizeof(float) * (size_t)h->classes[k]};
		snprintf(t[2 * k].name, sizeof t[2 * k].name, "head.%d.weight", k);
		snprintf(t[2 * k + 1].name, sizeof t[2 * k + 1].name, "head.%d.bias", k);
		o += (size_t)snprintf(meta + o, sizeof meta - o, "%s%s:%d", k ? "," : "", h->name[k], h->classes[k]);
	}
	const char *kv[2] = {"avclip.heads", meta};
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	int rc = st_write(tmp, t, 2 * h->n, kv, 1);
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		remove(tmp);
		return err_fmt(err, errlen, rc, "writing the heads to %s: %s", path, strerror(-rc));
	}
	return 0;
}
