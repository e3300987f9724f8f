// tools/eval --task probe|classify: classification of a labelled held-out manifest by linear heads
// over the video tower's pre-projection feature, the heads fitted on a labelled train manifest's
// frozen features (probe) or fine-tuned with it (classify); views averaged, accuracy per head.
#ifndef TOOLS_EVAL_CLS_H
#define TOOLS_EVAL_CLS_H
// defines: EVAL_CLS_HEADS, EvalHeads, EvalClsOpts, EvalClsHead, EvalClsReport, eval_cls_run, eval_heads_free,
//          eval_heads_from_ckpt, eval_heads_load, eval_heads_save, eval_cls_report_table, eval_cls_report_json

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t
#include <stdio.h>  // defines: FILE

#include "eval.h"     // defines: EvalProbeOpts, EvalProbeFit, EvalHeadAcc, EvalPairAcc
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
	const Manifest *train;        // probe: the labelled manifest the heads are fitted on
	const char *train_path;       // its path, for messages
	const char *heldout_path;     // the evaluated manifest's path, for messages
	EvalProbeOpts probe;          // probe: the fit
	int views_clips, views_crops; // --views CxS: the held-out clips' views, logits averaged over them
	int stride;                   // > 0: C clips of frames `stride` apart (1x1 and 0: segment midpoints)
} EvalClsOpts;

typedef struct {
	char name[32];
	EvalHeadAcc acc;
	EvalProbeFit fit; // probe only
} EvalClsHead;

typedef struct {
	int probe;          // 1: --task probe, 0: classify
	int64_t n, n_train; // held-out clips; probe: train clips
	int width, heads, frames;
	int views_clips, views_crops, stride;
	double l2; // probe
	EvalClsHead head[EVAL_CLS_HEADS];
	int has_pair;     // two heads and a clip with both labels: the accuracy of their pair (EK-100's action)
	EvalPairAcc pair; // of the (head 0, head 1) pairs ranked by the product of the heads' softmaxes
	double embed_s, fit_s, total_s;
	char **names[EVAL_CLS_HEADS]; // the report's class names (--classes; NULL: the manifest's, else ids)
} EvalClsReport;

// heads: classify's (NULL for the probe, which fits its own; written to fitted when that is not
// NULL, the caller frees it with eval_heads_free). 0 or -errno with a sentence in err: a manifest
// without labels, train and held-out heads that differ, heads that do not fit the manifest or
// the model, a clip that cannot be decoded (every clip counts).
int eval_cls_run(ClipModel *m, const Manifest *man, const EvalOpts *o, const EvalClsOpts *c, const EvalHeads *heads,
		 EvalHeads *fitted, EvalClsReport *r, char *err, size_t errlen);
void eval_heads_free(EvalHeads *h);
// the heads of a trainer --objective classify checkpoint file (extra/cls.params: head by head its
// weight (K, width) then bias (K), as trainer/trainer_cls.c lays them out; the class counts from
// its avclip.cls_heads metadata, or the manifest's for a checkpoint written before that), named
// as the manifest's heads. -EINVAL (a sentence in err) for a checkpoint without heads or of
// another size.
int eval_heads_from_ckpt(EvalHeads *h, const char *file, int width, const Manifest *man, char *err, size_t errlen);
// A heads file (what --save-heads writes): safetensors with head.K.weight (classes, width) and
// head.K.bias (classes) F32 for K = 0.., and metadata avclip.heads "name:classes,...".
int eval_heads_load(EvalHeads *h, const char *path, char *err, size_t errlen);
int eval_heads_save(const EvalHeads *h, const char *path, char *err, size_t errlen);

void eval_cls_report_table(FILE *f, const EvalClsReport *r, const Manifest *man);
// one JSON line: task, n, views, per head headK_* figures as fractions, step and source when given
void eval_cls_report_json(FILE *f, const EvalClsReport *r, int64_t step, const char *source);

#endif
