// CUDA graphs as the shim models them (emu/kemu_graph.cpp, emu/kemu_sched.cpp), and on a device
// (test_kemu_graph_gpu) the same checks: cudaStreamBeginCapture/EndCapture record the stream's work
// without running it, cudaGraphInstantiate makes it launchable, cudaGraphLaunch replays it with the
// arguments of the capture (the planted bug: a per-step value passed as a kernel argument stays the
// first step's, while one read from device memory follows the host), and the calls a capture cannot
// hold fail with CUDA's capture-mode errors and invalidate it. Also run under KEMU_SCHED_SEED.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_finish, KT_ON_DEVICE

enum { N = 256, STEPS = 3 };

__global__ void k_add(float *buf, float a)
{
	buf[blockIdx.x * blockDim.x + threadIdx.x] += a;
}

__global__ void k_add_dev(float *buf, const float *a)
{
	buf[blockIdx.x * blockDim.x + threadIdx.x] += a[0];
}

static void fill(float *d, float v, cudaStream_t s)
{
	std::vector<float> h(N, v);
	cuda_check(cudaMemcpy(d, h.data(), sizeof(float) * N, cudaMemcpyHostToDevice));
	cuda_check(cudaStreamSynchronize(s));
	cuda_check(cudaDeviceSynchronize());
}

// every element equal to v
static bool all(const float *d, float v)
{
	std::vector<float> h = kt_download(d, N);
	for (float x : h)
		if (x != v)
			return false;
	return true;
}

static cudaStreamCaptureStatus status(cudaStream_t s)
{
	cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
	cuda_check(cudaStreamIsCapturing(s, &st));
	return st;
}

static size_t node_count(cudaGraph_t g)
{
	size_t n = 0;
	cuda_check(cudaGraphGetNodes(g, NULL, &n));
	return n;
}

// cudaStreamBeginCapture .. cudaStreamEndCapture: the work is recorded, nothing runs
static cudaGraph_t test_capture(cudaStream_t s, float *buf)
{
	fill(buf, 0, s);
	KT_CHECK(status(s) == cudaStreamCaptureStatusNone, "not capturing before");
	cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	KT_CHECK(status(s) == cudaStreamCaptureStatusActive, "capturing after cudaStreamBeginCapture");
	KErr e = {};
	KT_CHECK(KLAUNCH(&e, k_add, N / 64, 64, 0, s, buf, 1.0f) == 0, "a launch into the capture: %s", e.msg);
	KT_CHECK(KLAUNCH(&e, k_add, N / 64, 64, 0, s, buf, 1.0f) == 0, "a second launch: %s", e.msg);
	cudaGraph_t g = NULL;
	cuda_check(cudaStreamEndCapture(s, &g));
	KT_CHECK(g != NULL && node_count(g) == 2, "the graph holds the two launches: %zu", g ? node_count(g) : 0);
	KT_CHECK(status(s) == cudaStreamCaptureStatusNone, "not capturing after cudaStreamEndCapture");
	KT_CHECK(all(buf, 0), "nothing ran while capturing");
	cudaGraph_t none = NULL;
	KT_CHECK(cudaStreamEndCapture(s, &none) != cudaSuccess && !none, "no capture to end: refused");
	KT_CHECK(cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeThreadLocal) != cudaSuccess,
		 "no capture on the legacy stream");
	cudaGetLastError();
	return g;
}

// cudaGraphInstantiate: a graph becomes an executable one (the graph itself may go)
static cudaGraphExec_t test_instantiate(cudaGraph_t g)
{
	cudaGraphExec_t x = NULL;
	cuda_check(cudaGraphInstantiate(&x, g, 0));
	KT_CHECK(x != NULL, "an executable graph");
	cuda_check(cudaGraphDestroy(g));
	cudaGraphExec_t bad = NULL;
	KT_CHECK(cudaGraphInstantiate(&bad, NULL, 0) != cudaSuccess, "no graph: refused");
	cudaGetLastError();
	return x;
}

