// The trainer's checkpoint on top of ckpt_io: model and optimizer, the global temperature's
// state, the FastCLIP tables, every rank's next stream position and the data seed, so a
// resumed run continues bit-identically. Rank 0 writes; every rank reads the same file.
#ifndef TRAINER_CKPT_H
#define TRAINER_CKPT_H
// defines: trainer_ckpt_save, trainer_ckpt_load, trainer_ckpt_first_position

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t, uint64_t

#include "trainer_step.h" // defines: TrainStep

// positions (ranks): next stream position of each rank after `step` steps. err on failure
// (the previous checkpoint stays intact, see ckpt_save).
int trainer_ckpt_save(const char *dir, TrainStep *ts, int64_t step, const uint64_t *positions, int ranks,
		      uint64_t data_seed, int keep_last, char *err, size_t errlen);
// -ENOENT when dir has no checkpoint (a fresh start); -EINVAL with err when it belongs to another
// model, dataset size, loss, rank count or data seed.
int trainer_ckpt_load(const char *dir, TrainStep *ts, int64_t *step, uint64_t *positions, int ranks, uint64_t data_seed,
		      char *err, size_t errlen);

// Without building a model: the step of dir's LATEST checkpoint, the number of ranks that wrote
// it and the smallest stream position of those ranks, where a ring recreated for the resumed run
// should start (--first-position). -ENOENT when there is none; -EBADMSG with err for a file
// that is not a trainer checkpoint.
int trainer_ckpt_first_position(const char *dir, int64_t *step, int *ranks, uint64_t *first, char *err, size_t errlen);

#endif
