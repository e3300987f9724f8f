// VideoMAE pretraining as the trainer's objective (--objective mae, issue 29): the masked autoencoder,
// its optimizer and its step inside TrainStep, and what a resume must agree on with the checkpoint.
#ifndef TRAINER_MAE_H
#define TRAINER_MAE_H
// defines: train_mae_create, train_mae_init, train_mae_run, train_mae_ckpt_meta, train_mae_resume_check

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t

#include "model.h"        // defines: MaeConfig, StFile
#include "trainer_step.h" // defines: TrainStep, TrainStepTimes

// s->mae for s->cfg (mae_cfg, the model's video sizes, batch, activations, --grad-checkpoint), its
// parameters' decay groups and the optimizer over them
int train_mae_create(TrainStep *s);
// the initial parameters (mae_init_params) and the weight copies
int train_mae_init(TrainStep *s, uint64_t seed);
// One step on the uploaded batch: the tube masks of its positions (s->stage.pos, keyed by the data
// seed), the forward with the step's flips, TS_LOSS = the reconstruction MSE, backward with the
// bucketed all-reduce, the optimizer; the row's other columns 0 (no temperature: TS_LOG_S 0).
int train_mae_run(TrainStep *s, KTensor *row, TrainStepTimes *t);
// the checkpoint's metadata pairs of an mae step: avclip.objective = mae, avclip.mae = the decoder
// and mask ratio (mae_config_str into buf); returns the pairs written into kv (0 without mae)
int train_mae_ckpt_meta(const TrainStep *s, const char **kv, char *buf, size_t len);
// A resume of --objective mae (mae 1, run: its decoder) or another objective (mae 0) from the checkpoint
// f (path, its step): -EINVAL with a sentence when the checkpoint was written by the other kind or
// for another decoder or mask ratio
int train_mae_resume_check(int mae, const MaeConfig *run, const StFile *f, const char *path, long long step, char *err,
			   size_t errlen);

#endif
