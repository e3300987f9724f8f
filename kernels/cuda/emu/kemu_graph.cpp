// CUDA graphs for the shim: stream capture (cudaStreamBeginCapture .. cudaStreamEndCapture),
// instantiation and launch, on the scheduler's capture of stream work (kemu_sched.cpp).
//
// A graph is the list of work the capturing stream was given, each item as it was enqueued: a
// kernel with its arguments converted and copied at the launch call (kemu.h), a copy with its
// pointers, a kgemm with its call. A launch runs (or queues) that list again, so every replay
// sees the arguments of the capture: a value that changes per launch reaches a graph only through
// memory it reads, exactly as on a device. What a capture may not contain is refused as CUDA's
// runtime refuses it (kemu_impl.h, README.md).
#include "kemu_impl.h" // defines: kemu_sched_capture_*, kemu_sched_launch_graph, kemu_stream_ok, kemu_set_error

#include <new>

enum : uint32_t { MAGIC_GRAPH = 0x6b656d67, MAGIC_EXEC = 0x6b656d78 };

struct CUgraph_st {
	uint32_t magic;
	std::shared_ptr<const KemuNodes> nodes;
};
struct CUgraphExec_st {
	uint32_t magic;
	std::shared_ptr<const KemuNodes> nodes;
	std::shared_ptr<KemuRecord> last; // the end of its last launch (asynchronous streams)
};

static bool stream_capturable(cudaStream_t s)
{
	return kemu_stream_ok(s) && s != nullptr && s != cudaStreamLegacy && s != cudaStreamPerThread;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
	if (!kemu_stream_ok(s))
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	if (!stream_capturable(s))
		return kemu_set_error(cudaErrorStreamCaptureUnsupported); // not the legacy stream
	if ((unsigned)mode > (unsigned)cudaStreamCaptureModeRelaxed)
		return kemu_set_error(cudaErrorInvalidValue);
	return kemu_sched_capture_begin(kemu_stream_id(s), mode == cudaStreamCaptureModeRelaxed);
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph)
{
	if (!graph)
		return kemu_set_error(cudaErrorInvalidValue);
	*graph = nullptr;
	if (!kemu_stream_ok(s))
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	std::shared_ptr<const KemuNodes> nodes;
	cudaError_t e = kemu_sched_capture_end(kemu_stream_id(s), &nodes);
	if (e)
		return e; // invalidated: no graph
	*graph = new (std::nothrow) CUgraph_st{MAGIC_GRAPH, nodes};
	return *graph ? cudaSuccess : kemu_set_error(cudaErrorMemoryAllocation);
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status)
{
	if (!status)
		return kemu_set_error(cudaErrorInvalidValue);
	if (!kemu_stream_ok(s))
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	const int st = kemu_sched_capture_status(kemu_stream_id(s));
	*status = st == KEMU_CAPTURE_ACTIVE    ? cudaStreamCaptureStatusActive
		  : st == KEMU_CAPTURE_INVALID ? cudaStreamCaptureStatusInvalidated
					       : cudaStreamCaptureStatusNone;
	return cudaSuccess;
}

static bool graph_ok(cudaGraph_t g)
{
	return g && g->magic == MAGIC_GRAPH;
}
static bool exec_ok(cudaGraphExec_t x)
{
	return x && x->magic == MAGIC_EXEC;
}

// the node count only (nodes NULL), as the runtime answers it: the shim's nodes have no handles
cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *n)
{
	if (!graph_ok(g) || !n)
		return kemu_set_error(cudaErrorInvalidValue);
	if (nodes)
		return kemu_set_error(cudaErrorNotSupported);
	*n = g->nodes->size();
	return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags)
{
	(void)flags;
	if (!exec || !graph_ok(g))
		return kemu_set_error(cudaErrorInvalidValue);
	*exec = new (std::nothrow) CUgraphExec_st{MAGIC_EXEC, g->nodes, nullptr};
	return *exec ? cudaSuccess : kemu_set_error(cudaErrorMemoryAllocation);
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags)
{
	return cudaGraphInstantiate(exec, g, flags);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s)
{
	if (!exec_ok(x))
		return kemu_set_error(cudaErrorInvalidValue);
	if (!kemu_stream_ok(s))
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	return kemu_set_error(kemu_sched_launch_graph(kemu_stream_id(s), *x->nodes, &x->last));
}

// the nodes stay alive while a launch still queues them (each op holds its own copy of the work)
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x)
{
	if (!exec_ok(x))
		return kemu_set_error(cudaErrorInvalidValue);
	x->magic = 0;
	delete x;
	return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
	if (!graph_ok(g))
		return kemu_set_error(cudaErrorInvalidValue);
	g->magic = 0;
	delete g;
	return cudaSuccess;
}
