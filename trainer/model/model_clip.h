// The dual encoder: a video ViT (joint space-time attention, class token, pre-LN) and a CLIP
// text transformer (causal, end-token pooling), both projected to a shared L2-normalized space.
#ifndef MODEL_CLIP_H
#define MODEL_CLIP_H
// defines: ClipModel, clip_model_create, clip_model_destroy, clip_model_forward, clip_model_backward,
//          clip_model_zero_grad, clip_model_infonce_step

#include "kern_ops.h"     // defines: KernCtx, KTensor
#include "model_block.h"  // defines: BlockActs, TowerScratch
#include "model_config.h" // defines: ModelConfig
#include "model_params.h" // defines: ParamSpec, ModelWeights

#define MODEL_MAX_TENSORS 1024

typedef struct {
	KernCtx *ctx;
	ModelConfig cfg;
	KDtype dt; // f32 for training; f64 for gradient checks
	int B;     // batch the activations are sized for

	ParamSpec *specs; // n_specs tensors, open_clip names, offsets into params/grads
	int n_specs;
	int64_t n_params;
	KTensor params, grads; // flat (n_params)
	ModelWeights w, g;     // views of every tensor into params / grads

	// video tower: Lv = 1 + T*P tokens
	KTensor patches, pemb;       // (B, T*P, 3*p*p), (B, T*P, Wv)
	KTensor x0, xpre, pre_m, pre_r; // (B, Lv, Wv) embedded and after ln_pre, (B*Lv) x2
	BlockActs *vacts;
	KTensor cls_pos;             // (B) i32 zeros: class-token pooling
	KTensor vpool, vln, vln_m, vln_r, vproj; // (B, Wv) x2, (B) x2, (B, E)
	KTensor vfeat, vnorm;        // (B, E) L2-normalized video features, (B)
	TowerScratch vs;

	// text tower: ctx_len tokens
	KTensor tx0;                 // (B, ctx, Wt)
	BlockActs *tacts;
	KTensor eot;                 // (B) i32 end-token positions
	KTensor tpool, tln, tln_m, tln_r, tproj, tfeat, tnorm;
	TowerScratch ts;
	KTensor text_ids;            // view of the last forward's ids, for backward

	// local InfoNCE
	KTensor loss, dvfeat, dtfeat, loss_ws; // (1), (B, E) x2

	KTensor *owned[MODEL_MAX_TENSORS];
	int n_owned;
} ClipModel;

// parameters zero until model_init_params(ctx, &cfg, &m->params, seed) or a weight load
int clip_model_create(ClipModel **out, KernCtx *ctx, const ModelConfig *cfg, int batch, KDtype dt);
void clip_model_destroy(ClipModel *m);
// video (B, T, H, W, 3) normalized pixels, text (B, ctx) i32 ids -> m->vfeat, m->tfeat
int clip_model_forward(ClipModel *m, const KTensor *video, const KTensor *text);
// gradients of both feature sets (B, E) from any loss; parameter gradients accumulate in m->grads
int clip_model_backward(ClipModel *m, const KTensor *dvfeat, const KTensor *dtfeat);
int clip_model_zero_grad(ClipModel *m);
// zero grads, forward, symmetric InfoNCE on the local batch (incl. the logit scale), backward;
// *loss (may be NULL) gets the loss value
int clip_model_infonce_step(ClipModel *m, const KTensor *video, const KTensor *text, double *loss);

#endif
