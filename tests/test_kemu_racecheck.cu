// The shim's racecheck and synccheck (emu/kemu_check.cpp, emu/kemu_fiber.cpp): planted shared-
// memory races between barriers, two blocks writing the same device memory, and warp collectives
// with bad masks are refused, naming the kernel and both threads, in order and shuffled; the same
// kernels with their barriers (and atomics, __syncwarp, disjoint bytes) run.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc

enum { N = 128 };

// out[t] = in[t - 1] through shared memory; without the barrier, thread t reads what t-1 wrote
__global__ void k_shift(const float *in, float *out, int with_barrier)
{
	__shared__ float s[N];
	int t = threadIdx.x;
	s[t] = in[t];
	if (with_barrier)
		__syncthreads();
	out[blockIdx.x * N + t] = s[t ? t - 1 : 0];
}

// a tile reused every iteration: without the second barrier a fast thread overwrites what a slow
// one has still to read (write after read)
__global__ void k_tile(const float *in, float *out, int with_second_barrier)
{
	__shared__ float s[N];
	int t = threadIdx.x;
	float acc = 0;
	for (int it = 0; it < 4; it++) {
		s[t] = in[(it * 7 + t) % N];
		__syncthreads();
		acc += s[(t + 1) % N];
		if (with_second_barrier)
			__syncthreads();
	}
	out[t] = acc;
}

// two threads write one element (write after write), or each its own
__global__ void k_pairs(float *out, int shared_slot)
{
	__shared__ float s[N];
	int t = threadIdx.x;
	s[shared_slot ? t / 2 : t] = (float)t;
	__syncthreads();
	out[t] = s[t];
}

// lanes exchange through shared memory; __syncwarp orders them, nothing else does
__global__ void k_lane_swap(const float *in, float *out, int with_syncwarp)
{
	__shared__ float s[N];
	int t = threadIdx.x;
	s[t] = in[t];
	if (with_syncwarp)
		__syncwarp();
	out[t] = s[t ^ 1];
}

// a value every thread reads, then thread 0 replaces after a barrier (reads by many, one write)
__global__ void k_broadcast(const float *in, float *out)
{
	__shared__ float v;
	if (threadIdx.x == 0)
		v = in[0];
	__syncthreads();
	float x = v;
	__syncthreads();
	if (threadIdx.x == 0)
		v = 2 * x;
	__syncthreads();
	out[threadIdx.x] = v + x;
}

// every block writes out[t] (a conflict between blocks), or its own slice
__global__ void k_blocks_write(int *out, int overlap)
{
	int t = threadIdx.x;
	out[(overlap ? 0 : blockIdx.x * N) + t] = (int)blockIdx.x;
}

// every block counts into one word with an atomic, and writes its own byte of a shared word
__global__ void k_blocks_atomic(int *count, unsigned char *bytes)
{
	atomicAdd(count, 1);
	if (threadIdx.x == 0)
		bytes[blockIdx.x] = (unsigned char)blockIdx.x;
}

// dynamic shared memory: thread t reads the element thread t+1 writes, with or without a barrier
__global__ void k_dyn_neighbour(float *out, int with_barrier)
{
	KSHARED_DYN(float, s);
	int t = threadIdx.x;
	s[t] = (float)t;
	if (with_barrier)
		__syncthreads();
	out[t] = s[(t + 1) % N];
}

// lanes 0..6 and 8..31 name the whole warp, lane 7 only half of it
__global__ void k_mixed_masks(int *out)
{
	unsigned lane = threadIdx.x % 32;
	out[threadIdx.x] = __shfl_sync(lane == 7 ? 0x0000ffffu : 0xffffffffu, (int)lane, 0);
}

// a barrier inside a branch only the first half of the block takes
__global__ void k_half_barrier(float *out)
{
	int t = threadIdx.x;
	if (t < N / 2)
		__syncthreads();
	out[t] = (float)t;
}

// each lane leaves itself out of the mask
__global__ void k_self_excluded(int *out)
{
	unsigned lane = threadIdx.x % 32;
	out[threadIdx.x] = (int)__ballot_sync(~(1u << lane), 1);
}

