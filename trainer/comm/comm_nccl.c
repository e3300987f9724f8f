// NCCL backend of comm for GPU ranks. Design: two communicators from one unique id — `data` for the
// data plane, queued on the caller's stream (its native cudaStream_t from kern_stream_native) or,
// for the started all-reduces, on a comm stream of the same device that waits for the `ready`
// event; `ctl` (ncclCommSplit of data) for the host control channel on a stream of its own, so
// the agreement on stop and positions never waits for the compute stream. Ordering between
// streams goes through the contract's events only. Guarantees: every wait of the host (init, the
// control channel) ends by timeout_s; a watchdog thread polls both communicators' asynchronous
// errors and the newest data-plane collective, and on an error or a collective older than
// timeout_s aborts both communicators (so no kernel waits forever) and calls the fatal hook with a
// sentence naming this rank and the reason. Not guaranteed: NCCL's sums run in its ring/tree order,
// not rank order (run to run identical on one topology and NCCL version, not bit-equal to shm's).
#include "comm_nccl_impl.h" // defines: Nccl, nccl_wait, nccl_dtype, nccl_fail
#include "proc_time.h"      // defines: time_mono_s

#include <errno.h>  // defines: EINVAL, ENOMEM, ENOTSUP, ETIMEDOUT, EPIPE
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memcpy

static Nccl *impl(Comm *c)
{
	return c->impl;
}

// the newest data-plane collective, for the watchdog: an event after it on its stream
static int track(Comm *c, KernCtx *stream)
{
	Nccl *n = impl(c);
	pthread_mutex_lock(&n->lock);
	int rc = kern_event_record(n->last, stream);
	n->last_t = time_mono_s();
	n->last_op = n->op;
	pthread_mutex_unlock(&n->lock);
	return rc;
}

static int queued(Comm *c, KernCtx *stream, const char *op, ncclResult_t r)
{
	impl(c)->op = op;
	if (r != ncclSuccess && r != ncclInProgress)
		return nccl_fail(c, r, op);
	return track(c, stream);
}

// the stream's cudaStream_t, the calling thread on the group's device; NULL: not a CUDA stream
static cudaStream_t on(Comm *c, KernCtx *stream)
{
	cudaStream_t s = kern_stream_native(stream);
	if (s)
		cudaSetDevice(impl(c)->device);
	return s;
}

static int nccl_allgather(Comm *c, const KTensor *send, KTensor *recv, KernCtx *stream)
{
	cudaStream_t s = on(c, stream);
	return !s ? -EINVAL
		  : queued(c, stream, "allgather",
			   ncclAllGather(send->data, recv->data, (size_t)kern_numel(send), nccl_dtype(send->dtype),
					 impl(c)->data, s));
}

static int nccl_allreduce(Comm *c, KTensor *buf, CommReduce op, KernCtx *stream)
{
	cudaStream_t s = on(c, stream);
	return !s ? -EINVAL
		  : queued(c, stream, "allreduce",
			   ncclAllReduce(buf->data, buf->data, (size_t)kern_numel(buf), nccl_dtype(buf->dtype),
					 op == COMM_AVG ? ncclAvg : ncclSum, impl(c)->data, s));
}

static int nccl_reduce_scatter(Comm *c, const KTensor *send, KTensor *recv, CommReduce op, KernCtx *stream)
{
	cudaStream_t s = on(c, stream);
	return !s ? -EINVAL
		  : queued(c, stream, "reduce_scatter",
			   ncclReduceScatter(send->data, recv->data, (size_t)kern_numel(recv), nccl_dtype(recv->dtype),
					     op == COMM_AVG ? ncclAvg : ncclSum, impl(c)->data, s));
}

// on the comm stream, after `ready`: the bucket's all-reduce overlaps the backward that follows
static int nccl_allreduce_start(Comm *c, KTensor *buf, CommReduce op, KEvent *ready)
{
	Nccl *n = impl(c);
	int rc = kern_stream_wait_event(n->cq, ready);
	return rc ? rc : nccl_allreduce(c, buf, op, n->cq);
}

static int nccl_drain(Comm *c, KernCtx *stream)
{
	Nccl *n = impl(c);
	int rc = kern_event_record(n->drained, n->cq);
	return rc ? rc : kern_stream_wait_event(stream, n->drained);
}

// ---- control channel: host buffers through the ctl communicator's device buffer ----
static int ctl_room(Comm *c, size_t bytes)
{
	Nccl *n = impl(c);
	if (bytes <= n->ctl_cap)
		return 0;
	cudaFree(n->ctl_buf);
	n->ctl_buf = NULL;
	n->ctl_cap = 0;
	if (cudaMalloc(&n->ctl_buf, bytes) != cudaSuccess)
		return -ENOMEM;
	n->ctl_cap = bytes;
	return 0;
}

