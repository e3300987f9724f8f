// cp.async through kmma.h (kcp_async_16/4, commit, wait_group) and the unordered f32 atomic add:
// a double-buffered tile walk with zero-filled rows past the end, in the shim and on a device;
// in the shim also the model's promises (data only after the wait, groups in order) and refusals.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc, kt_upload, kt_download
#include "kmma.h"      // defines: kcp_async_16, kcp_async_4, kcp_async_commit, kcp_async_wait

enum { COLS = 32, ROWS = 16, THREADS = 64 }; // a tile: 16 rows of 32 floats = 128 chunks of 16 bytes

// Block b walks tiles of ROWS rows of x (n rows of COLS floats), double-buffered: tile i+1 is in
// flight while tile i is read. Rows at or past n arrive as zeros (src-size 0). Each thread sums
// its column pair over every tile, and the row weights w (4-byte copies) scale the rows.
__global__ void k_walk(const float *x, const float *w, int n, float *out)
{
	__shared__ __align__(16) float tile[2][ROWS * COLS];
	__shared__ __align__(16) float wt[2][ROWS];
	const int t = threadIdx.x, ntiles = (n + ROWS - 1) / ROWS;
	auto issue = [&](int i) {
		for (int c = t; c < ROWS * COLS / 4; c += THREADS) {
			int r = i * ROWS + c / (COLS / 4);
			bool in = r < n;
			kcp_async_16(&tile[i & 1][4 * c], in ? x + (int64_t)r * COLS + 4 * (c % (COLS / 4)) : x, in);
		}
		if (t < ROWS)
			kcp_async_4(&wt[i & 1][t], i * ROWS + t < n ? w + i * ROWS + t : w, i * ROWS + t < n);
		kcp_async_commit();
	};
	issue(0);
	float acc = 0.0f;
	for (int i = 0; i < ntiles; i++) {
		if (i + 1 < ntiles)
			issue(i + 1);
		else
			kcp_async_commit(); // an empty group keeps the count: the wait below is for tile i
		kcp_async_wait<1>();
		__syncthreads();
		for (int r = 0; r < ROWS; r++)
			acc += tile[i & 1][r * COLS + t % COLS] * wt[i & 1][r] * (t < COLS ? 1.0f : -0.5f);
		__syncthreads(); // tile i's buffer is read before tile i + 2 goes into it
	}
	kcp_async_wait<0>();
	out[blockIdx.x * THREADS + t] = acc;
}

// every thread adds small integers into one f32 (exact in any order, so comparable)
__global__ void k_fsum(const int *v, int n, float *sum)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		katomic_add_f32_unordered(sum, (float)v[i]);
}

#if !KT_ON_DEVICE
// the model: before its group is waited for a destination holds 0xff bytes; wait_group 1 lands
// the older of two groups only
__global__ void k_groups(const uint32_t *src, uint32_t *out)
{
	__shared__ __align__(16) uint32_t s[2][4];
	kcp_async_16(s[0], src, true);
	kcp_async_commit();
	kcp_async_16(s[1], src + 4, true);
	kcp_async_commit();
	out[0] = s[0][0]; // in flight
	kcp_async_wait<1>();
	out[1] = s[0][1], out[2] = s[1][2]; // landed, still in flight
	kcp_async_wait<0>();
	out[3] = s[1][3];
}
// lane 1 reads what lane 0's copy writes, after lane 0's wait but with no barrier between
__global__ void k_no_barrier(const float *src, float *out)
{
	__shared__ __align__(16) float s[4];
	if (threadIdx.x == 0) {
		kcp_async_16(s, src, true);
		kcp_async_commit();
		kcp_async_wait<0>();
	}
	if (threadIdx.x == 1)
		out[0] = s[0];
}
// a copy that is never waited for
__global__ void k_no_wait(const float *src)
{
	__shared__ __align__(16) float s[4];
	kcp_async_16(s, src, true);
	kcp_async_commit();
}
__global__ void k_to_global(const float *src, float *dst)
{
	kcp_async_16(dst, src, true);
	kcp_async_commit();
	kcp_async_wait<0>();
}
__global__ void k_misaligned(const float *src)
{
	__shared__ __align__(16) float s[8];
	kcp_async_16(s + 1, src, true);
	kcp_async_commit();
	kcp_async_wait<0>();
}
#endif

