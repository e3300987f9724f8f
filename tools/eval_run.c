// The evaluation pipeline: features of every sample, the (videos x captions) similarity matrix,
// ranks both ways, relevance metrics, class prompts through the text tower.
#include "eval_run.h" // defines: EvalOpts, EvalReport, eval_run

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdlib.h> // defines: calloc, malloc, free
#include <string.h> // defines: memset, strerror
#include <time.h>   // defines: clock_gettime

#include "bpe_tokenizer.h" // defines: BpeTokenizer, bpe_load, bpe_decode, bpe_tokenize, bpe_free
#include "eval_input.h"    // defines: EvalClasses, eval_rel_read, eval_classes_*, eval_prompt

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

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
		snprintf(err, errlen, "BPE merges %s: %s%s", bpe_path, strerror(-rc), bad ? " (malformed line)" : "");
		return rc;
	}
	const ManifestHeader *h = manifest_header(man);
	if ((uint32_t)bpe_vocab_size(t) != h->vocab_size) {
		snprintf(err, errlen, "BPE merges %s give %d tokens, the manifest's captions were made with %u: another "
			 "vocabulary", bpe_path, bpe_vocab_size(t), h->vocab_size);
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

static void captions_free(char **caps, int64_t n)
{
	for (int64_t i = 0; caps && i < n; i++)
		free(caps[i]);
	free(caps);
}

typedef struct {
	const uint16_t *tok;
	uint32_t ctx;
	int64_t i;
} CapRef;

static int by_tokens(const void *a, const void *b)
{
	const CapRef *x = a, *y = b;
	int c = memcmp(x->tok, y->tok, sizeof(uint16_t) * x->ctx);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

// gid[i]: one id per distinct caption (token row); size[i]: samples sharing sample i's caption
static int caption_groups(const Manifest *man, int64_t n, int64_t *gid, int64_t *size, int64_t *distinct)
{
	CapRef *r = malloc(sizeof *r * (size_t)n);
	if (!r)
		return -ENOMEM;
	uint32_t ctx = manifest_header(man)->context;
	for (int64_t i = 0; i < n; i++)
		r[i] = (CapRef){ manifest_tokens(man, (uint64_t)i), ctx, i };
	qsort(r, (size_t)n, sizeof *r, by_tokens);
	int64_t g = -1;
	for (int64_t k = 0, start = 0; k < n; k++) {
		if (!k || memcmp(r[k].tok, r[k - 1].tok, sizeof(uint16_t) * ctx)) {
			g++;
			start = k;
		}
		gid[r[k].i] = g;
		int64_t end = k + 1;
		if (end == n || memcmp(r[end].tok, r[k].tok, sizeof(uint16_t) * ctx))
			for (int64_t t = start; t < end; t++)
				size[r[t].i] = end - start;
	}
	*distinct = g + 1;
	free(r);
	return 0;
}

// zero-shot classification: prompts of the classes through the text tower, videos against them
static int zero_shot(ClipModel *m, const float *vfeat, int64_t n, const EvalClasses *c, const EvalOpts *o,
		     EvalReport *r, char *err, size_t errlen)
{
	const int ctx = m->cfg.ctx_len, E = m->cfg.embed_dim;
	BpeTokenizer *t;
	int bad = 0, rc = bpe_load(&t, o->bpe, &bad);
	if (rc) {
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
		rc = eval_similarity(vfeat, n, cf, c->n, E, scores);
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
		snprintf(err, errlen, "mAP: %s", rc == -EINVAL ? "no query has a candidate of relevance 1" : strerror(-rc));
	else if ((rc = eval_ndcg(sim, n, n, 0, rel, &r->ndcg_v2t, NULL)) ||
		 (rc = eval_ndcg(sim, n, n, 1, &relt, &r->ndcg_t2v, NULL)))
		snprintf(err, errlen, "nDCG: %s", strerror(-rc));
	else
		r->has_rel = 1;
	eval_rel_free(&relt);
	return rc;
}

int eval_run(ClipModel *m, const Manifest *man, const EvalOpts *o, EvalReport *r, char *err, size_t errlen)
{
	double t0 = now_s();
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
	if (rc)
		return rc;
	const int64_t n = (int64_t)manifest_header(man)->n_samples;
	const int E = m->cfg.embed_dim;
	EvalRel rel = { 0 };
	EvalClasses cls = { 0 };
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
	int64_t *rank = malloc(sizeof(int64_t) * (size_t)n);
	if (!rc && (!vfeat || !tfeat || !sim || !rank)) {
		snprintf(err, errlen, "out of memory for %lld samples (the similarity matrix takes %.1f GiB)", (long long)n,
			 (double)n * (double)n * 4 / (1 << 30));
		rc = -ENOMEM;
	}
	if (!rc) {
		double te = now_s();
		rc = eval_embed_manifest(m, man, vfeat, tfeat, &o->embed, err, errlen);
		r->embed_s = now_s() - te;
	}
	int64_t *gid = malloc(sizeof(int64_t) * (size_t)n), *gsize = malloc(sizeof(int64_t) * (size_t)n);
	if (!rc && (!gid || !gsize || caption_groups(man, n, gid, gsize, &r->captions))) {
		snprintf(err, errlen, "out of memory grouping captions");
		rc = -ENOMEM;
	}
	if (!rc) {
		r->n = n;
		r->match_caption = o->match_caption;
		eval_similarity(vfeat, n, tfeat, n, E, sim); // (videos, captions)
		if (o->match_caption) {
			eval_chance_grouped(n, gsize, n, &r->chance);
			if ((rc = eval_ranks_grouped(sim, n, n, 0, gid, gid, rank)) || (rc = eval_retrieval(rank, n, &r->v2t)) ||
			    (rc = eval_ranks_grouped(sim, n, n, 1, gid, gid, rank)) || (rc = eval_retrieval(rank, n, &r->t2v)))
				snprintf(err, errlen, "ranking: %s", strerror(-rc));
		} else {
			eval_chance(n, &r->chance);
			if ((rc = eval_ranks(sim, n, n, 0, NULL, rank)) || (rc = eval_retrieval(rank, n, &r->v2t)) ||
			    (rc = eval_ranks(sim, n, n, 1, NULL, rank)) || (rc = eval_retrieval(rank, n, &r->t2v)))
				snprintf(err, errlen, "ranking: %s", strerror(-rc));
		}
	}
	free(gid);
	free(gsize);
	if (!rc && rel.row_ptr)
		rc = relevance(sim, n, &rel, r, err, errlen);
	if (!rc && cls.names)
		rc = zero_shot(m, vfeat, n, &cls, o, r, err, errlen);
	free(vfeat);
	free(tfeat);
	free(sim);
	free(rank);
	eval_rel_free(&rel);
	eval_classes_free(&cls);
	captions_free(caps, n);
	r->total_s = now_s() - t0;
	return rc;
}

static void row(FILE *f, const char *name, const EvalRetrieval *x)
{
	fprintf(f, "  %-12s %7.2f %7.2f %7.2f %9.1f %9.1f\n", name, 100 * x->r1, 100 * x->r5, 100 * x->r10,
		x->median_rank, x->mean_rank);
}

void eval_report_table(FILE *f, const EvalReport *r)
{
	fprintf(f, "retrieval, %lld samples   R@1 %%   R@5 %%  R@10 %%  med.rank mean rank\n", (long long)r->n);
	row(f, "text->video", &r->t2v);
	row(f, "video->text", &r->v2t);
	row(f, "chance", &r->chance);
	if (r->match_caption)
		fprintf(f, "  (a hit: any of the samples with the query's caption; %lld distinct captions)\n",
			(long long)r->captions);
	else if (r->captions < r->n)
		fprintf(f, "  (a hit: the sample itself; only %lld distinct captions, so identical captions tie:\n"
			   "   --match caption counts any sample with the same caption)\n",
			(long long)r->captions);
	if (r->has_rel) {
		fprintf(f, "EPIC-style relevance            mAP    nDCG\n");
		fprintf(f, "  %-28s %6.2f %6.2f   (%lld queries with a relevance-1 caption)\n", "video->text",
			100 * r->map_v2t, 100 * r->ndcg_v2t, (long long)r->rel_queries_v2t);
		fprintf(f, "  %-28s %6.2f %6.2f   (%lld queries)\n", "text->video", 100 * r->map_t2v, 100 * r->ndcg_t2v,
			(long long)r->rel_queries_t2v);
		fprintf(f, "  %-28s %6.2f %6.2f\n", "average", 50 * (r->map_v2t + r->map_t2v),
			50 * (r->ndcg_v2t + r->ndcg_t2v));
	}
	if (r->has_zs) {
		int k = r->zs_classes < 5 ? r->zs_classes : 5;
		fprintf(f, "zero-shot classification (%s, %d classes, %lld labelled samples)\n", r->zs_what, r->zs_classes,
			(long long)r->zs_n);
		fprintf(f, "  top-1 %6.2f %%   (chance %.2f %%)\n", 100 * r->zs_top1, 100.0 / r->zs_classes);
		fprintf(f, "  top-%d %6.2f %%   (chance %.2f %%)\n", k, 100 * r->zs_top5, 100.0 * k / r->zs_classes);
	}
	fprintf(f, "%.1f s (embedding %.1f s, %.1f samples/s)\n", r->total_s, r->embed_s,
		r->embed_s > 0 ? (double)r->n / r->embed_s : 0.0);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void json_ret(FILE *f, const char *p, const EvalRetrieval *x)
{
	fprintf(f, ",\"%s_r1\":%.6g,\"%s_r5\":%.6g,\"%s_r10\":%.6g,\"%s_medr\":%.6g,\"%s_meanr\":%.6g", p, x->r1, p, x->r5,
		p, x->r10, p, x->median_rank, p, x->mean_rank);
}

void eval_report_json(FILE *f, const EvalReport *r, int64_t step, const char *source)
{
	fprintf(f, "{\"n\":%lld,\"captions\":%lld,\"match\":\"%s\"", (long long)r->n, (long long)r->captions,
		r->match_caption ? "caption" : "instance");
	if (step >= 0)
		fprintf(f, ",\"step\":%lld", (long long)step);
	if (source) {
		fputs(",\"source\":", f);
		json_str(f, source);
	}
	json_ret(f, "t2v", &r->t2v);
	json_ret(f, "v2t", &r->v2t);
	json_ret(f, "chance", &r->chance);
	if (r->has_rel)
		fprintf(f, ",\"map_v2t\":%.6g,\"map_t2v\":%.6g,\"map_avg\":%.6g,\"ndcg_v2t\":%.6g,\"ndcg_t2v\":%.6g,"
			   "\"ndcg_avg\":%.6g",
			r->map_v2t, r->map_t2v, 0.5 * (r->map_v2t + r->map_t2v), r->ndcg_v2t, r->ndcg_t2v,
			0.5 * (r->ndcg_v2t + r->ndcg_t2v));
	if (r->has_zs) {
		int k = r->zs_classes < 5 ? r->zs_classes : 5;
		fprintf(f, ",\"zs_classes\":%d,\"zs_n\":%lld,\"zs_top1\":%.6g,\"zs_top5\":%.6g,\"zs_chance\":%.6g,"
			   "\"zs_chance5\":%.6g,\"zs_what\":",
			r->zs_classes, (long long)r->zs_n, r->zs_top1, r->zs_top5, 1.0 / r->zs_classes,
			(double)k / r->zs_classes);
		json_str(f, r->zs_what);
	}
	fprintf(f, ",\"embed_s\":%.3f,\"total_s\":%.3f}\n", r->embed_s, r->total_s);
}
