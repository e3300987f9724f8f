// The evaluation pipeline: features of every sample, the (videos x captions) similarity matrix,
// ranks both ways, relevance metrics, class prompts through the text tower.
#include "eval_run.h"  // defines: EvalOpts, EvalReport, eval_run
#include "proc_time.h" // defines: time_mono_s

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdlib.h> // defines: calloc, malloc, free
#include <string.h> // defines: memset, strerror
#include <time.h>   // defines: clock_gettime

#include "bpe.h"        // defines: BpeTokenizer, bpe_load, bpe_decode, bpe_tokenize, bpe_free
#include "eval_input.h" // defines: EvalClasses, eval_rel_read, eval_classes_*, eval_prompt

// every sample's caption as text (bpe_decode of its tokens); NULL entries on failure
static int captions_decode(const Manifest *man, const char *bpe_path, char ***out, char *err, size_t errlen)
{
	if (!bpe_path) {
		snprintf(err, errlen, "captions as text need the manifest's BPE merges file (--bpe)");
		return -EINVAL;
	}
	BpeTokenizer *t;
	int bad = 0, rc = bpe_load(&t, bpe_path, &bad);
	if (rc) {
		if (bad)
			snprintf(err, errlen, "BPE merges %s:%d: a malformed line (%s)", bpe_path, bad, strerror(-rc));
		else
			snprintf(err, errlen, "BPE merges %s: %s", bpe_path, strerror(-rc));
		return rc;
	}
	const ManifestHeader *h = manifest_header(man);
	if ((uint32_t)bpe_vocab_size(t) != h->vocab_size) {
		snprintf(err, errlen,
			 "BPE merges %s give %d tokens, the manifest's captions were made with %u: another "
			 "vocabulary",
			 bpe_path, bpe_vocab_size(t), h->vocab_size);
		bpe_free(t);
		return -EINVAL;
	}
	int64_t n = (int64_t)h->n_samples;
	char **caps = calloc((size_t)n, sizeof *caps);
	int32_t ids[1024];
	rc = caps ? 0 : -ENOMEM;
	for (int64_t i = 0; i < n && !rc; i++) {
		const uint16_t *tok = manifest_tokens(man, (uint64_t)i);
		int ctx = (int)(h->context < 1024 ? h->context : 1024);
		for (int j = 0; j < ctx; j++)
			ids[j] = tok[j];
		char buf[1024];
		long len = bpe_decode(t, ids, ctx, buf, sizeof buf);
		if (len < 0) {
			snprintf(err, errlen, "caption of sample %lld does not decode with %s", (long long)i, bpe_path);
			rc = -EINVAL;
		} else if (!(caps[i] = strdup(buf))) {
			rc = -ENOMEM;
		}
	}
	bpe_free(t);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory decoding captions");
	*out = caps;
	return rc;
}

// --bpe must be the vocabulary the manifest's captions were tokenized with (decoded captions and
// class prompts in another would be other words)
static int check_bpe(const Manifest *man, const char *bpe_path, char *err, size_t errlen)
{
	BpeTokenizer *t;
	int bad = 0, rc = bpe_load(&t, bpe_path, &bad);
	if (rc)
		return 0; // the first use names the line
	uint64_t have, mine = bpe_vocab_hash(t);
	bpe_free(t);
	if (manifest_vocab(man, &have, NULL, 0) && have != mine) {
		snprintf(err, errlen,
			 "--bpe %s is another vocabulary (bpe %016llx) than the one the manifest's captions were "
			 "tokenized with (bpe %016llx): give the merges file it was prepared with (its bpe_merges.txt)",
			 bpe_path, (unsigned long long)mine, (unsigned long long)have);
		return -EINVAL;
	}
	return 0;
}

static void captions_free(char **caps, int64_t n)
{
	for (int64_t i = 0; caps && i < n; i++)
		free(caps[i]);
	free(caps);
}

