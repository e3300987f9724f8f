// Launches through KLAUNCH and the error plumbing: bad configurations fail the same way in the
// shim and on a device, errors latch first-wins with file:line and a hint, programs stop with
// cuda_check; streams, events, templates, and the math intrinsics of the dialect.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc

#include <algorithm>
#include <sys/wait.h>
#include <unistd.h>

template <class T, int SCALE>
__global__ void k_scale(T *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * (T)SCALE;
}

__global__ void k_noargs() {}

__global__ void k_math(const float *x, float *out, int *iout, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i];
	float *o = out + 12 * i;
	o[0] = __expf(v), o[1] = expf(v), o[2] = rsqrtf(fabsf(v) + 1.0f), o[3] = erff(v), o[4] = fmaxf(v, 0.25f);
	o[5] = __saturatef(v), o[6] = __fdividef(v, 3.0f), o[7] = tanhf(v), o[8] = __logf(fabsf(v) + 1.0f);
	o[9] = fminf(v, -0.25f), o[10] = exp2f(v), o[11] = log2f(fabsf(v) + 1.0f); // the attention kernels' softmax
	int *io = iout + 6 * i;
	unsigned u = __float_as_uint(v);
	io[0] = __float2int_rn(v * 10.0f), io[1] = __popc(u), io[2] = __clz((int)u), io[3] = (int)__brev(u);
	io[4] = __ffs((int)u), io[5] = max((int)(v * 100.0f), -50) + min(i, 7);
}

