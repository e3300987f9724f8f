// Forward and backward of the dual encoder on the op interface: only op calls here, no loop
// over elements, so the CUDA backend runs the same code.
#include "model.h"          // defines: ClipModel
#include "errbuf.h"         // defines: TRY
#include "model_block.h"    // defines: block_acts_alloc, tower_scratch_alloc, block_forward, block_backward
#include "model_droppath.h" // defines: model_drop_path_block, model_drop_path_free

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SH(...)                                                                                                        \
	(const int64_t[])                                                                                              \
	{                                                                                                              \
		__VA_ARGS__                                                                                            \
	}
#define NSH(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), SH(__VA_ARGS__)

static int alloc_dt(ClipModel *m, KTensor *t, KDtype dt, int ndim, const int64_t *shape)
{
	if (m->count) { // clip_model_bytes: every allocation after the parameters' is an activation
		KTensor h = kern_tensor_make(NULL, dt, ndim, shape);
		m->count->activations += kern_nbytes(&h);
		*t = h;
		return 0;
	}
	if (m->n_owned >= MODEL_MAX_TENSORS)
		return -ENOMEM;
	TRY(kern_alloc(m->ctx, t, dt, ndim, shape));
	m->owned[m->n_owned++] = t;
	return 0;
}

// ModelAllocFn: activations in dt, statistics in pdt
static int alloc_in(void *owner, KTensor *t, int stat, int ndim, const int64_t *shape)
{
	ClipModel *m = owner;
	return alloc_dt(m, t, stat ? m->pdt : m->dt, ndim, shape);
}

static int alloc_i32(ClipModel *m, KTensor *t, int64_t n)
{
	return alloc_dt(m, t, KDT_I32, 1, &n);
}

// the op workspace of both towers' attention and the local loss
static int reserve(ClipModel *m, int Lv, int Lt)
{
	const ModelConfig *c = &m->cfg;
	size_t need = kern_linear_ws_bytes(m->ctx), a;
	a = kern_attention_ws_bytes(m->ctx, m->dt, m->B, Lv, c->vis_heads, c->vis_width / c->vis_heads);
	need = a > need ? a : need;
	if (Lt > 1) {
		a = kern_attention_ws_bytes(m->ctx, m->dt, m->B, Lt, c->txt_heads, c->txt_width / c->txt_heads);
		need = a > need ? a : need;
	}
	a = kern_loss_ws_bytes(m->ctx, m->B, m->B, c->embed_dim);
	need = a > need ? a : need;
	if (m->count) {
		m->count->workspace = need;
		return 0;
	}
	return kern_ctx_reserve_workspace(m->ctx, need);
}

static int create_params(ClipModel *m)
{
	const ModelConfig *c = &m->cfg;
	model_layout(c, NULL, &m->n_specs, &m->n_params);
	m->specs = calloc((size_t)m->n_specs, sizeof *m->specs);
	m->vacts = calloc((size_t)c->vis_layers, sizeof *m->vacts);
	m->tacts = calloc((size_t)c->txt_layers, sizeof *m->tacts);
	if (!m->specs || !m->vacts || !m->tacts)
		return -ENOMEM;
	model_layout(c, m->specs, &m->n_specs, &m->n_params);
	if (m->count) {
		const size_t master = kern_dtype_size(m->pdt) * (size_t)m->n_params;
		m->count->params = 2 * master + (m->dt != m->pdt ? kern_dtype_size(m->dt) * (size_t)m->n_params : 0);
		return 0;
	}
	TRY(alloc_dt(m, &m->params, m->pdt, NSH(m->n_params)));
	TRY(alloc_dt(m, &m->grads, m->pdt, NSH(m->n_params)));
	if (m->dt != m->pdt)
		TRY(alloc_dt(m, &m->weights, m->dt, NSH(m->n_params)));
	else
		TRY(kern_view(&m->weights, &m->params, 0, NSH(m->n_params)));
	TRY(model_weights_bind(&m->w, c, &m->weights));
	TRY(model_weights_bind(&m->g, c, &m->grads));
	ModelWeights master;
	TRY(model_weights_bind(&master, c, &m->params));
	m->log_s = master.logit_scale;
	model_weights_release(&master);
	return 0;
}