// zero-shot classification: prompts of the classes through the text tower, videos against them
static int zero_shot(ClipModel *m, const float *vfeat, int64_t n, const EvalClasses *c, const EvalOpts *o,
		     EvalReport *r, char *err, size_t errlen)
{
	const int ctx = m->cfg.ctx_len, E = m->cfg.embed_dim;
	BpeTokenizer *t;
	int bad = 0, rc = bpe_load(&t, o->bpe, &bad);
	if (!rc)
		bpe_set_specials(t, (BpeSpecials)o->special_tokens);
	if (rc) {
		if (bad)
			snprintf(err, errlen, "BPE merges %s:%d: a malformed line (%s)", o->bpe, bad, strerror(-rc));
		else
			snprintf(err, errlen, "BPE merges %s: %s", o->bpe, strerror(-rc));
		return rc;
	}
	int32_t *ids = calloc((size_t)c->n * ctx, sizeof *ids);
	float *cf = malloc(sizeof *cf * (size_t)c->n * E), *scores = malloc(sizeof *scores * (size_t)(n * c->n));
	rc = ids && cf && scores ? 0 : -ENOMEM;
	if (rc)
		snprintf(err, errlen, "out of memory for %d class prompts", c->n);
	for (int k = 0; k < c->n && !rc; k++) {
		char p[1024];
		if (eval_prompt(o->prompt ? o->prompt : "a video of {}", c->names[k], p, sizeof p)) {
			snprintf(err, errlen, "prompt of class '%s' is too long", c->names[k]);
			rc = -EINVAL;
		} else if ((rc = bpe_tokenize(t, p, ids + (size_t)k * ctx, ctx)) < 0) {
			snprintf(err, errlen, "prompt '%s' does not tokenize: %s", p, strerror(-rc));
		} else {
			rc = 0;
		}
	}
	if (!rc)
		rc = eval_embed_texts(m, ids, c->n, cf, err, errlen);
	if (!rc)
		rc = eval_check_finite(cf, c->n, E, "class prompt feature", err, errlen);
	if (!rc)
		rc = eval_similarity(vfeat, n, cf, c->n, E, scores);
	if (!rc)
		rc = eval_check_finite(scores, n, c->n, "similarity of video (row) to class prompt (element)", err,
				       errlen);
	if (!rc && !(rc = eval_topk_accuracy(scores, n, c->n, c->label, 1, &r->zs_top1, &r->zs_n)))
		rc = eval_topk_accuracy(scores, n, c->n, c->label, c->n < 5 ? c->n : 5, &r->zs_top5, NULL);
	if (rc == -EINVAL && !err[0])
		snprintf(err, errlen, "no sample has a class label");
	if (!rc) {
		r->has_zs = 1;
		r->zs_classes = c->n;
	}
	free(ids);
	free(cf);
	free(scores);
	bpe_free(t);
	return rc;
}

static int relevance(const float *sim, int64_t n, const EvalRel *rel, EvalReport *r, char *err, size_t errlen)
{
	EvalRel relt;
	int rc = eval_rel_transpose(rel, &relt);
	if (rc) {
		snprintf(err, errlen, "out of memory transposing the relevance matrix");
		return rc;
	}
	if ((rc = eval_map(sim, n, n, 0, rel, &r->map_v2t, &r->rel_queries_v2t)) ||
	    (rc = eval_map(sim, n, n, 1, &relt, &r->map_t2v, &r->rel_queries_t2v)))
		snprintf(err, errlen, "mAP: %s",
			 rc == -EINVAL ? "no query has a candidate of relevance 1" : strerror(-rc));
	else if ((rc = eval_ndcg(sim, n, n, 0, rel, &r->ndcg_v2t, NULL)) ||
		 (rc = eval_ndcg(sim, n, n, 1, &relt, &r->ndcg_t2v, NULL)))
		snprintf(err, errlen, "nDCG: %s", strerror(-rc));
	else
		r->has_rel = 1;
	eval_rel_free(&relt);
	return rc;
}

// the damaged samples left out: feature rows, relevance rows and columns and class labels
// compacted to the kept samples; (*idx)[k] is the manifest sample of row k
static int leave_out(const unsigned char *damaged, int64_t n, int E, float *vfeat, float *tfeat, EvalRel *rel,
		     EvalClasses *cls, int64_t **idx, int64_t *kept, char *err, size_t errlen)
{
	int64_t *map = malloc(sizeof(int64_t) * (size_t)n), *ix = malloc(sizeof(int64_t) * (size_t)n), k = 0;
	if (!map || !ix) {
		free(map);
		free(ix);
		snprintf(err, errlen, "out of memory leaving damaged samples out");
		return -ENOMEM;
	}
	for (int64_t i = 0; i < n; i++) {
		map[i] = damaged[i] ? -1 : k;
		if (damaged[i])
			continue;
		ix[k] = i;
		if (k != i) {
			memmove(vfeat + k * E, vfeat + i * E, sizeof(float) * (size_t)E);
			memmove(tfeat + k * E, tfeat + i * E, sizeof(float) * (size_t)E);
		}
		k++;
	}
	int rc = 0;
	if (!k) {
		snprintf(err, errlen, "every one of the %lld samples is damaged: nothing to evaluate", (long long)n);
		rc = -EINVAL;
	}
	if (!rc && rel->row_ptr) { // in place: kept entries only move towards the front
		int64_t w = 0, row = 0;
		for (int64_t i = 0; i < rel->rows; i++) {
			int64_t from = rel->row_ptr[i], to = rel->row_ptr[i + 1];
			if (map[i] < 0)
				continue;
			rel->row_ptr[row++] = w;
			for (int64_t e = from; e < to; e++)
				if (map[rel->col[e]] >= 0) {
					rel->col[w] = map[rel->col[e]];
					rel->val[w++] = rel->val[e];
				}
		}
		rel->row_ptr[row] = w;
		rel->rows = rel->cols = k;
	}
	if (!rc && cls->label) {
		for (int64_t j = 0; j < k; j++)
			cls->label[j] = cls->label[ix[j]];
		cls->samples = k;
	}
	free(map);
	*idx = ix;
	*kept = k;
	return rc;
}

