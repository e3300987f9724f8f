// Model weights <-> safetensors with open_clip tensor names and shapes, so a video tower can
// start from an open_clip / OpenAI CLIP checkpoint and our weights load in open_clip.
#ifndef ST_MODEL_H
#define ST_MODEL_H
// defines: StLoadOpts, st_model_save, st_model_load, st_model_tensors

#include "kern_ops.h"     // defines: KernCtx, KTensor
#include "model_params.h" // defines: ParamSpec
#include "st_file.h"      // defines: StTensor

#include <stddef.h>

typedef struct {
	const char *prefix; // load only tensors whose name starts with it ("visual."), NULL = all
	int allow_missing;  // tensors absent from the file keep their current values
	const char *const *skip; // n_skip names never loaded (keep their values): e.g. "visual.proj" when
	int n_skip;              // starting a 256-d AVION tower from a 512-d CLIP checkpoint
} StLoadOpts;

// t[] (room for n) describes every tensor of host (the flat f32 buffer) but `skip` (a name, or
// NULL) as F32 with its open_clip shape; returns how many
int st_model_tensors(StTensor *t, const ParamSpec *specs, int n, const float *host, const char *skip);
// every tensor as F32 with its open_clip shape; meta: n_meta key/value string pairs
int st_model_save(const char *path, KernCtx *ctx, const ParamSpec *specs, int n, const KTensor *params,
		  const char *const *meta, int n_meta);
// reads F32/F16/BF16/F64 tensors into params (f32). visual.temporal_embedding may always be
// absent (CLIP has none; it stays as it is, zero after init, as in AVION). Errors, with a
// sentence in err: -ENOENT a tensor is missing, -EINVAL a shape differs (both shapes named)
// or a dtype is not a float, other -errno from opening the file, -EBADMSG a malformed file.
int st_model_load(const char *path, KernCtx *ctx, const ParamSpec *specs, int n, KTensor *params,
		  const StLoadOpts *opts, char *err, size_t errlen);

#endif
