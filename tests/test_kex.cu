// The shim's example kernels (kernels/cuda/examples) against plain host references, and each
// run twice under different thread schedules: the results must be bit-identical.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc
#include "kex.h"       // defines: kex_blocksum, kex_softmax_rows, kex_mma_gemm

typedef __nv_bfloat16 bf16;

static void reschedule(uint64_t seed)
{
#if !KT_ON_DEVICE
	kemu_config(1, seed); // another thread order between barriers
#else
	(void)seed;
#endif
}

static void test_blocksum(uint64_t seed)
{
	for (size_t n : {(size_t)1, (size_t)1000, (size_t)4097, (size_t)300000, (size_t)1100000}) {
		std::vector<float> x(n);
		double want = 0;
		for (auto &v : x) {
			v = kt_uniform(-1, 1);
			want += v;
		}
		size_t np = kex_blocksum_partials(n);
		float *dx = kt_dev_alloc<float>(n + 1), *dp = kt_dev_alloc<float>(np + 1),
		      *dout = kt_dev_alloc<float>(1);
		kt_upload(dx, x);
		float got[2];
		for (int run = 0; run < 2; run++) {
			reschedule(seed + (uint64_t)run);
			cuda_check(kex_blocksum(NULL, dout, dx, n, dp, 0) == 0 ? cudaSuccess : cudaErrorUnknown);
			got[run] = kt_download(dout, 1)[0];
		}
		KT_CHECK(fabs(got[0] - want) <= 1e-7 * (double)n + 1e-6, "blocksum n %zu: %g, want %g", n, got[0],
			 want);
		KT_CHECK(memcmp(&got[0], &got[1], 4) == 0, "blocksum n %zu differs between runs: %a %a", n, got[0],
			 got[1]);
		// unaligned input takes the scalar path: the same sum up to rounding
		if (n > 1) {
			float *dout2 = kt_dev_alloc<float>(1);
			cuda_check(kex_blocksum(NULL, dout2, dx + 1, n - 1, dp, 0) == 0 ? cudaSuccess
											: cudaErrorUnknown);
			double want1 = want - x[0];
			float g = kt_download(dout2, 1)[0];
			KT_CHECK(fabs(g - want1) <= 1e-7 * (double)n + 1e-6, "unaligned blocksum n %zu: %g, want %g",
				 n - 1, g, want1);
			cuda_check(cudaFree(dout2));
		}
		for (void *p : {(void *)dx, (void *)dp, (void *)dout})
			cuda_check(cudaFree(p));
	}
}

static void test_softmax(uint64_t seed)
{
	const int shapes[][2] = {{3, 1}, {5, 77}, {4, 256}, {2, 1000}, {6, 4096}};
	for (auto &sh : shapes) {
		int rows = sh[0], cols = sh[1];
		std::vector<bf16> x((size_t)rows * cols);
		for (auto &v : x)
			v = __float2bfloat16(kt_uniform(-8, 8));
		bf16 *dx = kt_dev_alloc<bf16>(x.size()), *dy = kt_dev_alloc<bf16>(x.size());
		kt_upload(dx, x);
		std::vector<bf16> y[2];
		for (int run = 0; run < 2; run++) {
			reschedule(seed + 10 + (uint64_t)run);
			cuda_check(kex_softmax_rows(NULL, dy, dx, rows, cols, 0) == 0 ? cudaSuccess : cudaErrorUnknown);
			y[run] = kt_download(dy, x.size());
		}
		std::vector<float> got(x.size()), want(x.size());
		for (int r = 0; r < rows; r++) {
			double m = -1e30, l = 0;
			for (int c = 0; c < cols; c++)
				m = fmax(m, __bfloat162float(x[(size_t)r * cols + c]));
			for (int c = 0; c < cols; c++)
				l += exp(__bfloat162float(x[(size_t)r * cols + c]) - m);
			for (int c = 0; c < cols; c++) {
				size_t i = (size_t)r * cols + c;
				want[i] = (float)(exp(__bfloat162float(x[i]) - m) / l);
				got[i] = __bfloat162float(y[0][i]);
			}
		}
		double err = kt_rel_l2(got.data(), want.data(), got.size());
		KT_CHECK(err <= 1e-2, "softmax %d x %d: rel L2 %g (bf16 output)", rows, cols, err);
		KT_CHECK(memcmp(y[0].data(), y[1].data(), x.size() * sizeof(bf16)) == 0,
			 "softmax %d x %d differs between runs", rows, cols);
		cuda_check(cudaFree(dx));
		cuda_check(cudaFree(dy));
	}
}

static void test_mma_gemm(uint64_t seed)
{
	const int shapes[][3] = {{64, 64, 32}, {100, 70, 48}, {1, 130, 8}, {129, 3, 200}};
	for (auto &sh : shapes) {
		int M = sh[0], N = sh[1], K = sh[2];
		std::vector<bf16> a((size_t)M * K), b((size_t)N * K);
		for (auto &v : a)
			v = __float2bfloat16(kt_uniform(-1, 1));
		for (auto &v : b)
			v = __float2bfloat16(kt_uniform(-1, 1));
		bf16 *da = kt_dev_alloc<bf16>(a.size()), *db = kt_dev_alloc<bf16>(b.size());
		float *dc = kt_dev_alloc<float>((size_t)M * N);
		kt_upload(da, a), kt_upload(db, b);
		std::vector<float> c[2];
		for (int run = 0; run < 2; run++) {
			reschedule(seed + 20 + (uint64_t)run);
			cuda_check(kex_mma_gemm(NULL, dc, da, db, M, N, K, 0) == 0 ? cudaSuccess : cudaErrorUnknown);
			c[run] = kt_download(dc, (size_t)M * N);
		}
		std::vector<float> want((size_t)M * N);
		for (int m = 0; m < M; m++)
			for (int n = 0; n < N; n++) {
				double acc = 0;
				for (int k = 0; k < K; k++)
					acc += (double)__bfloat162float(a[(size_t)m * K + k]) *
					       __bfloat162float(b[(size_t)n * K + k]);
				want[(size_t)m * N + n] = (float)acc;
			}
		double err = kt_rel_l2(c[0].data(), want.data(), want.size());
		KT_CHECK(err <= 1e-5, "mma gemm %d x %d x %d: rel L2 %g (f32 accumulate)", M, N, K, err);
		KT_CHECK(memcmp(c[0].data(), c[1].data(), want.size() * 4) == 0,
			 "mma gemm %d x %d x %d differs between runs", M, N, K);
		for (void *p : {(void *)da, (void *)db, (void *)dc})
			cuda_check(cudaFree(p));
	}
	KErr e = {0, ""};
	KT_CHECK(kex_mma_gemm(&e, NULL, NULL, NULL, 4, 4, 12, 0) == -EINVAL, "K not a multiple of 8 is refused");
}

int main()
{
	uint64_t seed = kt_setup("test_kex");
	test_blocksum(seed);
	test_softmax(seed);
	test_mma_gemm(seed);
	return kt_finish("test_kex");
}