// H2D of `in` bytes at offset in_at, the collective, D2H of `out` bytes, then the host waits
static int ctl_run(Comm *c, const void *send, size_t in, size_t in_at, void *recv, size_t out, const char *op,
		   ncclResult_t (*coll)(Nccl *n, size_t in_at))
{
	Nccl *n = impl(c);
	cudaSetDevice(n->device);
	int rc = ctl_room(c, in_at + in > out ? in_at + in : out);
	if (rc)
		return rc;
	char *d = n->ctl_buf;
	if (in && cudaMemcpyAsync(d + in_at, send, in, cudaMemcpyHostToDevice, n->ctl_stream) != cudaSuccess)
		return nccl_fail(c, ncclUnhandledCudaError, op);
	ncclResult_t r = coll(n, in_at);
	if (r != ncclSuccess && r != ncclInProgress)
		return nccl_fail(c, r, op);
	if (out && cudaMemcpyAsync(recv, d, out, cudaMemcpyDeviceToHost, n->ctl_stream) != cudaSuccess)
		return nccl_fail(c, ncclUnhandledCudaError, op);
	return nccl_wait(c, n->ctl_stream, op);
}

static ncclResult_t coll_allgather(Nccl *n, size_t in_at)
{
	char *d = n->ctl_buf;
	return ncclAllGather(d + in_at, d, n->ctl_count, ncclUint8, n->ctl, n->ctl_stream);
}

static ncclResult_t coll_allreduce(Nccl *n, size_t in_at)
{
	return ncclAllReduce(n->ctl_buf, n->ctl_buf, n->ctl_count, ncclFloat64, n->ctl_op, n->ctl, n->ctl_stream);
}

static ncclResult_t coll_broadcast(Nccl *n, size_t in_at)
{
	return ncclBroadcast(n->ctl_buf, n->ctl_buf, n->ctl_count, ncclUint8, n->ctl_root, n->ctl, n->ctl_stream);
}

static int nccl_ctl_allgather(Comm *c, const void *send, void *recv, size_t bytes)
{
	impl(c)->ctl_count = bytes;
	return ctl_run(c, send, bytes, bytes * (size_t)c->rank, recv, bytes * (size_t)c->world, "ctl_allgather",
		       coll_allgather);
}

static int nccl_ctl_allreduce(Comm *c, double *buf, size_t n, CommReduce op)
{
	impl(c)->ctl_count = n;
	impl(c)->ctl_op = op == COMM_AVG ? ncclAvg : ncclSum;
	return ctl_run(c, buf, n * sizeof(double), 0, buf, n * sizeof(double), "ctl_allreduce", coll_allreduce);
}

static int nccl_ctl_broadcast(Comm *c, void *buf, size_t bytes, int root)
{
	impl(c)->ctl_count = bytes;
	impl(c)->ctl_root = root;
	return ctl_run(c, buf, c->rank == root ? bytes : 0, 0, buf, bytes, "ctl_broadcast", coll_broadcast);
}

static int nccl_ctl_barrier(Comm *c)
{
	double one = 1;
	return nccl_ctl_allreduce(c, &one, 1, COMM_SUM);
}

static const CommOps nccl_ops = {
	.allgather = nccl_allgather,
	.allreduce = nccl_allreduce,
	.reduce_scatter = nccl_reduce_scatter,
	.allreduce_start = nccl_allreduce_start,
	.drain = nccl_drain,
	.ctl_allgather = nccl_ctl_allgather,
	.ctl_allreduce = nccl_ctl_allreduce,
	.ctl_broadcast = nccl_ctl_broadcast,
	.ctl_barrier = nccl_ctl_barrier,
	.close = nccl_close,
};

int comm_nccl_unique_id(void *blob, size_t len)
{
	ncclUniqueId id;
	if (len != sizeof id)
		return -EINVAL;
	ncclResult_t r = ncclGetUniqueId(&id);
	if (r != ncclSuccess)
		return r == ncclSystemError ? -EIO : -ENODEV;
	memcpy(blob, &id, sizeof id);
	return 0;
}

size_t comm_nccl_id_bytes(void)
{
	return sizeof(ncclUniqueId);
}

int comm_nccl_open(Comm **out, KernCtx *ctx, int rank, int world, const void *id, size_t id_len,
		   const CommNcclOptions *o, char *err, size_t errlen)
{
	if (!out || !ctx || rank < 0 || world < 1 || rank >= world || !id || id_len != sizeof(ncclUniqueId) || !o)
		return -EINVAL;
	if (!kern_stream_native(ctx)) {
		snprintf(err, errlen,
			 "rank %d: the %s backend gives NCCL no native stream (kern_stream_native): NCCL needs "
			 "the CUDA backend",
			 rank, kern_ctx_backend_name(ctx));
		return -ENOTSUP;
	}
	Comm *c = calloc(1, sizeof *c);
	Nccl *n = calloc(1, sizeof *n);
	if (!c || !n) {
		free(c);
		free(n);
		return -ENOMEM;
	}
	c->ops = &nccl_ops;
	c->impl = n;
	c->rank = rank;
	c->world = world;
	int rc = nccl_setup(c, ctx, id, o);
	if (rc < 0) {
		snprintf(err, errlen, "%s", c->err[0] ? c->err : "NCCL setup failed");
		nccl_close(c);
		return rc;
	}
	*out = c;
	return 0;
}
