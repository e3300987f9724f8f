// AdamW / LAMB over parameter tensors with decay groups, the LR schedule and gradient clipping;
// the per-element math is in the kernels (kern_adamw_step, kern_lamb_step) of each backend.
#include "optim_adam.h" // defines: Optimizer

#include <errno.h>
#include <math.h>
#include <stdlib.h>

void optim_config_default(OptConfig *c)
{
	*c = (OptConfig){.kind = OPT_ADAMW,
			 .lr = 5e-4,
			 .lr_min = 0,
			 .warmup_steps = 0,
			 .total_steps = 1,
			 .beta1 = 0.9,
			 .beta2 = 0.98,
			 .eps = 1e-6,
			 .weight_decay = 0.1,
			 .clip_norm = 0};
}

double optim_lr_of(const OptConfig *c, double peak, int64_t step)
{
	if (step < c->warmup_steps)
		return peak * (double)(step + 1) / (double)c->warmup_steps;
	int64_t span = c->total_steps - c->warmup_steps;
	if (span <= 0 || step >= c->total_steps)
		return c->lr_min;
	double t = (double)(step - c->warmup_steps) / (double)span;
	return c->lr_min + 0.5 * (peak - c->lr_min) * (1 + cos(M_PI * t));
}

double optim_lr(const OptConfig *c, int64_t step)
{
	return optim_lr_of(c, c->lr, step);
}

int optim_create(Optimizer **out, KernCtx *ctx, const OptConfig *cfg, const ParamSpec *specs, int n_specs,
		 int64_t n_params, KDtype dt)
{
	if (!cfg || cfg->lr < 0 || cfg->lr_min < 0 || cfg->warmup_steps < 0 || cfg->beta1 < 0 || cfg->beta1 >= 1 ||
	    cfg->beta2 < 0 || cfg->beta2 >= 1 || cfg->eps <= 0 || cfg->weight_decay < 0 || cfg->clip_norm < 0 ||
	    (cfg->kind != OPT_ADAMW && cfg->kind != OPT_LAMB))
		return -EINVAL;
	Optimizer *o = calloc(1, sizeof *o);
	if (!o)
		return -ENOMEM;
	o->ctx = ctx;
	o->cfg = *cfg;
	o->specs = specs;
	o->n_specs = n_specs;
	int rc = kern_alloc(ctx, &o->m, dt, 1, &n_params);
	if (!rc)
		rc = kern_alloc(ctx, &o->v, dt, 1, &n_params);
	if (rc) {
		optim_destroy(o);
		return rc;
	}
	*out = o;
	return 0;
}

void optim_destroy(Optimizer *o)
{
	if (!o)
		return;
	kern_free(o->ctx, &o->m);
	kern_free(o->ctx, &o->v);
	free(o);
}

int optim_clip_grads(Optimizer *o, KTensor *grads, double *grad_norm)
{
	KernCtx *c = o->ctx;
	if (kern_numel(grads) != kern_numel(&o->m))
		return -EINVAL;
	double ss;
	int rc = kern_sumsq(c, &ss, grads);
	if (rc)
		return rc;
	double norm = sqrt(ss);
	if (grad_norm)
		*grad_norm = norm;
	if (!isfinite(norm))
		return -ERANGE;
	if (o->cfg.clip_norm > 0 && norm > o->cfg.clip_norm) // torch.nn.utils.clip_grad_norm_
		return kern_scale(c, grads, o->cfg.clip_norm / (norm + 1e-6));
	return 0;
}

int optim_update(Optimizer *o, KTensor *params, KTensor *grads)
{
	KernCtx *c = o->ctx;
	int64_t n = kern_numel(&o->m);
	if (kern_numel(params) != n || kern_numel(grads) != n)
		return -EINVAL;
	KOptHyper h = {.lr = optim_lr(&o->cfg, o->step),
		       .beta1 = o->cfg.beta1,
		       .beta2 = o->cfg.beta2,
		       .eps = o->cfg.eps,
		       .step = o->step + 1};
	for (int i = 0; i < o->n_specs; i++) {
		const ParamSpec *s = &o->specs[i];
		KTensor p, g, m, v;
		int rc;
		if ((rc = kern_view(&p, params, s->offset, 1, &s->numel)) || (rc = kern_view(&g, grads, s->offset, 1, &s->numel)) ||
		    (rc = kern_view(&m, &o->m, s->offset, 1, &s->numel)) || (rc = kern_view(&v, &o->v, s->offset, 1, &s->numel)))
			return rc;
		// weight decay 0 also gives LAMB a trust ratio of 1 (FastCLIP optimizer.py)
		h.weight_decay = (s->flags & PARAM_NO_DECAY) ? 0 : o->cfg.weight_decay;
		rc = o->cfg.kind == OPT_LAMB ? kern_lamb_step(c, &p, &g, &m, &v, &h) : kern_adamw_step(c, &p, &g, &m, &v, &h);
		if (rc)
			return rc;
	}
	o->step++;
	return 0;
}

int optim_step(Optimizer *o, KTensor *params, KTensor *grads, double *grad_norm)
{
	if (kern_numel(params) != kern_numel(&o->m))
		return -EINVAL;
	int rc = optim_clip_grads(o, grads, grad_norm);
	return rc ? rc : optim_update(o, params, grads);
}
