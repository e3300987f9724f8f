// __syncthreads in the shim and on a device: barriers order shared memory between threads, and
// a missing barrier shows as a wrong result in the shim's shuffled thread order (not in order).
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc

enum { N = 256, ITERS = 8 };

// out[t] = in[t - 1] (t > 0) through shared memory: thread t reads what thread t-1 wrote
__global__ void k_shift(const float *in, float *out, int with_barrier)
{
	__shared__ float s[N];
	int t = threadIdx.x;
	s[t] = in[blockIdx.x * N + t];
	if (with_barrier)
		__syncthreads();
	out[blockIdx.x * N + t] = s[t ? t - 1 : 0];
}

// a shared tile reused every iteration: the barrier after the reads keeps a fast thread from
// overwriting the tile while others still read it (write-after-read)
__global__ void k_tile_loop(const float *in, float *out, int with_second_barrier)
{
	__shared__ float s[N];
	int t = threadIdx.x;
	float acc = 0;
	for (int it = 0; it < ITERS; it++) {
		s[t] = in[it * N + t];
		__syncthreads();
		acc += s[(t + 17) % N] * (float)(it + 1);
		if (with_second_barrier)
			__syncthreads();
	}
	out[t] = acc;
}

// a tree reduction: log2(N) barriers per block
__global__ void k_tree_sum(const float *in, float *out)
{
	__shared__ float s[N];
	int t = threadIdx.x;
	s[t] = in[blockIdx.x * N + t];
	__syncthreads();
	for (int h = N / 2; h > 0; h /= 2) {
		if (t < h)
			s[t] += s[t + h];
		__syncthreads();
	}
	if (t == 0)
		out[blockIdx.x] = s[0];
}

// every thread writes its coordinates: 3-D blocks and grids
__global__ void k_coords(int *out)
{
	int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
	int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	int *o = out + 6 * (b * blockDim.x * blockDim.y * blockDim.z + t);
	o[0] = threadIdx.x, o[1] = threadIdx.y, o[2] = threadIdx.z;
	o[3] = blockIdx.x, o[4] = blockIdx.y, o[5] = blockIdx.z;
}

#if !KT_ON_DEVICE
// rule breakers the shim refuses (on a device they hang or are undefined)
__global__ void k_exit_early(float *out, int n)
{
	if ((int)threadIdx.x >= n)
		return;
	__syncthreads();
	out[threadIdx.x] = 1;
}
__global__ void k_two_barriers(float *out)
{
	if (threadIdx.x < 32)
		__syncthreads();
	else
		__syncthreads();
	out[threadIdx.x] = 1;
}
#endif

static int count_shift_errors(const float *dout, const std::vector<float> &in, int blocks)
{
	std::vector<float> out = kt_download(dout, (size_t)blocks * N);
	int bad = 0;
	for (int b = 0; b < blocks; b++)
		for (int t = 0; t < N; t++)
			bad += out[b * N + t] != in[b * N + (t ? t - 1 : 0)];
	return bad;
}

static int count_tile_loop_errors(const float *dout, const std::vector<float> &in)
{
	std::vector<float> acc = kt_download(dout, N);
	int bad = 0;
	for (int t = 0; t < N; t++) {
		float want = 0;
		for (int it = 0; it < ITERS; it++)
			want += in[it * N + (t + 17) % N] * (float)(it + 1);
		bad += acc[t] != want;
	}
	return bad;
}

