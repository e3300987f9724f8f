// Deterministic synthetic video-text batches for tests, benchmarks and the CPU demo: a pool of
// `pool` fixed (video, caption) pairs, sampled per step, so a model can learn to match them.
#ifndef MODEL_SYNTH_H
#define MODEL_SYNTH_H
// defines: model_synth_batch

#include "kern_ops.h"     // defines: KernCtx, KTensor
#include "model_config.h" // defines: ModelConfig

#include <stdint.h>

// video (B, T, H, W, 3) f32/f64, text (B, ctx) i32: pair k of the pool has pixels uniform in
// [-1, 1] and a caption of 3..ctx-1 ids ending with the end token (vocab-1), zero padded.
// Which pairs a step gets is a function of (seed, step) only.
int model_synth_batch(KernCtx *ctx, const ModelConfig *cfg, uint64_t seed, uint64_t step, int pool, KTensor *video,
		      KTensor *text);

#endif
