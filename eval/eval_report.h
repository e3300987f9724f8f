// An evaluation's report and its retrieval half from features, shared by tools/eval and the
// trainer's in-process evaluation: ranks both ways next to chance, as a table or one JSON line.
#ifndef EVAL_EVAL_REPORT_H
#define EVAL_EVAL_REPORT_H
// defines: EvalReport, eval_check_finite, eval_score_retrieval, eval_report_table, eval_report_dir,
//          eval_report_json

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t
#include <stdio.h>  // defines: FILE

#include "eval_metrics.h"    // defines: EvalRetrieval
#include "manifest_reader.h" // defines: Manifest, manifest_header, manifest_tokens

typedef struct {
	int64_t n;                      // samples evaluated
	int64_t captions;               // distinct captions among them
	int match_caption;              // hits: the sample itself (0) or any sample with its caption (1)
	int image;                      // every sample an image (image–text): rows say image, not video
	EvalRetrieval t2v, v2t, chance; // chance: a random ranking of n candidates (of t2v's)
	EvalRetrieval chance_v2t;       // v2t's: the same, or with match_caption of the distinct captions
	int has_rel;                    // mAP / nDCG computed
	double map_v2t, map_t2v, ndcg_v2t, ndcg_t2v;
	int64_t rel_queries_v2t, rel_queries_t2v; // queries with a relevance-1 candidate (mAP)
	int has_zs;                               // zero-shot classification computed
	int zs_classes;
	int64_t zs_n;            // labelled samples
	double zs_top1, zs_top5; // top-5: top-min(5, classes)
	char zs_what[32];        // "action", "object", "caption" or "file"
	double embed_s, total_s; // seconds embedding, and all of it
	int64_t skipped;         // damaged samples left out of every figure (tools/eval without --strict)
	char skipped_first[256]; // the first one and why ("sample 3: ... (corrupt)")
} EvalReport;

// Retrieval of n samples' videos against their captions from L2-normalized features vfeat,
// tfeat (n, E) in manifest order: r->n, captions, match_caption, t2v, v2t and chance. With
// match_caption any sample whose caption (token row) equals the query's is a hit, and v2t ranks
// the distinct captions (copies of one caption are one candidate: eval_ranks_distinct). sim (n, n)
// receives the (videos x captions) similarities. 0, or -ENOMEM / -EINVAL with a sentence in err.
// A NaN similarity ranks like a hit (every comparison with it is false), so it would pass as a
// perfect score: 0 when x (rows, cols) is finite, else -EDOM with err naming the row and element
// ("<what> R, element C is nan: ... refusing to score").
int eval_check_finite(const float *x, int64_t rows, int64_t cols, const char *what, char *err, size_t errlen);
// features and similarities must be finite (-EDOM, eval_check_finite)
int eval_score_retrieval(const Manifest *man, const float *vfeat, const float *tfeat, int64_t n, int E,
			 int match_caption, float *sim, EvalReport *r, char *err, size_t errlen);
// the same for n rows that are the manifest's samples idx[0..n) (idx NULL: 0..n-1), e.g. all
// but the damaged ones
int eval_score_retrieval_of(const Manifest *man, const int64_t *idx, const float *vfeat, const float *tfeat, int64_t n,
			    int E, int match_caption, float *sim, EvalReport *r, char *err, size_t errlen);

// human table; JSON: one object on one line with flat keys (n, captions, match, t2v_r1 ... v2t_medr, chance_r1 ...,
// chance_v2t_r1 ...,
// map_v2t ..., zs_top1 ...), plus step and source when given (step < 0 and NULL leave them out)
void eval_report_table(FILE *f, const EvalReport *r);
// a direction's name: "text->video" / "video->text", or text->image / image->text for image–text
const char *eval_report_dir(const EvalReport *r, int text_to_visual);
void eval_report_json(FILE *f, const EvalReport *r, int64_t step, const char *source);

#endif
