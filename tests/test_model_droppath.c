// Drop path in the video tower's blocks (clip_model_set_drop_path / _draw): every visual parameter's
// gradient of <ln_post feature, R> by central finite differences in f64 with some samples' branches
// dropped; rate 0, and a forward that was not armed, give the model's bits without drop path; rate 1
// makes every block the identity; --grad-checkpoint recomputes the same masks (same bits); the
// linear schedule's rates. `--dump FILE` writes weights, patches, scales, R and the C results for
// tests/ref/droppath_ref.py (the PyTorch reference, test_model_droppath_torch.sh).
#include "testutil.h"       // defines: EXPECT, test_failures
#include "kern_gradcheck.h" // defines: kgc_fill, kgc_get, kgc_set, kgc_dot
#include "model.h"          // defines: ClipModel, clip_model_*, model_init_params, st_write, StTensor

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3, LAYERS = 3 };
static const uint64_t DSEED = 99, DSTEP = 4;

static void config(ModelConfig *c)
{
	model_config_preset(c, "tiny");
	c->image_size = 16, c->patch = 8, c->frames = 2;
	c->vis_width = 32, c->vis_layers = LAYERS, c->vis_heads = 2;
	c->vocab = 64, c->ctx_len = 8, c->txt_width = 32, c->txt_layers = 1, c->txt_heads = 2;
	c->embed_dim = 16;
}

typedef struct {
	KernCtx *c;
	ClipModel *m;
	KTensor patches, r; // (B, T·P, 3·p·p), (B, W)
	double rate;
	int linear, ckpt;
} Run;

static int open_run(Run *u, KernCtx *c, KDtype dt, double rate, int linear, int ckpt, int set)
{
	ModelConfig cfg;
	config(&cfg);
	*u = (Run){.c = c, .rate = rate, .linear = linear, .ckpt = ckpt};
	const int P = (cfg.image_size / cfg.patch) * (cfg.image_size / cfg.patch);
	ClipModelOpts o = {.grad_checkpoint = ckpt, .vision_only = 1};
	if (clip_model_create_opts(&u->m, c, &cfg, B, dt, &o) || model_init_params(c, &cfg, &u->m->params, 11) ||
	    clip_model_sync_weights(u->m) ||
	    kern_alloc(c, &u->patches, dt, 3, (const int64_t[]){B, cfg.frames * P, 3 * cfg.patch * cfg.patch}) ||
	    kern_alloc(c, &u->r, dt, 2, (const int64_t[]){B, cfg.vis_width}))
		return -1;
	kgc_fill(&u->patches, 21, 1.5);
	kgc_fill(&u->r, 22, 1);
	return set ? clip_model_set_drop_path(u->m, rate, linear) : 0;
}

static void close_run(Run *u)
{
	kern_free(u->c, &u->patches), kern_free(u->c, &u->r);
	clip_model_destroy(u->m);
}

// forward (armed when draw), <vln, R>; with grads the backward too (R as d vln)
static double step(Run *u, int draw, int grads)
{
	if (draw && clip_model_drop_path_draw(u->m, DSEED, DSTEP, 0, B))
		return NAN;
	if (clip_model_forward_visual(u->m, &u->patches))
		return NAN;
	const double l = kgc_dot(&u->m->vln, &u->r);
	if (grads && clip_model_backward_visual(u->m, &u->r))
		return NAN;
	return l;
}

static int same(const KTensor *a, const KTensor *b)
{
	return kern_nbytes(a) == kern_nbytes(b) && !memcmp(a->data, b->data, kern_nbytes(a));
}

