// make bench-kernels: own kernels in GB/s against a device-to-device copy, GEMMs and attention in
// TFLOP/s against a plain cuBLASLt bf16 GEMM, all measured in the same run; ratios printed last.
// Each own kernel adds one entry to the table in main. Exit 77 without a GPU.
#include "kattn.h" // defines: KAttn, kattn_create, kattn_fwd, kattn_bwd, kattn_ws_bytes
#include "kcuda.h" // defines: KLAUNCH, cuda_check
#include "kex.h"   // defines: kex_blocksum, kex_softmax_rows, kex_mma_gemm
#include "kgemm.h" // defines: kgemm

#include <deque>
#include <functional>
#include <string>
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

// Attention at the model's shapes, forward and backward, for each implementation this build has.
// FLOPs are the algorithm's: 4·B·H·T²·hd forward (Q·Kᵀ and P·V), 2.5 times that backward (five
// T x T GEMMs), half under a causal mask; the own backward computes S and dP twice (7 GEMMs), so
// its hardware rate is 1.4 times the printed one.
struct AttnShape {
	const char *name;
	int B, T, H, hd, causal;
};
static const AttnShape attn_shapes[] = {
	{"vit-b16 T=4", 32, 785, 12, 64, 0}, {"vit-b16 T=16", 8, 3137, 12, 64, 0}, {"text", 256, 77, 8, 64, 1}};

struct AttnBufs {
	__nv_bfloat16 *qkv, *out, *dout, *dqkv;
	float *lse;
	void *ws;
	size_t wsb;
};
struct AttnBench {
	KAttn *impl[2]; // own, cuDNN (NULL when this build or device has none)
	std::deque<AttnBufs> bufs;
	std::deque<std::string> names;
	~AttnBench()
	{
		for (AttnBufs &b : bufs)
			for (void *p : {(void *)b.qkv, (void *)b.out, (void *)b.dout, (void *)b.dqkv, (void *)b.lse, b.ws})
				cuda_check(cudaFree(p));
		for (KAttn *k : impl)
			kattn_destroy(k);
	}
};

static void add_attention(std::vector<Entry> &t, AttnBench &ab, KErr &e, const char *peak)
{
	KAttn **impl = ab.impl;
	static const char *const label[2] = {"own", "cudnn"};
	if (kattn_create(&impl[0], KATTN_OWN, 0, &e))
		fprintf(stderr, "attention: %s\n", e.msg), exit(1);
	if (!kattn_cudnn_available() || kattn_create(&impl[1], KATTN_CUDNN, 0, &e)) {
		printf("attention: cuDNN not in this build or not usable (%s): own kernel only\n", e.msg);
		kerr_clear(&e);
	}
	for (const AttnShape &a : attn_shapes) {
		const size_t D = (size_t)a.H * a.hd, nx = (size_t)a.B * a.T * 3 * D, no = (size_t)a.B * a.T * D;
		ab.bufs.push_back(AttnBufs());
		AttnBufs *b = &ab.bufs.back();
		cuda_check(cudaMalloc((void **)&b->qkv, nx * 2));
		cuda_check(cudaMalloc((void **)&b->dqkv, nx * 2));
		cuda_check(cudaMalloc((void **)&b->out, no * 2));
		cuda_check(cudaMalloc((void **)&b->dout, no * 2));
		cuda_check(cudaMalloc((void **)&b->lse, (size_t)a.B * a.H * a.T * 4));
		fill_bf16(b->qkv, nx), fill_bf16(b->dout, no);
		for (int i = 0; i < 2; i++)
			if (impl[i])
				b->wsb = std::max(b->wsb, kattn_ws_bytes(impl[i], a.B, a.T, a.H, a.hd));
		cuda_check(cudaMalloc(&b->ws, b->wsb + 256));
		const double fwd = 4.0 * a.B * a.H * (double)a.T * a.T * a.hd * (a.causal ? 0.5 : 1.0);
		for (int i = 0; i < 2; i++) {
			KAttn *k = impl[i];
			if (!k)
				continue;
			auto run_fwd = [=, &e] {
				return kattn_fwd(k, NULL, b->out, b->lse, b->qkv, a.B, a.T, a.H, a.hd, a.causal, b->ws, b->wsb, &e);
			};
			auto run_bwd = [=, &e] {
				return kattn_bwd(k, NULL, b->dqkv, 0, b->dout, b->qkv, b->out, b->lse, a.B, a.T, a.H, a.hd, a.causal,
						 b->ws, b->wsb, &e);
			};
			if (run_fwd() || run_bwd()) { // cuDNN may refuse a shape: say so and go on
				printf("attention %s %s: not run: %s\n", label[i], a.name, e.msg);
				kerr_clear(&e);
				continue;
			}
			ab.names.push_back(std::string("attn ") + label[i] + " fwd " + a.name);
			t.push_back({ab.names.back().c_str(), true, fwd, peak, run_fwd});
			ab.names.push_back(std::string("attn ") + label[i] + " bwd " + a.name);
			t.push_back({ab.names.back().c_str(), true, 2.5 * fwd, peak, run_bwd});
		}
	}
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
	AttnBench ab = {};
	add_attention(t, ab, e, "cuBLASLt bf16 GEMM 8192^3");

	for (auto &x : t) {
		x.secs = time_it(x.run);
		if (x.secs < 0) {
			fprintf(stderr, "%s failed: %s\n", x.name, e.msg);
			return 1;
		}
		printf("%-36s %9.3f ms  %8.1f %s\n", x.name, x.secs * 1e3, x.work / x.secs / (x.flops ? 1e12 : 1e9),
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
