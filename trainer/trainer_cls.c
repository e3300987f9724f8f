// The classification heads and their loss on the op contract: kern_dropout of the video tower's
// pooled feature into f32 (AVION's dropout before fc_cls), one linear layer per label head over it,
// kern_mixup_fwd on the augmented patches, kern_softce per head (partners b[n] = a[N−1−n], timm's
// flip), and a rough train top-1 read back on the host.
#include "trainer_cls.h" // defines: ClsHeads, ...
#include "errbuf.h"      // defines: TRY
#include "kern_cls.h"    // defines: KMixupSpec, kern_mixup_draw
#include "ring.h"        // defines: RING_LABELS
#include "stream.h"      // defines: RngStream, rng_stream_init, rng_next_u32

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <math.h>   // defines: sqrt, log, cos
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memset

enum { CLS_RNG_STREAM = 0x434c53 }; // the heads' initialisation draws ("CLS")

static int layout(ClsHeads *h)
{
	int64_t off = 0;
	for (int k = 0; k < h->cfg.n_heads; k++) {
		const int K = h->cfg.classes[k];
		ParamSpec *w = &h->specs[h->n_specs++], *b = &h->specs[h->n_specs++];
		*w = (ParamSpec){.ndim = 2, .shape = {K, h->W}, .offset = off, .numel = (int64_t)K * h->W};
		snprintf(w->name, sizeof w->name, "head.%d.weight", k);
		off += w->numel;
		*b = (ParamSpec){.ndim = 1, .shape = {K}, .offset = off, .numel = K, .flags = PARAM_NO_DECAY};
		snprintf(b->name, sizeof b->name, "head.%d.bias", k);
		off += K;
	}
	h->n_params = off;
	return 0;
}

static int views(ClsHeads *h)
{
	for (int k = 0; k < h->cfg.n_heads; k++) {
		const ParamSpec *w = &h->specs[2 * k], *b = &h->specs[2 * k + 1];
		TRY(kern_view(&h->w[k], &h->params, w->offset, 2, w->shape));
		TRY(kern_view(&h->b[k], &h->params, b->offset, 1, b->shape));
		TRY(kern_view(&h->gw[k], &h->grads, w->offset, 2, w->shape));
		TRY(kern_view(&h->gb[k], &h->grads, b->offset, 1, b->shape));
	}
	return 0;
}

static int create(ClsHeads *h, const OptConfig *opt)
{
	const int64_t B = h->B, n = h->n_params, nab = 2 * (int64_t)h->cfg.n_heads * h->B;
	int kmax = 1;
	TRY(kern_alloc(h->ctx, &h->params, KDT_F32, 1, &n));
	TRY(kern_alloc(h->ctx, &h->grads, KDT_F32, 1, &n));
	TRY(views(h));
	for (int k = 0; k < h->cfg.n_heads; k++) {
		const int64_t sh[2] = {B, h->cfg.classes[k]};
		TRY(kern_alloc(h->ctx, &h->logits[k], KDT_F32, 2, sh));
		TRY(kern_alloc(h->ctx, &h->dlogits[k], KDT_F32, 2, sh));
		kmax = h->cfg.classes[k] > kmax ? h->cfg.classes[k] : kmax;
	}
	TRY(kern_alloc(h->ctx, &h->hin, KDT_F32, 2, (const int64_t[]){B, h->W}));
	TRY(kern_alloc(h->ctx, &h->dfeat, KDT_F32, 2, (const int64_t[]){B, h->W}));
	TRY(kern_alloc(h->ctx, &h->ab_all, KDT_I32, 1, &nab));
	for (int k = 0; k < h->cfg.n_heads; k++)
		for (int j = 0; j < 2; j++)
			TRY(kern_view(&h->ab[k][j], &h->ab_all, (2 * k + j) * B, 1, &B));
	h->host_ab = calloc((size_t)nab, sizeof *h->host_ab);
	h->host_logits = calloc((size_t)(B * kmax), sizeof *h->host_logits);
	if (!h->host_ab || !h->host_logits)
		return -ENOMEM;
	OptConfig oc = *opt;
	oc.layer_decay = 1; // the heads are the last layer: scale decay^0
	return optim_create(&h->opt, h->ctx, &oc, h->specs, h->n_specs, h->n_params);
}