// the offset of the parameter tensor named `name` (-1 when there is none)
static int64_t offset_of(const ClipModel *m, const char *name)
{
	for (int i = 0; i < m->n_specs; i++)
		if (!strcmp(m->specs[i].name, name))
			return m->specs[i].offset;
	return -1;
}

// the gradient groups in the order clip_model_backward finishes them: [start, end) ranges of
// the flat buffer, each ending where the previous one starts
static int make_groups(ClipModel *m)
{
	const ModelConfig *c = &m->cfg;
	int n = 0, cap = 5 + c->vis_layers + c->txt_layers;
	m->groups = calloc((size_t)cap, sizeof *m->groups);
	if (!m->groups)
		return -ENOMEM;
	int64_t *starts = calloc((size_t)cap, sizeof *starts);
	if (!starts)
		return -ENOMEM;
	char name[96];
	starts[n++] = offset_of(m, "logit_scale");
	starts[n++] = offset_of(m, "ln_final.weight");
	for (int l = c->txt_layers - 1; l >= 0; l--) {
		snprintf(name, sizeof name, "transformer.resblocks.%d.ln_1.weight", l);
		starts[n++] = offset_of(m, name);
	}
	starts[n++] = offset_of(m, "token_embedding.weight");
	starts[n++] = offset_of(m, "visual.ln_post.weight");
	for (int l = c->vis_layers - 1; l >= 0; l--) {
		snprintf(name, sizeof name, "visual.transformer.resblocks.%d.ln_1.weight", l);
		starts[n++] = offset_of(m, name);
	}
	starts[n++] = 0; // the video stem: class and position embeddings, conv1, ln_pre
	int64_t end = m->n_params;
	int rc = 0;
	for (int k = 0; k < n && !rc; k++) {
		if (starts[k] < 0 || starts[k] >= end)
			rc = -EINVAL; // the layout no longer has the order backward relies on
		m->groups[k] = (ClipGradGroup){.offset = starts[k], .length = end - starts[k]};
		end = starts[k];
	}
	free(starts);
	m->n_groups = n;
	return rc;
}

// every block's activations; with checkpointing one full set (the last block's) whose internals
// the other blocks share, each keeping only its own output
static int tower_acts(ClipModel *m, BlockActs *acts, BlockActs *shared, int layers, int B, int L, int W, int H)
{
	if (!m->grad_ckpt) {
		for (int l = 0; l < layers; l++)
			TRY(block_acts_alloc(&acts[l], alloc_in, m, B, L, W, H, m->cfg.mlp_ratio));
		return 0;
	}
	TRY(block_acts_alloc(shared, alloc_in, m, B, L, W, H, m->cfg.mlp_ratio));
	for (int l = 0; l < layers; l++) {
		acts[l] = *shared;
		if (l < layers - 1)
			TRY(alloc_in(m, &acts[l].res2, 0, NSH(B, L, W)));
	}
	return 0;
}

