// The shim's initcheck for shared memory (emu/kemu_check.cpp): a read of shared memory that no
// thread of the block wrote, or an atomic on it, is refused naming the kernel and the thread;
// what the block wrote (before a barrier) reads, in static and dynamic shared memory.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc

enum { N = 128 };

// reads its element; written = 0: nobody wrote it, 1: thread t wrote it, 2: only the first half
__global__ void k_read(float *out, int written)
{
	__shared__ float s[N];
	int t = threadIdx.x;
	if (written == 1 || (written == 2 && t < N / 2))
		s[t] = (float)t;
	__syncthreads();
	out[t] = s[t];
}

// block 0 writes, every block reads: what an earlier block left is not this block's
__global__ void k_first_block_writes(float *out)
{
	__shared__ float s[N];
	int t = threadIdx.x;
	if (blockIdx.x == 0)
		s[t] = (float)t;
	__syncthreads();
	out[blockIdx.x * N + t] = s[t];
}

// a shared counter, set to 0 first or not
__global__ void k_count(int *out, int initialize)
{
	__shared__ int count;
	if (initialize && threadIdx.x == 0)
		count = 0;
	__syncthreads();
	atomicAdd(&count, 1);
	__syncthreads();
	out[threadIdx.x] = count;
}

// dynamic shared memory: a float4 read of which the block wrote only three floats, or all four
__global__ void k_dyn_vector(float *out, int all)
{
	KSHARED_DYN(float, s);
	int t = threadIdx.x;
	if (all || t % 4 != 3)
		s[t] = (float)t;
	__syncthreads();
	if (t < N / 4) {
		float4 v = reinterpret_cast<const float4 *>(s)[t];
		out[t] = v.x + v.y + v.z + v.w;
	}
}

#define EXPECT_REFUSED(want, kernel, grid, block, smem, ...)                                                           \
	do {                                                                                                           \
		KErr e_ = {0, ""};                                                                                     \
		int rc_ = KLAUNCH(&e_, kernel, grid, block, smem, 0, __VA_ARGS__);                                     \
		KT_CHECK(rc_ == -EIO && strstr(e_.msg, want) && strstr(e_.msg, "in kernel " #kernel ":") &&            \
				 strstr(e_.msg, "thread ("),                                                           \
			 "%s: rc %d, %s", #kernel, rc_, e_.msg);                                                       \
		printf("refused as expected: %s\n", e_.msg);                                                           \
	} while (0)

int main()
{
	uint64_t seed = kt_setup("test_kemu_initcheck");
#if KEMU_CHECKED
	float *dout = kt_dev_alloc<float>(4 * N);
	int *di = kt_dev_alloc<int>(N);
	kemu_checks(KEMU_CHECK_INIT);
	for (int shuffle = 0; shuffle < 2; shuffle++) {
		kemu_config(shuffle, seed);
		printf("-- %s\n", shuffle ? "shuffled" : "in order");
		EXPECT_REFUSED("uninitialized shared-memory read", k_read, 1, N, 0, dout, 0);
		EXPECT_REFUSED("uninitialized shared-memory read", k_read, 1, N, 0, dout, 2);
		EXPECT_REFUSED("uninitialized shared-memory read", k_first_block_writes, 2, N, 0, dout);
		EXPECT_REFUSED("atomic on uninitialized shared memory", k_count, 1, N, 0, di, 0);
		EXPECT_REFUSED("dynamic shared memory", k_dyn_vector, 1, N, N * sizeof(float), dout, 0);
		KLAUNCH(NULL, k_read, 2, N, 0, 0, dout, 1);
		KLAUNCH(NULL, k_first_block_writes, 1, N, 0, 0, dout);
		KLAUNCH(NULL, k_count, 1, N, 0, 0, di, 1);
		KLAUNCH(NULL, k_dyn_vector, 1, N, N * sizeof(float), 0, dout, 1);
		std::vector<int> count = kt_download(di, N);
		KT_CHECK(count[7] == N, "shared counter %d", count[7]);
		std::vector<float> out = kt_download(dout, 1);
		KT_CHECK(out[0] == 6.0f, "k_dyn_vector: %g", out[0]);
	}
	kemu_checks(KEMU_CHECK_ALL);
	cuda_check(cudaFree(dout));
	cuda_check(cudaFree(di));
	(void)seed;
	return kt_finish("test_kemu_initcheck");
#else
	(void)seed;
	printf("kernels not instrumented in this build (a sanitizer build): skipped\n");
	return 77;
#endif
}
