// The self-check's training step (trainer_selfcheck_sc.h): the gradient norm and the fused
// AdamW/LAMB update over a segment table, and one whole step of the model at a tiny size.
#include "trainer_selfcheck_sc.h" // defines: Sc, ScPair, SH, NSH, sc_*

#include "stream.h" // defines: rng_splitmix64

#include <errno.h>  // defines: ENOMEM
#include <math.h>   // defines: sqrt
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: strcmp

// segments covering [0, OPT_N) as the model's flags make them: AdamW with and without decay, LAMB
// with its trust ratio and without, frozen, a clamped logit scale, an external τ (in the norm only)
static const KOptSegment opt_segs[] = {
	{0, 5003, KSEG_DECAY, 0, 0, 0},
	{5003, 4096, 0, 0, 0, 0},
	{9099, 3001, KSEG_LAMB | KSEG_DECAY, 0, 0, 0},
	{12100, 700, KSEG_LAMB, 0, 0, 0},
	{12800, 500, KSEG_FROZEN, 0, 0, 0},
	{13300, 1, KSEG_CLAMP, 0.0f, 4.6052f, 0},
	{13301, 1, KSEG_EXTERNAL, 0, 0, 0},
	{13302, 1698, KSEG_DECAY | KSEG_CLAMP, -0.05f, 0.05f, 0},
};
enum { OPT_NSEG = sizeof opt_segs / sizeof opt_segs[0], OPT_N = 15000 };

// the gradient norm with its clip factor, then three updates that use it
void sc_check_optimizer(Sc *s)
{
	KOptPlan *pc = NULL, *pd = NULL;
	int rc = kern_opt_plan_create(s->cpu, &pc, opt_segs, OPT_NSEG, OPT_N);
	rc = rc ? rc : kern_opt_plan_create(s->dev, &pd, opt_segs, OPT_NSEG, OPT_N);
	if (rc) {
		sc_setup_failed(s, "an optimizer plan", rc);
		return kern_opt_plan_destroy(pc);
	}
	ScPair w, g, m, v, copy, nc;
	sc_alloc(s, &w, KDT_F32, NSH(OPT_N)), sc_alloc(s, &g, KDT_BF16, NSH(OPT_N)),
		sc_alloc(s, &m, KDT_F32, NSH(OPT_N));
	sc_alloc(s, &v, KDT_F32, NSH(OPT_N)), sc_alloc(s, &copy, KDT_BF16, NSH(OPT_N)),
		sc_alloc(s, &nc, KDT_F32, NSH(2));
	sc_fill(s, &w, -0.2, 0.2, 0), sc_fill(s, &m, -0.01, 0.01, 0), sc_fill(s, &v, 0, 1e-4, 0), sc_poison(s, &copy);
	for (int step = 1; step <= 3 && !s->setup_rc; step++) {
		sc_fill(s, &g, -1, 1, 0), sc_poison(s, &nc);
		const double clip = step == 2 ? 1e9 : 5.0; // clipped, then not
		if (sc_both(s, "gradient norm", kern_grad_norm(s->cpu, pc, &nc.c, &g.c, clip),
			    kern_grad_norm(s->dev, pd, &nc.d, &g.d, clip)))
			break;
		sc_compare(s, "gradient norm", clip < 1e9 ? "norm_clip (clipped)" : "norm_clip (not clipped)", &nc);
		sc_cpu_to_dev(s, &nc); // the update alone
		const KOptHyper h = {
			.lr = 1e-2, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .weight_decay = 0.1, .step = step};
		if (s->setup_rc ||
		    sc_both(s, "optimizer", kern_optimizer(s->cpu, pc, &h, &w.c, &copy.c, &g.c, &m.c, &v.c, &nc.c),
			    kern_optimizer(s->dev, pd, &h, &w.d, &copy.d, &g.d, &m.d, &v.d, &nc.d)))
			break;
		if (step == 3) {
			sc_compare(s, "optimizer", "master", &w), sc_compare(s, "optimizer", "m", &m);
			sc_compare(s, "optimizer", "v", &v), sc_compare(s, "optimizer", "bf16 copy", &copy);
		}
	}
	sc_free_all(s, (ScPair *[]){&w, &g, &m, &v, &copy, &nc}, 6);
	kern_opt_plan_destroy(pc), kern_opt_plan_destroy(pd);
}

// ---- one training step of the model at a tiny size ----

// the configured activation at a tiny size, with head dim 64 (the CUDA attention's)
static void tiny_model(ModelConfig *cfg, int act)
{
	model_config_preset(cfg, "tiny");
	cfg->vocab = 500;
	cfg->vis_width = cfg->txt_width = 128;
	cfg->vis_heads = cfg->txt_heads = 2;
	cfg->act = act;
}

enum { STEP_B = 3 };

