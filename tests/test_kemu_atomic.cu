// Integer atomics, the ones whose final value does not depend on the order: a histogram and
// running max/min/and/or/xor, in the shim (shuffled) and on a device, against the host.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc

enum { BINS = 64, THREADS = 256 };

__global__ void k_atomics(const int *x, int n, int *hist, int *mx, int *mn, unsigned *and_, unsigned *or_,
			  unsigned *xor_, unsigned long long *sum, int *sub)
{
	__shared__ int local[BINS];
	for (int i = threadIdx.x; i < BINS; i += blockDim.x)
		local[i] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		int v = x[i];
		atomicAdd(&local[(unsigned)v % BINS], 1); // shared-memory atomics
		atomicMax(mx, v);
		atomicMin(mn, v);
		atomicAnd(and_, (unsigned)v | 0x80000001u);
		atomicOr(or_, (unsigned)v & 0x00ff00ffu);
		atomicXor(xor_, (unsigned)v);
		atomicAdd(sum, (unsigned long long)(unsigned)v);
		atomicSub(sub, v % 7);
	}
	__syncthreads();
	for (int i = threadIdx.x; i < BINS; i += blockDim.x)
		atomicAdd(&hist[i], local[i]);
}

int main()
{
	kt_setup("test_kemu_atomic");
	const int n = 50000;
	std::vector<int> x(n);
	for (auto &v : x)
		v = (int)(kt_rand() % 2000001) - 1000000;
	int *dx = kt_dev_alloc<int>(n), *dhist = kt_dev_alloc<int>(BINS), *dmx = kt_dev_alloc<int>(1),
	    *dmn = kt_dev_alloc<int>(1), *dsub = kt_dev_alloc<int>(1);
	unsigned *dand = kt_dev_alloc<unsigned>(1), *dor = kt_dev_alloc<unsigned>(1), *dxor = kt_dev_alloc<unsigned>(1);
	unsigned long long *dsum = kt_dev_alloc<unsigned long long>(1);
	kt_upload(dx, x);
	kt_upload(dhist, std::vector<int>(BINS, 0));
	kt_upload(dmx, std::vector<int>(1, INT32_MIN));
	kt_upload(dmn, std::vector<int>(1, INT32_MAX));
	kt_upload(dsub, std::vector<int>(1, 0));
	kt_upload(dand, std::vector<unsigned>(1, 0xffffffffu));
	kt_upload(dor, std::vector<unsigned>(1, 0));
	kt_upload(dxor, std::vector<unsigned>(1, 0));
	kt_upload(dsum, std::vector<unsigned long long>(1, 0));
	KLAUNCH(NULL, k_atomics, 7, THREADS, 0, 0, dx, n, dhist, dmx, dmn, dand, dor, dxor, dsum, dsub);

	std::vector<int> hist(BINS, 0);
	int mx = INT32_MIN, mn = INT32_MAX, sub = 0;
	unsigned a = 0xffffffffu, o = 0, xr = 0;
	unsigned long long sum = 0;
	for (int v : x) {
		hist[(unsigned)v % BINS]++;
		mx = v > mx ? v : mx, mn = v < mn ? v : mn;
		a &= (unsigned)v | 0x80000001u, o |= (unsigned)v & 0x00ff00ffu, xr ^= (unsigned)v;
		sum += (unsigned)v, sub -= v % 7;
	}
	std::vector<int> h = kt_download(dhist, BINS);
	int bad = 0;
	for (int i = 0; i < BINS; i++)
		bad += h[i] != hist[i];
	KT_CHECK(bad == 0, "histogram: %d bins wrong", bad);
	KT_CHECK(kt_download(dmx, 1)[0] == mx, "atomicMax");
	KT_CHECK(kt_download(dmn, 1)[0] == mn, "atomicMin");
	KT_CHECK(kt_download(dand, 1)[0] == a, "atomicAnd");
	KT_CHECK(kt_download(dor, 1)[0] == o, "atomicOr");
	KT_CHECK(kt_download(dxor, 1)[0] == xr, "atomicXor");
	KT_CHECK(kt_download(dsum, 1)[0] == sum, "atomicAdd (unsigned long long)");
	KT_CHECK(kt_download(dsub, 1)[0] == sub, "atomicSub");
	for (void *p : {(void *)dx, (void *)dhist, (void *)dmx, (void *)dmn, (void *)dsub, (void *)dand, (void *)dor,
			(void *)dxor, (void *)dsum})
		cuda_check(cudaFree(p));
	return kt_finish("test_kemu_atomic");
}
