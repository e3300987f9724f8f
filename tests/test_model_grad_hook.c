// Checks the model's gradient-ready hook: backward reports every gradient group once, in an order
// whose ranges are adjacent and descending and together cover the flat buffer (so buckets of
// ready gradients are contiguous ranges), logit_scale first; and each range is final when its hook
// runs (nothing backward does afterwards changes it), while the ranges still to come are not.
#include "model.h" // defines: ClipModel, clip_model_*, ClipGradGroup, model_synth_batch

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3 };

typedef struct {
	ClipModel *m;
	float *seen;    // (n_params): each range's values when its hook ran
	float *scratch; // (n_params)
	int calls, order_bad, early;
	int64_t next_end; // the next range must end here
} Watch;

static int on_ready(void *arg, int64_t off, int64_t len)
{
	Watch *w = arg;
	ClipModel *m = w->m;
	if (off + len != w->next_end || len < 1)
		w->order_bad = 1;
	w->next_end = off;
	if (kern_download(m->ctx, w->scratch, kern_nbytes(&m->grads), &m->grads))
		return -1;
	memcpy(w->seen + off, w->scratch + off, sizeof(float) * (size_t)len);
	// below this range nothing may be final yet: the poison written before backward is still there
	for (int64_t i = 0; i < off; i++)
		w->early += w->scratch[i] != 12345.0f;
	w->calls++;
	return 0;
}

int main(void)
{
	ModelConfig cfg;
	model_config_preset(&cfg, "tiny");
	cfg.vocab = 300;
	cfg.vis_layers = 2;
	cfg.txt_layers = 3;
	KernCtx *c;
	ClipModel *m;
	KTensor video, text;
	const int64_t sv[] = {B, cfg.frames, cfg.image_size, cfg.image_size, 3}, st[] = {B, cfg.ctx_len};
	if (kern_ctx_create_cpu(&c, 2) || clip_model_create(&m, c, &cfg, B, KDT_F32) ||
	    model_init_params(c, &cfg, &m->params, 5) || kern_alloc(c, &video, KDT_F32, 5, sv) ||
	    kern_alloc(c, &text, KDT_I32, 2, st) || model_synth_batch(c, &cfg, 3, 1, 16, &video, &text))
		return 1;
	size_t nb = kern_nbytes(&m->grads);
	Watch w = {.m = m, .seen = malloc(nb), .scratch = malloc(nb), .next_end = m->n_params};
	float *poison = malloc(nb), *final = malloc(nb);
	if (!w.seen || !w.scratch || !poison || !final)
		return 1;
	for (int64_t i = 0; i < m->n_params; i++)
		poison[i] = 12345.0f;
	if (kern_upload(c, &m->grads, poison, nb))
		return 1;
	clip_model_set_grad_hook(m, on_ready, &w);
	double loss;
	if (clip_model_infonce_step(m, &video, &text, &loss) || kern_download(c, final, nb, &m->grads))
		return 1;
	int expect = 5 + cfg.vis_layers + cfg.txt_layers, bad = 0;
	int ok = w.calls == expect && w.calls == m->n_groups && !w.order_bad && w.next_end == 0 &&
		 m->groups[0].length == 1 && m->groups[0].offset == m->n_params - 1;
	printf("%-4s %d groups reported (%d expected), adjacent and descending from the end to 0, logit_scale first\n",
	       ok ? "ok" : "FAIL", w.calls, expect);
	bad |= !ok;
	ok = memcmp(w.seen, final, nb) == 0;
	printf("%-4s every range is final when its hook runs\n", ok ? "ok" : "FAIL");
	bad |= !ok;
	ok = w.early == 0;
	printf("%-4s no range is written before its turn (%d early values)\n", ok ? "ok" : "FAIL", w.early);
	bad |= !ok;
	int poisoned = 0;
	for (int64_t i = 0; i < m->n_params; i++)
		poisoned += final[i] == 12345.0f;
	ok = poisoned == 0;
	printf("%-4s backward writes every gradient (no clearing needed): %d untouched\n", ok ? "ok" : "FAIL",
	       poisoned);
	bad |= !ok;
	clip_model_destroy(m);
	kern_free(c, &video);
	kern_free(c, &text);
	kern_ctx_destroy(c);
	free(w.seen);
	free(w.scratch);
	free(poison);
	free(final);
	printf("%s\n", bad ? "FAIL gradient-ready hook" : "PASS gradient groups arrive in backward order, each final");
	return bad;
}
