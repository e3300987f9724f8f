// tools/eval --task probe|classify (eval_cls.h): the held-out clips through the video tower to its
// pre-projection feature (view by view), linear heads over it, the views' logits averaged as AVION's
// validate does, and each head's accuracy with a confusion summary (eval/eval_cls.c).
#include "eval_cls.h"  // defines: EvalHeads, EvalClsOpts, EvalClsReport, eval_cls_run, eval_heads_free
#include "errbuf.h"    // defines: err_fmt, TRY
#include "proc_time.h" // defines: time_mono_s

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: calloc, malloc, realloc, free
#include <string.h> // defines: memset, strcmp, strerror

void eval_heads_free(EvalHeads *h)
{
	for (int k = 0; k < EVAL_CLS_HEADS; k++) {
		free(h->w[k]);
		free(h->b[k]);
	}
	memset(h, 0, sizeof *h);
}

// the manifest's label heads (1..EVAL_CLS_HEADS), or -EINVAL naming it when it has none
static int label_heads(const Manifest *man, const char *path, char *err, size_t errlen)
{
	const int h = (int)manifest_label_heads(man);
	if (h < 1)
		return err_fmt(err, errlen, -EINVAL,
			       "%s has no class labels: prepare it with tools/prep --format ek100-train, labels-csv or "
			       "kinetics (docs/data.md: Labelled annotation files)",
			       path ? path : "the manifest");
	return h;
}

// "verb (97 classes), noun (300)" of a manifest's heads
static void heads_str(const Manifest *man, char *buf, size_t cap)
{
	size_t o = 0;
	buf[0] = 0;
	for (uint32_t k = 0; k < manifest_label_heads(man) && o < cap; k++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%s (%u%s)", k ? ", " : "", manifest_label_head_name(man, k),
				      manifest_label_classes(man, k), k ? "" : " classes");
}

// the probe's train manifest must label the same heads: count, names and class counts
static int same_heads(const Manifest *train, const char *tpath, const Manifest *held, const char *hpath, char *err,
		      size_t errlen)
{
	const int nt = label_heads(train, tpath, err, errlen), nh = label_heads(held, hpath, err, errlen);
	if (nt < 0 || nh < 0)
		return nt < 0 ? nt : nh;
	int differ = nt != nh;
	for (uint32_t k = 0; !differ && k < (uint32_t)nt; k++)
		differ = strcmp(manifest_label_head_name(train, k), manifest_label_head_name(held, k)) ||
			 manifest_label_classes(train, k) != manifest_label_classes(held, k);
	if (!differ)
		return 0;
	char a[256], b[256];
	heads_str(train, a, sizeof a);
	heads_str(held, b, sizeof b);
	return err_fmt(err, errlen, -EINVAL,
		       "the train manifest %s labels %d head%s, %s; the held-out manifest %s %d, %s: the probe needs "
		       "the same heads and classes in both (prepare both with the same --format and --classes)",
		       tpath, nt, nt == 1 ? "" : "s", a, hpath, nh, b);
}

// head k's label of every sample (-1 where none)
static int *head_labels(const Manifest *man, int k)
{
	const int64_t n = (int64_t)manifest_header(man)->n_samples;
	int *l = malloc(sizeof *l * (size_t)(n ? n : 1));
	for (int64_t i = 0; l && i < n; i++) {
		int32_t all[MANIFEST_MAX_HEADS];
		manifest_labels(man, (uint64_t)i, all);
		l[i] = all[k];
	}
	return l;
}

// the pre-projection features (n, V, width) of every sample's V views; every clip counts
static int embed(ClipModel *m, const Manifest *man, const EvalOpts *o, const EvalClsOpts *c, int views,
		 float **feat, char *err, size_t errlen)
{
	const int64_t n = (int64_t)manifest_header(man)->n_samples;
	EvalEmbedOpts eo = o->embed;
	eo.damaged = NULL;
	eo.visual = 1;
	eo.stride = views ? c->stride : 0;
	eo.views_clips = views ? c->views_clips : 1;
	eo.views_crops = views ? c->views_crops : 1;
	const int V = eval_embed_views(&eo);
	*feat = malloc(sizeof **feat * (size_t)(n * V) * m->cfg.vis_width);
	if (!*feat)
		return err_fmt(err, errlen, -ENOMEM, "out of memory for the features of %lld clips",
			       (long long)(n * V));
	int rc = eval_embed_manifest(m, man, *feat, NULL, &eo, err, errlen);
	if (!rc)
		rc = eval_check_finite(*feat, n * V, m->cfg.vis_width, "feature of clip view", err, errlen);
	return rc;
}

// scores (n, K): head k's logits of each view, averaged over the V views (sums in double, in order)
static int view_logits(const float *feat, int64_t n, int V, const EvalHeads *h, int k, float *scores)
{
	const int K = h->classes[k];
	float *l = malloc(sizeof *l * (size_t)(n * V) * K);
	if (!l)
		return -ENOMEM;
	eval_linear_logits(feat, n * V, h->width, h->w[k], h->b[k], K, l);
	for (int64_t i = 0; i < n; i++)
		for (int c = 0; c < K; c++) {
			double s = 0;
			for (int v = 0; v < V; v++)
				s += l[(size_t)(i * V + v) * K + c];
			scores[(size_t)i * K + c] = (float)(s / V);
		}
	free(l);
	return 0;
}

