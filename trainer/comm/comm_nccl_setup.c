// The NCCL backend's lifetime and its guards: communicators made without blocking (so a missing
// peer ends in a timeout, not a hang), the bounded host wait of the control channel, and the
// watchdog thread that turns an NCCL error or a stuck collective into an abort and one sentence.
#include "comm_nccl_impl.h" // defines: Nccl, ...
#include "proc_time.h"      // defines: time_mono_s

#include <errno.h>  // defines: EINVAL, ENOMEM, ETIMEDOUT, EPIPE, EIO
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: free
#include <string.h> // defines: memcpy
#include <time.h>   // defines: clock_gettime, nanosleep

static void nap_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	nanosleep(&ts, NULL);
}

ncclDataType_t nccl_dtype(KDtype dt)
{
	switch (dt) {
	case KDT_BF16: return ncclBfloat16;
	case KDT_F64: return ncclFloat64;
	case KDT_I32: return ncclInt32;
	case KDT_U8: return ncclUint8;
	case KDT_I64: return ncclInt64;
	default: return ncclFloat32;
	}
}

static void abort_all(Nccl *n)
{
	if (atomic_exchange(&n->aborted, 1))
		return;
	if (n->ctl)
		ncclCommAbort(n->ctl);
	if (n->data)
		ncclCommAbort(n->data);
	n->ctl = n->data = NULL;
}

int nccl_fail(Comm *c, ncclResult_t r, const char *op)
{
	Nccl *n = c->impl;
	const char *last = n->data ? ncclGetLastError(n->data) : "";
	snprintf(c->err, sizeof c->err, "rank %d: NCCL %s failed: %s%s%s", c->rank, op, ncclGetErrorString(r),
		 last && last[0] ? ": " : "", last ? last : "");
	abort_all(n);
	return r == ncclSystemError || r == ncclRemoteError ? -EPIPE : r == ncclInvalidArgument ? -EINVAL : -EIO;
}

// the first asynchronous error of either communicator (ncclSuccess / ncclInProgress: none)
static ncclResult_t async_error(Nccl *n)
{
	ncclResult_t r = ncclSuccess, e;
	if (n->data && ncclCommGetAsyncError(n->data, &e) == ncclSuccess && e != ncclSuccess && e != ncclInProgress)
		r = e;
	if (r == ncclSuccess && n->ctl && ncclCommGetAsyncError(n->ctl, &e) == ncclSuccess && e != ncclSuccess &&
	    e != ncclInProgress)
		r = e;
	return r;
}

int nccl_wait(Comm *c, cudaStream_t s, const char *op)
{
	Nccl *n = c->impl;
	const double t0 = time_mono_s();
	for (long us = 20;; us = us < 2000 ? us * 2 : 2000) {
		if (atomic_load(&n->aborted))
			return c->err[0] ? -EPIPE
					 : (snprintf(c->err, sizeof c->err,
						     "rank %d: %s after the communicators "
						     "were aborted",
						     c->rank, op),
					    -EPIPE);
		cudaError_t q = cudaStreamQuery(s);
		if (q == cudaSuccess)
			return 0;
		if (q != cudaErrorNotReady) {
			snprintf(c->err, sizeof c->err, "rank %d: %s: CUDA error %s", c->rank, op,
				 cudaGetErrorString(q));
			abort_all(n);
			return -EIO;
		}
		ncclResult_t r = async_error(n);
		if (r != ncclSuccess)
			return nccl_fail(c, r, op);
		if (time_mono_s() - t0 > n->timeout_s) {
			snprintf(c->err, sizeof c->err,
				 "rank %d: %s did not complete in %.0f s (a peer is dead or hangs; "
				 "--comm-timeout): NCCL aborted",
				 c->rank, op, n->timeout_s);
			abort_all(n);
			return -ETIMEDOUT;
		}
		nap_us(us);
	}
}

// every 100 ms: NCCL's asynchronous errors, and whether the newest data-plane collective is stuck
static void *watchdog(void *arg)
{
	Comm *c = arg;
	Nccl *n = c->impl;
	cudaSetDevice(n->device);
	while (!atomic_load(&n->stop)) {
		nap_us(100000);
		if (atomic_load(&n->aborted))
			continue;
		ncclResult_t r = async_error(n);
		char msg[256] = "";
		if (r != ncclSuccess) {
			nccl_fail(c, r, "a collective");
			memcpy(msg, c->err, sizeof msg);
		} else {
			pthread_mutex_lock(&n->lock);
			double age = time_mono_s() - n->last_t;
			const char *op = n->last_op;
			int stuck = op && age > n->timeout_s && kern_event_query(n->last) == 0;
			pthread_mutex_unlock(&n->lock);
			if (stuck) {
				snprintf(c->err, sizeof c->err,
					 "rank %d: the %s queued %.0f s ago has not completed (a peer is dead "
					 "or hangs; --comm-timeout %.0f): NCCL aborted",
					 c->rank, op, age, n->timeout_s);
				memcpy(msg, c->err, sizeof msg);
				abort_all(n);
			}
		}
		if (msg[0] && n->fatal)
			n->fatal(n->fatal_arg, msg);
	}
	return NULL;
}

