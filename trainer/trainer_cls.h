// Classification fine-tuning (--objective classify, issue 28 §1): dropout and the linear heads over
// the video tower's pooled feature, Mixup/CutMix of the augmented batch, timm's soft-target
// cross-entropy per head and a train top-1, the heads' own parameters and AdamW state.
#ifndef TRAINER_CLS_H
#define TRAINER_CLS_H
// defines: ClsConfig, ClsHeads, CLS_MAX_HEADS, cls_heads_create, cls_heads_destroy, cls_heads_init,
//          cls_heads_mix, cls_heads_forward, cls_heads_backward, cls_heads_update, cls_step_update

#include <stdint.h> // defines: int32_t, int64_t, uint64_t

#include "comm.h"     // defines: Comm
#include "kern_ops.h" // defines: KernCtx, KTensor, KDtype, KDropout
#include "model.h"    // defines: ParamSpec, Optimizer, OptConfig, ClipModel

#define CLS_MAX_HEADS 2

typedef struct {
	int n_heads;                // label heads of the manifest (1 or 2)
	int classes[CLS_MAX_HEADS]; // K per head
	double mixup, cutmix;       // Beta α of mixup and cutmix (0: off)
	double smoothing;           // label smoothing ε
	double dropout;             // dropout before the heads (AVION's --dropout-rate 0.5; 0: none)
	// drop path of the video tower's blocks: the rate (AVION 0.1), linear in depth (timm) or uniform
	double drop_path;
	int drop_path_linear;
} ClsConfig;

typedef struct {
	KernCtx *ctx;
	ClsConfig cfg;
	int B, W;                           // batch, the feature's width (vis_width)
	ParamSpec specs[2 * CLS_MAX_HEADS]; // head.<h>.weight (K, W), head.<h>.bias (K)
	int n_specs;
	int64_t n_params;
	KTensor params, grads;                      // flat (n_params) f32
	KTensor w[CLS_MAX_HEADS], b[CLS_MAX_HEADS]; // views of params
	KTensor gw[CLS_MAX_HEADS], gb[CLS_MAX_HEADS];
	Optimizer *opt;                                        // AdamW (the run's settings) over params
	KTensor logits[CLS_MAX_HEADS], dlogits[CLS_MAX_HEADS]; // (B, K) f32
	KTensor hin;                                           // (B, W) f32: dropout(feature), the heads' input
	KTensor dfeat;                                         // (B, W) f32
	KDropout drop;                                         // the rate and seed of the last forward
	const KTensor *pos;                                    // its rows' stream positions (the masks' keys)
	KTensor ab[CLS_MAX_HEADS][2];                          // (B) i32: the labels a and partners b
	KTensor ab_all;                                        // (2·heads·B) i32, what ab views
	int32_t *host_ab;                                      // (2·heads·B)
	float *host_logits;                                    // (B·max K)
	double lam;                                            // the targets' lam of the last mix
} ClsHeads;

// dt: the tower's activations (f32 or bf16; the heads compute in f32 from the dropout's f32 copy of
// the feature); opt: the run's optimizer settings (the clip factor comes from the step's joint norm)
int cls_heads_create(ClsHeads **out, KernCtx *ctx, const ClsConfig *c, const OptConfig *opt, int B, int W, KDtype dt);
void cls_heads_destroy(ClsHeads *h);
// weights N(0, 0.02²) from a counter RNG keyed by (seed, head), biases 0 (timm's head init)
int cls_heads_init(ClsHeads *h, uint64_t seed);
// Mixup/CutMix of step `step` (kern_mixup_draw keyed by seed) in place on patches (B, T·P, 3·p·p)
int cls_heads_mix(ClsHeads *h, KTensor *patches, uint64_t seed, uint64_t step, int image_size, int patch);
// dropout of feat (B, W) into hin (kern_dropout keyed by seed and the rows' stream positions pos
// (B) I64, which must stay until the backward), the heads over it, soft-target CE per head against
// labels (B, RING_LABELS) host: loss[h] and top1[h] (f32 (1) views, top-1 on the unmixed labels a)
// written; dlogits kept for the step
int cls_heads_forward(ClsHeads *h, const KTensor *feat, const KTensor *pos, uint64_t seed, const int32_t *labels,
		      KTensor *loss, KTensor *top1);
// the heads' gradients and d(feat) into h->dfeat (through the same dropout mask)
int cls_heads_backward(ClsHeads *h);
// the heads' AdamW update with the clip factor in norm_clip (2) (the step's joint norm)
int cls_heads_update(ClsHeads *h, const KTensor *norm_clip);
// The update of a classify step: the heads' gradients averaged over comm's ranks (the tower's were
// by the step's buckets), one gradient norm over the tower's (tower's plan: the frozen tensors left
// out) and the heads', clipped at clip_norm (0: off), and both AdamW updates with that one factor;
// tower->norm_clip holds the joint [norm, factor] afterwards. copy: the tower's bf16 weights or NULL.
int cls_step_update(ClsHeads *h, Comm *comm, Optimizer *tower, KTensor *params, KTensor *copy, const KTensor *grads,
		    double clip_norm);

#endif
