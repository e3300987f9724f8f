// The shim's stream-order checker (emu/kemu_sched.cpp, emu/kemu_check.cpp), a planted bug: a
// producer kernel on one stream, an event recorded after it, a consumer on another stream. With
// the cudaStreamWaitEvent the consumer reads the produced values; without it the read is reported
// (the consumer fails with a sticky error), under every schedule seed, whichever order ran.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_finish

#include <sys/wait.h>
#include <unistd.h>

enum { N = 256 };

__global__ void k_produce(float *buf)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	buf[i] = (float)i;
}

__global__ void k_consume(const float *buf, float *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	out[i] = 2.0f * buf[i];
}

// one schedule: 0 when the consumer read what the producer wrote, 1 when a sync reported an
// error, 2 when it read something else unreported
static int scenario(uint64_t seed, bool wait)
{
	kemu_sched(seed);
	cudaStream_t a, b;
	cudaEvent_t done;
	float *buf, *out;
	cuda_check(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	cuda_check(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	cuda_check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
	cuda_check(cudaMalloc((void **)&buf, N * sizeof(float)));
	cuda_check(cudaMalloc((void **)&out, N * sizeof(float)));
	cuda_check(cudaDeviceSynchronize());
	KLAUNCH(NULL, k_produce, N / 64, 64, 0, a, buf);
	cuda_check(cudaEventRecord(done, a));
	if (wait)
		cuda_check(cudaStreamWaitEvent(b, done, 0));
	KLAUNCH(NULL, k_consume, N / 64, 64, 0, b, buf, out);
	if (cudaStreamSynchronize(b) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	std::vector<float> h(N);
	if (cudaMemcpy(h.data(), out, sizeof(float) * N, cudaMemcpyDeviceToHost) != cudaSuccess)
		return 1;
	for (int i = 0; i < N; i++)
		if (h[i] != 2.0f * (float)i)
			return 2;
	return 0;
}

// in a child: a sticky error ends the process's use of the device, as on a GPU
[[maybe_unused]] static int in_child(uint64_t seed, bool wait) // unused where the kernels are not instrumented
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(scenario(seed, wait));
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}

int main()
{
	kt_setup("test_kemu_streamorder");
#if KEMU_CHECKED
	for (uint64_t seed = 1; seed <= 8; seed++) {
		int with = in_child(seed, true), without = in_child(seed, false);
		KT_CHECK(with == 0, "seed %llu: with the wait: %d (0: the produced values)", (unsigned long long)seed,
			 with);
		KT_CHECK(without == 1, "seed %llu: without the wait: %d (1: the race reported)",
			 (unsigned long long)seed, without);
	}
	return kt_finish("test_kemu_streamorder");
#else
	printf("the kernels are not instrumented (a sanitizer build): skipped\n");
	return 77;
#endif
}