// cudaGraphLaunch: each launch replays the captured work, in stream order
static void test_launch(cudaGraphExec_t x, cudaStream_t s, float *buf)
{
	cuda_check(cudaGraphLaunch(x, s));
	KErr e = {};
	KT_CHECK(KLAUNCH(&e, k_add, N / 64, 64, 0, s, buf, 10.0f) == 0, "a launch between: %s", e.msg);
	cuda_check(cudaGraphLaunch(x, s));
	cuda_check(cudaStreamSynchronize(s));
	KT_CHECK(all(buf, 14), "two replays of +1 +1 around +10");
	cuda_check(cudaGraphExecDestroy(x));
}

// The planted bug: a value that changes per step must reach a replayed kernel through memory; as
// an argument it stays the one of the capture, so the graph's result differs from the eager one
static void test_baked(cudaStream_t s, float *buf, float *buf2)
{
	float *a_dev, *a_host;
	cuda_check(cudaMalloc((void **)&a_dev, sizeof(float)));
	cuda_check(cudaMallocHost((void **)&a_host, STEPS * sizeof(float)));
	fill(buf, 0, s);
	fill(buf2, 0, s);
	float a = 1.0f, eager = 0;
	cudaGraph_t g;
	cudaGraphExec_t x;
	cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	KLAUNCH(NULL, k_add, N / 64, 64, 0, s, buf, a);          // baked: the argument's value now
	KLAUNCH(NULL, k_add_dev, N / 64, 64, 0, s, buf2, a_dev); // read from device memory at each replay
	cuda_check(cudaStreamEndCapture(s, &g));
	cuda_check(cudaGraphInstantiate(&x, g, 0));
	for (int k = 0; k < STEPS; k++) {
		a = (float)(k + 1); // the per-step value
		eager += a;
		a_host[k] = a; // one pinned slot per step: an earlier copy may still be queued
		cuda_check(cudaMemcpyAsync(a_dev, &a_host[k], sizeof(float), cudaMemcpyHostToDevice, s));
		cuda_check(cudaGraphLaunch(x, s));
	}
	cuda_check(cudaStreamSynchronize(s));
	KT_CHECK(all(buf2, eager), "the value read from device memory follows the host: %g each", (double)eager);
	KT_CHECK(all(buf, (float)STEPS) && !all(buf, eager),
		 "the baked argument replays the capture's value (%d x 1, not %g): a test comparing the graph with "
		 "the eager run fails on it",
		 STEPS, (double)eager);
	cuda_check(cudaGraphExecDestroy(x));
	cuda_check(cudaGraphDestroy(g));
	cuda_check(cudaFreeHost(a_host));
	cuda_check(cudaFree(a_dev));
}

// one illegal call inside a capture: the call's error, then the capture ends invalidated with no graph
typedef cudaError_t (*Illegal)(cudaStream_t s, void *arg);

static void illegal(const char *what, cudaStream_t s, float *buf, Illegal call, void *arg, cudaError_t want)
{
	cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	KLAUNCH(NULL, k_add, N / 64, 64, 0, s, buf, 1.0f);
	cudaError_t got = call(s, arg);
	KT_CHECK(got == want, "%s during capture: %s, want %s", what, cudaGetErrorName(got), cudaGetErrorName(want));
	cudaGetLastError();
	KErr e = {};
	int rc = KLAUNCH(&e, k_add, N / 64, 64, 0, s, buf, 1.0f);
	KT_CHECK(rc == -EPERM, "%s: a launch into the invalidated capture is refused: %d", what, rc);
	cudaGetLastError();
	cudaGraph_t g = NULL;
	cudaError_t end = cudaStreamEndCapture(s, &g);
	KT_CHECK(end == cudaErrorStreamCaptureInvalidated && !g, "%s: the capture ends invalidated: %s", what,
		 cudaGetErrorName(end));
	cudaGetLastError();
}

