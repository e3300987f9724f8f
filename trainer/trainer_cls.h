// Classification fine-tuning (--objective classify, issue 28 §1): the linear heads over the video
// tower's pooled feature, Mixup/CutMix of the augmented batch, timm's soft-target cross-entropy per
// head and a train top-1, the heads' own parameters and AdamW state.
#ifndef TRAINER_CLS_H
#define TRAINER_CLS_H
// defines: ClsConfig, ClsHeads, CLS_MAX_HEADS, cls_heads_create, cls_heads_destroy, cls_heads_init,
//          cls_heads_mix, cls_heads_forward, cls_heads_backward, cls_heads_update

#include <stdint.h> // defines: int32_t, int64_t, uint64_t

#include "kern_ops.h" // defines: KernCtx, KTensor, KDtype
#include "model.h"    // defines: ParamSpec, Optimizer, OptConfig, ClipModel

#define CLS_MAX_HEADS 2

typedef struct {
	int n_heads;                // label heads of the manifest (1 or 2)
	int classes[CLS_MAX_HEADS]; // K per head
	double mixup, cutmix;       // Beta α of mixup and cutmix (0: off)
	double smoothing;           // label smoothing ε
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
	KTensor dfeat;                                         // (B, W) f32
	KTensor ab[CLS_MAX_HEADS][2];                          // (B) i32: the labels a and partners b
	KTensor ab_all;                                        // (2·heads·B) i32, what ab views
	int32_t *host_ab;                                      // (2·heads·B)
	float *host_logits;                                    // (B·max K)
	double lam;                                            // the targets' lam of the last mix
} ClsHeads;

// f32 activations only (-EINVAL otherwise); opt: the run's optimizer settings (no clipping:
// the heads are their own optimizer, so a global norm would not cover them)
int cls_heads_create(ClsHeads **out, KernCtx *ctx, const ClsConfig *c, const OptConfig *opt, int B, int W, KDtype dt);
void cls_heads_destroy(ClsHeads *h);
// weights N(0, 0.02²) from a counter RNG keyed by (seed, head), biases 0 (timm's head init)
int cls_heads_init(ClsHeads *h, uint64_t seed);
// Mixup/CutMix of step `step` (kern_mixup_draw keyed by seed) in place on patches (B, T·P, 3·p·p)
int cls_heads_mix(ClsHeads *h, KTensor *patches, uint64_t seed, uint64_t step, int image_size, int patch);
// heads over feat (B, W), soft-target CE per head against labels (B, RING_LABELS) host: loss[h]
// and top1[h] (f32 (1) views, top-1 on the unmixed labels a) written; dlogits kept for the step
int cls_heads_forward(ClsHeads *h, const KTensor *feat, const int32_t *labels, KTensor *loss, KTensor *top1);
// d(feat) into h->dfeat, the heads' gradients and their optimizer update
int cls_heads_backward(ClsHeads *h, const KTensor *feat);
int cls_heads_update(ClsHeads *h);

#endif
