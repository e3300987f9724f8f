// The dual encoder: a video ViT (joint space-time attention, class token, pre-LN) and a CLIP
// text transformer (causal, end-token pooling), both projected to a shared L2-normalized space.
#ifndef MODEL_CLIP_H
#define MODEL_CLIP_H
// defines: ClipModel, ClipGradGroup, ClipGradReadyFn, clip_model_create, clip_model_destroy,
//          clip_model_sync_weights, clip_model_forward, clip_model_forward_patches, clip_model_backward,
//          clip_model_set_grad_hook, clip_model_infonce_step

#include "kern_ops.h"     // defines: KernCtx, KTensor
#include "model_block.h"  // defines: BlockActs, TowerScratch
#include "model_config.h" // defines: ModelConfig
#include "model_params.h" // defines: ParamSpec, ModelWeights

#define MODEL_MAX_TENSORS 1024

// a contiguous range of the flat gradient buffer (elements) whose gradients backward finishes together
typedef struct {
	int64_t offset, length;
} ClipGradGroup;

// called by clip_model_backward as soon as a group's gradient ops are queued (a device backend
// has not run them yet: record an event on the model's stream to know when they are done);
// a negative return stops backward and is returned by it
typedef int (*ClipGradReadyFn)(void *arg, int64_t offset, int64_t length);

typedef struct {
	KernCtx *ctx;
	ModelConfig cfg;
	KDtype dt;  // activations and the weights the ops read: f32 or bf16 (f64 for gradient checks)
	KDtype pdt; // master parameters, gradients and statistics: f32 (f64 with f64 activations)
	int B;      // batch the activations are sized for

	ParamSpec *specs; // n_specs tensors, open_clip names, offsets into params/grads
	int n_specs;
	int64_t n_params;
	KTensor params, grads; // flat (n_params) pdt: the master weights and their gradients
	KTensor weights;       // flat (n_params) dt: a bf16 copy of params, or params itself
	ModelWeights w, g;     // views of every tensor into weights / grads
	KTensor log_s;         // (1) pdt: logit_scale in params, the loss ops' temperature
	ClipGradGroup *groups; // n_groups, in the order backward finishes them: logit_scale (the loss's),
	int n_groups;          // the text head, text blocks last to first, the text embeddings, then the
	                       // same for the video tower; adjacent and descending, together all of grads
	ClipGradReadyFn hook;
	void *hook_arg;

	// video tower: Lv = 1 + T*P tokens
	KTensor patches, pemb;       // (B, T*P, 3*p*p) from video, (B, T*P, Wv)
	KTensor patch_in;            // view of the patches the last forward read, for backward
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
	KTensor loss, dvfeat, dtfeat; // (1) pdt, (B, E) x2

	KTensor *owned[MODEL_MAX_TENSORS];
	int n_owned;
} ClipModel;

// dt: the activation dtype (f32, bf16 or f64). Parameters are zero until
// model_init_params(ctx, &cfg, &m->params, seed) or a weight load, then clip_model_sync_weights.
// Reserves the op workspace the model needs on ctx.
int clip_model_create(ClipModel **out, KernCtx *ctx, const ModelConfig *cfg, int batch, KDtype dt);
void clip_model_destroy(ClipModel *m);
// refreshes m->weights from m->params after they changed (a no-op unless dt is bf16)
int clip_model_sync_weights(ClipModel *m);
// video (B, T, H, W, 3) normalized pixels, text (B, ctx) i32 ids -> m->vfeat, m->tfeat
int clip_model_forward(ClipModel *m, const KTensor *video, const KTensor *text);
// the same from patches (B, T*P, 3*p*p) as kern_augment writes them (kept for backward)
int clip_model_forward_patches(ClipModel *m, const KTensor *patches, const KTensor *text);
// gradients of both feature sets (B, E) from any loss: every parameter gradient but logit_scale's
// is written (not added) into m->grads, so nothing needs clearing; the loss writes logit_scale's
// before. The hook (if set) hears of each group of m->groups as it is done, logit_scale first.
int clip_model_backward(ClipModel *m, const KTensor *dvfeat, const KTensor *dtfeat);
void clip_model_set_grad_hook(ClipModel *m, ClipGradReadyFn fn, void *arg);
// forward, symmetric InfoNCE on the local batch (incl. the logit scale), backward;
// *loss (may be NULL) gets the loss value
int clip_model_infonce_step(ClipModel *m, const KTensor *video, const KTensor *text, double *loss);

#endif