static cudaError_t c_stream_sync(cudaStream_t s, void *)
{
	return cudaStreamSynchronize(s);
}
static cudaError_t c_stream_query(cudaStream_t s, void *)
{
	return cudaStreamQuery(s);
}
static cudaError_t c_device_sync(cudaStream_t, void *)
{
	return cudaDeviceSynchronize();
}
static cudaError_t c_memcpy(cudaStream_t, void *arg)
{
	float h[4] = {1, 2, 3, 4};
	return cudaMemcpy(arg, h, sizeof h, cudaMemcpyHostToDevice);
}
static cudaError_t c_malloc(cudaStream_t, void *)
{
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, 256);
	if (e == cudaSuccess)
		cudaFree(p);
	return e;
}
static cudaError_t c_wait_outside(cudaStream_t s, void *arg)
{
	return cudaStreamWaitEvent(s, (cudaEvent_t)arg, 0);
}
static cudaError_t c_query_captured(cudaStream_t s, void *arg)
{
	cuda_check(cudaEventRecord((cudaEvent_t)arg, s)); // legal: the event names a point of the capture
	return cudaEventQuery((cudaEvent_t)arg);
}

// the calls a capture cannot hold, and the stream usable again after them
static void test_illegal(cudaStream_t s, float *buf)
{
	cudaEvent_t outside, inside;
	cuda_check(cudaEventCreateWithFlags(&outside, cudaEventDisableTiming));
	cuda_check(cudaEventCreateWithFlags(&inside, cudaEventDisableTiming));
	cuda_check(cudaEventRecord(outside, s));
	illegal("cudaStreamSynchronize", s, buf, c_stream_sync, NULL, cudaErrorStreamCaptureUnsupported);
	illegal("cudaStreamQuery", s, buf, c_stream_query, NULL, cudaErrorStreamCaptureUnsupported);
	illegal("cudaDeviceSynchronize", s, buf, c_device_sync, NULL, cudaErrorStreamCaptureUnsupported);
	illegal("cudaMemcpy", s, buf, c_memcpy, buf, cudaErrorStreamCaptureUnsupported);
	illegal("cudaMalloc", s, buf, c_malloc, NULL, cudaErrorStreamCaptureUnsupported);
	illegal("cudaStreamWaitEvent on an event recorded before the capture", s, buf, c_wait_outside, outside,
		cudaErrorStreamCaptureIsolation);
	illegal("cudaEventQuery of an event recorded in the capture", s, buf, c_query_captured, inside,
		cudaErrorCapturedEvent);
	// after all that the stream captures and replays as before
	fill(buf, 0, s);
	cudaGraph_t g;
	cudaGraphExec_t x;
	cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	KLAUNCH(NULL, k_add, N / 64, 64, 0, s, buf, 2.0f);
	cuda_check(cudaStreamEndCapture(s, &g));
	cuda_check(cudaGraphInstantiate(&x, g, 0));
	cuda_check(cudaGraphLaunch(x, s));
	cuda_check(cudaStreamSynchronize(s));
	KT_CHECK(all(buf, 2), "a capture after the refused ones replays");
	cuda_check(cudaGraphExecDestroy(x));
	cuda_check(cudaGraphDestroy(g));
	cuda_check(cudaEventDestroy(outside));
	cuda_check(cudaEventDestroy(inside));
}

int main()
{
	kt_setup("test_kemu_graph");
	cudaStream_t s;
	cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	float *buf = kt_dev_alloc<float>(N), *buf2 = kt_dev_alloc<float>(N);
	cudaGraph_t g = test_capture(s, buf);
	cudaGraphExec_t x = test_instantiate(g);
	test_launch(x, s, buf);
	test_baked(s, buf, buf2);
	test_illegal(s, buf);
	cuda_check(cudaStreamDestroy(s));
	cuda_check(cudaFree(buf));
	cuda_check(cudaFree(buf2));
	return kt_finish("test_kemu_graph");
}
