// NCCL backend of comm for GPU ranks. Design: two communicators from one unique id — `data` for the
// data plane, queued on the caller's stream (its native cudaStream_t from kern_stream_native) or,
// for the started all-reduces, on a comm stream of the same device that waits for the `ready`
// event; `ctl` (ncclCommSplit of data) for the host control channel on a stream of its own, staged
// through pinned host memory so that no copy blocks the host beyond its bounded wait. Guarantees:
// every wait of the host (init, the control channel, finalize) ends by timeout_s; a watchdog
// thread polls both communicators' asynchronous errors and the newest data-plane collective, and
// on an error or a collective older than timeout_s aborts both communicators (so no kernel waits
// forever) and calls the fatal hook with a sentence naming this rank and the reason. Not
// guaranteed: NCCL's sums run in its ring/tree order, not rank order (run to run identical on one
// topology and NCCL version, not bit-equal to shm's).
//
// The rules that keep non-blocking NCCL with two communicators correct (tests/test_comm_nccl_fake.c
// checks them against a fake NCCL that returns ncclInProgress and enqueues late):
// 1. Settled before the stream is touched. On a non-blocking communicator any call may return
//    ncclInProgress before its work is on the stream. nccl_settle polls ncclCommGetAsyncError until
//    the state leaves ncclInProgress (bounded by --comm-timeout, then an abort) before anything is
//    queued behind the call or the host waits for its stream, as PyTorch's c10d does.
// 2. One lock for NCCL. Every NCCL call on either communicator (init, split, a collective and its
//    settle, finalize, destroy, abort, the watchdog's ncclCommGetAsyncError) holds Nccl.nccl: no
//    two threads are ever inside one communicator, and the watchdog never aborts (frees) a
//    communicator under another call.
// 3. One order on the device. The two communicators' kernels never run at the same time and run
//    in the order the host issued them: a control collective is queued behind events after the
//    newest data-plane collective on a caller's stream and after every started all-reduce (the
//    comm stream); a data-plane collective issued after a control call is issued after that call's
//    host wait saw the control collective complete. Every rank calls in the same order (comm.h),
//    so every device runs one sequence and the cross-communicator deadlock NCCL warns of cannot
//    happen. Cost: a control call waits for the data plane queued before it. Not covered: data-plane
//    collectives on two caller streams with no order between them (the trainer uses one).
// 4. The first fault wins. Any thread latches it in Nccl.fault (under Nccl.lock); c->err is written
//    only by the calling thread, from the latch, when a call fails (nccl_done).
// 5. A group (comm_group_start/end) is issued by comm.c in one go: `nccl` held from ncclGroupStart
//    to ncclGroupEnd, ncclGroupEnd settled like one collective before any of the group's streams is
//    touched (NCCL enqueues a group's collectives only at ncclGroupEnd), so rules 1-3 hold for it.
#include "comm_nccl_impl.h" // defines: Nccl, nccl_wait, nccl_dtype, nccl_fail
#include "proc_time.h"      // defines: time_mono_s

#include <errno.h>  // defines: EINVAL, ENOMEM, ENOTSUP, EPIPE
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memcpy, strerror

static Nccl *impl(Comm *c)
{
	return c->impl;
}

// `nccl` taken, or NULL (and the fault latched) once the communicators are aborted
static Nccl *enter(Comm *c, const char *op)
{
	Nccl *n = impl(c);
	pthread_mutex_lock(&n->nccl);
	if (!atomic_load(&n->aborted))
		return n;
	pthread_mutex_unlock(&n->nccl);
	nccl_fault(c, 0, "rank %d: %s after the communicators were aborted", c->rank, op);
	return NULL;
}

static int leave(Comm *c, int rc)
{
	pthread_mutex_unlock(&impl(c)->nccl);
	return nccl_done(c, rc);
}

// with `nccl` held, the collective settled: the watchdog's newest collective, and (on a caller's
// stream) what the next control call waits for
static int track(Comm *c, KernCtx *stream)
{
	Nccl *n = impl(c);
	int rc = stream != n->cq ? kern_event_record(n->user_last, stream) : 0;
	pthread_mutex_lock(&n->lock);
	if (!rc)
		rc = kern_event_record(n->last, stream);
	n->last_t = time_mono_s();
	n->last_op = n->op;
	pthread_mutex_unlock(&n->lock);
	return rc;
}

// with `nccl` held: r is what the collective on `data` returned. Inside a group (comm_group_end's
// issue) the collective is only recorded by NCCL: it is settled and tracked by nccl_group_end.
static int queued(Comm *c, KernCtx *stream, const char *op, ncclResult_t r)
{
	Nccl *n = impl(c);
	n->op = op;
	if (n->grouped) { // a failure is turned into the fault and the abort once the group is closed
		if (r != ncclSuccess && r != ncclInProgress && n->group_r == ncclSuccess)
			n->group_r = r;
		n->gstream[n->n_gstream++] = stream;
		return n->group_r == ncclSuccess ? 0 : -EIO;
	}
	if (r != ncclSuccess && r != ncclInProgress)
		return nccl_fail(c, r, op);
	int rc = nccl_settle(c, n->data, r, op);
	return rc ? rc : track(c, stream);
}