static int create(ClipModel *m)
{
	const ModelConfig *c = &m->cfg;
	const int B = m->B, Wv = c->vis_width, Wt = c->txt_width, E = c->embed_dim, p = c->patch;
	const int P = (c->image_size / p) * (c->image_size / p), TP = c->frames / c->tubelet * P, Lv = 1 + TP,
		  Lt = c->ctx_len;
	TRY(create_params(m));
	TRY(make_groups(m));
	TRY(alloc_in(m, &m->patches, 0, NSH(B, TP, 3 * c->tubelet * p * p)));
	TRY(alloc_in(m, &m->pemb, 0, NSH(B, TP, Wv)));
	TRY(alloc_in(m, &m->x0, 0, NSH(B, Lv, Wv)));
	TRY(alloc_in(m, &m->xpre, 0, NSH(B, Lv, Wv)));
	TRY(alloc_in(m, &m->pre_m, 1, NSH((int64_t)B * Lv)));
	TRY(alloc_in(m, &m->pre_r, 1, NSH((int64_t)B * Lv)));
	TRY(tower_acts(m, m->vacts, &m->vshared, c->vis_layers, B, Lv, Wv, c->vis_heads));
	TRY(alloc_i32(m, &m->cls_pos, B));
	TRY(alloc_in(m, &m->vpool, 0, NSH(B, Wv)));
	TRY(alloc_in(m, &m->vln, 0, NSH(B, Wv)));
	TRY(alloc_in(m, &m->vln_m, 1, NSH(B)));
	TRY(alloc_in(m, &m->vln_r, 1, NSH(B)));
	TRY(alloc_in(m, &m->vproj, 0, NSH(B, E)));
	TRY(alloc_in(m, &m->vfeat, 0, NSH(B, E)));
	TRY(alloc_in(m, &m->vnorm, 1, NSH(B)));
	TRY(tower_scratch_alloc(&m->vs, alloc_in, m, B, Lv, Wv, c->vis_heads, c->mlp_ratio, E, 0));
	m->vs.act = c->act == MODEL_ACT_QUICKGELU ? KACT_QUICKGELU : KACT_GELU;

	if (m->vision_only) // classification fine-tuning: the text tower's parameters stay, unused
		return reserve(m, Lv, 1);
	TRY(alloc_in(m, &m->tx0, 0, NSH(B, Lt, Wt)));
	TRY(tower_acts(m, m->tacts, &m->tshared, c->txt_layers, B, Lt, Wt, c->txt_heads));
	TRY(alloc_i32(m, &m->eot, B));
	TRY(alloc_in(m, &m->tpool, 0, NSH(B, Wt)));
	TRY(alloc_in(m, &m->tln, 0, NSH(B, Wt)));
	TRY(alloc_in(m, &m->tln_m, 1, NSH(B)));
	TRY(alloc_in(m, &m->tln_r, 1, NSH(B)));
	TRY(alloc_in(m, &m->tproj, 0, NSH(B, E)));
	TRY(alloc_in(m, &m->tfeat, 0, NSH(B, E)));
	TRY(alloc_in(m, &m->tnorm, 1, NSH(B)));
	TRY(tower_scratch_alloc(&m->ts, alloc_in, m, B, Lt, Wt, c->txt_heads, c->mlp_ratio, E, 1));
	m->ts.act = m->vs.act;

	TRY(alloc_in(m, &m->loss, 1, NSH(1)));
	TRY(alloc_in(m, &m->dvfeat, 0, NSH(B, E)));
	TRY(alloc_in(m, &m->dtfeat, 0, NSH(B, E)));
	return reserve(m, Lv, Lt);
}

int clip_model_create(ClipModel **out, KernCtx *ctx, const ModelConfig *cfg, int batch, KDtype dt)
{
	return clip_model_create_opts(out, ctx, cfg, batch, dt, NULL);
}

int clip_model_bytes(KernCtx *ctx, const ModelConfig *cfg, int batch, KDtype dt, const ClipModelOpts *o,
		     ClipModelBytes *out)
{
	char msg[160];
	if (!out || batch <= 0 || model_config_check(cfg, msg, sizeof msg) || (dt != KDT_F32 && dt != KDT_BF16))
		return -EINVAL;
	ClipModel *m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	*out = (ClipModelBytes){0};
	*m = (ClipModel){.ctx = ctx,
			 .cfg = *cfg,
			 .dt = dt,
			 .pdt = KDT_F32,
			 .B = batch,
			 .count = out,
			 .grad_ckpt = o && o->grad_checkpoint,
			 .vision_only = o && o->vision_only};
	int rc = create(m);
	clip_model_destroy(m); // nothing was allocated: owned[] is empty
	return rc;
}

int clip_model_create_opts(ClipModel **out, KernCtx *ctx, const ModelConfig *cfg, int batch, KDtype dt,
			   const ClipModelOpts *o)
{
	char msg[160];
	if (batch <= 0 || model_config_check(cfg, msg, sizeof msg) ||
	    (dt != KDT_F32 && dt != KDT_BF16 && dt != KDT_F64))
		return -EINVAL;
	ClipModel *m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	m->ctx = ctx;
	m->cfg = *cfg;
	m->dt = dt;
	m->pdt = dt == KDT_F64 ? KDT_F64 : KDT_F32;
	m->B = batch;
	m->grad_ckpt = o && o->grad_checkpoint;
	m->vision_only = o && o->vision_only;
	int rc = create(m);
	if (!rc && m->vision_only) // the text tower's gradients stay zero: backward never writes them
		rc = kern_zero(ctx, &m->grads);
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
	model_drop_path_free(m);
	for (int i = m->n_owned - 1; i >= 0; i--)
		kern_free(m->ctx, m->owned[i]);
	model_weights_release(&m->w);
	model_weights_release(&m->g);
	free(m->specs);
	free(m->groups);
	free(m->vacts);
	free(m->tacts);
	free(m);
}

