// Forward and backward of the dual encoder on the op interface: only op calls here, no loop
// over elements, so the CUDA backend runs the same code.
#include "model_clip.h" // defines: ClipModel

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x)                                                                                                         \
	do {                                                                                                           \
		int rc_ = (x);                                                                                         \
		if (rc_)                                                                                               \
			return rc_;                                                                                    \
	} while (0)
#define SH(...) (const int64_t[]){__VA_ARGS__}
#define NSH(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), SH(__VA_ARGS__)

static int alloc_in(void *owner, KTensor *t, int ndim, const int64_t *shape)
{
	ClipModel *m = owner;
	if (m->n_owned >= MODEL_MAX_TENSORS)
		return -ENOMEM;
	TRY(kern_alloc(m->ctx, t, m->dt, ndim, shape));
	m->owned[m->n_owned++] = t;
	return 0;
}

static int alloc_i32(ClipModel *m, KTensor *t, int64_t n)
{
	if (m->n_owned >= MODEL_MAX_TENSORS)
		return -ENOMEM;
	TRY(kern_alloc(m->ctx, t, KDT_I32, 1, &n));
	m->owned[m->n_owned++] = t;
	return 0;
}

static int create(ClipModel *m)
{
	const ModelConfig *c = &m->cfg;
	const int B = m->B, Wv = c->vis_width, Wt = c->txt_width, E = c->embed_dim, p = c->patch;
	const int P = (c->image_size / p) * (c->image_size / p), TP = c->frames * P, Lv = 1 + TP, Lt = c->ctx_len;
	model_layout(c, NULL, &m->n_specs, &m->n_params);
	m->specs = calloc((size_t)m->n_specs, sizeof *m->specs);
	m->vacts = calloc((size_t)c->vis_layers, sizeof *m->vacts);
	m->tacts = calloc((size_t)c->txt_layers, sizeof *m->tacts);
	if (!m->specs || !m->vacts || !m->tacts)
		return -ENOMEM;
	model_layout(c, m->specs, &m->n_specs, &m->n_params);
	TRY(alloc_in(m, &m->params, NSH(m->n_params)));
	TRY(alloc_in(m, &m->grads, NSH(m->n_params)));
	TRY(model_weights_bind(&m->w, c, &m->params));
	TRY(model_weights_bind(&m->g, c, &m->grads));

	TRY(alloc_in(m, &m->patches, NSH(B, TP, 3 * p * p)));
	TRY(alloc_in(m, &m->pemb, NSH(B, TP, Wv)));
	TRY(alloc_in(m, &m->x0, NSH(B, Lv, Wv)));
	TRY(alloc_in(m, &m->xpre, NSH(B, Lv, Wv)));
	TRY(alloc_in(m, &m->pre_m, NSH((int64_t)B * Lv)));
	TRY(alloc_in(m, &m->pre_r, NSH((int64_t)B * Lv)));
	for (int l = 0; l < c->vis_layers; l++)
		TRY(block_acts_alloc(&m->vacts[l], alloc_in, m, B, Lv, Wv, c->vis_heads, c->mlp_ratio));
	TRY(alloc_i32(m, &m->cls_pos, B));
	TRY(alloc_in(m, &m->vpool, NSH(B, Wv)));
	TRY(alloc_in(m, &m->vln, NSH(B, Wv)));
	TRY(alloc_in(m, &m->vln_m, NSH(B)));
	TRY(alloc_in(m, &m->vln_r, NSH(B)));
	TRY(alloc_in(m, &m->vproj, NSH(B, E)));
	TRY(alloc_in(m, &m->vfeat, NSH(B, E)));
	TRY(alloc_in(m, &m->vnorm, NSH(B)));
	TRY(tower_scratch_alloc(&m->vs, alloc_in, m, m->ctx, m->dt, B, Lv, Wv, c->vis_heads, c->mlp_ratio, E, 0));

	TRY(alloc_in(m, &m->tx0, NSH(B, Lt, Wt)));
	for (int l = 0; l < c->txt_layers; l++)
		TRY(block_acts_alloc(&m->tacts[l], alloc_in, m, B, Lt, Wt, c->txt_heads, c->mlp_ratio));
	TRY(alloc_i32(m, &m->eot, B));
	TRY(alloc_in(m, &m->tpool, NSH(B, Wt)));
	TRY(alloc_in(m, &m->tln, NSH(B, Wt)));
	TRY(alloc_in(m, &m->tln_m, NSH(B)));
	TRY(alloc_in(m, &m->tln_r, NSH(B)));
	TRY(alloc_in(m, &m->tproj, NSH(B, E)));
	TRY(alloc_in(m, &m->tfeat, NSH(B, E)));
	TRY(alloc_in(m, &m->tnorm, NSH(B)));
	TRY(tower_scratch_alloc(&m->ts, alloc_in, m, m->ctx, m->dt, B, Lt, Wt, c->txt_heads, c->mlp_ratio, E, 1));

	TRY(alloc_in(m, &m->loss, NSH(1)));
	TRY(alloc_in(m, &m->dvfeat, NSH(B, E)));
	TRY(alloc_in(m, &m->dtfeat, NSH(B, E)));
	size_t lws = kern_clip_loss_ws_bytes(m->ctx, m->dt, B);
	TRY(alloc_in(m, &m->loss_ws, NSH((int64_t)(lws / kern_dtype_size(m->dt)) + 1)));
	return 0;
}