#if KEMU_CHECKED
static int count(const char *msg, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(msg, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

// launches a planted bug and checks the refusal: the words in `want`, and for the memory checkers
// the kernel's name and both threads (shared memory) or both blocks (device memory)
#define EXPECT_REFUSED(want, memory, kernel, grid, block, smem, ...)                                                   \
	do {                                                                                                           \
		KErr e_ = {0, ""};                                                                                     \
		int rc_ = KLAUNCH(&e_, kernel, grid, block, smem, 0, __VA_ARGS__);                                     \
		KT_CHECK(rc_ == -EIO && strstr(e_.msg, want) &&                                                        \
				 (!(memory) || (strstr(e_.msg, "in kernel " #kernel ":") &&                            \
						(count(e_.msg, "thread (") >= 2 || count(e_.msg, "block (") >= 2))),   \
			 "%s: rc %d, %s", #kernel, rc_, e_.msg);                                                       \
		printf("refused as expected: %s\n", e_.msg);                                                           \
	} while (0)

#endif

int main()
{
	uint64_t seed = kt_setup("test_kemu_racecheck");
#if KEMU_CHECKED
	std::vector<float> in(N);
	for (auto &x : in)
		x = kt_uniform(-1, 1);
	float *din = kt_dev_alloc<float>(N), *dout = kt_dev_alloc<float>(4 * N);
	int *di = kt_dev_alloc<int>(4 * N);
	unsigned char *db = kt_dev_alloc<unsigned char>(64);
	kt_upload(din, in);
	kemu_checks(KEMU_CHECK_RACE | KEMU_CHECK_GLOBAL); // the races, not the reads of unwritten memory

	for (int shuffle = 0; shuffle < 2; shuffle++) {
		kemu_config(shuffle, seed);
		printf("-- %s\n", shuffle ? "shuffled" : "in order");
		// shared memory: a missing barrier whatever the order (in order the shuffle shows nothing)
		EXPECT_REFUSED("shared-memory race", 1, k_shift, 2, N, 0, din, dout, 0);
		EXPECT_REFUSED("shared-memory race", 1, k_tile, 1, N, 0, din, dout, 0);
		EXPECT_REFUSED("shared-memory race (write after write)", 1, k_pairs, 1, N, 0, dout, 1);
		EXPECT_REFUSED("shared-memory race", 1, k_lane_swap, 1, N, 0, din, dout, 0);
		EXPECT_REFUSED("dynamic shared memory", 1, k_dyn_neighbour, 1, N, N * sizeof(float), dout, 0);
		// device memory: two blocks, the same bytes
		EXPECT_REFUSED("global-memory write conflict", 1, k_blocks_write, 3, N, 0, di, 1);
		// the same kernels, correct
		KLAUNCH(NULL, k_shift, 2, N, 0, 0, din, dout, 1);
		KLAUNCH(NULL, k_tile, 1, N, 0, 0, din, dout, 1);
		KLAUNCH(NULL, k_pairs, 1, N, 0, 0, dout, 0);
		KLAUNCH(NULL, k_lane_swap, 1, N, 0, 0, din, dout, 1);
		KLAUNCH(NULL, k_dyn_neighbour, 1, N, N * sizeof(float), 0, dout, 1);
		std::vector<float> out = kt_download(dout, N);
		KT_CHECK(out[5] == 6.0f, "k_dyn_neighbour with its barrier: out[5] = %g", out[5]);
		KLAUNCH(NULL, k_broadcast, 1, N, 0, 0, din, dout);
		KLAUNCH(NULL, k_blocks_write, 3, N, 0, 0, di, 0);
		KLAUNCH(NULL, k_blocks_write, 1, N, 0, 0, di,
			1); // one block: no conflict, and none with the last launch
		cuda_check(cudaMemset(di, 0, sizeof(int)));
		KLAUNCH(NULL, k_blocks_atomic, 64, N, 0, 0, di, db);
		std::vector<int> count = kt_download(di, 1);
		KT_CHECK(count[0] == 64 * N, "atomic count %d", count[0]);
	}

	// synccheck: masks, in order so that the lanes arrive 0, 1, 2, ...
	kemu_config(0, seed);
	EXPECT_REFUSED("different masks", 0, k_mixed_masks, 1, 32, 0, di);
	EXPECT_REFUSED("excludes the calling lane", 0, k_self_excluded, 1, 32, 0, di);
	EXPECT_REFUSED("have exited", 0, k_half_barrier, 1, N, 0, dout); // a divergent __syncthreads
	// and the checkers stand down when asked
	kemu_checks(0);
	KLAUNCH(NULL, k_shift, 2, N, 0, 0, din, dout, 0);
	KLAUNCH(NULL, k_blocks_write, 3, N, 0, 0, di, 1);
	kemu_checks(KEMU_CHECK_ALL);
	cuda_check(cudaFree(din));
	cuda_check(cudaFree(dout));
	cuda_check(cudaFree(di));
	cuda_check(cudaFree(db));
	(void)seed;
	return kt_finish("test_kemu_racecheck");
#else
	(void)seed;
	printf("kernels not instrumented in this build (a sanitizer build): skipped\n");
	return 77;
#endif
}
