// The retrieval half of an evaluation from features (tools/eval and the trainer's in-process
// evaluation): similarity, ranks both ways next to chance, caption groups; the report as text or JSON.
#include "eval.h" // defines: EvalReport, eval_check_finite, eval_score_retrieval, eval_report_dir, eval_report_table, eval_report_json

#include <errno.h>  // defines: ENOMEM, EDOM
#include <math.h>   // defines: isfinite, isnan
#include <stdio.h>  // defines: snprintf, fprintf
#include <stdlib.h> // defines: malloc, free, qsort
#include <string.h> // defines: memcmp, strerror

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
static int caption_groups(const Manifest *man, const int64_t *idx, int64_t n, int64_t *gid, int64_t *size,
			  int64_t *distinct)
{
	CapRef *r = malloc(sizeof *r * (size_t)n);
	if (!r)
		return -ENOMEM;
	uint32_t ctx = manifest_header(man)->context;
	for (int64_t i = 0; i < n; i++)
		r[i] = (CapRef){manifest_tokens(man, (uint64_t)(idx ? idx[i] : i)), ctx, i};
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

int eval_check_finite(const float *x, int64_t rows, int64_t cols, const char *what, char *err, size_t errlen)
{
	for (int64_t i = 0; i < rows * cols; i++)
		if (!isfinite(x[i])) {
			snprintf(err, errlen,
				 "%s %lld, element %lld is %s: the model produces non-finite values, refusing to score",
				 what, (long long)(i / cols), (long long)(i % cols), isnan(x[i]) ? "nan" : "infinite");
			return -EDOM;
		}
	return 0;
}

int eval_score_retrieval(const Manifest *man, const float *vfeat, const float *tfeat, int64_t n, int E,
			 int match_caption, float *sim, EvalReport *r, char *err, size_t errlen)
{
	return eval_score_retrieval_of(man, NULL, vfeat, tfeat, n, E, match_caption, sim, r, err, errlen);
}

int eval_score_retrieval_of(const Manifest *man, const int64_t *idx, const float *vfeat, const float *tfeat, int64_t n,
			    int E, int match_caption, float *sim, EvalReport *r, char *err, size_t errlen)
{
	int64_t *gid = malloc(sizeof(int64_t) * (size_t)n), *gsize = malloc(sizeof(int64_t) * (size_t)n);
	int64_t *rank = malloc(sizeof(int64_t) * (size_t)n);
	int rc = 0;
	if (!gid || !gsize || !rank || caption_groups(man, idx, n, gid, gsize, &r->captions)) {
		snprintf(err, errlen, "out of memory ranking %lld samples", (long long)n);
		rc = -ENOMEM;
	}
	if (!rc && !(rc = eval_check_finite(vfeat, n, E, "video feature of sample", err, errlen)) &&
	    !(rc = eval_check_finite(tfeat, n, E, "caption feature of sample", err, errlen))) {
		r->n = n;
		r->match_caption = match_caption;
		r->image = n > 0;
		for (int64_t i = 0; i < n && r->image; i++)
			r->image = manifest_sample(man, (uint64_t)(idx ? idx[i] : i))->kind == MANIFEST_KIND_IMAGE;
		eval_similarity(vfeat, n, tfeat, n, E, sim); // (videos, captions)
		rc = eval_check_finite(sim, n, n, "similarity of video (row) to caption (element)", err, errlen);
	}
	if (!rc) {
		if (match_caption) {
			eval_chance_grouped(n, gsize, n, &r->chance);
			eval_chance(r->captions, &r->chance_v2t);
			if ((rc = eval_ranks_distinct(sim, n, n, 0, gid, gid, r->captions, rank)) ||
			    (rc = eval_retrieval(rank, n, &r->v2t)) ||
			    (rc = eval_ranks_grouped(sim, n, n, 1, gid, gid, rank)) ||
			    (rc = eval_retrieval(rank, n, &r->t2v)))
				snprintf(err, errlen, "ranking: %s", strerror(-rc));
		} else {
			eval_chance(n, &r->chance);
			r->chance_v2t = r->chance;
			if ((rc = eval_ranks(sim, n, n, 0, NULL, rank)) || (rc = eval_retrieval(rank, n, &r->v2t)) ||
			    (rc = eval_ranks(sim, n, n, 1, NULL, rank)) || (rc = eval_retrieval(rank, n, &r->t2v)))
				snprintf(err, errlen, "ranking: %s", strerror(-rc));
		}
	}
	free(gid);
	free(gsize);
	free(rank);
	return rc;
}

const char *eval_report_dir(const EvalReport *r, int text_to_visual)
{
	if (text_to_visual)
		return r->image ? "text->image" : "text->video";
	return r->image ? "image->text" : "video->text";
}

static void row(FILE *f, const char *name, const EvalRetrieval *x)
{
	fprintf(f, "  %-12s %7.2f %7.2f %7.2f %9.1f %9.1f\n", name, 100 * x->r1, 100 * x->r5, 100 * x->r10,
		x->median_rank, x->mean_rank);
}

void eval_report_table(FILE *f, const EvalReport *r)
{
	fprintf(f, "retrieval, %lld samples   R@1 %%   R@5 %%  R@10 %%  med.rank mean rank\n", (long long)r->n);
	row(f, eval_report_dir(r, 1), &r->t2v);
	row(f, eval_report_dir(r, 0), &r->v2t);
	row(f, "chance", &r->chance);
	if (r->match_caption)
		row(f, "chance v->t", &r->chance_v2t);
	if (r->skipped)
		fprintf(f, "  (%lld damaged samples skipped, in no figure; the first: %s; --strict stops at one)\n",
			(long long)r->skipped, r->skipped_first);
	if (r->match_caption)
		fprintf(f,
			"  (a hit: any of the samples with the query's caption; %lld distinct captions, which are\n"
			"   %s's candidates: copies of a caption count once)\n",
			(long long)r->captions, eval_report_dir(r, 0));
	else if (r->captions < r->n)
		fprintf(f,
			"  (a hit: the sample itself; only %lld distinct captions, so identical captions tie:\n"
			"   --match caption counts any sample with the same caption)\n",
			(long long)r->captions);
	if (r->has_rel) {
		fprintf(f, "EPIC-style relevance            mAP    nDCG\n");
		fprintf(f, "  %-28s %6.2f %6.2f   (%lld queries with a relevance-1 caption)\n", eval_report_dir(r, 0),
			100 * r->map_v2t, 100 * r->ndcg_v2t, (long long)r->rel_queries_v2t);
		fprintf(f, "  %-28s %6.2f %6.2f   (%lld queries)\n", eval_report_dir(r, 1), 100 * r->map_t2v,
			100 * r->ndcg_t2v, (long long)r->rel_queries_t2v);
		fprintf(f, "  %-28s %6.2f %6.2f\n", "average", 50 * (r->map_v2t + r->map_t2v),
			50 * (r->ndcg_v2t + r->ndcg_t2v));
	}
	if (r->has_zs) {
		int k = r->zs_classes < 5 ? r->zs_classes : 5;
		fprintf(f, "zero-shot classification (%s, %d classes, %lld labelled samples)\n", r->zs_what,
			r->zs_classes, (long long)r->zs_n);
		fprintf(f, "  top-1 %6.2f %%   (chance %.2f %%)\n", 100 * r->zs_top1, 100.0 / r->zs_classes);
		fprintf(f, "  top-%d %6.2f %%   (chance %.2f %%)\n", k, 100 * r->zs_top5, 100.0 * k / r->zs_classes);
	}
	fprintf(f, "%.1f s (embedding %.1f s, %.1f samples/s)\n", r->total_s, r->embed_s,
		r->embed_s > 0 ? (double)r->n / r->embed_s : 0.0);
}

void eval_json_str(FILE *f, const char *s)
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

void eval_json_end(FILE *f, double embed_s, double total_s, int64_t step, const char *source)
{
	fprintf(f, ",\"embed_s\":%.3f,\"total_s\":%.3f", embed_s, total_s);
	if (step >= 0)
		fprintf(f, ",\"step\":%lld", (long long)step);
	if (source) {
		fputs(",\"source\":", f);
		eval_json_str(f, source);
	}
	fputs("}\n", f);
}

static void json_ret(FILE *f, const char *p, const EvalRetrieval *x)
{
	fprintf(f, ",\"%s_r1\":%.6g,\"%s_r5\":%.6g,\"%s_r10\":%.6g,\"%s_medr\":%.6g,\"%s_meanr\":%.6g", p, x->r1, p,
		x->r5, p, x->r10, p, x->median_rank, p, x->mean_rank);
}

void eval_report_json(FILE *f, const EvalReport *r, int64_t step, const char *source)
{
	fprintf(f, "{\"n\":%lld,\"captions\":%lld,\"match\":\"%s\",\"media\":\"%s\"", (long long)r->n,
		(long long)r->captions, r->match_caption ? "caption" : "instance", r->image ? "image" : "video");
	if (step >= 0)
		fprintf(f, ",\"step\":%lld", (long long)step);
	if (source) {
		fputs(",\"source\":", f);
		eval_json_str(f, source);
	}
	json_ret(f, "t2v", &r->t2v);
	json_ret(f, "v2t", &r->v2t);
	json_ret(f, "chance", &r->chance);
	json_ret(f, "chance_v2t", &r->chance_v2t);
	if (r->has_rel)
		fprintf(f,
			",\"map_v2t\":%.6g,\"map_t2v\":%.6g,\"map_avg\":%.6g,\"ndcg_v2t\":%.6g,\"ndcg_t2v\":%.6g,"
			"\"ndcg_avg\":%.6g",
			r->map_v2t, r->map_t2v, 0.5 * (r->map_v2t + r->map_t2v), r->ndcg_v2t, r->ndcg_t2v,
			0.5 * (r->ndcg_v2t + r->ndcg_t2v));
	if (r->has_zs) {
		int k = r->zs_classes < 5 ? r->zs_classes : 5;
		fprintf(f,
			",\"zs_classes\":%d,\"zs_n\":%lld,\"zs_top1\":%.6g,\"zs_top5\":%.6g,\"zs_chance\":%.6g,"
			"\"zs_chance5\":%.6g,\"zs_what\":",
			r->zs_classes, (long long)r->zs_n, r->zs_top1, r->zs_top5, 1.0 / r->zs_classes,
			(double)k / r->zs_classes);
		eval_json_str(f, r->zs_what);
	}
	if (r->skipped)
		fprintf(f, ",\"skipped\":%lld", (long long)r->skipped);
	fprintf(f, ",\"embed_s\":%.3f,\"total_s\":%.3f}\n", r->embed_s, r->total_s);
}