// the stream's cudaStream_t, the calling thread on the group's device; NULL: not a CUDA stream
static cudaStream_t on(Comm *c, KernCtx *stream)
{
	cudaStream_t s = kern_stream_native(stream);
	if (s)
		cudaSetDevice(impl(c)->device);
	return s;
}

// `nccl` for one collective: taken here, or held by the open group (nccl_group_start)
static Nccl *coll_enter(Comm *c, cudaStream_t s, const char *op)
{
	Nccl *n = impl(c);
	return !s ? NULL : n->grouped ? n : enter(c, op);
}

static int coll_leave(Comm *c, int rc)
{
	return impl(c)->grouped ? rc : leave(c, rc);
}

static int nccl_allgather(Comm *c, const KTensor *send, KTensor *recv, KernCtx *stream)
{
	cudaStream_t s = on(c, stream);
	Nccl *n = coll_enter(c, s, "allgather");
	if (!n)
		return s ? nccl_done(c, -EPIPE) : -EINVAL;
	return coll_leave(c, queued(c, stream, "allgather",
				    ncclAllGather(send->data, recv->data, (size_t)kern_numel(send),
						  nccl_dtype(send->dtype), n->data, s)));
}

static int nccl_allreduce(Comm *c, KTensor *buf, CommReduce op, KernCtx *stream)
{
	cudaStream_t s = on(c, stream);
	Nccl *n = coll_enter(c, s, "allreduce");
	if (!n)
		return s ? nccl_done(c, -EPIPE) : -EINVAL;
	return coll_leave(c, queued(c, stream, "allreduce",
				    ncclAllReduce(buf->data, buf->data, (size_t)kern_numel(buf), nccl_dtype(buf->dtype),
						  op == COMM_AVG ? ncclAvg : ncclSum, n->data, s)));
}

static int nccl_reduce_scatter(Comm *c, const KTensor *send, KTensor *recv, CommReduce op, KernCtx *stream)
{
	cudaStream_t s = on(c, stream);
	Nccl *n = coll_enter(c, s, "reduce_scatter");
	if (!n)
		return s ? nccl_done(c, -EPIPE) : -EINVAL;
	return coll_leave(
		c, queued(c, stream, "reduce_scatter",
			  ncclReduceScatter(send->data, recv->data, (size_t)kern_numel(recv), nccl_dtype(recv->dtype),
					    op == COMM_AVG ? ncclAvg : ncclSum, n->data, s)));
}

// A group's issue (comm.c calls it with every collective of the group between these two, on one
// thread): `nccl` is held from ncclGroupStart to ncclGroupEnd, so no other NCCL call (the
// watchdog's polls included) falls inside it; ncclGroupEnd (non-blocking: maybe ncclInProgress) is
// settled before any stream of the group is touched, then each stream is tracked as after one
// collective (rule 1 and 3 for the group as a whole).
static int nccl_group_start(Comm *c)
{
	Nccl *n = enter(c, "group");
	if (!n)
		return nccl_done(c, -EPIPE);
	ncclResult_t r = ncclGroupStart();
	if (r != ncclSuccess)
		return leave(c, nccl_fail(c, r, "group start"));
	n->grouped = 1;
	n->n_gstream = 0;
	n->group_r = ncclSuccess;
	return 0;
}

