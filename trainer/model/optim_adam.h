// Optimizer over the model's flat parameter buffer: AdamW or LAMB per tensor, weight decay as
// each tensor's PARAM_NO_DECAY flag says, linear warmup then cosine LR, grad clipping.
#ifndef OPTIM_ADAM_H
#define OPTIM_ADAM_H
// defines: OptKind, OptConfig, Optimizer, optim_config_default, optim_lr, optim_lr_of, optim_create, optim_destroy,
//          optim_step, optim_clip_grads, optim_update

#include "kern_ops.h"     // defines: KernCtx, KTensor
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
	const ParamSpec *specs; // borrowed from the model, n_specs tensors
	int n_specs;
	KTensor m, v;           // (n_params) first and second moments, same layout as the parameters
	int64_t step;           // updates done so far
} Optimizer;

// FastCLIP's ViT settings: AdamW, betas 0.9/0.98, eps 1e-6, wd 0.1, no clipping
void optim_config_default(OptConfig *c);
// LR of update number step+1 (step counts completed updates)
double optim_lr(const OptConfig *c, int64_t step);
// the same schedule (warmup, cosine to lr_min) applied to another peak rate: FastCLIP gives its
// temperature group its own peak and the model's schedule
double optim_lr_of(const OptConfig *c, double peak, int64_t step);
int optim_create(Optimizer **out, KernCtx *ctx, const OptConfig *cfg, const ParamSpec *specs, int n_specs,
		 int64_t n_params, KDtype dt);
void optim_destroy(Optimizer *o);
// clips grads in place when their global norm exceeds clip_norm, then updates every tensor.
// *grad_norm (may be NULL) gets the norm before clipping. A non-finite norm skips the update
// and returns -ERANGE.
int optim_step(Optimizer *o, KTensor *params, KTensor *grads, double *grad_norm);
// optim_step in two halves, for a caller that reads the clipped gradient of a tensor it updates
// itself (the temperature) between them: the norm and the clipping of every gradient in the
// buffer (torch.nn.utils.clip_grad_norm_ over model.parameters()), then the update
int optim_clip_grads(Optimizer *o, KTensor *grads, double *grad_norm);
int optim_update(Optimizer *o, KTensor *params, KTensor *grads);

#endif
