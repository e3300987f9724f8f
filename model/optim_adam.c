// AdamW / LAMB over the flat parameter buffer: the segment table from the parameter table, the
// LR schedule, and one step as two queued ops (kern_grad_norm, kern_optimizer) with no host read.
#include "model.h" // defines: Optimizer
#include "flags.h" // defines: FlagSpec, FLAG_AT, flags_describe

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			 .clip_norm = 0,
			 .layer_decay = 1};
}

// the defaults are optim_config_default's (test_optim_flags holds them equal)
static const FlagSpec opt_flags[] = {
	{"optimizer", FLAG_ENUM, FLAG_AT(OptConfig, kind), 0, 0, "adamw", .help = "the optimizer",
	 .choices = "adamw|lamb"},
	{"lr", FLAG_DOUBLE, FLAG_AT(OptConfig, lr), 0, 10, "5e-4", .help = "peak learning rate"},
	{"lr-min", FLAG_DOUBLE, FLAG_AT(OptConfig, lr_min), 0, 10, "0",
	 .help = "learning rate at the end of the cosine"},
	{"warmup-steps", FLAG_I64, FLAG_AT(OptConfig, warmup_steps), 0, 1e15, "0", .help = "linear warmup steps"},
	{"weight-decay", FLAG_DOUBLE, FLAG_AT(OptConfig, weight_decay), 0, 10, "0.1",
	 .help = "decoupled weight decay of the tensors --wd-groups decays"},
	{"beta1", FLAG_DOUBLE, FLAG_AT(OptConfig, beta1), 0, 0.999999, "0.9", .help = "optimizer β1"},
	{"beta2", FLAG_DOUBLE, FLAG_AT(OptConfig, beta2), 0, 0.999999, "0.98", .help = "optimizer β2"},
	{"adam-eps", FLAG_DOUBLE, FLAG_AT(OptConfig, eps), 1e-12, 1, "1e-6", .help = "optimizer ε"},
	{"clip-norm", FLAG_DOUBLE, FLAG_AT(OptConfig, clip_norm), 0, 1e9, "0",
	 .help = "gradient-norm clipping over every trained parameter (logit_scale too when τ is learned; classify: the tower and the heads in one norm), 0 = off"},
};
enum { N_OPT_FLAGS = sizeof opt_flags / sizeof opt_flags[0] };

const FlagSpec *optim_flag_table(int *n)
{
	*n = N_OPT_FLAGS;
	return opt_flags;
}

int optim_config_describe(const OptConfig *c, char *buf, size_t len)
{
	return flags_describe(opt_flags, N_OPT_FLAGS, c, buf, len);
}

static double schedule(const OptConfig *c, double peak, int64_t step)
{
	if (step < c->warmup_steps)
		return peak * (double)(step + 1) / (double)c->warmup_steps;
	int64_t span = c->total_steps - c->warmup_steps;
	if (span <= 0 || step >= c->total_steps)
		return c->lr_min;
	double t = (double)(step - c->warmup_steps) / (double)span;
	return c->lr_min + 0.5 * (peak - c->lr_min) * (1 + cos(M_PI * t));
}

double optim_lr_of(const OptConfig *c, double peak, int64_t step)
{
	const double to = schedule(c, peak, step);
	if (c->join_len <= 0 || step < c->join_step || step >= c->join_step + c->join_len)
		return to;
	// the join in this group's scale: join_lr is the model group's (peak c->lr)
	const double from = c->lr > 0 ? c->join_lr * peak / c->lr : c->join_lr;
	const double f = (double)(step - c->join_step + 1) / (double)c->join_len;
	return from + (to - from) * f;
}

void optim_join_schedule(OptConfig *c, const OptConfig *old, int64_t step)
{
	c->join_step = step;
	c->join_lr = optim_lr_of(old, old->lr, step > 0 ? step - 1 : 0);
	int64_t left = c->total_steps - step;
	c->join_len = c->warmup_steps > 0 ? c->warmup_steps : left / 10 > 1 ? left / 10 : 1;
	if (c->join_len > left)
		c->join_len = left > 0 ? left : 0;
}

