// Warp shuffles, votes and __syncwarp in the shim and on a device, against the CUDA
// Programming Guide's rules for each intrinsic; the shim refuses partial masks and warps.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc

enum { THREADS = 128, BLOCKS = 2, NT = THREADS * BLOCKS };
enum { IDX, UP, DOWN, XOR };
struct Case {
	int mode, b, width;
};
static const Case cases[] = {
	{IDX, 0, 32},  {IDX, 5, 32},  {IDX, 31, 32},  {IDX, 37, 32},  {IDX, 3, 16}, {IDX, 9, 8},  {IDX, 1, 2},
	{IDX, 0, 1},   {UP, 0, 32},   {UP, 1, 32},    {UP, 3, 16},    {UP, 16, 32}, {UP, 31, 32}, {UP, 2, 4},
	{DOWN, 1, 32}, {DOWN, 3, 16}, {DOWN, 16, 32}, {DOWN, 31, 32}, {DOWN, 5, 8}, {XOR, 1, 32}, {XOR, 2, 32},
	{XOR, 16, 32}, {XOR, 31, 32}, {XOR, 7, 8},    {XOR, 8, 8},    {XOR, 12, 8}, {XOR, 4, 4},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

template <class T>
__device__ T shuffle(int mode, T v, int b, int width)
{
	switch (mode) {
	case IDX: return __shfl_sync(0xffffffffu, v, b, width);
	case UP: return __shfl_up_sync(0xffffffffu, v, (unsigned)b, width);
	case DOWN: return __shfl_down_sync(0xffffffffu, v, (unsigned)b, width);
	default: return __shfl_xor_sync(0xffffffffu, v, b, width);
	}
}

// every case for int, float, double, long long, bf16 and bf16x2 values derived from the thread
__global__ void k_shuffles(const Case *cs, int ncases, int *oi, float *of, double *od, long long *ol, uint16_t *ob,
			   uint32_t *ob2)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	for (int c = 0; c < ncases; c++) {
		Case k = cs[c];
		int o = c * NT + t;
		oi[o] = shuffle(k.mode, 7 * t + 3, k.b, k.width);
		of[o] = shuffle(k.mode, 0.5f * (float)t, k.b, k.width);
		od[o] = shuffle(k.mode, 1e10 + (double)t, k.b, k.width);
		ol[o] = shuffle(k.mode, (1ll << 40) + t, k.b, k.width);
		__nv_bfloat16 h = shuffle(k.mode, __float2bfloat16((float)t), k.b, k.width);
		ob[o] = __bfloat16_as_ushort(h);
		__nv_bfloat162 h2 = shuffle(k.mode, __floats2bfloat162_rn((float)t, -(float)t), k.b, k.width);
		ob2[o] = (uint32_t)__bfloat16_as_ushort(h2.x) | (uint32_t)__bfloat16_as_ushort(h2.y) << 16;
	}
}

// votes over predicates taken from `pred` (one per thread and pattern)
__global__ void k_votes(const int *pred, int npat, unsigned *ballot, int *all, int *any)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	for (int p = 0; p < npat; p++) {
		int v = pred[p * NT + t];
		ballot[p * NT + t] = __ballot_sync(0xffffffffu, v);
		all[p * NT + t] = __all_sync(0xffffffffu, v);
		any[p * NT + t] = __any_sync(0xffffffffu, v);
	}
}

// lanes exchange through shared memory; __syncwarp orders the write before the neighbour's read
__global__ void k_warp_exchange(const float *in, float *out, int with_syncwarp)
{
	__shared__ float s[THREADS];
	int t = threadIdx.x;
	s[t] = in[blockIdx.x * THREADS + t];
	if (with_syncwarp)
		__syncwarp();
	out[blockIdx.x * THREADS + t] = s[t ^ 1];
}

#if !KT_ON_DEVICE
__global__ void k_half_mask(int *out)
{
	out[threadIdx.x] = __shfl_sync(0x0000ffffu, (int)threadIdx.x, 0);
}
__global__ void k_sum_warp(int *out)
{
	int v = (int)threadIdx.x;
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	out[threadIdx.x] = v;
}
__global__ void k_divergent_shfl(int *out)
{
	int v;
	if (threadIdx.x % 2)
		v = __shfl_sync(0xffffffffu, 1, 0);
	else
		v = __shfl_sync(0xffffffffu, 2, 0);
	out[threadIdx.x] = v;
}
#endif

// the Programming Guide's words for each intrinsic, lane by lane
static int expect_source(int mode, int lane, int b, int w)
{
	int group = lane / w;
	switch (mode) {
	case IDX: return group * w + b % w;
	case UP: return lane % w >= b ? lane - b : lane;
	case DOWN: return lane % w + b < w ? lane + b : lane;
	default: {
		int j = lane ^ b;
		return j / w > group ? lane : j; // later groups answer the thread's own value
	}
	}
}