// a non-blocking init or split until it is done; -ETIMEDOUT past the deadline (what names it)
static int settle(Comm *c, ncclComm_t *comm, ncclResult_t r, double t0, const char *what)
{
	Nccl *n = c->impl;
	while (r == ncclInProgress ||
	       (r == ncclSuccess && ncclCommGetAsyncError(*comm, &r) == ncclSuccess && r == ncclInProgress)) {
		if (time_mono_s() - t0 > n->timeout_s) {
			snprintf(c->err, sizeof c->err,
				 "rank %d of %d: NCCL %s did not complete in %.0f s (are all ranks "
				 "started with the same id?)",
				 c->rank, c->world, what, n->timeout_s);
			abort_all(n);
			return -ETIMEDOUT;
		}
		nap_us(1000);
		r = ncclSuccess;
	}
	return r == ncclSuccess ? 0 : nccl_fail(c, r, what);
}

// the data communicator without blocking, so that init ends by the timeout, then the control one
static int make_comms(Comm *c, const void *id)
{
	Nccl *n = c->impl;
	ncclUniqueId uid;
	memcpy(&uid, id, sizeof uid);
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	cfg.blocking = 0;
	const double t0 = time_mono_s();
	int rc = settle(c, &n->data, ncclCommInitRankConfig(&n->data, c->world, uid, c->rank, &cfg), t0, "init");
	return rc ? rc : settle(c, &n->ctl, ncclCommSplit(n->data, 0, c->rank, &n->ctl, &cfg), t0, "control split");
}

int nccl_setup(Comm *c, KernCtx *ctx, const void *id, const CommNcclOptions *o)
{
	Nccl *n = c->impl;
	n->device = kern_ctx_device(ctx);
	n->timeout_s = o->timeout_s > 0 ? o->timeout_s : 600;
	n->fatal = o->fatal;
	n->fatal_arg = o->fatal_arg;
	pthread_mutex_init(&n->lock, NULL);
	if (cudaSetDevice(n->device) != cudaSuccess) {
		snprintf(c->err, sizeof c->err, "rank %d: cannot use CUDA device %d", c->rank, n->device);
		return -ENODEV;
	}
	int rc = kern_stream_create(ctx, &n->cq);
	if (!rc)
		rc = kern_event_create(ctx, &n->drained);
	if (!rc)
		rc = kern_event_create(ctx, &n->last);
	if (!rc && cudaStreamCreateWithFlags(&n->ctl_stream, cudaStreamNonBlocking) != cudaSuccess)
		rc = -ENOMEM;
	if (rc) {
		snprintf(c->err, sizeof c->err, "rank %d: cannot make the comm streams and events: %s", c->rank,
			 strerror(-rc));
		return rc;
	}
	if ((rc = make_comms(c, id)) < 0)
		return rc;
	if (pthread_create(&n->watchdog, NULL, watchdog, c)) {
		snprintf(c->err, sizeof c->err, "rank %d: cannot start the NCCL watchdog thread", c->rank);
		return -EAGAIN;
	}
	n->watching = 1;
	return 0;
}

void nccl_close(Comm *c)
{
	Nccl *n = c->impl;
	if (n) {
		atomic_store(&n->stop, 1);
		if (n->watching)
			pthread_join(n->watchdog, NULL);
		cudaSetDevice(n->device);
		if (!atomic_load(&n->aborted)) {
			if (n->ctl)
				ncclCommDestroy(n->ctl);
			if (n->data)
				ncclCommDestroy(n->data);
		}
		if (n->ctl_buf)
			cudaFree(n->ctl_buf);
		if (n->ctl_stream)
			cudaStreamDestroy(n->ctl_stream);
		kern_event_destroy(n->drained);
		kern_event_destroy(n->last);
		if (n->cq)
			kern_ctx_destroy(n->cq);
		pthread_mutex_destroy(&n->lock);
		free(n);
	}
	free(c);
}

int comm_nccl_available(void)
{
	return 1;
}
