// The host augmentation twin (tests/ref): uint8 -> CLIP-normalized f32 in the (B, T, H, W, 3) layout,
// and the per-clip horizontal flip is a pure function of (seed, g) that flips about half the clips.
#include <math.h>   // defines: fabs
#include <stdio.h>  // defines: printf
#include <stdlib.h> // defines: malloc

#include "augment_ref.h" // defines: trainer_augment_batch, trainer_augment_flips

enum { B = 3, T = 2, H = 3, W = 5 };

int main(void)
{
	static uint8_t clips[B * T * H * W * 3];
	static float out[B * T * H * W * 3];
	for (int i = 0; i < B * T * H * W; i++) { // pixel (x, 255 - 40x, 7 + b) of column x in clip b
		int b = i / (T * H * W), x = i % W;
		clips[i * 3 + 0] = (uint8_t)x;
		clips[i * 3 + 1] = (uint8_t)(255 - 40 * x);
		clips[i * 3 + 2] = (uint8_t)(7 + b);
	}
	const double mean[3] = {0.48145466, 0.4578275, 0.40821073}, sd[3] = {0.26862954, 0.26130258, 0.27577711};
	uint64_t pos[B] = {10, 11, 12};
	int fail = 0;
	for (int flip = 0; flip <= 1; flip++) {
		trainer_augment_batch(clips, B, T, H, W, pos, 42, flip, out);
		for (int i = 0; i < B * T * H * W && !fail; i++) {
			int b = i / (T * H * W), x = i % W;
			int m = flip && trainer_augment_flips(42, pos[b]);
			int sx = m ? W - 1 - x : x;
			int v[3] = {sx, 255 - 40 * sx, 7 + b};
			for (int c = 0; c < 3; c++)
				if (fabs(out[i * 3 + c] - (v[c] / 255.0 - mean[c]) / sd[c]) > 1e-5) {
					printf("flip=%d clip %d pixel %d channel %d: %g, want %g\n", flip, b, i, c,
					       out[i * 3 + c], (v[c] / 255.0 - mean[c]) / sd[c]);
					fail = 1;
				}
		}
	}
	int n = 0, diff = 0;
	for (uint64_t g = 0; g < 1000; g++) {
		int f = trainer_augment_flips(42, g);
		if (f != trainer_augment_flips(42, g)) {
			printf("flip of position %llu is not deterministic\n", (unsigned long long)g);
			fail = 1;
		}
		n += f;
		diff += f != trainer_augment_flips(43, g);
	}
	if (n < 430 || n > 570 || diff < 430) {
		printf("flips: %d of 1000 positions (want about half), %d differ under another seed\n", n, diff);
		fail = 1;
	}
	printf(fail ? "FAIL: augmentation\n" : "normalize + flip match the formula; %d of 1000 positions flipped\n", n);
	return fail;
}
