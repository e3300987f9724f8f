// One step of the masked autoencoder (model/model_mae.c: tubelets, tube masks, the encoder on the
// visible tokens, the decoder, the normalized-pixel MSE and backward) on the CUDA backend against the
// CPU backend, with head dims of 64 (the CUDA attention's): the loss, the prediction and every
// parameter gradient by name, held against the CPU's f32 step as closely as the CPU's own bf16 step
// is (test_kcuda_model's rule); two CUDA steps bit for bit; an f32 model on the CUDA backend refused
// (-ENOTSUP: its attention computes in bf16 only).
#include "kcu_twin.h" // defines: KtEnv, KtPair, kt_*
#include "model.h"    // defines: MaeModel, mae_*

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2 };

static uint64_t wseed, bseed;

// the step on ctx: weights from wseed, clips and positions from bseed, masks from the data seed
static int step(KernCtx *c, const ModelConfig *cfg, const MaeConfig *mc, KDtype dt, MaeModel **out)
{
	MaeModel *m;
	int rc = mae_model_create(&m, c, cfg, mc, B, dt, NULL);
	if (rc)
		return rc;
	*out = m;
	const int64_t sc[] = {B, cfg->frames, cfg->image_size, cfg->image_size, 3}, sp[] = {B};
	const size_t n = (size_t)B * cfg->frames * cfg->image_size * cfg->image_size * 3;
	uint8_t *px = malloc(n);
	int64_t g[B];
	uint64_t s = bseed;
	for (size_t i = 0; i < n; i++)
		px[i] = (uint8_t)((s = s * 6364136223846793005ull + 1442695040888963407ull) >> 56);
	for (int b = 0; b < B; b++)
		g[b] = (int64_t)((bseed >> (8 * b)) & 0xffff);
	KTensor clips = {0}, pos = {0};
	if (!(rc = px ? 0 : -ENOMEM) && !(rc = mae_init_params(c, cfg, mc, &m->params, wseed)) &&
	    !(rc = mae_model_sync_weights(m)) && !(rc = kern_alloc(c, &clips, KDT_U8, 5, sc)) &&
	    !(rc = kern_alloc(c, &pos, KDT_I64, 1, sp)) && !(rc = kern_upload(c, &clips, px, n)) &&
	    !(rc = kern_upload(c, &pos, g, sizeof g)) && !(rc = mae_model_set_masks(m, g, bseed)) &&
	    !(rc = mae_model_forward(m, &clips, &pos, bseed, 1, 1.0)) && !(rc = mae_model_backward(m)))
		rc = kern_sync(c);
	kern_free(c, &clips);
	kern_free(c, &pos);
	free(px);
	return rc;
}

