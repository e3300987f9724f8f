// The NCCL backend's lifetime and its guards: communicators made without blocking (so a missing
// peer ends in a timeout, not a hang), every non-blocking call settled before its stream is
// touched, the bounded host wait of the control channel, and the watchdog thread that turns an
// NCCL error or a stuck collective into an abort and one sentence (the first fault wins).
#include "comm_nccl_impl.h" // defines: Nccl, ...
#include "proc_time.h"      // defines: time_mono_s

#include <errno.h>  // defines: EINVAL, ENOMEM, ETIMEDOUT, EPIPE, EIO
#include <stdarg.h> // defines: va_list
#include <stdio.h>  // defines: snprintf, vsnprintf
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

int nccl_fault(Comm *c, int rc, const char *fmt, ...)
{
	Nccl *n = c->impl;
	pthread_mutex_lock(&n->lock);
	if (!n->fault[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(n->fault, sizeof n->fault, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&n->lock);
	return rc;
}

int nccl_done(Comm *c, int rc)
{
	Nccl *n = c->impl;
	if (rc < 0) {
		pthread_mutex_lock(&n->lock);
		if (n->fault[0])
			snprintf(c->err, sizeof c->err, "%s", n->fault);
		pthread_mutex_unlock(&n->lock);
	}
	return rc;
}

// with `nccl` held
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

static int errno_of(ncclResult_t r)
{
	return r == ncclSystemError || r == ncclRemoteError ? -EPIPE : r == ncclInvalidArgument ? -EINVAL : -EIO;
}

int nccl_fail(Comm *c, ncclResult_t r, const char *what)
{
	Nccl *n = c->impl;
	const char *last = n->data ? ncclGetLastError(n->data) : "";
	nccl_fault(c, 0, "rank %d: NCCL %s failed: %s%s%s", c->rank, what, ncclGetErrorString(r),
		   last && last[0] ? ": " : "", last ? last : "");
	abort_all(n);
	return errno_of(r);
}

int nccl_settle(Comm *c, ncclComm_t comm, ncclResult_t r, const char *what)
{
	Nccl *n = c->impl;
	const double t0 = time_mono_s();
	for (long us = 10; r == ncclSuccess || r == ncclInProgress; us = us < 1000 ? us * 2 : 1000) {
		if (atomic_load(&n->aborted) || !comm)
			return nccl_fault(c, -EPIPE, "rank %d: NCCL %s after the communicators were aborted", c->rank,
					  what);
		ncclResult_t s;
		if ((r = ncclCommGetAsyncError(comm, &s)) != ncclSuccess)
			break;
		if ((r = s) == ncclSuccess)
			return 0;
		if (r != ncclInProgress)
			break;
		if (time_mono_s() - t0 > n->timeout_s) {
			nccl_fault(c, 0,
				   "rank %d of %d: NCCL %s still in progress after %.0f s (a peer is missing, dead "
				   "or started with another id; --comm-timeout): NCCL aborted",
				   c->rank, c->world, what, n->timeout_s);
			abort_all(n);
			return -ETIMEDOUT;
		}
		nap_us(us);
	}
	return nccl_fail(c, r, what);
}

// the first asynchronous error of either communicator (ncclSuccess: none); with `nccl` held
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

// with `nccl` taken here: an asynchronous error turns into the fault and the abort
static int check_async(Comm *c, const char *what)
{
	Nccl *n = c->impl;
	pthread_mutex_lock(&n->nccl);
	ncclResult_t r = atomic_load(&n->aborted) ? ncclSuccess : async_error(n);
	int rc = r == ncclSuccess ? 0 : nccl_fail(c, r, what);
	pthread_mutex_unlock(&n->nccl);
	return rc;
}

static void abort_locked(Nccl *n)
{
	pthread_mutex_lock(&n->nccl);
	abort_all(n);
	pthread_mutex_unlock(&n->nccl);
}

int nccl_wait(Comm *c, cudaStream_t s, const char *op)
{
	Nccl *n = c->impl;
	const double t0 = time_mono_s();
	for (long us = 20;; us = us < 2000 ? us * 2 : 2000) {
		if (atomic_load(&n->aborted))
			return nccl_fault(c, -EPIPE, "rank %d: %s after the communicators were aborted", c->rank, op);
		cudaError_t q = cudaStreamQuery(s);
		if (q == cudaSuccess)
			return 0;
		if (q != cudaErrorNotReady) {
			nccl_fault(c, 0, "rank %d: %s: CUDA error %s", c->rank, op, cudaGetErrorString(q));
			abort_locked(n);
			return -EIO;
		}
		int rc = check_async(c, op);
		if (rc < 0)
			return rc;
		if (time_mono_s() - t0 > n->timeout_s) {
			nccl_fault(c, 0,
				   "rank %d: %s did not complete in %.0f s (a peer is dead or hangs; "
				   "--comm-timeout): NCCL aborted",
				   c->rank, op, n->timeout_s);
			abort_locked(n);
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
		int fired = check_async(c, "a collective") < 0;
		if (!fired) {
			pthread_mutex_lock(&n->lock);
			double age = time_mono_s() - n->last_t;
			const char *op = n->last_op;
			int stuck = op && age > n->timeout_s && kern_event_query(n->last) == 0;
			pthread_mutex_unlock(&n->lock);
			if (stuck) {
				nccl_fault(c, 0,
					   "rank %d: the %s queued %.0f s ago has not completed (a peer is dead "
					   "or hangs; --comm-timeout %.0f): NCCL aborted",
					   c->rank, op, age, n->timeout_s);
				abort_locked(n);
				fired = 1;
			}
		}
		if (fired && n->fatal) {
			char msg[sizeof n->fault];
			pthread_mutex_lock(&n->lock);
			memcpy(msg, n->fault, sizeof msg);
			pthread_mutex_unlock(&n->lock);
			n->fatal(n->fatal_arg, msg);
		}
	}
	return NULL;
}

// the data communicator without blocking, so that init ends by the timeout, then the control one
static int make_comms(Comm *c, const void *id)
{
	Nccl *n = c->impl;
	ncclUniqueId uid;
	memcpy(&uid, id, sizeof uid);
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	cfg.blocking = 0;
	pthread_mutex_lock(&n->nccl);
	ncclResult_t r = ncclCommInitRankConfig(&n->data, c->world, uid, c->rank, &cfg);
	int rc = r != ncclSuccess && r != ncclInProgress ? nccl_fail(c, r, "init") : nccl_settle(c, n->data, r, "init");
	if (!rc) {
		r = ncclCommSplit(n->data, 0, c->rank, &n->ctl, &cfg);
		rc = r != ncclSuccess && r != ncclInProgress ? nccl_fail(c, r, "control split")
							     : nccl_settle(c, n->ctl, r, "control split");
	}
	pthread_mutex_unlock(&n->nccl);
	return rc;
}

int nccl_setup(Comm *c, KernCtx *ctx, const void *id, const CommNcclOptions *o)
{
	Nccl *n = c->impl;
	n->device = kern_ctx_device(ctx);
	n->timeout_s = o->timeout_s > 0 ? o->timeout_s : 600;
	n->fatal = o->fatal;
	n->fatal_arg = o->fatal_arg;
	pthread_mutex_init(&n->lock, NULL);
	pthread_mutex_init(&n->nccl, NULL);
	if (cudaSetDevice(n->device) != cudaSuccess)
		return nccl_fault(c, -ENODEV, "rank %d: cannot use CUDA device %d", c->rank, n->device);
	int rc = kern_stream_create(ctx, &n->cq);
	if (!rc)
		rc = kern_stream_create(ctx, &n->ctlq);
	KEvent **ev[] = {&n->drained, &n->last, &n->user_last, &n->cq_mark};
	for (size_t i = 0; i < sizeof ev / sizeof ev[0] && !rc; i++)
		rc = kern_event_create(ctx, ev[i]);
	if (rc)
		return nccl_fault(c, rc, "rank %d: cannot make the comm streams and events: %s", c->rank,
				  strerror(-rc));
	if ((rc = make_comms(c, id)) < 0)
		return rc;
	if (pthread_create(&n->watchdog, NULL, watchdog, c))
		return nccl_fault(c, -EAGAIN, "rank %d: cannot start the NCCL watchdog thread", c->rank);
	n->watching = 1;
	return 0;
}

// non-blocking communicators end in ncclCommFinalize, settled (bounded), then ncclCommDestroy;
// one that does not settle is aborted
static void finish(Comm *c)
{
	Nccl *n = c->impl;
	pthread_mutex_lock(&n->nccl);
	ncclComm_t *comms[] = {&n->ctl, &n->data};
	for (int i = 0; i < 2 && !atomic_load(&n->aborted); i++)
		if (*comms[i] && nccl_settle(c, *comms[i], ncclCommFinalize(*comms[i]), "finalize") == 0) {
			ncclCommDestroy(*comms[i]);
			*comms[i] = NULL;
		}
	abort_all(n); // what is left (nothing after a clean finish)
	pthread_mutex_unlock(&n->nccl);
}

void nccl_close(Comm *c)
{
	Nccl *n = c->impl;
	if (n) {
		atomic_store(&n->stop, 1);
		if (n->watching)
			pthread_join(n->watchdog, NULL);
		cudaSetDevice(n->device);
		if (n->watching)
			finish(c);
		else
			abort_locked(n); // a setup that failed: the peers may never finalize
		if (n->ctlq)             // its stream's copies are done before their buffers go
			kern_ctx_destroy(n->ctlq);
		if (n->cq)
			kern_ctx_destroy(n->cq);
		if (n->ctl_buf)
			cudaFree(n->ctl_buf);
		if (n->ctl_host)
			cudaFreeHost(n->ctl_host);
		KEvent *ev[] = {n->drained, n->last, n->user_last, n->cq_mark};
		for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
			kern_event_destroy(ev[i]);
		pthread_mutex_destroy(&n->nccl);
		pthread_mutex_destroy(&n->lock);
		free(n);
	}
	free(c);
}

int comm_nccl_available(void)
{
	return 1;
}