int clip_model_create(ClipModel **out, KernCtx *ctx, const ModelConfig *cfg, int batch, KDtype dt)
{
	char msg[160];
	if (batch <= 0 || model_config_check(cfg, msg, sizeof msg) || (dt != KDT_F32 && dt != KDT_F64))
		return -EINVAL;
	ClipModel *m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	m->ctx = ctx;
	m->cfg = *cfg;
	m->dt = dt;
	m->B = batch;
	int rc = create(m);
	if (rc) {
		clip_model_destroy(m);
		return rc;
	}
	*out = m;
	return 0;
}

void clip_model_destroy(ClipModel *m)
{
	if (!m)
		return;
	for (int i = m->n_owned - 1; i >= 0; i--)
		kern_free(m->ctx, m->owned[i]);
	model_weights_release(&m->w);
	model_weights_release(&m->g);
	free(m->specs);
	free(m->vacts);
	free(m->tacts);
	free(m);
}

// pooled (B, W) -> layernorm -> projection -> L2 normalize
static int head_forward(KernCtx *c, const KTensor *pooled, KTensor *ln, KTensor *lm, KTensor *lr, const KTensor *lnw,
			const KTensor *lnb, const KTensor *proj_w, KTensor *proj, KTensor *feat, KTensor *norm)
{
	TRY(kern_layernorm_fwd(c, ln, lm, lr, pooled, lnw, lnb));
	TRY(kern_proj_fwd(c, proj, ln, proj_w));
	TRY(kern_l2norm_fwd(c, feat, norm, proj));
	return 0;
}

// dfeat -> s->dhead2 = d(pooled)
static int head_backward(KernCtx *c, TowerScratch *s, const KTensor *dfeat, const KTensor *feat, const KTensor *norm,
			 const KTensor *ln, const KTensor *lm, const KTensor *lr, const KTensor *pooled,
			 const KTensor *lnw, KTensor *glnw, KTensor *glnb, const KTensor *proj_w, KTensor *gproj)
{
	TRY(kern_zero(c, &s->demb));
	TRY(kern_l2norm_bwd(c, &s->demb, dfeat, feat, norm));
	TRY(kern_zero(c, &s->dhead1));
	TRY(kern_proj_bwd(c, &s->dhead1, gproj, &s->demb, ln, proj_w));
	TRY(kern_zero(c, &s->dhead2));
	TRY(kern_layernorm_bwd(c, &s->dhead2, glnw, glnb, &s->dhead1, pooled, lnw, lm, lr));
	return 0;
}

int clip_model_forward(ClipModel *m, const KTensor *video, const KTensor *text)
{
	KernCtx *c = m->ctx;
	const ModelConfig *cf = &m->cfg;
	if (!video || video->ndim != 5 || video->shape[0] != m->B || video->shape[1] != cf->frames ||
	    video->shape[2] != cf->image_size || video->shape[3] != cf->image_size || video->shape[4] != 3)
		return -EINVAL;
	if (!text || text->ndim != 2 || text->shape[0] != m->B || text->shape[1] != cf->ctx_len)
		return -EINVAL;
	// video tower
	TRY(kern_patchify_fwd(c, &m->patches, video, cf->patch));
	TRY(kern_linear_fwd(c, &m->pemb, &m->patches, &m->w.conv, NULL));
	TRY(kern_vis_embed_fwd(c, &m->x0, &m->pemb, &m->w.cls, &m->w.pos, &m->w.tpos));
	TRY(kern_layernorm_fwd(c, &m->xpre, &m->pre_m, &m->pre_r, &m->x0, &m->w.ln_pre_w, &m->w.ln_pre_b));
	const KTensor *x = &m->xpre;
	for (int l = 0; l < cf->vis_layers; l++) {
		TRY(block_forward(c, &m->w.vblk[l], &m->vacts[l], x, &m->vs));
		x = &m->vacts[l].res2;
	}
	TRY(kern_pool_fwd(c, &m->vpool, x, &m->cls_pos));
	TRY(head_forward(c, &m->vpool, &m->vln, &m->vln_m, &m->vln_r, &m->w.ln_post_w, &m->w.ln_post_b, &m->w.vproj,
			 &m->vproj, &m->vfeat, &m->vnorm));
	// text tower
	m->text_ids = *text;
	m->text_ids.owned = 0;
	TRY(kern_tok_embed_fwd(c, &m->tx0, text, &m->w.wte, &m->w.txt_pos));
	x = &m->tx0;
	for (int l = 0; l < cf->txt_layers; l++) {
		TRY(block_forward(c, &m->w.tblk[l], &m->tacts[l], x, &m->ts));
		x = &m->tacts[l].res2;
	}
	TRY(kern_argmax_rows(c, &m->eot, text));
	TRY(kern_pool_fwd(c, &m->tpool, x, &m->eot));
	TRY(head_forward(c, &m->tpool, &m->tln, &m->tln_m, &m->tln_r, &m->w.ln_final_w, &m->w.ln_final_b, &m->w.tproj,
			 &m->tproj, &m->tfeat, &m->tnorm));
	return 0;
}

