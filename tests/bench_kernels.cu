// make bench-kernels: own kernels in GB/s against a device-to-device copy, GEMMs in TFLOP/s
// against a plain cuBLASLt bf16 GEMM, all measured in the same run; ratios printed last.
// Each own kernel adds one entry to the table in main. Exit 77 without a GPU.
#include "kcuda.h" // defines: KLAUNCH, cuda_check
#include "kex.h"   // defines: kex_blocksum, kex_softmax_rows, kex_mma_gemm
#include "kgemm.h" // defines: kgemm

#include <functional>
#include <stdio.h>
#include <string.h>
#include <vector>

struct Entry {
	const char *name;
	bool flops;     // work counts floating-point operations (TFLOP/s), else bytes moved (GB/s)
	double work;    // per call
	const char *vs; // the baseline entry it is compared with
	std::function<int()> run;
	double secs = 0; // per call
};

// mean time of one call over enough calls to fill ~0.2 s, after a warm-up
static double time_it(const std::function<int()> &run)
{
	cudaEvent_t a, b;
	cuda_check(cudaEventCreate(&a));
	cuda_check(cudaEventCreate(&b));
	for (int i = 0; i < 3; i++)
		if (run())
			return -1;
	int reps = 1;
	float ms = 0;
	for (;;) {
		cuda_check(cudaEventRecord(a));
		for (int i = 0; i < reps; i++)
			run();
		cuda_check(cudaEventRecord(b));
		cuda_check(cudaEventSynchronize(b));
		cuda_check(cudaEventElapsedTime(&ms, a, b));
		if (ms > 200 || reps >= 1 << 14)
			break;
		reps *= 4;
	}
	cuda_check(cudaGetLastError());
	cuda_check(cudaEventDestroy(a));
	cuda_check(cudaEventDestroy(b));
	return ms * 1e-3 / reps;
}

static void fill_bf16(__nv_bfloat16 *d, size_t n)
{
	std::vector<__nv_bfloat16> h(n);
	for (size_t i = 0; i < n; i++)
		h[i] = __float2bfloat16((float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f);
	cuda_check(cudaMemcpy(d, h.data(), n * 2, cudaMemcpyHostToDevice));
}

int main()
{
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("no CUDA device: skipped\n");
		return 77;
	}
	cudaDeviceProp prop;
	cuda_check(cudaGetDeviceProperties(&prop, 0));
	printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);

	const size_t copy_bytes = (size_t)1 << 30, nsum = (size_t)1 << 28;
	const int G = 8192, rows = 32768, cols = 4096, gm = 4096; // GEMM sizes, softmax rows x cols
	void *src, *dst;
	cuda_check(cudaMalloc(&src, copy_bytes));
	cuda_check(cudaMalloc(&dst, copy_bytes));
	cuda_check(cudaMemset(src, 0, copy_bytes));
	__nv_bfloat16 *a, *b, *c;
	cuda_check(cudaMalloc((void **)&a, (size_t)G * G * 2));
	cuda_check(cudaMalloc((void **)&b, (size_t)G * G * 2));
	cuda_check(cudaMalloc((void **)&c, (size_t)G * G * 4));
	fill_bf16(a, (size_t)G * G), fill_bf16(b, (size_t)G * G);
	float *partials;
	cuda_check(cudaMalloc((void **)&partials, (kex_blocksum_partials(nsum) + 1) * sizeof(float)));
	KGemm *g;
	KErr e = {0, ""};
	if (kgemm_create(&g, 0, &e)) {
		fprintf(stderr, "kgemm_create: %s\n", e.msg);
		return 1;
	}
	// the plain cuBLASLt bf16 GEMM: C (G x G, bf16) = A^T B as the linear layers call it (TN)
	auto gemm = [&](int n) {
		KgCall k = {};
		k.opA = KGEMM_T, k.opB = KGEMM_N, k.M = n, k.N = n, k.K = n, k.A = a, k.lda = n, k.B = b, k.ldb = n, k.C = c;
		k.ldc = n, k.ab = KGEMM_BF16, k.c = KGEMM_BF16, k.alpha = 1.0f;
		return kgemm(g, NULL, &k, &e);
	};

	std::vector<Entry> t;
	t.push_back({"copy (device to device)", false, 2.0 * copy_bytes, NULL,
		     [&] { return cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice) == cudaSuccess ? 0 : -1; }});
	t.push_back({"cuBLASLt bf16 GEMM 8192^3", true, 2.0 * G * G * G, NULL, [&] { return gemm(G); }});
	t.push_back({"cuBLASLt bf16 GEMM 4096^3", true, 2.0 * gm * gm * gm, NULL, [&] { return gemm(gm); }});
	// own kernels: name, work per call, baseline, call
	t.push_back({"example blocksum (f32)", false, 4.0 * nsum, "copy (device to device)",
		     [&] { return kex_blocksum(&e, (float *)dst, (const float *)src, nsum, partials, 0); }});
	t.push_back({"example softmax rows (bf16)", false, 2.0 * 2 * rows * cols, "copy (device to device)",
		     [&] { return kex_softmax_rows(&e, (__nv_bfloat16 *)dst, (const __nv_bfloat16 *)src, rows, cols, 0); }});
	t.push_back({"example mma GEMM 4096^3", true, 2.0 * gm * gm * gm, "cuBLASLt bf16 GEMM 4096^3",
		     [&] { return kex_mma_gemm(&e, (float *)c, a, b, gm, gm, gm, 0); }});

	for (auto &x : t) {
		x.secs = time_it(x.run);
		if (x.secs < 0) {
			fprintf(stderr, "%s failed: %s\n", x.name, e.msg);
			return 1;
		}
		printf("%-32s %9.3f ms  %8.1f %s\n", x.name, x.secs * 1e3, x.work / x.secs / (x.flops ? 1e12 : 1e9),
		       x.flops ? "TFLOP/s" : "GB/s");
	}
	printf("ratios:");
	for (auto &x : t) {
		if (!x.vs)
			continue;
		for (auto &base : t)
			if (!strcmp(base.name, x.vs))
				printf("  %s %.2f of %s;", x.name, (x.work / x.secs) / (base.work / base.secs), base.name);
	}
	printf("\n");
	kgemm_destroy(g);
	for (void *p : {src, dst, (void *)a, (void *)b, (void *)c, (void *)partials})
		cuda_check(cudaFree(p));
	return 0;
}
