// Checks that the tiny video-text model learns on the CPU backend: AdamW with warmup+cosine
// on a pool of 16 synthetic (video, caption) pairs drives the local InfoNCE loss well below
// its starting value ln(B) within 80 steps.
#include "model.h" // defines: ClipModel, model_synth_batch, Optimizer

#include <math.h>
#include <stdio.h>

enum { B = 8, STEPS = 80 };

int main(void)
{
	KernCtx *c;
	ModelConfig cfg;
	ClipModel *m;
	Optimizer *o;
	if (kern_ctx_create_cpu(&c, 2) || model_config_preset(&cfg, "tiny"))
		return 1;
	cfg.vocab = 1000;
	OptConfig oc;
	optim_config_default(&oc);
	oc.lr = 2e-3, oc.warmup_steps = 5, oc.total_steps = STEPS, oc.lr_min = 1e-4, oc.clip_norm = 1.0;
	KTensor video, text;
	const int64_t sv[] = {B, cfg.frames, cfg.image_size, cfg.image_size, 3}, st[] = {B, cfg.ctx_len};
	if (clip_model_create(&m, c, &cfg, B, KDT_F32) || model_init_params(c, &cfg, &m->params, 3) ||
	    optim_create(&o, c, &oc, m->specs, m->n_specs, m->n_params) || kern_alloc(c, &video, KDT_F32, 5, sv) ||
	    kern_alloc(c, &text, KDT_I32, 2, st))
		return 1;
	double first = 0, last = 0, loss, gn;
	for (int s = 0; s < STEPS; s++) {
		if (model_synth_batch(c, &cfg, 9, (uint64_t)s, 16, &video, &text) ||
		    clip_model_infonce_step(m, &video, &text, &loss) || optim_step(o, &m->params, NULL, &m->grads))
			return 1;
		float nc[2];
		if (kern_download(c, nc, sizeof nc, &o->norm_clip))
			return 1;
		gn = nc[0];
		if (s < 5)
			first += loss / 5;
		if (s >= STEPS - 10)
			last += loss / 10;
		if (s % 10 == 0 || s == STEPS - 1)
			printf("step %3d  loss %.4f  grad norm %.3f  lr %.2e\n", s, loss, gn, optim_lr(&oc, s));
	}
	int ok = isfinite(last) && last < 0.5 * first;
	printf("mean loss: first 5 steps %.4f, last 10 steps %.4f (ln B = %.4f)\n", first, last, log(B));
	clip_model_destroy(m);
	optim_destroy(o);
	kern_free(c, &video);
	kern_free(c, &text);
	kern_ctx_destroy(c);
	printf("%s\n", ok ? "PASS tiny model trains" : "FAIL tiny model does not learn");
	return !ok;
}