// every visual tensor's gradient (three elements each) against central differences
static void check_fd(KernCtx *c)
{
	Run u;
	EXPECT(!open_run(&u, c, KDT_F64, 0.5, 0, 0, 1), "f64 model");
	ClipModel *m = u.m;
	EXPECT(!isnan(step(&u, 1, 1)), "the armed step");
	double *sc = m->dp_host; // the scales just drawn: some dropped, some kept
	int dropped = 0, kept = 0;
	for (int i = 0; i < 2 * LAYERS * B; i++)
		dropped += sc[i] == 0, kept += sc[i] == 2.0;
	EXPECT(dropped > 0 && kept > 0, "the draw drops some branches and keeps others (%d, %d)", dropped, kept);
	double worst = 0;
	const char *which = "-";
	int n = 0;
	for (int i = 0; i < m->n_specs; i++) {
		const ParamSpec *s = &m->specs[i];
		if (strncmp(s->name, "visual.", 7) || !strcmp(s->name, "visual.proj"))
			continue;
		for (int k = 0; k < 3; k++) {
			const int64_t j = s->offset + (k * 7919 + 13 * i) % s->numel;
			const double v = kgc_get(&m->params, j), h = 1e-5;
			kgc_set(&m->params, j, v + h);
			const double lp = step(&u, 1, 0);
			kgc_set(&m->params, j, v - h);
			const double lm = step(&u, 1, 0);
			kgc_set(&m->params, j, v);
			const double num = (lp - lm) / (2 * h), an = kgc_get(&m->grads, j);
			const double err = fabs(num - an) / (1e-2 + fabs(num)); // relative, absolute below 0.01
			if (err > worst)
				worst = err, which = s->name;
			n++;
		}
	}
	printf("drop path 0.5: %d gradient elements of every visual tensor against finite differences, worst rel "
	       "%.2g (%s); %d of %d branches dropped\n",
	       n, worst, which, dropped, 2 * LAYERS * B);
	EXPECT(worst < 1e-5, "finite differences: %.3g in %s", worst, which);
	close_run(&u);
}

// rate 0 and an unarmed forward give the bits of a model without drop path; rate 1 the identity blocks
static void check_bits(KernCtx *c)
{
	Run a, z, r, one, idn;
	EXPECT(!open_run(&a, c, KDT_F32, 0, 0, 0, 0) && !open_run(&z, c, KDT_F32, 0, 0, 0, 1) &&
		       !open_run(&r, c, KDT_F32, 0.3, 0, 0, 1) && !open_run(&one, c, KDT_F32, 1, 0, 0, 1) &&
		       !open_run(&idn, c, KDT_F32, 0, 0, 0, 0),
	       "f32 models");
	step(&a, 0, 1), step(&z, 1, 1);
	EXPECT(same(&a.m->vln, &z.m->vln) && same(&a.m->grads, &z.m->grads),
	       "drop path 0: the feature and every gradient are the bits of a model without it");
	step(&r, 0, 1);
	EXPECT(same(&a.m->vln, &r.m->vln) && same(&a.m->grads, &r.m->grads), "rate 0.3 not armed: the same bits");
	step(&r, 1, 1);
	EXPECT(!same(&a.m->vln, &r.m->vln), "rate 0.3 armed: another feature");
	step(&r, 0, 0);
	EXPECT(same(&a.m->vln, &r.m->vln), "after its backward the next forward is unarmed again");
	// rate 1: every branch dropped, so every block passes its input: the bits of blocks whose output
	// projections are zero (the branches add exact zeros)
	for (int l = 0; l < LAYERS; l++) {
		BlockWeights *w = &idn.m->w.vblk[l];
		kern_zero(c, &w->out_w), kern_zero(c, &w->out_b), kern_zero(c, &w->proj_w), kern_zero(c, &w->proj_b);
	}
	step(&one, 1, 1), step(&idn, 0, 0);
	EXPECT(same(&one.m->vln, &idn.m->vln), "rate 1: every block is the identity");
	printf("drop path bits: rate 0 and unarmed as without (feature and gradients), rate 1 identity blocks: %s\n",
	       test_failures ? "FAIL" : "ok");
	close_run(&a), close_run(&z), close_run(&r), close_run(&one), close_run(&idn);
}

