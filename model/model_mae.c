// The masked video autoencoder on the op interface (VideoMAE's pretraining): only op calls in the
// forward and backward, so every backend runs the same code; the masks are made on the host.
//
// Forward: tubelet patches of all N tokens -> the patch embedding and positions (all tokens, as
// VideoMAE embeds before it drops) -> gather the class token and the visible tokens -> ln_pre, the
// encoder's blocks, ln_post on every token -> decoder.embed -> the decoder's input (those tokens at
// their sinusoid positions, then a mask token per masked tubelet) -> the decoder's blocks -> its
// last Nm rows -> decoder.ln -> decoder.head = the masked tubelets' pixels -> MSE against the
// normalized-pixel target.
#include "model.h"       // defines: MaeModel, ...
#include "errbuf.h"      // defines: TRY
#include "model_block.h" // defines: block_acts_alloc, tower_scratch_alloc, block_forward, block_backward

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

static int alloc_dt(MaeModel *m, KTensor *t, KDtype dt, int ndim, const int64_t *shape)
{
	if (m->count) { // mae_model_bytes: every allocation after the parameters' is an activation
		*t = kern_tensor_make(NULL, dt, ndim, shape);
		m->count->activations += kern_nbytes(t);
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
	MaeModel *m = owner;
	return alloc_dt(m, t, stat ? m->pdt : m->dt, ndim, shape);
}

static int64_t offset_of(const MaeModel *m, const char *name)
{
	for (int i = 0; i < m->n_specs; i++)
		if (!strcmp(m->specs[i].name, name))
			return m->specs[i].offset;
	return -1;
}

// the decoder's views (name order of mae_layout)
static int bind_decoder(MaeModel *m, MaeDecoderWeights *d, const KTensor *flat)
{
	if (!(d->blk = calloc((size_t)m->mae.dec_layers, sizeof *d->blk)))
		return -ENOMEM;
	int i = 0;
	while (i < m->n_specs && strncmp(m->specs[i].name, "decoder.", 8))
		i++;
#define NEXT(t)                                                                                                        \
	do {                                                                                                           \
		if (i >= m->n_specs)                                                                                   \
			return -EINVAL;                                                                                \
		TRY(kern_view((t), flat, m->specs[i].offset, m->specs[i].ndim, m->specs[i].shape));                    \
		i++;                                                                                                   \
	} while (0)
	NEXT(&d->mask_token);
	NEXT(&d->embed);
	for (int l = 0; l < m->mae.dec_layers; l++) {
		BlockWeights *b = &d->blk[l];
		KTensor *f[] = {&b->ln1_w, &b->ln1_b, &b->qkv_w, &b->qkv_b, &b->out_w,  &b->out_b,
				&b->ln2_w, &b->ln2_b, &b->fc_w,  &b->fc_b,  &b->proj_w, &b->proj_b};
		for (int k = 0; k < 12; k++)
			NEXT(f[k]);
	}
	NEXT(&d->ln_w);
	NEXT(&d->ln_b);
	NEXT(&d->head_w);
	NEXT(&d->head_b);
#undef NEXT
	return i == m->n_specs ? 0 : -EINVAL;
}

static int create_params(MaeModel *m)
{
	mae_layout(&m->cfg, &m->mae, NULL, &m->n_specs, &m->n_params, &m->n_encoder);
	if (!(m->specs = calloc((size_t)m->n_specs, sizeof *m->specs)))
		return -ENOMEM;
	mae_layout(&m->cfg, &m->mae, m->specs, &m->n_specs, &m->n_params, &m->n_encoder);
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
	TRY(model_weights_bind_encoder(&m->w, &m->cfg, &m->weights));
	TRY(model_weights_bind_encoder(&m->g, &m->cfg, &m->grads));
	TRY(bind_decoder(m, &m->dw, &m->weights));
	return bind_decoder(m, &m->dg, &m->grads);
}

// [start, previous start) ranges in backward's order (see MaeModel.groups)
static int make_groups(MaeModel *m)
{
	const int Le = m->cfg.vis_layers, Ld = m->mae.dec_layers, cap = 4 + Le + Ld;
	if (!(m->groups = calloc((size_t)cap, sizeof *m->groups)))
		return -ENOMEM;
	int64_t *starts = calloc((size_t)cap, sizeof *starts);
	if (!starts)
		return -ENOMEM;
	char name[96];
	int n = 0;
	starts[n++] = offset_of(m, "decoder.ln.weight");
	for (int l = Ld - 1; l >= 0; l--) {
		snprintf(name, sizeof name, "decoder.transformer.resblocks.%d.ln_1.weight", l);
		starts[n++] = offset_of(m, name);
	}
	starts[n++] = offset_of(m, "decoder.mask_token");
	starts[n++] = offset_of(m, "visual.ln_post.weight");
	for (int l = Le - 1; l >= 0; l--) {
		snprintf(name, sizeof name, "visual.transformer.resblocks.%d.ln_1.weight", l);
		starts[n++] = offset_of(m, name);
	}
	starts[n++] = 0; // the stem: class and position embeddings, conv1, ln_pre
	int64_t end = m->n_params;
	int rc = 0;
	for (int k = 0; k < n && !rc; k++) {
		if (starts[k] < 0 || starts[k] >= end)
			rc = -EINVAL;
		m->groups[k] = (ClipGradGroup){.offset = starts[k], .length = end - starts[k]};
		end = starts[k];
	}
	free(starts);
	m->n_groups = n;
	return rc;
}

// every block's activations, or one shared set and each block's output (--grad-checkpoint)
static int tower_acts(MaeModel *m, BlockActs *acts, BlockActs *shared, int layers, int L, int W, int H)
{
	for (int l = 0; l < layers; l++) {
		if (!m->grad_ckpt) {
			TRY(block_acts_alloc(&acts[l], alloc_in, m, m->B, L, W, H, m->cfg.mlp_ratio));
			continue;
		}
		if (l == 0)
			TRY(block_acts_alloc(shared, alloc_in, m, m->B, L, W, H, m->cfg.mlp_ratio));
		acts[l] = *shared;
		if (l < layers - 1)
			TRY(alloc_in(m, &acts[l].res2, 0, NSH(m->B, L, W)));
	}
	return 0;
}

// the constant tensors: the decoder's positions and the mask tokens' rows
static int constants(MaeModel *m)
{
	const MaeTokens *t = &m->tok;
	const int Dd = m->mae.dec_width, B = m->B;
	float *pos = calloc((size_t)(1 + t->N) * Dd, sizeof *pos);
	int32_t *tail = malloc(sizeof *tail * (size_t)B * t->Nm);
	int rc = pos && tail ? kern_mae_sinusoid_table(pos + Dd, t->N, Dd) : -ENOMEM;
	for (int64_t i = 0; !rc && i < (int64_t)B * t->Nm; i++)
		tail[i] = 1 + t->Nv + (int32_t)(i % t->Nm);
	KTensor p32;
	const int64_t np = (int64_t)(1 + t->N) * Dd;
	if (!rc && !(rc = kern_alloc(m->ctx, &p32, KDT_F32, 1, &np))) {
		rc = kern_upload(m->ctx, &p32, pos, sizeof *pos * (size_t)np);
		KTensor flat;
		if (!rc && !(rc = kern_view(&flat, &m->dec_pos, 0, 1, &np)))
			rc = kern_convert(m->ctx, &flat, &p32);
		kern_free(m->ctx, &p32);
	}
	if (!rc)
		rc = kern_upload(m->ctx, &m->tail, tail, kern_nbytes(&m->tail));
	free(pos);
	free(tail);
	return rc;
}

// the op workspace: both towers' attention and the linear layers
static int reserve(MaeModel *m)
{
	const ModelConfig *c = &m->cfg;
	size_t need = kern_linear_ws_bytes(m->ctx), a;
	a = kern_attention_ws_bytes(m->ctx, m->dt, m->B, 1 + m->tok.Nv, c->vis_heads, c->vis_width / c->vis_heads);
	need = a > need ? a : need;
	a = kern_attention_ws_bytes(m->ctx, m->dt, m->B, 1 + m->tok.N, m->mae.dec_heads,
				    m->mae.dec_width / m->mae.dec_heads);
	need = a > need ? a : need;
	if (m->count) {
		m->count->workspace = need;
		return 0;
	}
	return kern_ctx_reserve_workspace(m->ctx, need);
}

static int create(MaeModel *m)
{
	const ModelConfig *c = &m->cfg;
	const MaeTokens *t = &m->tok;
	const int B = m->B, Wv = c->vis_width, Dd = m->mae.dec_width, N = t->N, Nm = t->Nm, Le = 1 + t->Nv, Ld = 1 + N,
		  K3 = m->K3;
	TRY(create_params(m));
	if (!m->count)
		TRY(make_groups(m));
	if (!(m->eacts = calloc((size_t)c->vis_layers, sizeof *m->eacts)) ||
	    !(m->dacts = calloc((size_t)m->mae.dec_layers, sizeof *m->dacts)))
		return -ENOMEM;
	TRY(alloc_dt(m, &m->idx, KDT_I32, NSH((int64_t)B * (Le + 2 * Nm))));
	TRY(alloc_dt(m, &m->tail, KDT_I32, NSH(B, Nm)));
	TRY(alloc_in(m, &m->dec_pos, 0, NSH(Ld, Dd)));
	TRY(alloc_in(m, &m->patches, 0, NSH(B, N, K3)));
	TRY(alloc_in(m, &m->pemb, 0, NSH(B, N, Wv)));
	TRY(alloc_in(m, &m->x0, 0, NSH(B, 1 + N, Wv)));
	TRY(alloc_in(m, &m->xv, 0, NSH(B, Le, Wv)));
	TRY(alloc_in(m, &m->xpre, 0, NSH(B, Le, Wv)));
	TRY(alloc_in(m, &m->pre_m, 1, NSH((int64_t)B * Le)));
	TRY(alloc_in(m, &m->pre_r, 1, NSH((int64_t)B * Le)));
	TRY(tower_acts(m, m->eacts, &m->eshared, c->vis_layers, Le, Wv, c->vis_heads));
	TRY(alloc_in(m, &m->enc, 0, NSH(B, Le, Wv)));
	TRY(alloc_in(m, &m->post_m, 1, NSH((int64_t)B * Le)));
	TRY(alloc_in(m, &m->post_r, 1, NSH((int64_t)B * Le)));
	TRY(tower_scratch_alloc(&m->es, alloc_in, m, B, Le, Wv, c->vis_heads, c->mlp_ratio, 1, 0));
	TRY(alloc_in(m, &m->e2d, 0, NSH(B, Le, Dd)));
	TRY(alloc_in(m, &m->de2d, 0, NSH(B, Le, Dd)));
	TRY(alloc_in(m, &m->din, 0, NSH(B, Ld, Dd)));
	TRY(tower_acts(m, m->dacts, &m->dshared, m->mae.dec_layers, Ld, Dd, m->mae.dec_heads));
	TRY(alloc_in(m, &m->dtail, 0, NSH(B, Nm, Dd)));
	TRY(alloc_in(m, &m->dln, 0, NSH(B, Nm, Dd)));
	TRY(alloc_in(m, &m->dln_m, 1, NSH((int64_t)B * Nm)));
	TRY(alloc_in(m, &m->dln_r, 1, NSH((int64_t)B * Nm)));
	TRY(alloc_in(m, &m->pred, 0, NSH(B, Nm, K3)));
	TRY(alloc_in(m, &m->dpred, 0, NSH(B, Nm, K3)));
	TRY(alloc_in(m, &m->ddln, 0, NSH(B, Nm, Dd)));
	TRY(alloc_in(m, &m->ddtail, 0, NSH(B, Nm, Dd)));
	TRY(alloc_in(m, &m->target, 1, NSH(B, Nm, K3)));
	if (m->pdt != KDT_F32)
		TRY(alloc_dt(m, &m->target32, KDT_F32, NSH(B, Nm, K3)));
	TRY(alloc_in(m, &m->loss, 1, NSH(1)));
	TRY(tower_scratch_alloc(&m->ds, alloc_in, m, B, Ld, Dd, m->mae.dec_heads, c->mlp_ratio, 1, 0));
	m->es.act = m->ds.act = c->act == MODEL_ACT_QUICKGELU ? KACT_QUICKGELU : KACT_GELU;
	if (!m->count) {
		TRY(kern_view(&m->enc_idx, &m->idx, 0, NSH(B, Le)));
		TRY(kern_view(&m->dec_idx, &m->idx, (int64_t)B * Le, NSH(B, Nm)));
		TRY(kern_view(&m->mask_idx, &m->idx, (int64_t)B * (Le + Nm), NSH(B, Nm)));
		TRY(kern_host_alloc(m->ctx, (void **)&m->host_idx, kern_nbytes(&m->idx)));
		TRY(kern_event_create(m->ctx, &m->idx_up));
		TRY(constants(m));
	}
	return reserve(m);
}

static int setup(MaeModel *m, KernCtx *ctx, const ModelConfig *cfg, const MaeConfig *mae, int batch, KDtype dt,
		 const ClipModelOpts *o)
{
	char msg[200];
	if (batch <= 0 || model_config_check(cfg, msg, sizeof msg) || mae_config_check(cfg, mae, msg, sizeof msg) ||
	    (dt != KDT_F32 && dt != KDT_BF16 && dt != KDT_F64) || (o && o->vision_only))
		return -EINVAL;
	m->ctx = ctx;
	m->cfg = *cfg;
	m->mae = *mae;
	m->dt = dt;
	m->pdt = dt == KDT_F64 ? KDT_F64 : KDT_F32;
	m->B = batch;
	m->K3 = 3 * cfg->tubelet * cfg->patch * cfg->patch;
	m->grad_ckpt = o && o->grad_checkpoint;
	return mae_tokens(cfg, mae, &m->tok);
}

int mae_model_create(MaeModel **out, KernCtx *ctx, const ModelConfig *cfg, const MaeConfig *mae, int batch, KDtype dt,
		     const ClipModelOpts *o)
{
	MaeModel *m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	int rc = setup(m, ctx, cfg, mae, batch, dt, o);
	if (!rc)
		rc = create(m);
	if (rc) {
		mae_model_destroy(m);
		return rc;
	}
	*out = m;
	return 0;
}

int mae_model_bytes(KernCtx *ctx, const ModelConfig *cfg, const MaeConfig *mae, int batch, KDtype dt,
		    const ClipModelOpts *o, ClipModelBytes *out)
{
	if (!out || dt == KDT_F64)
		return -EINVAL;
	MaeModel *m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	*out = (ClipModelBytes){0};
	m->count = out;
	int rc = setup(m, ctx, cfg, mae, batch, dt, o);
	if (!rc)
		rc = create(m);
	mae_model_destroy(m); // nothing was allocated: owned[] is empty
	return rc;
}

void mae_model_destroy(MaeModel *m)
{
	if (!m)
		return;
	for (int i = m->n_owned - 1; i >= 0; i--)
		kern_free(m->ctx, m->owned[i]);
	if (m->host_idx)
		kern_host_free(m->ctx, m->host_idx);
	kern_event_destroy(m->idx_up);
	model_weights_release(&m->w);
	model_weights_release(&m->g);
	free(m->dw.blk);
	free(m->dg.blk);
	free(m->specs);
	free(m->groups);
	free(m->eacts);
	free(m->dacts);
	free(m);
}

int mae_model_sync_weights(MaeModel *m)
{
	return m->dt == m->pdt ? 0 : kern_convert(m->ctx, &m->weights, &m->params);
}

void mae_model_set_grad_hook(MaeModel *m, ClipGradReadyFn fn, void *arg)
{
	m->hook = fn;
	m->hook_arg = arg;
}

// host_idx's encoder and decoder rows from its masked rows (already in place), then the upload
static int masks_upload(MaeModel *m)
{
	const MaeTokens *t = &m->tok;
	const int Le = 1 + t->Nv;
	int32_t *enc = m->host_idx, *dec = enc + (size_t)m->B * Le, *msk = dec + (size_t)m->B * t->Nm;
	for (int b = 0; b < m->B; b++) {
		const int32_t *mr = msk + (size_t)b * t->Nm;
		int32_t *er = enc + (size_t)b * Le;
		int v = 0, j = 0;
		er[v++] = 0; // the class token
		for (int n = 0; n < t->N; n++) {
			if (j < t->Nm && mr[j] == n)
				dec[(size_t)b * t->Nm + j++] = 1 + n;
			else if (v < Le)
				er[v++] = 1 + n;
		}
	}
	TRY(kern_upload_async(m->ctx, &m->idx, m->host_idx, kern_nbytes(&m->idx)));
	return kern_event_record(m->idx_up, m->ctx);
}

// waits until host_idx may be written (the last upload from it has run)
static int masks_writable(MaeModel *m)
{
	int q = kern_event_query(m->idx_up);
	return q == 1 ? 0 : q < 0 ? q : kern_event_sync(m->idx_up);
}

int mae_model_set_masks(MaeModel *m, const int64_t *g, uint64_t seed)
{
	const MaeTokens *t = &m->tok;
	TRY(masks_writable(m));
	int32_t *msk = m->host_idx + (size_t)m->B * (1 + t->Nv + t->Nm),
		*vis = malloc(sizeof *vis * (size_t)m->B * t->Nv);
	if (!vis)
		return -ENOMEM;
	int nm = kern_mae_tube_mask_batch(seed, g, m->B, t->Ns, t->Tp, m->mae.mask_ratio, vis, msk);
	free(vis);
	if (nm != t->Nm)
		return nm < 0 ? nm : -EINVAL;
	return masks_upload(m);
}

int mae_model_set_mask_rows(MaeModel *m, const int32_t *masked)
{
	const MaeTokens *t = &m->tok;
	for (int b = 0; b < m->B; b++)
		for (int j = 0; j < t->Nm; j++) {
			int32_t v = masked[(size_t)b * t->Nm + j];
			if (v < 0 || v >= t->N || (j && v <= masked[(size_t)b * t->Nm + j - 1]))
				return -EINVAL;
		}
	TRY(masks_writable(m));
	memcpy(m->host_idx + (size_t)m->B * (1 + t->Nv + t->Nm), masked, sizeof *masked * (size_t)m->B * t->Nm);
	return masks_upload(m);
}

static int encoder_forward(MaeModel *m, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip)
{
	KernCtx *c = m->ctx;
	const ModelConfig *cf = &m->cfg;
	TRY(kern_augment_tubelet(c, &m->patches, clips, pos, seed, flip, cf->patch, cf->tubelet));
	TRY(kern_linear(c, &(KLinear){.out = &m->pemb, .in = &m->patches, .w = &m->w.conv, .trans_w = 1}));
	TRY(kern_vis_embed_fwd(c, &m->x0, &m->pemb, &m->w.cls, &m->w.pos, &m->w.tpos));
	TRY(kern_token_gather_fwd(c, &m->xv, &m->x0, &m->enc_idx));
	TRY(kern_layernorm_fwd(c, &m->xpre, &m->pre_m, &m->pre_r, &m->xv, &m->w.ln_pre_w, &m->w.ln_pre_b));
	const KTensor *x = &m->xpre;
	for (int l = 0; l < cf->vis_layers; l++) {
		TRY(block_forward(c, &m->w.vblk[l], &m->eacts[l], x, &m->es));
		x = &m->eacts[l].res2;
	}
	return kern_layernorm_fwd(c, &m->enc, &m->post_m, &m->post_r, x, &m->w.ln_post_w, &m->w.ln_post_b);
}

int mae_model_forward(MaeModel *m, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip, double scale)
{
	KernCtx *c = m->ctx;
	const ModelConfig *cf = &m->cfg;
	if (!clips || clips->ndim != 5 || clips->shape[0] != m->B || clips->shape[1] != cf->frames ||
	    clips->shape[2] != cf->image_size || clips->shape[3] != cf->image_size)
		return -EINVAL;
	TRY(encoder_forward(m, clips, pos, seed, flip));
	TRY(kern_linear(c, &(KLinear){.out = &m->e2d, .in = &m->enc, .w = &m->dw.embed, .trans_w = 1}));
	TRY(kern_mae_decoder_input_fwd(c, &m->din, &m->e2d, &m->dw.mask_token, &m->dec_pos, &m->enc_idx, &m->dec_idx));
	const KTensor *x = &m->din;
	for (int l = 0; l < m->mae.dec_layers; l++) {
		TRY(block_forward(c, &m->dw.blk[l], &m->dacts[l], x, &m->ds));
		x = &m->dacts[l].res2;
	}
	TRY(kern_token_gather_fwd(c, &m->dtail, x, &m->tail));
	TRY(kern_layernorm_fwd(c, &m->dln, &m->dln_m, &m->dln_r, &m->dtail, &m->dw.ln_w, &m->dw.ln_b));
	TRY(kern_linear(
		c,
		&(KLinear){.out = &m->pred, .in = &m->dln, .w = &m->dw.head_w, .trans_w = 1, .bias = &m->dw.head_b}));
	KTensor *t32 = m->pdt == KDT_F32 ? &m->target : &m->target32;
	TRY(kern_mae_target(c, t32, clips, pos, &m->mask_idx, seed, flip, cf->patch, cf->tubelet));
	if (t32 != &m->target)
		TRY(kern_convert(c, &m->target, t32));
	return kern_mae_mse(c, &m->loss, KG_SET(&m->dpred), &m->pred, &m->target, scale);
}

static int group_done(MaeModel *m, int *k)
{
	if (*k >= m->n_groups)
		return -EINVAL;
	int g = (*k)++;
	return m->hook ? m->hook(m->hook_arg, m->groups[g].offset, m->groups[g].length) : 0;
}

// blocks last to first; s->dres holds d(last output) on entry and d(x0) on exit
static int blocks_backward(MaeModel *m, const BlockWeights *w, BlockWeights *g, BlockActs *acts, int layers,
			   const KTensor *x0, TowerScratch *s, int *k)
{
	for (int l = layers - 1; l >= 0; l--) {
		const KTensor *x = l ? &acts[l - 1].res2 : x0;
		if (m->grad_ckpt && l < layers - 1) // recompute: the shared buffers hold another block's
			TRY(block_forward(m->ctx, &w[l], &acts[l], x, s));
		TRY(block_backward(m->ctx, &w[l], &g[l], &acts[l], x, s));
		TRY(group_done(m, k));
	}
	return 0;
}

static int decoder_backward(MaeModel *m, int *k)
{
	KernCtx *c = m->ctx;
	const int L = m->mae.dec_layers;
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&m->ddln),
					     .dw = KG_SET(&m->dg.head_w),
					     .dbias = KG_SET(&m->dg.head_b),
					     .dout = &m->dpred,
					     .in = &m->dln,
					     .w = &m->dw.head_w,
					     .trans_w = 1}));
	TRY(kern_layernorm_bwd(c, KG_SET(&m->ddtail), KG_SET(&m->dg.ln_w), KG_SET(&m->dg.ln_b), &m->ddln, &m->dtail,
			       &m->dw.ln_w, &m->dln_m, &m->dln_r));
	TRY(group_done(m, k));
	TRY(kern_token_gather_bwd(c, KG_SET(&m->ds.dres), &m->ddtail, &m->tail));
	TRY(blocks_backward(m, m->dw.blk, m->dg.blk, m->dacts, L, &m->din, &m->ds, k));
	TRY(kern_mae_decoder_input_bwd(c, KG_SET(&m->de2d), KG_SET(&m->dg.mask_token), KG_NONE, &m->ds.dres,
				       &m->enc_idx, &m->dec_idx));
	// d(enc) into the encoder's scratch dln, (B, Le, Wv) like enc
	TRY(kern_linear_bwd(c, &(KLinearBwd){.din = KG_SET(&m->es.dln),
					     .dw = KG_SET(&m->dg.embed),
					     .dout = &m->de2d,
					     .in = &m->enc,
					     .w = &m->dw.embed,
					     .trans_w = 1}));
	return group_done(m, k);
}