static int nccl_group_end(Comm *c, int rc)
{
	Nccl *n = impl(c);
	if (!n->grouped) // the start failed: nothing is held
		return rc;
	n->grouped = 0;
	ncclResult_t r = ncclGroupEnd(); // always: it closes this thread's group
	n->op = "group of collectives";
	int rs = n->group_r != ncclSuccess                 ? nccl_fail(c, n->group_r, "collective in a group")
		 : r != ncclSuccess && r != ncclInProgress ? nccl_fail(c, r, "group end")
							   : nccl_settle(c, n->data, r, "group end");
	for (int i = 0; i < n->n_gstream && !rs; i++)
		rs = track(c, n->gstream[i]);
	rc = rc ? rc : rs;
	return leave(c, rc);
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

// ---- control channel: host buffers through pinned staging and the ctl communicator's device buffer ----
// The first call (the trainer's agreement before its first step) allocates CTL_MIN_BYTES, room for
// every control message of a run (the agreement, a --metrics-every of up to 26,000 steps' figures,
// the rendezvous): cudaFree synchronizes the whole device, so a run never frees mid-training.
// A larger message grows it to twice the room, or the message.
enum { CTL_MIN_BYTES = 1 << 20 };

static int ctl_room(Comm *c, size_t need)
{
	Nccl *n = impl(c);
	if (need <= n->ctl_cap)
		return 0;
	size_t bytes = n->ctl_cap ? 2 * n->ctl_cap : CTL_MIN_BYTES;
	bytes = bytes > need ? bytes : need;
	cudaFree(n->ctl_buf);
	cudaFreeHost(n->ctl_host);
	n->ctl_buf = n->ctl_host = NULL;
	n->ctl_cap = 0;
	if (cudaMalloc(&n->ctl_buf, bytes) != cudaSuccess || cudaMallocHost(&n->ctl_host, bytes) != cudaSuccess) {
		snprintf(c->err, sizeof c->err, "rank %d: no memory for the control channel's %zu bytes", c->rank,
			 bytes);
		return -ENOMEM;
	}
	n->ctl_cap = bytes;
	return 0;
}

// rule 3: the control stream behind the data plane queued so far (caller's stream, comm stream).
// These failures (and ctl_room's) abort nothing: c->err says why, on the calling thread.
static int ctl_order(Comm *c)
{
	Nccl *n = impl(c);
	int rc = kern_event_record(n->cq_mark, n->cq);
	if (!rc)
		rc = kern_stream_wait_event(n->ctlq, n->cq_mark);
	if (!rc)
		rc = kern_stream_wait_event(n->ctlq, n->user_last);
	if (rc)
		snprintf(c->err, sizeof c->err, "rank %d: cannot order the control channel after the data plane: %s",
			 c->rank, strerror(-rc));
	return rc;
}

static int copy_failed(Comm *c, const char *op)
{
	Nccl *n = enter(c, op);
	return n ? leave(c, nccl_fail(c, ncclUnhandledCudaError, op)) : nccl_done(c, -EPIPE);
}

// `in` bytes to offset in_at, the collective (settled), `out` bytes back, then the bounded host wait
static int ctl_run(Comm *c, const void *send, size_t in, size_t in_at, void *recv, size_t out, const char *op,
		   ncclResult_t (*coll)(Nccl *n, size_t in_at))
{
	Nccl *n = impl(c);
	if (atomic_load(&n->aborted)) // its stream may still hold the buffers ctl_room would replace
		return nccl_done(
			c, nccl_fault(c, -EPIPE, "rank %d: %s after the communicators were aborted", c->rank, op));
	cudaSetDevice(n->device);
	int rc = ctl_room(c, in_at + in > out ? in_at + in : out);
	if (!rc)
		rc = ctl_order(c);
	if (rc)
		return nccl_done(c, rc);
	cudaStream_t s = kern_stream_native(n->ctlq);
	char *d = n->ctl_buf, *h = n->ctl_host;
	if (in) {
		memcpy(h + in_at, send, in);
		if (cudaMemcpyAsync(d + in_at, h + in_at, in, cudaMemcpyHostToDevice, s) != cudaSuccess)
			return copy_failed(c, op);
	}
	if (!enter(c, op))
		return nccl_done(c, -EPIPE);
	ncclResult_t r = coll(n, in_at);
	rc = r != ncclSuccess && r != ncclInProgress ? nccl_fail(c, r, op) : nccl_settle(c, n->ctl, r, op);
	if ((rc = leave(c, rc)) < 0)
		return rc;
	if (out && cudaMemcpyAsync(h, d, out, cudaMemcpyDeviceToHost, s) != cudaSuccess)
		return copy_failed(c, op);
	if ((rc = nccl_wait(c, s, op)) < 0)
		return nccl_done(c, rc);
	if (out)
		memcpy(recv, h, out);
	return 0;
}

static ncclResult_t coll_allgather(Nccl *n, size_t in_at)
{
	char *d = n->ctl_buf;
	return ncclAllGather(d + in_at, d, n->ctl_count, ncclUint8, n->ctl, kern_stream_native(n->ctlq));
}

static ncclResult_t coll_allreduce(Nccl *n, size_t in_at)
{
	return ncclAllReduce(n->ctl_buf, n->ctl_buf, n->ctl_count, ncclFloat64, n->ctl_op, n->ctl,
			     kern_stream_native(n->ctlq));
}

static ncclResult_t coll_broadcast(Nccl *n, size_t in_at)
{
	return ncclBroadcast(n->ctl_buf, n->ctl_buf, n->ctl_count, ncclUint8, n->ctl_root, n->ctl,
			     kern_stream_native(n->ctlq));
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
	.group_start = nccl_group_start,
	.group_end = nccl_group_end,
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
	int rc = nccl_done(c, nccl_setup(c, ctx, id, o));
	if (rc < 0) {
		snprintf(err, errlen, "%s", c->err[0] ? c->err : "NCCL setup failed");
		nccl_close(c);
		return rc;
	}
	*out = c;
	return 0;
}
