// Checks the whole masked autoencoder's backward (tubelet embedding, gather of the visible tokens,
// encoder, decoder input with mask tokens, decoder, head, normalized-pixel MSE) against central
// finite differences in f64 at three elements of every parameter tensor, with flips on.
#include "kern_gradcheck.h" // defines: kgc_get, kgc_set, kgc_fill
#include "model.h"          // defines: MaeModel, mae_*

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { B = 3 };
static MaeModel *m;
static KTensor clips, pos;
static const uint64_t seed = 11;

static double loss_eval(void)
{
	if (mae_model_forward(m, &clips, &pos, seed, 1, 1.0))
		return NAN;
	return kgc_get(&m->loss, 0);
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 1)) // one thread: these tensors are too small to share
		return 1;
	ModelConfig cfg;
	MaeConfig mc;
	model_config_preset(&cfg, "tiny");
	mae_config_preset(&mc, &cfg, "tiny");
	// small enough for finite differences in double, every structural feature kept: two slices of
	// tubelets, several visible and masked tokens per clip, two heads and two blocks on both sides
	cfg.image_size = 16, cfg.patch = 8, cfg.frames = 4, cfg.tubelet = 2, cfg.vis_width = 16, cfg.vis_heads = 2;
	mc.dec_width = 8, mc.dec_heads = 2, mc.dec_layers = 2, mc.mask_ratio = 0.5;
	if (mae_model_create(&m, c, &cfg, &mc, B, KDT_F64, NULL) || mae_init_params(c, &cfg, &mc, &m->params, 7))
		return 1;
	// init leaves biases and the temporal embedding at zero; perturb everything so that no gradient
	// is checked only at a special point
	KTensor noise;
	kern_alloc(c, &noise, KDT_F64, 1, &m->n_params);
	kgc_fill(&noise, 99, 0.02);
	kern_add(c, &m->params, &m->params, &noise);
	kern_free(c, &noise);
	const int64_t sc[] = {B, cfg.frames, cfg.image_size, cfg.image_size, 3}, sp[] = {B};
	const size_t nclip = (size_t)B * cfg.frames * cfg.image_size * cfg.image_size * 3;
	uint8_t *px = malloc(nclip);
	for (size_t i = 0; i < nclip; i++)
		px[i] = (uint8_t)((i * 2654435761u) >> 13);
	const int64_t g[B] = {5, 17, 40};
	if (!px || kern_alloc(c, &clips, KDT_U8, 5, sc) || kern_alloc(c, &pos, KDT_I64, 1, sp) ||
	    kern_upload(c, &clips, px, nclip) || kern_upload(c, &pos, g, sizeof g) || mae_model_set_masks(m, g, seed))
		return 1;
	free(px);
	if (mae_model_forward(m, &clips, &pos, seed, 1, 1.0) || mae_model_backward(m))
		return 1;
	const MaeTokens *t = &m->tok;
	printf("loss %.10f over %lld parameters in %d tensors; %d tokens, %d visible, %d masked per clip\n",
	       kgc_get(&m->loss, 0), (long long)m->n_params, m->n_specs, t->N, t->Nv, t->Nm);
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
	printf("%d gradient elements checked\n", checked);
	mae_model_destroy(m);
	kern_free(c, &clips);
	kern_free(c, &pos);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL masked autoencoder gradient vs finite differences"
			   : "PASS masked autoencoder gradient vs finite differences");
	return bad;
}