int eval_run(ClipModel *m, const Manifest *man, const EvalOpts *o, EvalReport *r, char *err, size_t errlen)
{
	double t0 = time_mono_s();
	memset(r, 0, sizeof *r);
	err[0] = 0;
	if ((o->classes != NULL) != (o->labels != NULL)) {
		snprintf(err, errlen, "a classes file needs a labels file and the other way round");
		return -EINVAL;
	}
	if (o->classes && o->classes_from) {
		snprintf(err, errlen, "classes come from files or from captions, not both");
		return -EINVAL;
	}
	if ((o->classes || o->classes_from) && !o->bpe) {
		snprintf(err, errlen, "class prompts need the manifest's BPE merges file (--bpe)");
		return -EINVAL;
	}
	if (o->relevance && o->relevance_from_captions) {
		snprintf(err, errlen, "relevance comes from a file or from captions, not both");
		return -EINVAL;
	}
	int rc = eval_check_manifest(m, man, err, errlen);
	if (!rc && o->bpe)
		rc = check_bpe(man, o->bpe, err, errlen);
	if (rc)
		return rc;
	const int64_t n = (int64_t)manifest_header(man)->n_samples;
	const int E = m->cfg.embed_dim;
	EvalRel rel = {0};
	EvalClasses cls = {0};
	char **caps = NULL;
	// side inputs first: a bad file fails before minutes of embedding
	if (o->classes_from || o->relevance_from_captions)
		rc = captions_decode(man, o->bpe, &caps, err, errlen);
	if (!rc && o->relevance)
		rc = eval_rel_read(o->relevance, n, &rel, err, errlen);
	if (!rc && o->relevance_from_captions)
		rc = eval_rel_from_captions((const char *const *)caps, n, &rel, err, errlen);
	if (!rc && o->classes) {
		rc = eval_classes_read(o->classes, o->labels, n, &cls, err, errlen);
		snprintf(r->zs_what, sizeof r->zs_what, "file");
	}
	if (!rc && o->classes_from) {
		rc = eval_classes_from_captions((const char *const *)caps, n, o->classes_from, &cls, err, errlen);
		snprintf(r->zs_what, sizeof r->zs_what, "%s", o->classes_from);
	}
	float *vfeat = malloc(sizeof(float) * (size_t)n * E), *tfeat = malloc(sizeof(float) * (size_t)n * E);
	float *sim = malloc(sizeof(float) * (size_t)n * (size_t)n);
	if (!rc && (!vfeat || !tfeat || !sim)) {
		snprintf(err, errlen, "out of memory for %lld samples (the similarity matrix takes %.1f GiB)",
			 (long long)n, (double)n * (double)n * 4 / (1 << 30));
		rc = -ENOMEM;
	}
	EvalEmbedOpts eo = o->embed;
	unsigned char *damaged = NULL;
	char why[256] = "";
	if (!rc && !o->strict) {
		if (!(damaged = calloc((size_t)n, 1))) {
			snprintf(err, errlen, "out of memory for %lld samples", (long long)n);
			rc = -ENOMEM;
		}
		eo.damaged = damaged, eo.damaged_why = why, eo.damaged_why_len = sizeof why;
	}
	if (!rc) {
		double te = time_mono_s();
		rc = eval_embed_manifest(m, man, vfeat, tfeat, &eo, err, errlen);
		r->embed_s = time_mono_s() - te;
	}
	int64_t *idx = NULL, kept = n;
	for (int64_t i = 0; !rc && damaged && i < n; i++)
		r->skipped += damaged[i];
	if (!rc && r->skipped) {
		snprintf(r->skipped_first, sizeof r->skipped_first, "%s", why);
		rc = leave_out(damaged, n, E, vfeat, tfeat, &rel, &cls, &idx, &kept, err, errlen);
	}
	if (!rc)
		rc = eval_score_retrieval_of(man, idx, vfeat, tfeat, kept, E, o->match_caption, sim, r, err, errlen);
	if (!rc && rel.row_ptr)
		rc = relevance(sim, kept, &rel, r, err, errlen);
	if (!rc && cls.names)
		rc = zero_shot(m, vfeat, kept, &cls, o, r, err, errlen);
	free(damaged);
	free(idx);
	free(vfeat);
	free(tfeat);
	free(sim);
	eval_rel_free(&rel);
	eval_classes_free(&cls);
	captions_free(caps, n);
	r->total_s = time_mono_s() - t0;
	return rc;
}