// --grad-checkpoint recomputes each block with the scales its forward used
static void check_ckpt(KernCtx *c)
{
	Run a, k;
	EXPECT(!open_run(&a, c, KDT_F32, 0.4, 1, 0, 1) && !open_run(&k, c, KDT_F32, 0.4, 1, 1, 1), "models");
	step(&a, 1, 1), step(&k, 1, 1);
	const int ok = same(&a.m->vln, &k.m->vln) && same(&a.m->grads, &k.m->grads);
	EXPECT(ok, "drop path with --grad-checkpoint: the same bits");
	// the linear schedule: 0, rate/2, rate over three blocks; one block: 0
	const double r0 = clip_model_drop_path_rate(a.m, 0), r1 = clip_model_drop_path_rate(a.m, 1),
		     r2 = clip_model_drop_path_rate(a.m, 2);
	EXPECT(r0 == 0 && fabs(r1 - 0.2) < 1e-15 && r2 == 0.4, "linear rates %g %g %g", r0, r1, r2);
	printf("drop path linear 0.4 (rates %g %g %g) with --grad-checkpoint: %s\n", r0, r1, r2,
	       ok ? "same bits" : "DIFFERS");
	EXPECT(clip_model_set_drop_path(a.m, 0.1, 0) != 0, "set twice refused");
	EXPECT(clip_model_drop_path_draw(a.m, 1, 1, 1, B) != 0, "rows past the global batch refused");
	close_run(&a), close_run(&k);
}

// the reference's inputs and the C results, f64 (tests/ref/droppath_ref.py)
static int dump(KernCtx *c, const char *path)
{
	Run u;
	if (open_run(&u, c, KDT_F64, 0.5, 1, 0, 1) || isnan(step(&u, 1, 1)))
		return 1;
	ClipModel *m = u.m;
	StTensor t[MODEL_MAX_TENSORS];
	char names[MODEL_MAX_TENSORS][160];
	int n = 0;
	for (int i = 0; i < m->n_specs; i++) {
		const ParamSpec *s = &m->specs[i];
		if (strncmp(s->name, "visual.", 7) || !strcmp(s->name, "visual.proj"))
			continue;
		for (int g = 0; g < 2; g++) {
			StTensor *e = &t[n];
			snprintf(names[n], sizeof names[n], "%s%s", g ? "grad." : "", s->name);
			*e = (StTensor){.dtype = ST_F64, .ndim = s->ndim, .nbytes = sizeof(double) * (size_t)s->numel};
			snprintf(e->name, sizeof e->name, "%s", names[n]);
			memcpy(e->shape, s->shape, sizeof(int64_t) * (size_t)s->ndim);
			e->data = (const double *)(g ? m->grads : m->params).data + s->offset;
			n++;
		}
	}
	const KTensor *extra[] = {&u.patches, &u.r, &m->vln, &m->dp_scale};
	const char *en[] = {"patches", "dvln", "vln", "scales"};
	for (int k = 0; k < 4; k++) {
		StTensor *e = &t[n++];
		*e = (StTensor){.dtype = ST_F64,
				.ndim = extra[k]->ndim,
				.data = extra[k]->data,
				.nbytes = kern_nbytes(extra[k])};
		snprintf(e->name, sizeof e->name, "%s", en[k]);
		memcpy(e->shape, extra[k]->shape, sizeof(int64_t) * (size_t)extra[k]->ndim);
	}
	char heads[16], act[16];
	snprintf(heads, sizeof heads, "%d", m->cfg.vis_heads);
	snprintf(act, sizeof act, "%s", model_act_name(m->cfg.act));
	const char *meta[] = {"heads", heads, "act", act};
	int rc = st_write(path, t, n, meta, 2);
	close_run(&u);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	if (argc == 3 && !strcmp(argv[1], "--dump")) {
		int rc = dump(c, argv[2]);
		kern_ctx_destroy(c);
		return rc;
	}
	check_fd(c);
	check_bits(c);
	check_ckpt(c);
	kern_ctx_destroy(c);
	printf("%s\n", test_failures ? "FAIL" : "PASS");
	return test_failures ? 1 : 0;
}
