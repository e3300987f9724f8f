// tools/eval --task ek100-mir|ek100-cls|charades-ego|egtea|egomcq: a benchmark's own files against the
// manifest prep made from them (sample i = clip i), features through both towers, the
// benchmark's metric as its reference code computes it (eval/eval.h).
#ifndef TOOLS_EVAL_BENCH_RUN_H
#define TOOLS_EVAL_BENCH_RUN_H
// defines: EvalBenchOpts, EvalBenchReport, eval_bench_run, eval_bench_report_table, eval_bench_report_json,
//          eval_views_max

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t
#include <stdio.h>  // defines: FILE

#include "eval_bench.h" // defines: BenchKind
#include "eval.h"       // defines: EvalClassAcc, EvalMcq, EvalEk100Cls
#include "eval_run.h"   // defines: EvalOpts
#include "manifest.h"   // defines: Manifest
#include "model.h"      // defines: ClipModel

typedef struct {
	BenchKind kind;
	const char *file;      // the benchmark's test list (eval_bench.h)
	const char *aux;       // its second file: sentences, classes, actions, EK-100's train CSV (EgoMCQ: none)
	const char *relevance; // EK-100 MIR: the relevance text tools/ek100_relevancy.py writes (clips x sentences)
	const char *templates; // class prompts: "lavila" (BENCH_TEMPLATES), "none" ("{}") or "T1|T2|..."
	int midpoints;         // --frame-protocol midpoints: the model's frames at segment midpoints, centre crop,
			       // where the benchmark's own protocol is not (or not for this model) available
	int views_clips, views_crops; // --views CxS (EGTEA: 10x3 by its protocol; 1x1 with midpoints)
} EvalBenchOpts;

typedef struct {
	BenchKind kind;
	int64_t n;            // clips (samples) embedded
	int frames;           // per clip, at segment midpoints with a centre crop
	char protocol[160];   // how the clips were sampled, and whether that is the benchmark's protocol
	int benchmark_frames; // 1: the benchmark's protocol, 0: --frame-protocol midpoints stood in
	int views_clips, views_crops, stride; // the views per clip; stride 0: segment midpoints
	int64_t n_sentences;                  // EK-100 MIR
	double map_v2t, map_t2v, ndcg_v2t, ndcg_t2v;
	int64_t map_used_v2t, map_used_t2v, ndcg_used_v2t, ndcg_used_t2v;
	int classes, classes_used, templates; // Charades-Ego, EGTEA
	double map;                           // Charades-Ego
	EvalClassAcc acc;                     // EGTEA
	EvalEk100Cls cls;                     // EK-100 CLS (classes: the (verb, noun) pairs)
	EvalMcq mcq;                          // EgoMCQ
	int64_t questions;
	int choices;
	double embed_s, total_s;
} EvalBenchReport;

// 0 or -errno with a sentence in err (a manifest that is not the benchmark's clips in order, a bad
// benchmark file, a protocol this build cannot sample, a damaged clip: every clip counts).
int eval_bench_run(ClipModel *m, const Manifest *man, const EvalOpts *o, const EvalBenchOpts *b, EvalBenchReport *r,
		   char *err, size_t errlen);
void eval_bench_report_table(FILE *f, const EvalBenchReport *r);
// out (n, C) = the largest of each clip's V view scores sv (n, V, C), class by class: LaViLa's
// multi-view zero-shot combination
void eval_views_max(const float *sv, int64_t n, int V, int C, float *out);
// one JSON line: task, n, frames, protocol and the task's figures (fractions in [0, 1]), step
// and source when given
void eval_bench_report_json(FILE *f, const EvalBenchReport *r, int64_t step, const char *source);

#endif
