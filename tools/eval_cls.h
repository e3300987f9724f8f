// tools/eval --task probe|classify: classification of a labelled held-out manifest by linear heads
// over the video tower's pre-projection feature, the heads fitted on a labelled train manifest's
// frozen features (probe) or fine-tuned with it (classify); views averaged, accuracy per head.
#ifndef TOOLS_EVAL_CLS_H
#define TOOLS_EVAL_CLS_H
// defines: EVAL_CLS_HEADS, EvalHeads, EvalClsOpts, EvalClsHead, EvalClsReport, eval_cls_run, eval_heads_free,
//          eval_cls_report_table, eval_cls_report_json

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t
#include <stdio.h>  // defines: FILE

#include "eval.h"     // defines: EvalProbeOpts, EvalProbeFit, EvalHeadAcc
#include "eval_run.h" // defines: EvalOpts
#include "manifest.h" // defines: Manifest, MANIFEST_MAX_HEADS
#include "model.h"    // defines: ClipModel

#define EVAL_CLS_HEADS ((int)MANIFEST_MAX_HEADS)

// linear heads over the feature: logits = w x + b
typedef struct {
	int n;     // heads
	int width; // the feature they read (the model's vis_width)
	int classes[EVAL_CLS_HEADS];
	char name[EVAL_CLS_HEADS][32];
	float *w[EVAL_CLS_HEADS], *b[EVAL_CLS_HEADS]; // (classes, width), (classes)
} EvalHeads;

typedef struct {
	const Manifest *train;      // probe: the labelled manifest the heads are fitted on
	const char *train_path;     // its path, for messages
	const char *heldout_path;   // the evaluated manifest's path, for messages
	EvalProbeOpts probe;        // probe: the fit
	int views_clips, views_crops; // --views CxS: the held-out clips' views, logits averaged over them
	int stride;                   // > 0: C clips of frames `stride` apart (1x1 and 0: segment midpoints)
} EvalClsOpts;

typedef struct {
	char name[32];
	EvalHeadAcc acc;
	EvalProbeFit fit; // probe only
} EvalClsHead;

typedef struct {
	int probe;         // 1: --task probe, 0: classify
	int64_t n, n_train; // held-out clips; probe: train clips
	int width, heads, frames;
	int views_clips, views_crops, stride;
	double l2; // probe
	EvalClsHead head[EVAL_CLS_HEADS];
	double embed_s, fit_s, total_s;
} EvalClsReport;

// heads: classify's (NULL for the probe, which fits its own; written to fitted when that is not
// NULL, the caller frees it with eval_heads_free). 0 or -errno with a sentence in err: a manifest
// without labels, train and held-out heads that differ, heads that do not fit the manifest or
// the model, a clip that cannot be decoded (every clip counts).
int eval_cls_run(ClipModel *m, const Manifest *man, const EvalOpts *o, const EvalClsOpts *c, const EvalHeads *heads,
		 EvalHeads *fitted, EvalClsReport *r, char *err, size_t errlen);
void eval_heads_free(EvalHeads *h);

void eval_cls_report_table(FILE *f, const EvalClsReport *r, const Manifest *man);
// one JSON line: task, n, views, per head headK_* figures as fractions, step and source when given
void eval_cls_report_json(FILE *f, const EvalClsReport *r, int64_t step, const char *source);

#endif
