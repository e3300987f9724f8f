// One evaluation of a model on a held-out manifest, in-process (tools/eval's main and, later, the
// trainer every K steps): embed, retrieval both ways, optional mAP/nDCG and zero-shot accuracy.
#ifndef TOOLS_EVAL_RUN_H
#define TOOLS_EVAL_RUN_H
// defines: EvalOpts, EvalReport, eval_run, eval_report_table, eval_report_json

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t
#include <stdio.h>  // defines: FILE

#include "eval_embed.h"      // defines: EvalEmbedOpts
#include "eval_metrics.h"    // defines: EvalRetrieval
#include "manifest_reader.h" // defines: Manifest
#include "model_clip.h"      // defines: ClipModel

typedef struct {
	const char *relevance;      // relevance file (eval_input.h), or NULL
	int relevance_from_captions; // EPIC-style relevance of synth captions instead
	const char *classes, *labels; // class names + per-sample labels, or NULL
	const char *classes_from;   // or derived from synth captions: action | object | caption
	const char *prompt;         // class prompt template, "{}" = class name (NULL: "a video of {}")
	const char *bpe;            // merges file of the manifest's captions (needed for prompts)
	int match_caption;          // a retrieval hit is any sample with the same caption (not only itself)
	EvalEmbedOpts embed;
} EvalOpts;

typedef struct {
	int64_t n;                       // samples evaluated
	int64_t captions;                // distinct captions among them
	int match_caption;               // hits: the sample itself (0) or any sample with its caption (1)
	EvalRetrieval t2v, v2t, chance;  // chance: a random ranking of n candidates
	int has_rel;                     // mAP / nDCG computed
	double map_v2t, map_t2v, ndcg_v2t, ndcg_t2v;
	int64_t rel_queries_v2t, rel_queries_t2v; // queries with a relevance-1 candidate (mAP)
	int has_zs;                      // zero-shot classification computed
	int zs_classes;
	int64_t zs_n;                    // labelled samples
	double zs_top1, zs_top5;         // top-5: top-min(5, classes)
	char zs_what[32];                // "action", "object", "caption" or "file"
	double embed_s, total_s;         // seconds embedding, and all of it
} EvalReport;

// 0 or -errno with a sentence in err
int eval_run(ClipModel *m, const Manifest *man, const EvalOpts *o, EvalReport *r, char *err, size_t errlen);

// human table; JSON: one object on one line with flat keys (n, captions, match, t2v_r1 ... v2t_medr, chance_r1 ...,
// map_v2t ..., zs_top1 ...), plus step and source when given (step < 0 and NULL leave them out)
void eval_report_table(FILE *f, const EvalReport *r);
void eval_report_json(FILE *f, const EvalReport *r, int64_t step, const char *source);

#endif