int main()
{
	kt_setup("test_kemu_cpasync");
	// 1. the double-buffered walk, lengths that end inside a tile, on a tile edge, before the first
	for (int n : {1, 15, 16, 17, 50, 64}) {
		const int blocks = 3;
		std::vector<float> x((size_t)n * COLS), w(n);
		for (auto &v : x)
			v = (float)((int)(kt_rand() % 17) - 8);
		for (auto &v : w)
			v = (float)(1 + kt_rand() % 3);
		float *dx = kt_dev_alloc<float>(x.size()), *dw = kt_dev_alloc<float>(w.size()),
		      *dout = kt_dev_alloc<float>(blocks * THREADS);
		kt_upload(dx, x), kt_upload(dw, w);
		KLAUNCH(NULL, k_walk, blocks, THREADS, 0, 0, dx, dw, n, dout);
		std::vector<float> got = kt_download(dout, blocks * THREADS);
		int bad = 0;
		for (int b = 0; b < blocks; b++)
			for (int t = 0; t < THREADS; t++) {
				float want = 0.0f; // small integers: exact in any order
				for (int r = 0; r < n; r++)
					want += x[(size_t)r * COLS + t % COLS] * w[r] * (t < COLS ? 1.0f : -0.5f);
				bad += got[b * THREADS + t] != want;
			}
		KT_CHECK(bad == 0, "double-buffered cp.async walk over %d rows: %d of %d sums wrong", n, bad,
			 blocks * THREADS);
		for (void *p : {(void *)dx, (void *)dw, (void *)dout})
			cuda_check(cudaFree(p));
	}
	printf("cp.async: double-buffered walks with zero-filled tails sum exactly\n");

	// 2. the unordered f32 atomic: integers, so every order gives the same sum
	{
		const int n = 5000;
		std::vector<int> v(n);
		long want = 0;
		for (auto &x : v)
			x = (int)(kt_rand() % 201) - 100, want += x;
		int *dv = kt_dev_alloc<int>(n);
		float *ds = kt_dev_alloc<float>(1);
		kt_upload(dv, v);
		cuda_check(cudaMemset(ds, 0, sizeof(float)));
		KLAUNCH(NULL, k_fsum, 7, 96, 0, 0, dv, n, ds);
		float got = kt_download(ds, 1)[0];
		KT_CHECK(got == (float)want, "f32 atomic sum %g, want %ld", got, want);
		printf("katomic_add_f32_unordered: %g = %ld\n", got, want);
		for (void *p : {(void *)dv, (void *)ds})
			cuda_check(cudaFree(p));
	}

#if !KT_ON_DEVICE
	// 3. the model's promises and refusals, in the shim only
	uint32_t *src = kt_dev_alloc<uint32_t>(16), *out = kt_dev_alloc<uint32_t>(8);
	std::vector<uint32_t> hs(16);
	for (int i = 0; i < 16; i++)
		hs[i] = 0x1000u + (uint32_t)i;
	kt_upload(src, hs);
	KLAUNCH(NULL, k_groups, 1, 1, 0, 0, src, out);
	std::vector<uint32_t> g = kt_download(out, 4);
	KT_CHECK(g[0] == ~0u && g[1] == 0x1001u && g[2] == ~0u && g[3] == 0x1007u,
		 "groups: in flight %#x, landed %#x, in flight %#x, landed %#x", g[0], g[1], g[2], g[3]);
	KErr e = {0, ""};
	int rc = KLAUNCH(&e, k_no_wait, 1, 1, 0, 0, (const float *)src);
	KT_CHECK(rc == -EIO && strstr(e.msg, "never waited"), "a copy never waited for: %d %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_to_global, 1, 1, 0, 0, (const float *)src, (float *)out);
	KT_CHECK(rc == -EIO && strstr(e.msg, "not in shared memory"), "a copy into global memory: %d %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_misaligned, 1, 1, 0, 0, (const float *)src);
	KT_CHECK(rc == -EIO && strstr(e.msg, "aligned"), "a misaligned copy: %d %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
	kerr_clear(&e);
#if KEMU_CHECKED
	// the racecheck sees the copy's write at the wait: a reader without the barrier is a race (the
	// initcheck off: a reader that runs first reads memory nobody wrote yet)
	unsigned was = kemu_checks(KEMU_CHECK_RACE | KEMU_CHECK_GLOBAL);
	rc = KLAUNCH(&e, k_no_barrier, 1, 32, 0, 0, (const float *)src, (float *)out);
	KT_CHECK(rc == -EIO && strstr(e.msg, "race") && strstr(e.msg, "k_no_barrier"),
		 "a read of another thread's copy with no barrier: %d %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
	kemu_checks(was);
#else
	printf("the kernels are not instrumented in this build (sanitizer): the racecheck part is not run\n");
#endif
	for (void *p : {(void *)src, (void *)out})
		cuda_check(cudaFree(p));
#endif
	return kt_finish("test_kemu_cpasync");
}