int cls_heads_create(ClsHeads **out, KernCtx *ctx, const ClsConfig *c, const OptConfig *opt, int B, int W, KDtype dt)
{
	if (!out || !c || c->n_heads < 1 || c->n_heads > CLS_MAX_HEADS || B < 1 || W < 1 ||
	    (dt != KDT_F32 && dt != KDT_BF16) || !(c->dropout >= 0 && c->dropout <= 1))
		return -EINVAL;
	for (int k = 0; k < c->n_heads; k++)
		if (c->classes[k] < 1)
			return -EINVAL;
	ClsHeads *h = calloc(1, sizeof *h);
	if (!h)
		return -ENOMEM;
	*h = (ClsHeads){.ctx = ctx, .cfg = *c, .B = B, .W = W, .lam = 1};
	int rc = layout(h);
	if (!rc)
		rc = create(h, opt);
	if (rc) {
		cls_heads_destroy(h);
		return rc;
	}
	*out = h;
	return 0;
}

void cls_heads_destroy(ClsHeads *h)
{
	if (!h)
		return;
	optim_destroy(h->opt);
	for (int k = 0; k < CLS_MAX_HEADS; k++) {
		kern_free(h->ctx, &h->logits[k]);
		kern_free(h->ctx, &h->dlogits[k]);
	}
	kern_free(h->ctx, &h->hin);
	kern_free(h->ctx, &h->dfeat);
	kern_free(h->ctx, &h->ab_all);
	kern_free(h->ctx, &h->params);
	kern_free(h->ctx, &h->grads);
	free(h->host_ab);
	free(h->host_logits);
	free(h);
}

// a uniform in (0, 1) from 24 bits of the stream
static double uniform(RngStream *s)
{
	return ((rng_next_u32(s) >> 8) + 0.5) / 16777216.0;
}

int cls_heads_init(ClsHeads *h, uint64_t seed)
{
	float *host = calloc((size_t)h->n_params, sizeof *host);
	if (!host)
		return -ENOMEM;
	for (int k = 0; k < h->cfg.n_heads; k++) {
		RngStream s;
		rng_stream_init(&s, seed, (uint64_t)k, CLS_RNG_STREAM);
		const ParamSpec *w = &h->specs[2 * k];
		for (int64_t i = 0; i < w->numel; i++) // Box–Muller, one normal per pair of uniforms
			host[w->offset + i] =
				(float)(0.02 * sqrt(-2 * log(uniform(&s))) * cos(6.283185307179586 * uniform(&s)));
	}
	int rc = kern_upload(h->ctx, &h->params, host, sizeof *host * (size_t)h->n_params);
	free(host);
	h->opt->step = 0;
	if (!rc)
		rc = kern_zero(h->ctx, &h->opt->m);
	return rc ? rc : kern_zero(h->ctx, &h->opt->v);
}

int cls_heads_mix(ClsHeads *h, KTensor *patches, uint64_t seed, uint64_t step, int image_size, int patch)
{
	const KMixupSpec spec = {.mixup_alpha = h->cfg.mixup, .cutmix_alpha = h->cfg.cutmix, .switch_prob = 0.5};
	KMixup mx;
	TRY(kern_mixup_draw(&mx, &spec, seed, step, image_size, image_size));
	h->lam = mx.lam;
	if (!mx.cutmix && mx.lam == 1)
		return 0; // both off: no mixing
	return kern_mixup_fwd(h->ctx, patches, patches, &mx, image_size, image_size, patch);
}

