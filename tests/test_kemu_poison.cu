// The shim's asynchronous copies (emu/kemu_runtime.cpp), a planted bug: a device-to-host copy into
// pinned memory, read by the host before the event after it was waited for, reads poison (0xff
// bytes: NaN), and the values after cudaEventSynchronize; a copy into pageable memory blocks.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_finish

enum { N = 1024 };

int main()
{
	uint64_t seed = kt_setup("test_kemu_poison");
	kemu_sched(seed);
	cudaStream_t s;
	cudaEvent_t copied;
	float *dev, *pinned;
	std::vector<float> h(N), pageable(N);
	for (int i = 0; i < N; i++)
		h[i] = (float)i;
	cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	cuda_check(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
	cuda_check(cudaMalloc((void **)&dev, sizeof(float) * N));
	cuda_check(cudaMallocHost((void **)&pinned, sizeof(float) * N));
	cuda_check(cudaMemcpy(dev, h.data(), sizeof(float) * N, cudaMemcpyHostToDevice));
	cuda_check(cudaDeviceSynchronize()); // from pageable memory cudaMemcpy returns once it is staged
	cuda_check(cudaMemcpyAsync(pinned, dev, sizeof(float) * N, cudaMemcpyDeviceToHost, s));
	cuda_check(cudaEventRecord(copied, s));
	int poisoned = 0;
	for (int i = 0; i < N; i++)
		poisoned += isnan(pinned[i]); // the planted bug: no cudaEventSynchronize before this read
	KT_CHECK(poisoned == N, "%d of %d values read before the wait are poison", poisoned, N);
	cuda_check(cudaEventSynchronize(copied));
	int right = 0;
	for (int i = 0; i < N; i++)
		right += pinned[i] == (float)i;
	KT_CHECK(right == N, "%d of %d values right after the wait", right, N);
	cuda_check(cudaMemcpyAsync(pageable.data(), dev, sizeof(float) * N, cudaMemcpyDeviceToHost, s));
	KT_CHECK(pageable[N - 1] == (float)(N - 1), "a copy into pageable memory returns when done: %g",
		 (double)pageable[N - 1]);
	cuda_check(cudaFreeHost(pinned));
	cuda_check(cudaFree(dev));
	cuda_check(cudaEventDestroy(copied));
	cuda_check(cudaStreamDestroy(s));
	return kt_finish("test_kemu_poison");
}
