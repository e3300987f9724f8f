// The host twin of kern_augment (tests only): uint8 clips (B, T, H, W, 3) -> f32 normalized with
// CLIP's mean/std in the (B, T, H, W, 3) layout, with a horizontal flip per clip drawn from the
// counter RNG keyed by (seed, g); followed by kern_patchify_fwd it equals the op bit for bit.
#ifndef TESTS_REF_AUGMENT_REF_H
#define TESTS_REF_AUGMENT_REF_H
// defines: trainer_augment_batch, trainer_augment_flips

#include <stdint.h> // defines: uint8_t, uint64_t

// 1 when clip at position g of the stream with this seed is flipped
int trainer_augment_flips(uint64_t seed, uint64_t g);
// out (B, T, H, W, 3) = ((clip / 255) - mean[c]) / std[c], mirrored in W when flip && flips(seed, pos[b])
void trainer_augment_batch(const uint8_t *clips, int B, int T, int H, int W, const uint64_t *pos, uint64_t seed,
			   int flip, float *out);

#endif
