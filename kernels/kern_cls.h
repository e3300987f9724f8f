// Host-side draws of the classification fine-tuning ops (kern_ops.h's kern_softce, kern_mixup_*,
// kern_row_scale): timm's per-batch Mixup/CutMix parameters and drop path's per-sample scales,
// each a pure function of (seed, step, ...) through the counter RNG (stream/stream.h).
#ifndef KERN_CLS_H
#define KERN_CLS_H
// defines: KMixupSpec, kern_mixup_draw, kern_beta_draw, kern_drop_path_scales

#include "kern_ops.h" // defines: KMixup
#include "stream.h"   // defines: RngStream

#include <stdint.h>

// timm.data.Mixup in batch mode with mix_prob 1.0, no cutmix_minmax, correct_lam = True
typedef struct {
	double mixup_alpha;  // Beta(α, α) of mixup's lam; 0: no mixup (AVION: 0.8)
	double cutmix_alpha; // Beta(α, α) of cutmix's lam; 0: no cutmix (AVION: 1.0)
	double switch_prob;  // chance of cutmix when both are on (timm's default 0.5)
} KMixupSpec;

// The draw of step `step`, timm's _params_per_batch + cutmix_bbox_and_lam, from the Philox stream
// (seed, g = step, RNG_STREAM_MIXUP) in this order:
//   both α > 0: use_cutmix = U < switch_prob (one uniform U); only one α > 0: that one, no draw;
//   lam = Beta(α, α) of the chosen kind (kern_beta_draw on the same stream);
//   cutmix: timm's rand_bbox: r = √(1 − lam), cut = (int(H·r), int(W·r)), centre cy, cx uniform
//   integers in [0, H) and [0, W), box y0 = clip(cy − cut_h/2, 0, H), y1 = clip(cy + cut_h/2, 0, H)
//   (integer halves; x the same), and lam corrected to the box: 1 − (y1 − y0)(x1 − x0)/(H·W).
// out->lam is the lam of the targets (kern_softce's KSoftCe.lam) for either kind; a cutmix out
// also carries its lam. Both α 0: out = mixup with lam 1 (timm: no mixing). -EINVAL on bad spec
// (α < 0, switch_prob outside [0, 1]) or H, W < 1.
int kern_mixup_draw(KMixup *out, const KMixupSpec *spec, uint64_t seed, uint64_t step, int H, int W);

// Beta(α, β) from two Gamma draws X ~ Γ(α), Y ~ Γ(β), X/(X+Y); Γ by Marsaglia–Tsang (α < 1
// boosted: Γ(α+1)·U^(1/α)), normals by Box–Muller, uniforms of 53 bits from the stream's words.
// α, β > 0; the number of words taken from s varies (rejections) but is a function of its state.
double kern_beta_draw(RngStream *s, double alpha, double beta);

// Drop path's scales for one layer of one step: s[b] = 1/keep when sample b is kept, else 0, keep
// = 1 − rate; kept when u < keep for u = (w >> 8)·2^−24, w the word (b mod 4) of Philox4x32-10 at
// counter {step lo, step hi, RNG_STREAM_DROP_PATH, layer·2^16 + b/4}, key seed (timm's drop_path
// with scale_by_keep). rate 0: every s = 1 (no draw); rate 1: every s = 0. -EINVAL unless
// 0 ≤ rate ≤ 1, 0 ≤ layer < 2^16 and 1 ≤ B ≤ 2^18.
int kern_drop_path_scales(float *s, int B, double rate, uint64_t seed, uint64_t step, int layer);

#endif
