// Checks that the CPU backend's results do not depend on the thread count: three training
// steps with 1, 2 and 3 OpenMP threads give byte-equal weights and gradients (every
// reduction has a fixed order and BLAS runs on the calling thread).
#include "model.h" // defines: ClipModel, model_synth_batch, Optimizer

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 4 };

// params and grads after three AdamW steps, as host copies (caller frees)
static int train(int threads, const ModelConfig *cfg, float **params, float **grads, size_t *nb)
{
	KernCtx *c;
	ClipModel *m;
	Optimizer *o;
	OptConfig oc;
	optim_config_default(&oc);
	oc.lr = 1e-3, oc.total_steps = 3;
	KTensor video, text;
	const int64_t sv[] = {B, cfg->frames, cfg->image_size, cfg->image_size, 3}, st[] = {B, cfg->ctx_len};
	if (kern_ctx_create_cpu(&c, threads) || clip_model_create(&m, c, cfg, B, KDT_F32) ||
	    model_init_params(c, cfg, &m->params, 4) || optim_create(&o, c, &oc, m->specs, m->n_specs, m->n_params) ||
	    kern_alloc(c, &video, KDT_F32, 5, sv) || kern_alloc(c, &text, KDT_I32, 2, st))
		return 1;
	for (int s = 0; s < 3; s++)
		if (model_synth_batch(c, cfg, 2, (uint64_t)s, 32, &video, &text) ||
		    clip_model_infonce_step(m, &video, &text, NULL) || optim_step(o, &m->params, NULL, &m->grads))
			return 1;
	*nb = kern_nbytes(&m->params);
	*params = malloc(*nb);
	*grads = malloc(*nb);
	kern_download(c, *params, *nb, &m->params);
	kern_download(c, *grads, *nb, &m->grads);
	printf("%d thread(s): done\n", kern_ctx_threads(c));
	clip_model_destroy(m);
	optim_destroy(o);
	kern_free(c, &video);
	kern_free(c, &text);
	kern_ctx_destroy(c);
	return 0;
}

int main(void)
{
	ModelConfig cfg;
	model_config_preset(&cfg, "tiny");
	cfg.vocab = 500;
	float *p1, *g1, *p2, *g2, *p3, *g3;
	size_t n1, n2, n3;
	if (train(1, &cfg, &p1, &g1, &n1) || train(2, &cfg, &p2, &g2, &n2) || train(3, &cfg, &p3, &g3, &n3) ||
	    n1 != n2 || n1 != n3)
		return 1;
	int bad = memcmp(p1, p2, n1) || memcmp(g1, g2, n1) || memcmp(p1, p3, n1) || memcmp(g1, g3, n1);
	free(p1);
	free(g1);
	free(p2);
	free(g2);
	free(p3);
	free(g3);
	printf("%s\n",
	       bad ? "FAIL results depend on the thread count" : "PASS 1, 2 and 3 threads give byte-equal training");
	return bad;
}