static int encoder_backward(MaeModel *m, int *k)
{
	KernCtx *c = m->ctx;
	TowerScratch *s = &m->es;
	const int L = m->cfg.vis_layers;
	TRY(kern_layernorm_bwd(c, KG_SET(&s->dres), KG_SET(&m->g.ln_post_w), KG_SET(&m->g.ln_post_b), &s->dln,
			       &m->eacts[L - 1].res2, &m->w.ln_post_w, &m->post_m, &m->post_r));
	TRY(group_done(m, k));
	TRY(blocks_backward(m, m->w.vblk, m->g.vblk, m->eacts, L, &m->xpre, s, k));
	TRY(kern_layernorm_bwd(c, KG_SET(&s->dln), KG_SET(&m->g.ln_pre_w), KG_SET(&m->g.ln_pre_b), &s->dres, &m->xv,
			       &m->w.ln_pre_w, &m->pre_m, &m->pre_r));
	// the stem's gradients in the buffers of its forward, which backward no longer reads: d(x0) in
	// x0, d(patch embedding) in pemb (conv1's gradient reads only the patches)
	TRY(kern_token_gather_bwd(c, KG_SET(&m->x0), &s->dln, &m->enc_idx));
	TRY(kern_vis_embed_bwd(c, KG_SET(&m->pemb), KG_SET(&m->g.cls), KG_SET(&m->g.pos), KG_SET(&m->g.tpos), &m->x0));
	TRY(kern_linear_bwd(
		c,
		&(KLinearBwd){
			.dw = KG_SET(&m->g.conv), .dout = &m->pemb, .in = &m->patches, .w = &m->w.conv, .trans_w = 1}));
	return group_done(m, k);
}

int mae_model_backward(MaeModel *m)
{
	int k = 0;
	TRY(decoder_backward(m, &k));
	TRY(encoder_backward(m, &k));
	return k == m->n_groups ? 0 : -EINVAL;
}
