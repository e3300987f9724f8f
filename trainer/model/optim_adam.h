// Optimizer over the model's flat parameter buffer: one fused AdamW or LAMB op per step driven by
// a segment table (weight decay as each tensor's PARAM_NO_DECAY flag says), the global
// gradient norm and clip factor kept on the device, linear warmup then cosine LR.
#ifndef OPTIM_ADAM_H
#define OPTIM_ADAM_H
// defines: OptKind, OptConfig, Optimizer, optim_config_default, optim_lr, optim_lr_of, optim_create, optim_destroy,
//          optim_set_rule, optim_step

#include "kern_ops.h"     // defines: KernCtx, KTensor, KOptPlan, KOptSegment, KSEG_*
#include "model_params.h" // defines: ParamSpec, PARAM_NO_DECAY

#include <stdint.h>

typedef enum { OPT_ADAMW = 0, OPT_LAMB = 1 } OptKind;

typedef struct {
	OptKind kind;
	double lr, lr_min;          // peak LR after warmup, floor of the cosine
	int64_t warmup_steps;       // linear from lr/warmup to lr
	int64_t total_steps;        // cosine reaches lr_min here and stays
	double beta1, beta2, eps, weight_decay;
	double clip_norm;           // global gradient L2 norm limit, 0 = off
} OptConfig;

typedef struct {
	KernCtx *ctx;
	OptConfig cfg;
	KOptSegment *segs; // one per parameter tensor, in the flat buffer's order
	char (*names)[96]; // the tensors' names (optim_set_rule)
	int n_segs;
	int64_t n_params;
	KOptPlan *plan;
	KTensor m, v;           // (n_params) f32 first and second moments, same layout as the parameters
	KTensor norm_clip;      // (2) f32 on the device: [‖g‖ before clipping, clip factor] of the last step
	int64_t step;           // updates done so far
} Optimizer;

// FastCLIP's ViT settings: AdamW, betas 0.9/0.98, eps 1e-6, wd 0.1, no clipping
void optim_config_default(OptConfig *c);
// LR of update number step+1 (step counts completed updates)
double optim_lr(const OptConfig *c, int64_t step);
// the same schedule (warmup, cosine to lr_min) applied to another peak rate: FastCLIP gives its
// temperature group its own peak and the model's schedule
double optim_lr_of(const OptConfig *c, double peak, int64_t step);
// segments from the parameter table: KSEG_DECAY unless PARAM_NO_DECAY, KSEG_LAMB for LAMB.
// -EINVAL on a bad configuration or a table that does not tile [0, n_params) in order, -ENOMEM.
int optim_create(Optimizer **out, KernCtx *ctx, const OptConfig *cfg, const ParamSpec *specs, int n_specs,
		 int64_t n_params);
void optim_destroy(Optimizer *o);
// adds KSEG_* flags (FROZEN: left alone and out of the norm; CLAMP to [lo, hi] after the update)
// to the tensor named `name` (setup time: rebuilds the plan). -ENOENT when there is no such tensor.
int optim_set_rule(Optimizer *o, const char *name, uint32_t flags, float lo, float hi);
// One update, queued: the global norm of grads (ACT, n_params) into norm_clip, clipping to
// clip_norm, AdamW/LAMB on params (f32 master) and, when copy is not NULL, every parameter's new
// value stored into copy (the bf16 weights the model reads). A non-finite norm latches -ERANGE
// ("optimizer") on the device: nothing changes and the next op or sync point returns it.
int optim_step(Optimizer *o, KTensor *params, KTensor *copy, const KTensor *grads);

#endif
