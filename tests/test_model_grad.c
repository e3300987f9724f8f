// Checks the whole dual encoder's backward (both towers, projections, logit scale, local
// InfoNCE) against central finite differences in f64 at three elements of every parameter
// tensor, for video (T = 2 frames) and images (T = 1), and for video pooled by the mean of its tokens.
#include "kern_gradcheck.h" // defines: kgc_get, kgc_set
#include "model.h"          // defines: ClipModel, model_synth_batch

#include <math.h>
#include <stdio.h>

static ClipModel *m;
static KTensor video, text, dls;

static double loss_eval(void)
{
	if (clip_model_forward(m, &video, &text))
		return NAN;
	KContrastBatch b = {.e1 = &m->vfeat, .e2 = &m->tfeat, .E1 = &m->vfeat, .E2 = &m->tfeat, .log_s = &m->log_s};
	if (kern_infonce(m->ctx, &b, &m->loss, KG_NONE, KG_NONE, KG_SET(&dls)))
		return NAN;
	return kgc_get(&m->loss, 0);
}

static int check(KernCtx *c, int frames, int pool)
{
	ModelConfig cfg;
	model_config_preset(&cfg, "tiny");
	cfg.pool = pool;
	// small enough for finite differences in double, with every structural feature kept:
	// several patches, two heads, two layers per tower, causal text with padding
	cfg.image_size = 16, cfg.patch = 8, cfg.frames = frames, cfg.vis_width = 16, cfg.vis_heads = 2;
	cfg.vocab = 50, cfg.ctx_len = 12, cfg.txt_width = 16, cfg.txt_heads = 2, cfg.embed_dim = 8;
	const int B = 3;
	if (clip_model_create(&m, c, &cfg, B, KDT_F64) || model_init_params(c, &cfg, &m->params, 7))
		return 1;
	// init leaves the temporal embedding and biases at zero; perturb everything so that no
	// gradient is checked only at a special point
	KTensor noise;
	kern_alloc(c, &noise, KDT_F64, 1, &m->n_params);
	kgc_fill(&noise, 99, 0.02);
	kern_add(c, &m->params, &m->params, &noise);
	kern_free(c, &noise);
	const int64_t sv[] = {B, cfg.frames, cfg.image_size, cfg.image_size, 3}, st[] = {B, cfg.ctx_len}, s1[] = {1};
	if (kern_alloc(c, &video, KDT_F64, 5, sv) || kern_alloc(c, &text, KDT_I32, 2, st) ||
	    kern_alloc(c, &dls, KDT_F64, 1, s1) || model_synth_batch(c, &cfg, 5, 0, 100, &video, &text))
		return 1;
	double L;
	if (clip_model_infonce_step(m, &video, &text, &L))
		return 1;
	printf("T=%d pool %s: loss %.10f over %lld parameters in %d tensors\n", frames,
	       pool == MODEL_POOL_MEAN ? "mean" : "cls", L, (long long)m->n_params, m->n_specs);
	int bad = 0, checked = 0;
	const double h = 1e-5;
	for (int i = 0; i < m->n_specs; i++) {
		const ParamSpec *s = &m->specs[i];
		int64_t at[3] = {0, s->numel / 2, s->numel - 1};
		for (int k = 0; k < 3; k++) {
			int64_t j = s->offset + at[k];
			double x0 = kgc_get(&m->params, j);
			kgc_set(&m->params, j, x0 + h);
			double fp = loss_eval();
			kgc_set(&m->params, j, x0 - h);
			double fm = loss_eval();
			kgc_set(&m->params, j, x0);
			double num = (fp - fm) / (2 * h), an = kgc_get(&m->grads, j);
			int ok = fabs(an - num) <= 1e-8 + 1e-5 * fabs(num);
			if (!ok || k == 0)
				printf("%-4s %-52s [%lld] analytic %+.10e numeric %+.10e\n", ok ? "ok" : "FAIL",
				       s->name, (long long)at[k], an, num);
			bad |= !ok;
			checked++;
		}
	}
	printf("T=%d: %d gradient elements checked\n", frames, checked);
	clip_model_destroy(m);
	kern_free(c, &video);
	kern_free(c, &text);
	kern_free(c, &dls);
	return bad;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 1)) // one thread: on tensors this small a second costs 60x in waits
		return 1;
	int bad = check(c, 2, MODEL_POOL_CLS) | check(c, 1, MODEL_POOL_CLS) | check(c, 2, MODEL_POOL_MEAN);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL model gradient vs finite differences" : "PASS model gradient vs finite differences");
	return bad;
}