int clip_model_backward(ClipModel *m, const KTensor *dvfeat, const KTensor *dtfeat)
{
	KernCtx *c = m->ctx;
	const ModelConfig *cf = &m->cfg;
	TowerScratch *s = &m->vs;
	// video tower
	TRY(head_backward(c, s, dvfeat, &m->vfeat, &m->vnorm, &m->vln, &m->vln_m, &m->vln_r, &m->vpool,
			  &m->w.ln_post_w, &m->g.ln_post_w, &m->g.ln_post_b, &m->w.vproj, &m->g.vproj));
	TRY(kern_zero(c, &s->dres));
	TRY(kern_pool_bwd(c, &s->dres, &s->dhead2, &m->cls_pos));
	for (int l = cf->vis_layers - 1; l >= 0; l--)
		TRY(block_backward(c, &m->w.vblk[l], &m->g.vblk[l], &m->vacts[l], l ? &m->vacts[l - 1].res2 : &m->xpre, s));
	TRY(kern_zero(c, &s->dln));
	TRY(kern_layernorm_bwd(c, &s->dln, &m->g.ln_pre_w, &m->g.ln_pre_b, &s->dres, &m->x0, &m->w.ln_pre_w, &m->pre_m,
			       &m->pre_r));
	KTensor dpemb; // (B, T*P, Wv) in the attention scratch
	TRY(kern_view(&dpemb, &s->datt, 0, 3, m->pemb.shape));
	TRY(kern_zero(c, &dpemb));
	TRY(kern_vis_embed_bwd(c, &dpemb, &m->g.cls, &m->g.pos, &m->g.tpos, &s->dln));
	TRY(kern_linear_bwd(c, NULL, &m->g.conv, NULL, &dpemb, &m->patches, &m->w.conv));
	// text tower
	s = &m->ts;
	TRY(head_backward(c, s, dtfeat, &m->tfeat, &m->tnorm, &m->tln, &m->tln_m, &m->tln_r, &m->tpool,
			  &m->w.ln_final_w, &m->g.ln_final_w, &m->g.ln_final_b, &m->w.tproj, &m->g.tproj));
	TRY(kern_zero(c, &s->dres));
	TRY(kern_pool_bwd(c, &s->dres, &s->dhead2, &m->eot));
	for (int l = cf->txt_layers - 1; l >= 0; l--)
		TRY(block_backward(c, &m->w.tblk[l], &m->g.tblk[l], &m->tacts[l], l ? &m->tacts[l - 1].res2 : &m->tx0, s));
	TRY(kern_tok_embed_bwd(c, &m->g.wte, &m->g.txt_pos, &s->dres, &m->text_ids));
	return 0;
}

int clip_model_zero_grad(ClipModel *m)
{
	return kern_zero(m->ctx, &m->grads);
}

int clip_model_infonce_step(ClipModel *m, const KTensor *video, const KTensor *text, double *loss)
{
	TRY(clip_model_zero_grad(m));
	TRY(clip_model_forward(m, video, text));
	TRY(kern_zero(m->ctx, &m->dvfeat));
	TRY(kern_zero(m->ctx, &m->dtfeat));
	TRY(kern_clip_loss(m->ctx, &m->loss, &m->dvfeat, &m->dtfeat, &m->g.logit_scale, &m->vfeat, &m->tfeat,
			   &m->w.logit_scale, &m->loss_ws));
	TRY(clip_model_backward(m, &m->dvfeat, &m->dtfeat));
	if (loss) {
		if (m->dt == KDT_F32) {
			float f;
			TRY(kern_download(m->ctx, &f, sizeof f, &m->loss));
			*loss = f;
		} else {
			TRY(kern_download(m->ctx, loss, sizeof *loss, &m->loss));
		}
	}
	return 0;
}