// the probe: one head per label head, fitted on the train manifest's features (one view each)
static int fit_heads(ClipModel *m, const Manifest *man, const EvalOpts *o, const EvalClsOpts *c, EvalHeads *h,
		     EvalClsReport *r, char *err, size_t errlen)
{
	const Manifest *tr = c->train;
	const int W = m->cfg.vis_width;
	TRY(same_heads(tr, c->train_path, man, c->heldout_path, err, errlen));
	float *tf = NULL;
	double t0 = time_mono_s();
	int rc = embed(m, tr, o, c, 0, &tf, err, errlen);
	r->embed_s += time_mono_s() - t0;
	r->n_train = (int64_t)manifest_header(tr)->n_samples;
	h->n = (int)manifest_label_heads(tr);
	h->width = W;
	t0 = time_mono_s();
	for (int k = 0; !rc && k < h->n; k++) {
		const int K = (int)manifest_label_classes(tr, (uint32_t)k);
		int *lab = head_labels(tr, k);
		h->classes[k] = K;
		snprintf(h->name[k], sizeof h->name[k], "%s", manifest_label_head_name(tr, (uint32_t)k));
		h->w[k] = malloc(sizeof(float) * (size_t)K * W);
		h->b[k] = malloc(sizeof(float) * (size_t)K);
		rc = lab && h->w[k] && h->b[k] ? 0 : -ENOMEM;
		if (!rc && (rc = eval_probe_fit(tf, r->n_train, W, lab, K, &c->probe, h->w[k], h->b[k],
						&r->head[k].fit)))
			err_fmt(err, errlen, rc, "probe of head %d (%s) on %s: %s", k, h->name[k], c->train_path,
				rc == -EINVAL ? "no labelled clip" : strerror(-rc));
		free(lab);
	}
	r->fit_s = time_mono_s() - t0;
	free(tf);
	return rc;
}

// the heads must read the model's feature and name the manifest's heads and classes
static int check_heads(const EvalHeads *h, const ClipModel *m, const Manifest *man, const char *path, char *err,
		       size_t errlen)
{
	const int nh = label_heads(man, path, err, errlen);
	if (nh < 0)
		return nh;
	if (h->width != m->cfg.vis_width)
		return err_fmt(err, errlen, -EINVAL, "the heads read %d-wide features, the model's video tower gives %d",
			       h->width, m->cfg.vis_width);
	char a[256];
	heads_str(man, a, sizeof a);
	if (h->n != nh)
		return err_fmt(err, errlen, -EINVAL, "%d classification head%s for the %d label heads of %s (%s)", h->n,
			       h->n == 1 ? "" : "s", nh, path, a);
	for (int k = 0; k < nh; k++)
		if (h->classes[k] != (int)manifest_label_classes(man, (uint32_t)k))
			return err_fmt(err, errlen, -EINVAL, "head %d has %d classes, the manifest %s labels %s", k,
				       h->classes[k], path, a);
	return 0;
}

int eval_cls_run(ClipModel *m, const Manifest *man, const EvalOpts *o, const EvalClsOpts *c, const EvalHeads *heads,
		 EvalHeads *fitted, EvalClsReport *r, char *err, size_t errlen)
{
	const double t0 = time_mono_s();
	memset(r, 0, sizeof *r);
	err[0] = 0;
	r->probe = !heads;
	r->l2 = c->probe.l2;
	r->width = m->cfg.vis_width;
	r->frames = m->cfg.frames;
	r->views_clips = c->views_clips;
	r->views_crops = c->views_crops;
	r->stride = c->stride;
	r->n = (int64_t)manifest_header(man)->n_samples;
	if (!heads && !c->train)
		return err_fmt(err, errlen, -EINVAL, "the probe needs a labelled train manifest");
	EvalHeads own = {0};
	int rc = label_heads(man, c->heldout_path, err, errlen);
	rc = rc < 0 ? rc : heads ? 0 : fit_heads(m, man, o, c, &own, r, err, errlen);
	const EvalHeads *h = heads ? heads : &own;
	if (!rc)
		rc = check_heads(h, m, man, c->heldout_path, err, errlen);
	float *feat = NULL, *scores = NULL;
	const int V = c->stride > 0 ? c->views_clips * c->views_crops : 1;
	if (!rc) {
		const double te = time_mono_s();
		rc = embed(m, man, o, c, 1, &feat, err, errlen);
		r->embed_s += time_mono_s() - te;
	}
	r->heads = h->n;
	for (int k = 0; !rc && k < h->n; k++) {
		const int K = h->classes[k];
		int *lab = head_labels(man, k);
		snprintf(r->head[k].name, sizeof r->head[k].name, "%s", manifest_label_head_name(man, (uint32_t)k));
		scores = realloc(scores, sizeof *scores * (size_t)r->n * K);
		rc = lab && scores ? view_logits(feat, r->n, V, h, k, scores) : -ENOMEM;
		if (!rc)
			rc = eval_check_finite(scores, r->n, K, "logits of clip (row) for class (element)", err, errlen);
		if (!rc && (rc = eval_head_accuracy(scores, r->n, K, lab, &r->head[k].acc)))
			err_fmt(err, errlen, rc, "head %d (%s) of %s: %s", k, r->head[k].name, c->heldout_path,
				rc == -EINVAL ? "no labelled clip" : strerror(-rc));
		free(lab);
	}
	if (rc == -ENOMEM && !err[0])
		err_fmt(err, errlen, rc, "out of memory for the scores of %lld clips", (long long)r->n);
	free(feat);
	free(scores);
	if (!rc && fitted)
		*fitted = own;
	else
		eval_heads_free(&own);
	r->total_s = time_mono_s() - t0;
	return rc;
}
