// Held-out evaluation from inside the trainer (rank 0, every K steps and at the end) from an
// evaluation ring that `loaderd --eval` fills with the held-out manifest's samples in order (no
// decoding in the trainer): each evaluation consumes one pass of the manifest, embeds it with the
// model's current weights, scores retrieval both ways (eval/eval_report) and appends one JSON
// line to RUN_DIR/eval.jsonl for tools/plot.
#ifndef TRAINER_EVAL_H
#define TRAINER_EVAL_H
// defines: TrainerEval, trainer_eval_open, trainer_eval_run, trainer_eval_close

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t

#include "eval.h"  // defines: EvalReport
#include "model.h" // defines: ClipModel, KernCtx

typedef struct TrainerEval TrainerEval;

// Opens the manifest (its sample count and captions) and the evaluation ring `ring` as its one
// consumer (geometry: the model's; one rank), registered with ctx's device. With match_caption any
// sample with the query's caption is a hit. timeout_s bounds each wait for a clip. m must outlive
// the TrainerEval (its weights are read in place). Errors with a sentence in err (a missing ring
// names the loaderd --eval command that fills it).
int trainer_eval_open(TrainerEval **out, KernCtx *ctx, const char *ring, const char *manifest, const ClipModel *m,
		      int match_caption, double timeout_s, char *err, size_t errlen);
// Embeds the next pass of the ring with the current weights of the model given to trainer_eval_open
// (m), in fixed blocks of EVAL_EMBED_BLOCK whatever the training batch, and appends one JSON line with
// `step` to path; *out: the report that line holds (the log line, --keep-best). A sample the loaders
// could not decode, or a pass that is not every sample once, is an error. 0 or -errno with err.
int trainer_eval_run(TrainerEval *e, ClipModel *m, int64_t step, const char *path, EvalReport *out, char *err,
		     size_t errlen);
void trainer_eval_close(TrainerEval *e);

#endif