double optim_lr(const OptConfig *c, int64_t step)
{
	return optim_lr_of(c, c->lr, step);
}

static int config_ok(const OptConfig *cfg)
{
	return cfg && cfg->lr >= 0 && cfg->lr_min >= 0 && cfg->warmup_steps >= 0 && cfg->beta1 >= 0 && cfg->beta1 < 1 &&
	       cfg->beta2 >= 0 && cfg->beta2 < 1 && cfg->eps > 0 && cfg->weight_decay >= 0 && cfg->clip_norm >= 0 &&
	       cfg->layer_decay >= 0 && cfg->layer_decay <= 1 && (cfg->kind == OPT_ADAMW || cfg->kind == OPT_LAMB);
}

static const char VBLK[] = "visual.transformer.resblocks.";

int optim_layer_id(const char *name, int L)
{
	static const char *const embed[] = {"visual.conv1.", "visual.class_embedding", "visual.positional_embedding",
					    "visual.temporal_embedding", "visual.ln_pre."};
	for (size_t i = 0; i < sizeof embed / sizeof embed[0]; i++)
		if (!strncmp(name, embed[i], strlen(embed[i])))
			return 0;
	if (!strncmp(name, VBLK, sizeof VBLK - 1)) {
		char *end;
		long b = strtol(name + sizeof VBLK - 1, &end, 10);
		if (*end == '.' && b >= 0 && b < L)
			return (int)b + 1;
	}
	return L + 1;
}

// vision blocks in the table: 1 + the largest resblocks index
static int vision_blocks(const ParamSpec *specs, int n)
{
	int L = 0;
	for (int i = 0; i < n; i++)
		if (!strncmp(specs[i].name, VBLK, sizeof VBLK - 1)) {
			long b = strtol(specs[i].name + sizeof VBLK - 1, NULL, 10);
			L = b + 1 > L ? (int)b + 1 : L;
		}
	return L;
}

// KSEG_LR_SCALE of each segment when layer-wise decay is on (left alone at 1 or 0: off)
static void layer_scales(KOptSegment *segs, const ParamSpec *specs, int n, double decay)
{
	if (decay == 1 || decay == 0)
		return;
	const int L = vision_blocks(specs, n);
	for (int i = 0; i < n; i++) {
		segs[i].flags |= KSEG_LR_SCALE;
		segs[i].lr_scale = pow(decay, L + 1 - optim_layer_id(specs[i].name, L));
	}
}

int optim_create(Optimizer **out, KernCtx *ctx, const OptConfig *cfg, const ParamSpec *specs, int n_specs,
		 int64_t n_params)
{
	if (!out || !ctx || !config_ok(cfg) || !specs || n_specs < 1 || n_params < 1)
		return -EINVAL;
	int64_t end = 0;
	for (int i = 0; i < n_specs; i++) {
		if (specs[i].offset != end || specs[i].numel < 1)
			return -EINVAL;
		end += specs[i].numel;
	}
	if (end != n_params)
		return -EINVAL;
	Optimizer *o = calloc(1, sizeof *o);
	if (!o)
		return -ENOMEM;
	o->ctx = ctx;
	o->cfg = *cfg;
	o->n_segs = n_specs;
	o->n_params = n_params;
	o->segs = calloc((size_t)n_specs, sizeof *o->segs);
	o->names = calloc((size_t)n_specs, sizeof *o->names);
	int rc = o->segs && o->names ? 0 : -ENOMEM;
	for (int i = 0; i < n_specs && !rc; i++) {
		o->segs[i] = (KOptSegment){.offset = specs[i].offset, .length = specs[i].numel};
		o->segs[i].flags =
			((specs[i].flags & PARAM_NO_DECAY) ? 0 : KSEG_DECAY) | (cfg->kind == OPT_LAMB ? KSEG_LAMB : 0);
		snprintf(o->names[i], sizeof o->names[i], "%s", specs[i].name);
	}
	if (!rc)
		layer_scales(o->segs, specs, n_specs, cfg->layer_decay);
	if (!rc)
		rc = kern_alloc(ctx, &o->m, KDT_F32, 1, &n_params);
	if (!rc)
		rc = kern_alloc(ctx, &o->v, KDT_F32, 1, &n_params);
	if (!rc)
		rc = kern_alloc(ctx, &o->norm_clip, KDT_F32, 1, (const int64_t[]){2});
	if (!rc)
		rc = kern_opt_plan_create(ctx, &o->plan, o->segs, o->n_segs, n_params);
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
	kern_opt_plan_destroy(o->plan);
	kern_free(o->ctx, &o->m);
	kern_free(o->ctx, &o->v);
	kern_free(o->ctx, &o->norm_clip);
	free(o->segs);
	free(o->names);
	free(o);
}

