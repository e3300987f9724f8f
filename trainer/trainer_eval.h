// Held-out evaluation from inside the trainer (rank 0, every K steps and at the end): zero-shot
// retrieval both ways through tools/' aveval library, appended to RUN_DIR/eval.jsonl for tools/plot.
#ifndef TRAINER_EVAL_H
#define TRAINER_EVAL_H
// defines: TrainerEval, trainer_eval_open, trainer_eval_run, trainer_eval_close

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t

#include "model_clip.h" // defines: ClipModel

typedef struct TrainerEval TrainerEval;

// Opens the manifest and checks the model can read it (caption length, vocabulary); m must
// outlive the TrainerEval (its parameters are read in place). With
// match_caption any sample with the query's caption is a hit. -ENOTSUP when the trainer was
// built without libav; other errors with a sentence in err.
int trainer_eval_open(TrainerEval **out, const char *manifest, const ClipModel *m, int match_caption, char *err,
		      size_t errlen);
// Embeds the manifest with the current weights of the model given to trainer_eval_open (m), in
// fixed blocks of EVAL_EMBED_BLOCK whatever the training batch, and appends one JSON line with `step` to
// path; *t2v_r1, *v2t_r1, *chance_r1 (percent) for the log line. 0 or -errno with err.
int trainer_eval_run(TrainerEval *e, ClipModel *m, int64_t step, const char *path, double *t2v_r1, double *v2t_r1,
		     double *chance_r1, char *err, size_t errlen);
void trainer_eval_close(TrainerEval *e);

#endif