static double rel(KtEnv *e, const KTensor *ref, const KTensor *t, KernCtx *tc)
{
	KtPair a = {*ref, *ref, ""}, b = {*t, *t, ""};
	double *x = kt_download_f64(e, &a, 0), *y = kt_download_f64(e, &b, tc == e->dev), num = 0, den = 0;
	for (int64_t i = 0; i < kern_numel(t); i++)
		num += (y[i] - x[i]) * (y[i] - x[i]), den += x[i] * x[i];
	free(x), free(y);
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

// test_kcuda_model's rule: the CUDA bf16 step at most ratio times the CPU bf16 step's error against
// the f32 step, plus KT_TOL_BF16/√n; a tensor of fewer than KT_MAE_FEW values is held to at least
// all gradients' error (one lucky draw on the CPU says little)
#define KT_MAE_RATIO_ALL 2.0
#define KT_MAE_RATIO_ONE 4.0
#define KT_MAE_FEW 16
static void as_close(KtEnv *e, const char *name, double ratio, double ec_floor, const KTensor *ref, const KTensor *cpu,
		     const KTensor *dev)
{
	double ec = rel(e, ref, cpu, e->cpu), ed = rel(e, ref, dev, e->dev);
	double held = kern_numel(ref) < KT_MAE_FEW && ec < ec_floor ? ec_floor : ec;
	kt_check(e, ed <= ratio * held + KT_TOL_BF16 / sqrt((double)kern_numel(ref)),
		 "bf16 %s vs f32: cuda %.3e, cpu %.3e%s", name, ed, ec, held > ec ? " (held to all gradients')" : "");
}

static int same_bits(KtEnv *e, const KTensor *a, const KTensor *b)
{
	void *x = kt_bits(e, a), *y = kt_bits(e, b);
	int same = !memcmp(x, y, kern_nbytes(a));
	free(x), free(y);
	return same;
}

int main(void)
{
	KtEnv e;
	kt_setup(&e, "test_kcuda_mae_model");
	ModelConfig cfg;
	MaeConfig mc;
	model_config_preset(&cfg, "tiny");
	mae_config_preset(&mc, &cfg, "tiny");   // 4 frames in tubelets of 2, 32x32 pixels of 8x8 patches
	cfg.vis_width = 128, cfg.vis_heads = 2; // heads of 64: the CUDA attention's
	mc.dec_width = 128, mc.dec_heads = 2, mc.dec_layers = 1, mc.mask_ratio = 0.75;
	wseed = kt_rand(&e), bseed = kt_rand(&e);
	MaeModel *ref = NULL, *cb = NULL, *d1 = NULL, *d2 = NULL, *d32 = NULL;
	int rc = step(e.cpu, &cfg, &mc, KDT_F32, &ref);
	rc = rc ? rc : step(e.cpu, &cfg, &mc, KDT_BF16, &cb);
	kt_check(&e, rc == 0, "the CPU steps (f32, bf16): %d", rc);
	int r32 = step(e.dev, &cfg, &mc, KDT_F32, &d32);
	kt_check(&e, r32 == -ENOTSUP, "an f32 model on the CUDA backend: %d (its attention computes in bf16 only)",
		 r32);
	kern_error_clear(e.dev);
	mae_model_destroy(d32);
	int r1 = step(e.dev, &cfg, &mc, KDT_BF16, &d1);
	kt_reschedule(&e, e.seed + 1); // the shim: another order of threads and blocks
	int r2 = step(e.dev, &cfg, &mc, KDT_BF16, &d2);
	kt_check(&e, r1 == 0 && r2 == 0, "the CUDA steps: %d, %d (%s)", r1, r2, kern_error_message(e.dev));
	if (!rc && !r1 && !r2) {
		printf("-- the masked autoencoder, bf16 activations (%d tokens, %d visible; attention: %s)\n",
		       ref->tok.N, ref->tok.Nv, kern_ctx_attention(e.dev));
		as_close(&e, "loss", KT_MAE_RATIO_ONE, 0, &ref->loss, &cb->loss, &d1->loss);
		as_close(&e, "prediction", KT_MAE_RATIO_ONE, 0, &ref->pred, &cb->pred, &d1->pred);
		kt_check(&e, same_bits(&e, &d1->target, &cb->target), "the target: CUDA and CPU bit for bit");
		kt_check(&e, same_bits(&e, &d1->loss, &d2->loss) && same_bits(&e, &d1->pred, &d2->pred),
			 "loss, prediction: two CUDA runs identical");
		const double ec_all = rel(&e, &ref->grads, &cb->grads, e.cpu);
		as_close(&e, "gradients, all", KT_MAE_RATIO_ALL, 0, &ref->grads, &cb->grads, &d1->grads);
		kt_check(&e, same_bits(&e, &d1->grads, &d2->grads), "every gradient: two CUDA runs identical");
		for (int i = 0; i < ref->n_specs; i++) {
			const ParamSpec *s = &ref->specs[i];
			KTensor gr, gc, gd;
			kern_view(&gr, &ref->grads, s->offset, 1, &s->numel);
			kern_view(&gc, &cb->grads, s->offset, 1, &s->numel);
			kern_view(&gd, &d1->grads, s->offset, 1, &s->numel);
			char nm[128];
			snprintf(nm, sizeof nm, "grad %s", s->name);
			as_close(&e, nm, KT_MAE_RATIO_ONE, ec_all, &gr, &gc, &gd);
		}
	}
	mae_model_destroy(ref), mae_model_destroy(cb), mae_model_destroy(d1), mae_model_destroy(d2);
	return kt_finish(&e);
}
