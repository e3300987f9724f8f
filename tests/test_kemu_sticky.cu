// The shim's asynchronous streams (emu/kemu_sched.cpp) report a kernel's fault as a device does:
// the launch returns success, the fault surfaces at the next synchronizing call and stays (every
// later sync and launch returns it); a launch's bad configuration is still refused at the launch.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_finish

// breaks the dialect (threads past n leave before the barrier): the shim faults the launch
__global__ void k_exit_early(float *out, int n)
{
	if ((int)threadIdx.x >= n)
		return;
	__syncthreads();
	out[threadIdx.x] = 1;
}

__global__ void k_fill(float *out)
{
	out[threadIdx.x] = 2;
}

int main()
{
	uint64_t seed = kt_setup("test_kemu_sticky");
	kemu_sched(seed);
	cudaStream_t s;
	float *d;
	cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	cuda_check(cudaMalloc((void **)&d, 64 * sizeof(float)));
	KErr e = {};
	int rc = KLAUNCH(&e, k_fill, 1, 2048, 0, s, d); // more than 1024 threads: refused at once
	KT_CHECK(rc != 0 && cudaStreamSynchronize(s) == cudaSuccess, "a bad configuration at the launch: %d", rc);
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_exit_early, 1, 64, 0, s, d, 40);
	KT_CHECK(rc == 0, "the faulting launch is queued and returns success: %d %s", rc, e.msg);
	cudaError_t sync = cudaStreamSynchronize(s);
	KT_CHECK(sync == cudaErrorLaunchFailure, "the fault at the sync: %s", cudaGetErrorName(sync));
	KT_CHECK(strstr(kemu_fault_detail(), "exited") != NULL, "the shim's reason: %s", kemu_fault_detail());
	cudaGetLastError();
	KT_CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure, "sticky: the next sync fails too");
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_fill, 1, 64, 0, s, d);
	KT_CHECK(rc != 0, "sticky: a later launch fails: %d", rc);
	cudaStreamDestroy(s); // released even on a faulted device (sticky errors aside)
	cudaFree(d);
	return kt_finish("test_kemu_sticky");
}