int optim_set_rule(Optimizer *o, const char *name, uint32_t flags, float lo, float hi)
{
	if (!o || !name)
		return -EINVAL;
	for (int i = 0; i < o->n_segs; i++)
		if (!strcmp(o->names[i], name)) {
			o->segs[i].flags |= flags;
			if (flags & KSEG_CLAMP) {
				o->segs[i].clamp_lo = lo;
				o->segs[i].clamp_hi = hi;
			}
			KOptPlan *plan;
			int rc = kern_opt_plan_create(o->ctx, &plan, o->segs, o->n_segs, o->n_params);
			if (rc)
				return rc;
			kern_opt_plan_destroy(o->plan);
			o->plan = plan;
			return 0;
		}
	return -ENOENT;
}

// the hyper-parameters of the next update
static KOptHyper hyper(const Optimizer *o, const KTensor *live)
{
	return (KOptHyper){.lr = optim_lr(&o->cfg, o->step),
			   .beta1 = o->cfg.beta1,
			   .beta2 = o->cfg.beta2,
			   .eps = o->cfg.eps,
			   .weight_decay = o->cfg.weight_decay,
			   .step = o->step + 1,
			   .live = live};
}

void optim_live(const Optimizer *o, double out[KOPT_LIVE_N])
{
	const KOptHyper h = hyper(o, NULL);
	kern_opt_live(&h, out);
}

int optim_step_clipped(Optimizer *o, KTensor *params, KTensor *copy, const KTensor *grads, const KTensor *norm_clip)
{
	if (!o || !params || !grads || !norm_clip || kern_numel(params) != o->n_params ||
	    kern_numel(grads) != o->n_params)
		return -EINVAL;
	const KOptHyper h = hyper(o, NULL);
	int rc = kern_optimizer(o->ctx, o->plan, &h, params, copy, grads, &o->m, &o->v, norm_clip);
	if (!rc)
		o->step++;
	return rc;
}

int optim_step(Optimizer *o, KTensor *params, KTensor *copy, const KTensor *grads)
{
	return optim_step_live(o, params, copy, grads, NULL);
}

int optim_step_live(Optimizer *o, KTensor *params, KTensor *copy, const KTensor *grads, const KTensor *live)
{
	if (!o || !params || !grads || kern_numel(params) != o->n_params || kern_numel(grads) != o->n_params)
		return -EINVAL;
	const KOptHyper h = hyper(o, live);
	int rc = kern_grad_norm(o->ctx, o->plan, &o->norm_clip, grads, o->cfg.clip_norm);
	if (!rc)
		rc = kern_optimizer(o->ctx, o->plan, &h, params, copy, grads, &o->m, &o->v, &o->norm_clip);
	if (!rc)
		o->step++;
	return rc;
}