int main()
{
	uint64_t seed = kt_setup("test_kemu_warp");
	std::vector<Case> hc(cases, cases + NCASES);
	Case *dcases = kt_dev_alloc<Case>(NCASES);
	kt_upload(dcases, hc);
	size_t n = (size_t)NCASES * NT;
	int *oi = kt_dev_alloc<int>(n);
	float *of = kt_dev_alloc<float>(n);
	double *od = kt_dev_alloc<double>(n);
	long long *ol = kt_dev_alloc<long long>(n);
	uint16_t *ob = kt_dev_alloc<uint16_t>(n);
	uint32_t *ob2 = kt_dev_alloc<uint32_t>(n);
	KLAUNCH(NULL, k_shuffles, BLOCKS, THREADS, 0, 0, dcases, (int)NCASES, oi, of, od, ol, ob, ob2);
	std::vector<int> hi = kt_download(oi, n);
	std::vector<float> hf = kt_download(of, n);
	std::vector<double> hd = kt_download(od, n);
	std::vector<long long> hl = kt_download(ol, n);
	std::vector<uint16_t> hb = kt_download(ob, n);
	std::vector<uint32_t> hb2 = kt_download(ob2, n);
	for (int c = 0; c < NCASES; c++) {
		int bad = 0;
		for (int t = 0; t < NT; t++) {
			int src = t - t % 32 + expect_source(cases[c].mode, t % 32, cases[c].b, cases[c].width);
			size_t o = (size_t)c * NT + t;
			uint16_t want_b = kt_bf16_bits(__float2bfloat16((float)src));
			uint32_t want_b2 = want_b | (uint32_t)kt_bf16_bits(__float2bfloat16(-(float)src)) << 16;
			bad += hi[o] != 7 * src + 3 || hf[o] != 0.5f * (float)src || hd[o] != 1e10 + src ||
			       hl[o] != (1ll << 40) + src || hb[o] != want_b || hb2[o] != want_b2;
		}
		KT_CHECK(bad == 0, "shuffle mode %d b %d width %d: %d threads wrong", cases[c].mode, cases[c].b,
			 cases[c].width, bad);
	}

	// votes: a few fixed patterns and random ones
	enum { NPAT = 8 };
	std::vector<int> pred((size_t)NPAT * NT);
	for (int p = 0; p < NPAT; p++)
		for (int t = 0; t < NT; t++)
			pred[(size_t)p * NT + t] =
				p == 0   ? 1
				: p == 1 ? 0
				: p == 2 ? t % 32 == 17
				: p == 3 ? t % 3 == 0
					 : (int)(kt_rand() % 3) - (p == 7); // nonzero values count as true
	int *dpred = kt_dev_alloc<int>(pred.size()), *dall = kt_dev_alloc<int>(pred.size()),
	    *dany = kt_dev_alloc<int>(pred.size());
	unsigned *dballot = kt_dev_alloc<unsigned>(pred.size());
	kt_upload(dpred, pred);
	KLAUNCH(NULL, k_votes, BLOCKS, THREADS, 0, 0, dpred, (int)NPAT, dballot, dall, dany);
	std::vector<unsigned> ballot = kt_download(dballot, pred.size());
	std::vector<int> all = kt_download(dall, pred.size()), any = kt_download(dany, pred.size());
	for (int p = 0; p < NPAT; p++) {
		int bad = 0;
		for (int t = 0; t < NT; t++) {
			unsigned want = 0;
			for (int l = 0; l < 32; l++)
				want |= (unsigned)(pred[(size_t)p * NT + t - t % 32 + l] != 0) << l;
			size_t o = (size_t)p * NT + t;
			bad += ballot[o] != want || (all[o] != 0) != (want == 0xffffffffu) ||
			       (any[o] != 0) != (want != 0);
		}
		KT_CHECK(bad == 0, "vote pattern %d: %d threads wrong", p, bad);
	}

	std::vector<float> in((size_t)BLOCKS * THREADS);
	for (auto &x : in)
		x = kt_uniform(-1, 1);
	float *din = kt_dev_alloc<float>(in.size()), *dout = kt_dev_alloc<float>(in.size());
	kt_upload(din, in);
	KLAUNCH(NULL, k_warp_exchange, BLOCKS, THREADS, 0, 0, din, dout, 1);
	std::vector<float> out = kt_download(dout, in.size());
	int bad = 0;
	for (int t = 0; t < BLOCKS * THREADS; t++)
		bad += out[t] != in[t ^ 1];
	KT_CHECK(bad == 0, "__syncwarp exchange: %d wrong", bad);

#if !KT_ON_DEVICE
	unsigned checks = kemu_checks(0); // the shuffled order alone (racecheck refuses it: test_kemu_racecheck)
	KLAUNCH(NULL, k_warp_exchange, BLOCKS, THREADS, 0, 0, din, dout, 0);
	kemu_checks(checks);
	out = kt_download(dout, in.size());
	bad = 0;
	for (int t = 0; t < BLOCKS * THREADS; t++)
		bad += out[t] != in[t ^ 1];
	printf("missing __syncwarp: %d of %d values wrong in shuffled order\n", bad, BLOCKS * THREADS);
	KT_CHECK(bad > 0, "the shuffled order must expose the missing __syncwarp");

	KErr e = {0, ""};
	int rc = KLAUNCH(&e, k_half_mask, 1, 32, 0, 0, oi);
	KT_CHECK(rc == -EIO && strstr(e.msg, "mask 0x0000ffff"), "half mask: %d %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_sum_warp, 1, 48, 0, 0, oi);
	KT_CHECK(rc == -EIO && strstr(e.msg, "partial warp"), "partial warp: %d %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_divergent_shfl, 1, 32, 0, 0, oi);
	KT_CHECK(rc == -EIO && strstr(e.msg, "different collectives"), "divergent shuffles: %d %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
	KLAUNCH(NULL, k_sum_warp, 1, 64, 0, 0, oi); // and the shim runs normally after the faults
	std::vector<int> sums = kt_download(oi, 64);
	for (int t = 0; t < 64; t++)
		KT_CHECK(sums[t] == (t / 32) * 1024 + 496, "warp sum thread %d: %d", t, sums[t]);
#endif
	(void)seed;
	cuda_check(cudaFree(dcases));
	for (void *p : {(void *)oi, (void *)of, (void *)od, (void *)ol, (void *)ob, (void *)ob2, (void *)dpred,
			(void *)dall, (void *)dany, (void *)dballot, (void *)din, (void *)dout})
		cuda_check(cudaFree(p));
	return kt_finish("test_kemu_warp");
}