// the labelled rows' fraction whose arg-max logit is their own (unmixed) class a; NaN-free: 0 rows → 0
static int top1(ClsHeads *h, int k, KTensor *out)
{
	const int B = h->B, K = h->cfg.classes[k];
	TRY(kern_download(h->ctx, h->host_logits, sizeof(float) * (size_t)B * K, &h->logits[k]));
	const int32_t *a = h->host_ab + (size_t)2 * k * B;
	int hit = 0, n = 0;
	for (int i = 0; i < B; i++) {
		if (a[i] < 0)
			continue;
		const float *z = h->host_logits + (size_t)i * K;
		int best = 0;
		for (int j = 1; j < K; j++)
			best = z[j] > z[best] ? j : best;
		hit += best == a[i];
		n++;
	}
	const float f = n ? (float)hit / (float)n : 0.0f;
	return kern_upload(h->ctx, out, &f, sizeof f);
}

int cls_heads_forward(ClsHeads *h, const KTensor *feat, const KTensor *pos, uint64_t seed, const int32_t *labels,
		      KTensor *loss, KTensor *top)
{
	const int B = h->B;
	for (int k = 0; k < h->cfg.n_heads; k++) {
		int32_t *a = h->host_ab + (size_t)2 * k * B, *b = a + B;
		for (int i = 0; i < B; i++)
			a[i] = labels[(size_t)i * RING_LABELS + k];
		for (int i = 0; i < B; i++)
			b[i] = a[B - 1 - i];
	}
	TRY(kern_upload(h->ctx, &h->ab_all, h->host_ab, kern_nbytes(&h->ab_all)));
	h->drop = (KDropout){.rate = h->cfg.dropout, .seed = seed};
	h->pos = pos;
	TRY(kern_dropout(h->ctx, KG_SET(&h->hin), feat, pos, &h->drop)); // rate 0: the feature in f32
	const KSoftCe p = {.lam = h->lam, .eps = h->cfg.smoothing, .scale = 1};
	for (int k = 0; k < h->cfg.n_heads; k++) {
		TRY(kern_linear(
			h->ctx,
			&(KLinear){
				.out = &h->logits[k], .in = &h->hin, .w = &h->w[k], .trans_w = 1, .bias = &h->b[k]}));
		TRY(kern_softce(h->ctx, &loss[k], NULL, KG_SET(&h->dlogits[k]), &h->logits[k], &h->ab[k][0],
				&h->ab[k][1], &p));
		TRY(top1(h, k, &top[k]));
	}
	return 0;
}

int cls_heads_backward(ClsHeads *h)
{
	for (int k = 0; k < h->cfg.n_heads; k++)
		TRY(kern_linear_bwd(h->ctx, &(KLinearBwd){.din = k ? KG_ADD(&h->dfeat) : KG_SET(&h->dfeat),
							  .dw = KG_SET(&h->gw[k]),
							  .dbias = KG_SET(&h->gb[k]),
							  .dout = &h->dlogits[k],
							  .in = &h->hin,
							  .w = &h->w[k],
							  .trans_w = 1}));
	// dropout's backward: the forward's mask on the gradient, in place
	return h->drop.rate > 0 ? kern_dropout(h->ctx, KG_SET(&h->dfeat), &h->dfeat, h->pos, &h->drop) : 0;
}

int cls_heads_update(ClsHeads *h, const KTensor *norm_clip)
{
	return optim_step_clipped(h->opt, &h->params, NULL, &h->grads, norm_clip);
}

int cls_step_update(ClsHeads *h, Comm *comm, Optimizer *tower, KTensor *params, KTensor *copy, const KTensor *grads,
		    double clip_norm)
{
	if (comm_world(comm) > 1)
		TRY(comm_allreduce(comm, &h->grads, COMM_AVG, h->ctx));
	TRY(kern_grad_norm(h->ctx, tower->plan, &tower->norm_clip, grads, 0));
	TRY(kern_grad_norm(h->ctx, h->opt->plan, &h->opt->norm_clip, &h->grads, 0));
	TRY(kern_grad_norm_join(h->ctx, &tower->norm_clip, &h->opt->norm_clip, clip_norm));
	TRY(optim_step_clipped(tower, params, copy, grads, &tower->norm_clip));
	return cls_heads_update(h, &tower->norm_clip);
}
