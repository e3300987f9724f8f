// cuDNN's attention graphs (kernels/cuda/attn/kattn_cudnn.c) are well formed: every tensor,
// operation and the operation graph of the forward and backward SDPA, causal or not, with and
// without the padding-mask workaround of cuDNN <= 9.15, and the deterministic backward (dQ without
// the f32 accumulator), finalize in the cuDNN library. No GPU is
// needed for that; whether an engine runs them is test_kattn_gpu's part (make test-gpu).
#include "kattn_cudnn.h"       // defines: kc_attn_version
#include "kattn_cudnn_graph.h" // defines: kc_attn_graph_check

#include <stdio.h>

int main(void)
{
	const char *v = kc_attn_version();
	if (!v) {
		printf("the loaded cuDNN is older than 9.0: skipped\n");
		return 77;
	}
	int fails = 0;
	const int shapes[][4] = {{2, 785, 12, 64}, {4, 77, 8, 64}, {1, 3137, 12, 64}, {1, 1, 1, 128}};
	for (int s = 0; s < 4; s++)
		for (int bwd = KC_FWD; bwd <= KC_BWD_DET; bwd++) // the deterministic backward too
			for (int causal = 0; causal < 2; causal++)
				for (int pad = 0; pad <= (bwd != KC_FWD); pad++)
					for (int ver = 0; ver < 2;
					     ver++) { // a 9.0-9.9 library adds a second padding select
						int nops = 0, B = shapes[s][0], T = shapes[s][1], H = shapes[s][2],
						    hd = shapes[s][3];
						char why[256];
						int rc = kc_attn_graph_check(bwd, B, T, H, hd, causal, pad,
									     ver ? 90500 : 91900, &nops, why,
									     sizeof why);
						if (rc) {
							printf("FAIL %s B %d T %d H %d hd %d causal %d pad %d: %s\n",
							       bwd ? "bwd" : "fwd", B, T, H, hd, causal, pad, why);
							fails++;
						} else if (s == 0 && ver == 0) {
							printf("%s causal %d pad %d: %d operations finalized\n",
							       bwd == KC_BWD_DET ? "bwd deterministic"
							       : bwd             ? "bwd"
										 : "fwd",
							       causal, pad, nops);
						}
					}
	printf("cuDNN %s: %s\n", v, fails ? "FAILED" : "every attention graph is well formed");
	return fails != 0;
}
