// Training checkpoints: model, optimizer moments and step, trainer state (step, stream position,
// RNG) and extra tables (FastCLIP u / tau) in one safetensors file, written atomically, with a
// LATEST marker naming the newest complete one.
#ifndef CKPT_IO_H
#define CKPT_IO_H
// defines: CkptState, CkptTarget, ckpt_save, ckpt_load_latest, ckpt_latest_path, CKPT_MARKER

#include "kern_ops.h"     // defines: KernCtx, KTensor
#include "model_config.h" // defines: ModelConfig
#include "model_params.h" // defines: ParamSpec
#include "optim_adam.h"   // defines: Optimizer
#include "st_file.h"      // defines: StTensor

#include <stddef.h>
#include <stdint.h>

#define CKPT_MARKER "LATEST"

typedef struct {
	int64_t step;        // optimizer updates completed
	uint64_t stream_pos; // next global sample position g of the data stream
	uint64_t rng[4];     // the trainer's RNG state, opaque here
} CkptState;

typedef struct {
	KernCtx *ctx;
	const ModelConfig *cfg;
	const ParamSpec *specs;
	int n_specs;
	KTensor *params; // flat f32
	Optimizer *opt;  // NULL when there is none
	StTensor *extra; // host tables saved as "extra/<name>" and restored in place (same dtype and size)
	int n_extra;
} CkptTarget;

// Writes dir/ckpt-<step>.safetensors through a temp file (fsync, rename, fsync dir), then moves
// LATEST to it the same way; keep_last > 0 removes older checkpoints beyond that many.
// On any failure (unwritable dir, full disk, file size limit) the temp file is removed, LATEST
// and the previous checkpoint stay as they were, and err says what failed.
int ckpt_save(const char *dir, const CkptTarget *t, const CkptState *st, int keep_last, char *err, size_t errlen);
// Loads the checkpoint LATEST names: -ENOENT when there is none (fresh start), -EINVAL when it was
// written for another model configuration or misses a tensor, with err saying which.
int ckpt_load_latest(const char *dir, CkptTarget *t, CkptState *st, char *err, size_t errlen);
// the checkpoint file dir/LATEST names, as dir/<file>; -ENOENT without a marker, -EBADMSG when
// the marker does not name a checkpoint file
int ckpt_latest_path(const char *dir, char *path, size_t len, char *err, size_t errlen);

#endif