int clip_model_sync_weights(ClipModel *m)
{
	return m->dt == m->pdt ? 0 : kern_convert(m->ctx, &m->weights, &m->params);
}

// pooled (B, W) -> layernorm -> projection -> L2 normalize
static int head_forward(KernCtx *c, const KTensor *pooled, KTensor *ln, KTensor *lm, KTensor *lr, const KTensor *lnw,
			const KTensor *lnb, const KTensor *proj_w, KTensor *proj, KTensor *feat, KTensor *norm)
{
	TRY(kern_layernorm_fwd(c, ln, lm, lr, pooled, lnw, lnb));
	TRY(kern_linear(c, &(KLinear){.out = proj, .in = ln, .w = proj_w, .trans_w = 0}));
	TRY(kern_l2norm_fwd(c, feat, norm, proj));
	return 0;
}

// dfeat -> s->dhead2 = d(pooled)
static int head_backward(KernCtx *c, TowerScratch *s, const KTensor *dfeat, const KTensor *feat, const KTensor *norm,
			 const KTensor *ln, const KTensor *lm, const KTensor *lr, const KTensor *pooled,
			 const KTensor *lnw, KTensor *glnw, KTensor *glnb, const KTensor *proj_w, KTensor *gproj)
{
	TRY(kern_l2norm_bwd(c, KG_SET(&s->demb), dfeat, feat, norm));
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&s->dhead1),
					     .dw = KG_SET(gproj),
					     .dout = &s->demb,
					     .in = ln,
					     .w = proj_w,
					     .trans_w = 0}));
	TRY(kern_layernorm_bwd(c, KG_SET(&s->dhead2), KG_SET(glnw), KG_SET(glnb), &s->dhead1, pooled, lnw, lm, lr));
	return 0;
}

static int check_text(const ClipModel *m, const KTensor *text)
{
	return text && text->ndim == 2 && text->shape[0] == m->B && text->shape[1] == m->cfg.ctx_len;
}

// the video tower's pooled feature (MODEL_POOL_*): the class token, or the mean of the other tokens
static int vpool_fwd(ClipModel *m, const KTensor *x)
{
	return m->cfg.pool == MODEL_POOL_MEAN ? kern_token_mean_fwd(m->ctx, &m->vpool, x, 1)
					      : kern_pool_fwd(m->ctx, &m->vpool, x, &m->cls_pos);
}

int clip_model_forward(ClipModel *m, const KTensor *video, const KTensor *text)
{
	const ModelConfig *cf = &m->cfg;
	if (!video || video->ndim != 5 || video->shape[0] != m->B || video->shape[1] != cf->frames ||
	    video->shape[2] != cf->image_size || video->shape[3] != cf->image_size || video->shape[4] != 3)
		return -EINVAL;
	if (!check_text(m, text))
		return -EINVAL;
	if (cf->tubelet != 1)
		return -ENOTSUP;
	TRY(kern_patchify_fwd(m->ctx, &m->patches, video, cf->patch));
	return clip_model_forward_patches(m, &m->patches, text);
}

