// The CUDA backend's graphs (kern_ops.h "Graphs"): stream capture of a handle's stream in
// thread-local mode (the NCCL watchdog and comm threads may call the runtime meanwhile; only this
// thread's calls are held to the capture's rules), instantiation, and launch as one counted launch.
#include "kcu_backend.h" // defines: CuDev, CuStream, cu_use, cu_begin, cu_end

#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>

static int failed(cudaError_t e, const char *what, char *why, size_t len)
{
	cudaGetLastError(); // a refused capture call is not the device's error
	if (why && len)
		snprintf(why, len, "%s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
	return kcheck_errno_cuda(e);
}

int cu_graph_begin(KernCtx *c, char *why, size_t len)
{
	CuStream *cs = c->priv;
	if (((CuDev *)c->dev->priv)->sync_each) {
		if (why && len)
			snprintf(why, len, "KERN_CUDA_SYNC=1 waits after every op, which a capture cannot hold");
		return -ENOTSUP;
	}
	cu_use(c->dev);
	cudaError_t e = cudaStreamBeginCapture(cs->k.stream, cudaStreamCaptureModeThreadLocal);
	if (e != cudaSuccess)
		return failed(e, "cudaStreamBeginCapture", why, len);
	cs->captured0 = kcheck_captured();
	kcheck_capture(1);
	return 0;
}

int cu_graph_end(KernCtx *c, void **exec, int64_t *nodes, char *why, size_t len)
{
	CuStream *cs = c->priv;
	kcheck_capture(0);
	*nodes = kcheck_captured() - cs->captured0;
	cu_use(c->dev);
	cudaGraph_t g = NULL;
	cudaError_t e = cudaStreamEndCapture(cs->k.stream, &g);
	if (e != cudaSuccess)
		return failed(e, "cudaStreamEndCapture", why, len);
	cudaGraphExec_t x = NULL;
	e = cudaGraphInstantiate(&x, g, 0);
	cudaGraphDestroy(g);
	if (e != cudaSuccess)
		return failed(e, "cudaGraphInstantiate", why, len);
	*exec = x;
	return 0;
}

int cu_graph_launch(KernCtx *c, void *exec)
{
	KcuStream *s = cu_begin(c);
	int rc = cuda_try(&s->err, cudaGraphLaunch((cudaGraphExec_t)exec, s->stream));
	if (!rc)
		kcheck_count_launch();
	return cu_end(c, "graph_launch", rc);
}

// after the device's queued work: a launch of it may still be pending
void cu_graph_destroy(KernDev *d, void *exec)
{
	if (!exec)
		return;
	cu_use(d);
	cudaDeviceSynchronize();
	cudaGraphExecDestroy((cudaGraphExec_t)exec);
	cudaGetLastError();
}
