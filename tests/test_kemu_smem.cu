// Shared memory (static and the one dynamic block, above 48 KiB with the opt-in) and 16-byte
// vector loads of built-in types, in the shim and on a device; the shim poisons shared memory.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc

enum { THREADS = 128, BIG_SMEM = 96 * 1024 };

// a static tile and the dynamic block together: out = in reversed within the block, plus the
// dynamic block's copy read back in another order
__global__ void k_static_dynamic(const float *in, float *out, int ndyn)
{
	__shared__ float tile[THREADS];
	KSHARED_DYN(float, dyn);
	int t = threadIdx.x, b = blockIdx.x;
	tile[t] = in[b * THREADS + t];
	for (int i = t; i < ndyn; i += THREADS)
		dyn[i] = (float)(i * 3 + b);
	__syncthreads();
	float acc = tile[THREADS - 1 - t];
	for (int i = ndyn - 1 - t; i >= 0; i -= THREADS)
		acc += dyn[i];
	out[b * THREADS + t] = acc;
}

// 16-byte (and 8-byte) loads and stores of built-in vector types
__global__ void k_vectors(const float4 *f4, const uint4 *u4, const int4 *i4, const float2 *f2, float4 *of4, uint4 *ou4,
			  int4 *oi4, float2 *of2)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	float4 a = __ldg(&f4[t]);
	of4[t] = make_float4(a.w, a.z, a.y, a.x);
	uint4 u = u4[t];
	ou4[t] = make_uint4(u.x ^ u.y, u.y + 1u, u.z, u.w);
	int4 i = i4[t];
	oi4[t] = make_int4(-i.x, i.y * 2, i.z, i.w - 1);
	float2 f = f2[t];
	of2[t] = make_float2(f.y, f.x);
}

#if !KT_ON_DEVICE
// reads shared memory nobody wrote: the shim's poison (0xff bytes, a NaN)
__global__ void k_read_unwritten(unsigned *out)
{
	__shared__ unsigned never_written[THREADS];
	KSHARED_DYN(unsigned, dyn);
	out[threadIdx.x] = never_written[threadIdx.x] & dyn[threadIdx.x];
}
#endif

int main()
{
	kt_setup("test_kemu_smem");
	const int blocks = 3;
	std::vector<float> in((size_t)blocks * THREADS);
	for (auto &x : in)
		x = (float)(int)kt_uniform(-100, 100);
	float *din = kt_dev_alloc<float>(in.size()), *dout = kt_dev_alloc<float>(in.size());
	kt_upload(din, in);
	for (int ndyn : {1, 1000, 12288, BIG_SMEM / 4}) {
		size_t bytes = (size_t)ndyn * sizeof(float);
		if (bytes > 48 * 1024) {
			// above 48 KiB a launch needs the kernel's opt-in; without it the launch fails
			KErr e = {0, ""};
			int rc = KLAUNCH(&e, k_static_dynamic, blocks, THREADS, bytes, 0, din, dout, ndyn);
			KT_CHECK(rc == -EINVAL, "%zu bytes of dynamic shared memory without the opt-in: rc %d", bytes,
				 rc);
			printf("refused as expected: %s\n", e.msg);
			cuda_check(cudaFuncSetAttribute(k_static_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize,
							(int)bytes));
		}
		KLAUNCH(NULL, k_static_dynamic, blocks, THREADS, bytes, 0, din, dout, ndyn);
		std::vector<float> out = kt_download(dout, in.size());
		int bad = 0;
		for (int b = 0; b < blocks; b++)
			for (int t = 0; t < THREADS; t++) {
				double want = in[b * THREADS + THREADS - 1 - t];
				for (int i = ndyn - 1 - t; i >= 0; i -= THREADS)
					want += (float)(i * 3 + b);
				bad += fabs(out[b * THREADS + t] - want) > 1e-6 * fabs(want);
			}
		KT_CHECK(bad == 0, "static + %d floats of dynamic shared memory: %d wrong", ndyn, bad);
	}

	const int nv = 2 * THREADS;
	std::vector<float4> f4(nv);
	std::vector<uint4> u4(nv);
	std::vector<int4> i4(nv);
	std::vector<float2> f2(nv);
	for (int i = 0; i < nv; i++) {
		f4[i] = make_float4(kt_uniform(-1, 1), kt_uniform(-1, 1), kt_uniform(-1, 1), kt_uniform(-1, 1));
		u4[i] = make_uint4((unsigned)kt_rand(), (unsigned)kt_rand(), (unsigned)kt_rand(), (unsigned)kt_rand());
		i4[i] = make_int4((int)kt_rand() / 2, (int)(kt_rand() % 1000), (int)kt_rand(), (int)kt_rand() / 2);
		f2[i] = make_float2(kt_uniform(-1, 1), kt_uniform(-1, 1));
	}
	float4 *df4 = kt_dev_alloc<float4>(nv), *of4 = kt_dev_alloc<float4>(nv);
	uint4 *du4 = kt_dev_alloc<uint4>(nv), *ou4 = kt_dev_alloc<uint4>(nv);
	int4 *di4 = kt_dev_alloc<int4>(nv), *oi4 = kt_dev_alloc<int4>(nv);
	float2 *df2 = kt_dev_alloc<float2>(nv), *of2 = kt_dev_alloc<float2>(nv);
	kt_upload(df4, f4), kt_upload(du4, u4), kt_upload(di4, i4), kt_upload(df2, f2);
	KLAUNCH(NULL, k_vectors, nv / THREADS, THREADS, 0, 0, df4, du4, di4, df2, of4, ou4, oi4, of2);
	std::vector<float4> rf4 = kt_download(of4, nv);
	std::vector<uint4> ru4 = kt_download(ou4, nv);
	std::vector<int4> ri4 = kt_download(oi4, nv);
	std::vector<float2> rf2 = kt_download(of2, nv);
	int bad = 0;
	for (int i = 0; i < nv; i++) {
		bad += rf4[i].x != f4[i].w || rf4[i].y != f4[i].z || rf4[i].z != f4[i].y || rf4[i].w != f4[i].x;
		bad += ru4[i].x != (u4[i].x ^ u4[i].y) || ru4[i].y != u4[i].y + 1u || ru4[i].z != u4[i].z ||
		       ru4[i].w != u4[i].w;
		bad += ri4[i].x != -i4[i].x || ri4[i].y != i4[i].y * 2 || ri4[i].z != i4[i].z ||
		       ri4[i].w != i4[i].w - 1;
		bad += rf2[i].x != f2[i].y || rf2[i].y != f2[i].x;
	}
	KT_CHECK(bad == 0, "vector loads and stores: %d wrong", bad);

#if !KT_ON_DEVICE
	unsigned *du = kt_dev_alloc<unsigned>(THREADS);
	unsigned checks = kemu_checks(0); // the poison itself (initcheck refuses this: test_kemu_initcheck)
	KLAUNCH(NULL, k_read_unwritten, 2, THREADS, THREADS * sizeof(unsigned), 0, du);
	kemu_checks(checks);
	std::vector<unsigned> poison = kt_download(du, THREADS);
	bad = 0;
	for (unsigned v : poison)
		bad += v != 0xffffffffu;
	KT_CHECK(bad == 0, "unwritten shared memory must read as the poison 0xffffffff (%d differ)", bad);
	cuda_check(cudaFree(du));
#endif
	for (void *p : {(void *)din, (void *)dout, (void *)df4, (void *)of4, (void *)du4, (void *)ou4, (void *)di4,
			(void *)oi4, (void *)df2, (void *)of2})
		cuda_check(cudaFree(p));
	return kt_finish("test_kemu_smem");
}
