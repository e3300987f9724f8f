// The bf16 matmul peak that make bench-gpu's MFU is measured against: the contract's linear op
// (cuBLASLt on the CUDA backend) on 8192^3 bf16 with f32 accumulation, best of 5 rounds of 10, in
// TFLOP/s as one JSON line. Exit 77 without the CUDA backend or a GPU.
#include <stdio.h> // defines: printf
#include <time.h>  // defines: clock_gettime

#include "kern_ops.h"  // defines: kern_ctx_create, kern_linear, kern_sync
#include "proc_time.h" // defines: time_mono_s

int main(void)
{
	KernCtx *ctx;
	KCtxOptions ko = {.backend = KERN_BACKEND_CUDA};
	if (kern_ctx_create(&ctx, &ko) < 0) {
		printf("skip: no CUDA backend in this build or no GPU\n");
		return 77;
	}
	enum { N = 8192 };
	KTensor a, w, out;
	int rc = kern_alloc(ctx, &a, KDT_BF16, 2, (const int64_t[]){N, N});
	if (!rc)
		rc = kern_alloc(ctx, &w, KDT_BF16, 2, (const int64_t[]){N, N});
	if (!rc)
		rc = kern_alloc(ctx, &out, KDT_BF16, 2, (const int64_t[]){N, N});
	if (!rc)
		rc = kern_ctx_reserve_workspace(ctx, kern_linear_ws_bytes(ctx));
	KLinear l = {.out = &out, .in = &a, .w = &w, .trans_w = 1};
	double best = 0;
	for (int round = 0; round < 6 && !rc; round++) {
		double t0 = time_mono_s();
		for (int i = 0; i < 10 && !rc; i++)
			rc = kern_linear(ctx, &l);
		if (!rc)
			rc = kern_sync(ctx);
		double tf = 10 * 2.0 * N * N * (double)N / (time_mono_s() - t0) / 1e12;
		if (round > 0 && tf > best) // round 0 warms up
			best = tf;
	}
	if (rc < 0) {
		printf("bench_gpu_peak: the linear op failed: %d (%s)\n", rc, kern_error_message(ctx));
		return 1;
	}
	printf("{\"impl\": \"peak\", \"op\": \"kern_linear bf16 %dx%dx%d\", \"tflops\": %.1f}\n", N, N, N, best);
	kern_ctx_destroy(ctx);
	return 0;
}