// the device's bf16 tensor as close to the CPU's f32 one as the CPU's own bf16 one is: at most
// ratio times its error, plus the bf16 tolerance over √n (test_kcuda_model's rule, floor included)
static void as_close(Sc *s, const char *name, double ratio, double floor, const KTensor *ref, const KTensor *cb,
		     const KTensor *dv)
{
	const double ec = sc_rel(s, s->cpu, ref, s->cpu, cb), ed = sc_rel(s, s->cpu, ref, s->dev, dv);
	const double held = kern_numel(ref) < 16 && ec < floor ? floor : ec;
	const double tol = ratio * held + SELFCHECK_TOL_BF16 / sqrt((double)kern_numel(ref));
	char op[128], what[200];
	snprintf(op, sizeof op, "model step: %s", name);
	snprintf(what, sizeof what,
		 "relative L2 error to the f32 step %.3e, tolerance %.3e (%.0fx the CPU bf16 step's %.3e)", ed, tol,
		 ratio, ec);
	sc_verdict(s, op, ed <= tol, ed, tol, what);
}

// bytes of a and b (both on the device) that differ; -1 when a download failed
static long differing_bytes(Sc *s, const KTensor *a, const KTensor *b)
{
	size_t n = kern_nbytes(a);
	unsigned char *x = malloc(n + 1), *y = malloc(n + 1);
	int rc = x && y ? kern_download(s->dev, x, n, a) : -ENOMEM;
	rc = rc ? rc : kern_download(s->dev, y, n, b);
	long diff = 0;
	for (size_t i = 0; !rc && i < n; i++)
		diff += x[i] != y[i];
	free(x), free(y);
	return rc ? -1 : diff;
}

void sc_check_model_step(Sc *s, int act)
{
	ModelConfig cfg;
	tiny_model(&cfg, act);
	const uint64_t wseed = rng_splitmix64(&s->rng), bseed = rng_splitmix64(&s->rng);
	ModelSynthStep ref, cb, d1, d2;
	int rc = model_synth_step(s->cpu, &cfg, STEP_B, KDT_F32, wseed, bseed, &ref);
	rc = rc ? rc : model_synth_step(s->cpu, &cfg, STEP_B, KDT_BF16, wseed, bseed, &cb);
	if (rc) {
		sc_setup_failed(s, "the CPU backend's model step", rc);
		model_synth_step_free(s->cpu, &ref), model_synth_step_free(s->cpu, &cb);
		return;
	}
	int r1 = model_synth_step(s->dev, &cfg, STEP_B, KDT_BF16, wseed, bseed, &d1);
	int r2 = r1 ? 0 : model_synth_step(s->dev, &cfg, STEP_B, KDT_BF16, wseed, bseed, &d2);
	if (!sc_both(s, "model step", 0, r1 ? r1 : r2)) {
		if (s->o->plant && !strcmp(s->o->plant, "model step")) {
			ScPair g = {d1.m->grads, d1.m->grads};
			sc_plant(s, "model step", &g);
		}
		as_close(s, "video features", SELFCHECK_RATIO_ONE, 0, &ref.m->vfeat, &cb.m->vfeat, &d1.m->vfeat);
		as_close(s, "text features", SELFCHECK_RATIO_ONE, 0, &ref.m->tfeat, &cb.m->tfeat, &d1.m->tfeat);
		as_close(s, "loss", SELFCHECK_RATIO_ONE, 0, &ref.m->loss, &cb.m->loss, &d1.m->loss);
		as_close(s, "every gradient", SELFCHECK_RATIO_ALL, 0, &ref.m->grads, &cb.m->grads, &d1.m->grads);
		const double ec_all = sc_rel(s, s->cpu, &ref.m->grads, s->cpu, &cb.m->grads);
		for (int i = 0; i < ref.m->n_specs && !s->setup_rc; i++) {
			const ParamSpec *p = &ref.m->specs[i];
			KTensor gr, gc, gd;
			kern_view(&gr, &ref.m->grads, p->offset, 1, &p->numel);
			kern_view(&gc, &cb.m->grads, p->offset, 1, &p->numel);
			kern_view(&gd, &d1.m->grads, p->offset, 1, &p->numel);
			char nm[128];
			snprintf(nm, sizeof nm, "grad %s", p->name);
			as_close(s, nm, SELFCHECK_RATIO_ONE, ec_all, &gr, &gc, &gd);
		}
		// the backend promises a step that repeats to the bit (its own attention; cuDNN's backward
		// does not promise it, so that run checks closeness only)
		char impl[32];
		sc_attn_short(s->dev, impl, sizeof impl);
		if (strcmp(impl, "cudnn")) {
			long dg = differing_bytes(s, &d1.m->grads, &d2.m->grads);
			long dl = differing_bytes(s, &d1.m->loss, &d2.m->loss);
			char what[128];
			snprintf(what, sizeof what, "two identical steps differ in %ld gradient and %ld loss bytes", dg,
				 dl);
			sc_verdict(s, "model step: determinism", dg == 0 && dl == 0, (double)(dg + dl), 0, what);
		}
	}
	model_synth_step_free(s->cpu, &ref), model_synth_step_free(s->cpu, &cb), model_synth_step_free(s->dev, &d1);
	if (!r1)
		model_synth_step_free(s->dev, &d2);
}