int main()
{
	uint64_t seed = kt_setup("test_kemu_barrier");
	const int blocks = 4;
	std::vector<float> in((size_t)blocks * N * ITERS);
	for (auto &x : in)
		x = (float)(int)kt_uniform(-1000, 1000); // integers: every sum below is exact
	float *din = kt_dev_alloc<float>(in.size()), *dout = kt_dev_alloc<float>(in.size());
	kt_upload(din, in);

	KLAUNCH(NULL, k_shift, blocks, N, 0, 0, din, dout, 1);
	int bad = count_shift_errors(dout, in, blocks);
	KT_CHECK(bad == 0, "%d of %d values wrong with the barrier", bad, blocks * N);

	KLAUNCH(NULL, k_tree_sum, blocks, N, 0, 0, din, dout);
	std::vector<float> sums = kt_download(dout, blocks);
	for (int b = 0; b < blocks; b++) {
		double want = 0;
		for (int t = 0; t < N; t++)
			want += in[b * N + t];
		KT_CHECK(sums[b] == (float)want, "block %d: sum %g, want %g", b, sums[b], want);
	}

	KLAUNCH(NULL, k_tile_loop, 1, N, 0, 0, din, dout, 1);
	bad = count_tile_loop_errors(dout, in);
	KT_CHECK(bad == 0, "tile loop with both barriers: %d wrong", bad);

	int *dc = kt_dev_alloc<int>(6 * 2 * 3 * 2 * 4 * 2 * 3);
	KLAUNCH(NULL, k_coords, dim3(2, 3, 2), dim3(4, 2, 3), 0, 0, dc);
	std::vector<int> c = kt_download(dc, 6 * 144);
	bad = 0;
	for (int i = 0; i < 144; i++) {
		int t = i % 24, b = i / 24;
		int want[6] = {t % 4, t / 4 % 2, t / 8, b % 2, b / 2 % 3, b / 6};
		for (int j = 0; j < 6; j++)
			bad += c[6 * i + j] != want[j];
	}
	KT_CHECK(bad == 0, "3-D thread and block indices: %d wrong", bad);

#if !KT_ON_DEVICE
	// The missing barrier: thread t reads what thread t-1 wrote. In order, t-1 always ran first
	// and the bug hides; shuffled, about half the reads see the poisoned shared memory.
	// (with the checkers off: they refuse these kernels in any order, test_kemu_racecheck)
	unsigned checks = kemu_checks(0);
	kemu_config(0, seed);
	KLAUNCH(NULL, k_shift, blocks, N, 0, 0, din, dout, 0);
	int in_order = count_shift_errors(dout, in, blocks);
	KT_CHECK(in_order == 0, "in order the missing barrier is expected to hide, %d wrong", in_order);
	kemu_config(1, seed);
	KLAUNCH(NULL, k_shift, blocks, N, 0, 0, din, dout, 0);
	int shuffled = count_shift_errors(dout, in, blocks);
	printf("missing __syncthreads: %d of %d values wrong in shuffled order, %d in order\n", shuffled, blocks * N,
	       in_order);
	KT_CHECK(shuffled > blocks * N / 8, "the shuffled order must expose the missing barrier (%d wrong)", shuffled);

	// the missing second barrier (write-after-read) is caught too
	KLAUNCH(NULL, k_tile_loop, 1, N, 0, 0, din, dout, 0);
	bad = count_tile_loop_errors(dout, in);
	printf("missing trailing __syncthreads in a tile loop: %d of %d wrong\n", bad, N);
	KT_CHECK(bad > 0, "the shuffled order must expose the write-after-read race");
	kemu_checks(checks);

	// rules: every thread reaches every barrier, and the same one
	KErr e = {0, ""};
	int rc = KLAUNCH(&e, k_exit_early, 1, 64, 0, 0, dout, 40);
	KT_CHECK(rc == -EIO && strstr(e.msg, "have exited"), "early exit before a barrier: rc %d, %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_two_barriers, 1, 64, 0, 0, dout);
	KT_CHECK(rc == -EIO && strstr(e.msg, "different __syncthreads"), "two barriers: rc %d, %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
	// and the shim works normally after a faulted launch
	KLAUNCH(NULL, k_shift, blocks, N, 0, 0, din, dout, 1);
	bad = count_shift_errors(dout, in, blocks);
	KT_CHECK(bad == 0, "after faulted launches: %d wrong", bad);
#else
	(void)seed;
#endif
	cuda_check(cudaFree(din));
	cuda_check(cudaFree(dout));
	cuda_check(cudaFree(dc));
	return kt_finish("test_kemu_barrier");
}
