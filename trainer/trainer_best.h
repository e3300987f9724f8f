// --keep-best METRIC: after each in-training evaluation, a held-out score above the best so far
// saves the whole checkpoint into RUN_DIR/ckpt/best/ (its own LATEST marker and one
// ckpt-<step>.safetensors, so tools/eval --ckpt RUN_DIR/ckpt/best and tools/export read it) and
// records metric, score and step in best/best.json. --keep-last rotates only RUN_DIR/ckpt's own
// files, so it never deletes the best one. A resumed run reads best.json and replaces the best
// only with a higher score; ties keep the earlier checkpoint.
#ifndef TRAINER_BEST_H
#define TRAINER_BEST_H
// defines: TrainerBest, TRAINER_BEST_METRICS, trainer_best_open, trainer_best_value, trainer_best_offer,
//          trainer_best_describe

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t, uint64_t

#include "eval.h"         // defines: EvalReport
#include "trainer_step.h" // defines: TrainStep

// the eval.jsonl keys --keep-best accepts (higher is better), as a flag table's choices
#define TRAINER_BEST_METRICS "none|t2v_r1|t2v_r5|t2v_r10|v2t_r1|v2t_r5|v2t_r10"

typedef struct {
	char dir[1200];  // RUN_DIR/ckpt/best
	char metric[16]; // an eval.jsonl key
	double score;    // the best so far (a fraction, as eval.jsonl); < 0: none yet
	int64_t step;    // its step; -1: none
	int64_t old;     // the step of the file best/ holds (from an earlier attempt), -1: none
} TrainerBest;

// Opens ckdir/best for metric. resumed: the run continues from a checkpoint, so the best of
// best.json (same metric) stands; otherwise the first evaluation replaces whatever best/ holds.
// 0 or -errno with a sentence in err.
int trainer_best_open(TrainerBest *b, const char *ckdir, const char *metric, int resumed, char *err, size_t errlen);
// the value of b's metric in r (a fraction)
double trainer_best_value(const TrainerBest *b, const EvalReport *r);
// After the evaluation r at step: when its score beats the best, the checkpoint of ts at step
// goes to best/ (positions, ranks, data_seed as trainer_ckpt_save), then best.json, then the
// previous best file is removed. 1 when it was kept, 0 when not, -errno with err on failure
// (the previous best stays).
int trainer_best_offer(TrainerBest *b, const EvalReport *r, TrainStep *ts, int64_t step, const uint64_t *positions,
		       int ranks, uint64_t data_seed, char *err, size_t errlen);
// "best t2v_r1 50.0% at step 300: RUN/ckpt/best" (or that none was evaluated), for the log
int trainer_best_describe(const TrainerBest *b, char *buf, size_t len);

#endif