int clip_model_forward_patches(ClipModel *m, const KTensor *patches, const KTensor *text)
{
	KernCtx *c = m->ctx;
	const ModelConfig *cf = &m->cfg;
	if (m->vision_only || !patches || kern_numel(patches) != kern_numel(&m->patches) || patches->ndim != 3 ||
	    patches->shape[0] != m->B || !check_text(m, text))
		return -EINVAL;
	// video tower
	m->patch_in = *patches;
	m->patch_in.owned = 0;
	TRY(kern_linear(c, &(KLinear){.out = &m->pemb, .in = patches, .w = &m->w.conv, .trans_w = 1}));
	TRY(kern_vis_embed_fwd(c, &m->x0, &m->pemb, &m->w.cls, &m->w.pos, &m->w.tpos));
	TRY(kern_layernorm_fwd(c, &m->xpre, &m->pre_m, &m->pre_r, &m->x0, &m->w.ln_pre_w, &m->w.ln_pre_b));
	const KTensor *x = &m->xpre;
	for (int l = 0; l < cf->vis_layers; l++) {
		m->vs.drop = model_drop_path_block(m, l);
		TRY(block_forward(c, &m->w.vblk[l], &m->vacts[l], x, &m->vs));
		x = &m->vacts[l].res2;
	}
	m->vs.drop = NULL;
	TRY(vpool_fwd(m, x));
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

// reports the next gradient group as final (the hook sees them in backward order)
static int group_done(ClipModel *m, int *k)
{
	if (*k >= m->n_groups)
		return -EINVAL;
	int g = (*k)++;
	return m->hook ? m->hook(m->hook_arg, m->groups[g].offset, m->groups[g].length) : 0;
}

static int text_backward(ClipModel *m, const KTensor *dtfeat, int *k)
{
	KernCtx *c = m->ctx;
	TowerScratch *s = &m->ts;
	TRY(head_backward(c, s, dtfeat, &m->tfeat, &m->tnorm, &m->tln, &m->tln_m, &m->tln_r, &m->tpool,
			  &m->w.ln_final_w, &m->g.ln_final_w, &m->g.ln_final_b, &m->w.tproj, &m->g.tproj));
	TRY(group_done(m, k));
	TRY(kern_pool_bwd(c, KG_SET(&s->dres), &s->dhead2, &m->eot));
	for (int l = m->cfg.txt_layers - 1; l >= 0; l--) {
		const KTensor *x = l ? &m->tacts[l - 1].res2 : &m->tx0;
		if (m->grad_ckpt && l < m->cfg.txt_layers - 1)
			TRY(block_forward(c, &m->w.tblk[l], &m->tacts[l], x, s));
		TRY(block_backward(c, &m->w.tblk[l], &m->g.tblk[l], &m->tacts[l], x, s));
		TRY(group_done(m, k));
	}
	TRY(kern_tok_embed_bwd(c, KG_SET(&m->g.wte), KG_SET(&m->g.txt_pos), &s->dres, &m->text_ids));
	return group_done(m, k);
}

static int video_trunk_backward(ClipModel *m, int *k);

static int video_backward(ClipModel *m, const KTensor *dvfeat, int *k)
{
	KernCtx *c = m->ctx;
	TowerScratch *s = &m->vs;
	TRY(head_backward(c, s, dvfeat, &m->vfeat, &m->vnorm, &m->vln, &m->vln_m, &m->vln_r, &m->vpool, &m->w.ln_post_w,
			  &m->g.ln_post_w, &m->g.ln_post_b, &m->w.vproj, &m->g.vproj));
	TRY(group_done(m, k));
	return video_trunk_backward(m, k);
}

// s->dhead2 = d(pooled class token) -> the blocks, ln_pre, the embeddings and conv1
static int video_trunk_backward(ClipModel *m, int *k)
{
	KernCtx *c = m->ctx;
	TowerScratch *s = &m->vs;
	if (m->cfg.pool == MODEL_POOL_MEAN)
		TRY(kern_token_mean_bwd(c, KG_SET(&s->dres), &s->dhead2, 1));
	else
		TRY(kern_pool_bwd(c, KG_SET(&s->dres), &s->dhead2, &m->cls_pos));
	for (int l = m->cfg.vis_layers - 1; l >= 0; l--) {
		const KTensor *x = l ? &m->vacts[l - 1].res2 : &m->xpre;
		m->vs.drop = model_drop_path_block(m, l);      // the forward's scales, for a recompute and backward
		if (m->grad_ckpt && l < m->cfg.vis_layers - 1) // recompute: the shared buffers hold another block's
			TRY(block_forward(c, &m->w.vblk[l], &m->vacts[l], x, s));
		TRY(block_backward(c, &m->w.vblk[l], &m->g.vblk[l], &m->vacts[l], x, s));
		TRY(group_done(m, k));
	}
	m->vs.drop = NULL;
	m->dp_armed = 0; // one draw, one forward/backward pair
	TRY(kern_layernorm_bwd(c, KG_SET(&s->dln), KG_SET(&m->g.ln_pre_w), KG_SET(&m->g.ln_pre_b), &s->dres, &m->x0,
			       &m->w.ln_pre_w, &m->pre_m, &m->pre_r));
	KTensor dpemb; // (B, T*P, Wv) in the attention scratch
	TRY(kern_view(&dpemb, &s->datt, 0, 3, m->pemb.shape));
	TRY(kern_vis_embed_bwd(c, KG_SET(&dpemb), KG_SET(&m->g.cls), KG_SET(&m->g.pos), KG_SET(&m->g.tpos), &s->dln));
	TRY(kern_linear_bwd(
		c,
		&(KLinearBwd){
			.dw = KG_SET(&m->g.conv), .dout = &dpemb, .in = &m->patch_in, .w = &m->w.conv, .trans_w = 1}));
	return group_done(m, k);
}

int clip_model_backward(ClipModel *m, const KTensor *dvfeat, const KTensor *dtfeat)
{
	// the text tower first: the flat buffer holds [video | text | logit_scale], so backward
	// finishes it from the end down and every bucket of ready gradients is one contiguous range
	int k = 0;
	if (m->vision_only)
		return -EINVAL;
	TRY(group_done(m, &k)); // logit_scale: the loss wrote it before backward
	TRY(text_backward(m, dtfeat, &k));
	TRY(video_backward(m, dvfeat, &k));
	return k == m->n_groups ? 0 : -EINVAL;
}

void clip_model_set_grad_hook(ClipModel *m, ClipGradReadyFn fn, void *arg)
{
	m->hook = fn;
	m->hook_arg = arg;
}

int clip_model_infonce_step(ClipModel *m, const KTensor *video, const KTensor *text, double *loss)
{
	TRY(clip_model_forward(m, video, text));
	// the local batch as a one-rank gathered batch: dE is the full feature gradient
	KContrastBatch b = {
		.e1 = &m->vfeat, .e2 = &m->tfeat, .E1 = &m->vfeat, .E2 = &m->tfeat, .offset = 0, .log_s = &m->log_s};
	TRY(kern_infonce(m->ctx, &b, &m->loss, KG_SET(&m->dvfeat), KG_SET(&m->dtfeat), KG_SET(&m->g.logit_scale)));
	TRY(clip_model_backward(m, &m->dvfeat, &m->dtfeat));
	if (loss) {
		if (m->pdt == KDT_F32) {
			float f;
			TRY(kern_download(m->ctx, &f, sizeof f, &m->loss));
			*loss = f;
		} else {
			TRY(kern_download(m->ctx, loss, sizeof *loss, &m->loss));
		}
	}
	return 0;
}

int clip_model_forward_visual(ClipModel *m, const KTensor *patches)
{
	KernCtx *c = m->ctx;
	if (!patches || kern_numel(patches) != kern_numel(&m->patches) || patches->ndim != 3 ||
	    patches->shape[0] != m->B)
		return -EINVAL;
	m->patch_in = *patches;
	m->patch_in.owned = 0;
	TRY(kern_linear(c, &(KLinear){.out = &m->pemb, .in = patches, .w = &m->w.conv, .trans_w = 1}));
	TRY(kern_vis_embed_fwd(c, &m->x0, &m->pemb, &m->w.cls, &m->w.pos, &m->w.tpos));
	TRY(kern_layernorm_fwd(c, &m->xpre, &m->pre_m, &m->pre_r, &m->x0, &m->w.ln_pre_w, &m->w.ln_pre_b));
	const KTensor *x = &m->xpre;
	for (int l = 0; l < m->cfg.vis_layers; l++) {
		m->vs.drop = model_drop_path_block(m, l);
		TRY(block_forward(c, &m->w.vblk[l], &m->vacts[l], x, &m->vs));
		x = &m->vacts[l].res2;
	}
	m->vs.drop = NULL;
	TRY(vpool_fwd(m, x));
	return kern_layernorm_fwd(c, &m->vln, &m->vln_m, &m->vln_r, &m->vpool, &m->w.ln_post_w, &m->w.ln_post_b);
}

int clip_model_backward_visual(ClipModel *m, const KTensor *dvln)
{
	KernCtx *c = m->ctx;
	TowerScratch *s = &m->vs;
	int k = 0;
	// logit_scale, the text tower's head, blocks and embeddings: zero gradients, reported in order so
	// a bucketed all-reduce sees every range (visual.proj's, in the next group, is zero too)
	while (k < 3 + m->cfg.txt_layers)
		TRY(group_done(m, &k));
	TRY(kern_layernorm_bwd(c, KG_SET(&s->dhead2), KG_SET(&m->g.ln_post_w), KG_SET(&m->g.ln_post_b), dvln, &m->vpool,
			       &m->w.ln_post_w, &m->vln_m, &m->vln_r));
	TRY(group_done(m, &k));
	TRY(video_trunk_backward(m, &k));
	return k == m->n_groups ? 0 : -EINVAL;
}