static int run_child_check(char *msg, size_t len)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 2);
		cuda_check(cudaErrorInvalidValue); // what a program does on a failed call: stops
		_exit(0);
	}
	close(fd[1]);
	ssize_t n = read(fd[0], msg, len - 1);
	msg[n > 0 ? n : 0] = 0;
	close(fd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main()
{
	kt_setup("test_kemu_launch");
	float *dx = kt_dev_alloc<float>(1024);
	KErr e = {0, ""};
	// configurations CUDA refuses
	int rc = KLAUNCH(&e, k_noargs, 1, 1025, 0, 0);
	KT_CHECK(rc == -EINVAL && strstr(e.msg, "cudaErrorInvalidConfiguration"), "1025 threads: %d %s", rc, e.msg);
	KT_CHECK(strstr(e.msg, "test_kemu_launch.cu:") && strstr(e.msg, "k_noargs"),
		 "message names site and kernel: %s", e.msg);
	printf("refused as expected: %s\n", e.msg);
	char first[sizeof e.msg];
	snprintf(first, sizeof first, "%s", e.msg);
	rc = KLAUNCH(&e, k_noargs, dim3(1, 70000), 32, 0, 0);
	KT_CHECK(rc == -EINVAL && strcmp(e.msg, first) == 0, "the first error stays latched: %s", e.msg);
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_noargs, 1, dim3(32, 1, 65), 0, 0);
	KT_CHECK(rc == -EINVAL, "block z 65: %d %s", rc, e.msg);
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_noargs, 0, 32, 0, 0);
	KT_CHECK(rc == -EINVAL, "empty grid: %d %s", rc, e.msg);
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_noargs, 1, 32, 300 * 1024, 0);
	KT_CHECK(rc == -EINVAL && strstr(e.msg, "cudaErrorInvalidValue"), "300 KiB shared: %d %s", rc, e.msg);
	KT_CHECK(cudaGetLastError() == cudaSuccess, "KLAUNCH consumed the launch error");
	kerr_clear(&e);

	// a template kernel (in parentheses), a stream, events, asynchronous copies
	std::vector<float> h(1000);
	for (auto &v : h)
		v = kt_uniform(-1, 1);
	cudaStream_t s;
	cudaEvent_t t0, t1;
	cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	cuda_check(cudaEventCreate(&t0));
	cuda_check(cudaEventCreate(&t1));
	cuda_check(cudaMemcpyAsync(dx, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice, s));
	cuda_check(cudaEventRecord(t0, s));
	rc = KLAUNCH(&e, (k_scale<float, 3>), 4, 256, 0, s, dx, 1000);
	KT_CHECK(rc == 0, "template kernel on a stream: %s", e.msg);
	cuda_check(cudaEventRecord(t1, s));
	cuda_check(cudaStreamWaitEvent(s, t1, 0));
	cuda_check(cudaEventSynchronize(t1));
	float ms = -1;
	cuda_check(cudaEventElapsedTime(&ms, t0, t1));
	KT_CHECK(ms >= 0, "elapsed time %g", ms);
	std::vector<float> got(1000);
	cuda_check(cudaMemcpyAsync(got.data(), dx, got.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
	cuda_check(cudaStreamSynchronize(s));
	int bad = 0;
	for (int i = 0; i < 1000; i++)
		bad += got[i] != h[i] * 3.0f;
	KT_CHECK(bad == 0, "k_scale<float, 3>: %d wrong", bad);
	KLAUNCH(NULL, k_noargs, 1, 32, 0, s);
	cuda_check(cudaEventDestroy(t0));
	cuda_check(cudaEventDestroy(t1));
	cuda_check(cudaStreamDestroy(s));

	// math intrinsics against the host's libm (the device's fast ones are approximate)
	const int n = 1000;
	std::vector<float> x(n);
	for (auto &v : x)
		v = kt_uniform(-6, 6);
	x[0] = 0.0f, x[1] = 1.0f, x[2] = -0.5f, x[3] = 0.25f;
	float *din = kt_dev_alloc<float>(n), *dout = kt_dev_alloc<float>(12 * n);
	int *diout = kt_dev_alloc<int>(6 * n);
	kt_upload(din, x);
	KLAUNCH(NULL, k_math, (n + 127) / 128, 128, 0, 0, din, dout, diout, n);
	std::vector<float> o = kt_download(dout, 12 * n);
	std::vector<int> io = kt_download(diout, 6 * n);
	double worst[12] = {0};
	bad = 0;
	for (int i = 0; i < n; i++) {
		double v = x[i];
		double want[12] = {exp(v),         exp(v),        1 / sqrt(fabs(v) + 1),
				   erf(v),         fmax(v, 0.25), v < 0 ? 0 : v > 1 ? 1 : v,
				   v / 3,          tanh(v),       log(fabs(v) + 1),
				   fmin(v, -0.25), exp2(v),       log2(fabs(v) + 1)};
		for (int j = 0; j < 12; j++)
			worst[j] = fmax(worst[j], fabs(o[12 * i + j] - want[j]) / fmax(fabs(want[j]), 1e-30));
		unsigned u, r = 0;
		memcpy(&u, &x[i], 4);
		for (int b = 0; b < 32; b++)
			r |= ((u >> b) & 1u) << (31 - b);
		int wi[6] = {(int)nearbyintf(x[i] * 10.0f), __builtin_popcount(u),
			     u ? __builtin_clz(u) : 32,     (int)r,
			     __builtin_ffs((int)u),         std::max((int)(x[i] * 100.0f), -50) + std::min(i, 7)};
		for (int j = 0; j < 6; j++)
			bad += io[6 * i + j] != wi[j];
	}
	const double tol[12] = {2e-6, 2e-6, 2e-6, 2e-6, 0, 0, 2e-6, 2e-6, 5e-6, 0, 2e-6, 2e-6};
	for (int j = 0; j < 12; j++)
		KT_CHECK(worst[j] <= tol[j], "math function %d: worst relative error %g", j, worst[j]);
	KT_CHECK(bad == 0, "integer intrinsics: %d wrong", bad);

	// the checks' errno mapping and hints, and a program stopping with file:line
	kerr_clear(&e);
	rc = cuda_try(&e, cudaErrorMemoryAllocation);
	KT_CHECK(rc == -ENOMEM && strstr(e.msg, "out of memory"), "cuda_try: %d %s", rc, e.msg);
	KT_CHECK(kcheck_errno_cublas(15) == -ENOTSUP && kcheck_errno_cublas(7) == -EINVAL, "cuBLAS statuses");
	KT_CHECK(kcheck_errno_cudnn(3002) == -ENOTSUP && kcheck_errno_cudnn(2000) == -EINVAL, "cuDNN statuses");
	KT_CHECK(kcheck_errno_nccl(4) == -EINVAL && kcheck_errno_nccl(6) == -ECONNRESET, "NCCL results");
	char msg[1024];
	int status = run_child_check(msg, sizeof msg);
	KT_CHECK(status == 1 && strstr(msg, "test_kemu_launch.cu:") && strstr(msg, "hint:"),
		 "cuda_check stops the program with file:line and a hint (exit %d): %s", status, msg);
#if !KT_ON_DEVICE
	KT_CHECK(cudaFree((char *)dx + 4) == cudaErrorInvalidValue,
		 "the shim refuses to free what it did not allocate");
	KT_CHECK(cudaGetLastError() == cudaErrorInvalidValue && cudaGetLastError() == cudaSuccess, "last error clears");
#endif
	for (void *p : {(void *)dx, (void *)din, (void *)dout, (void *)diout})
		cuda_check(cudaFree(p));
	return kt_finish("test_kemu_launch");
}
