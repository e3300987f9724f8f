// Private to the NCCL backend of comm: its state, the bounded host wait, the watchdog and setup
// (comm_nccl_setup.c), shared with the collectives (comm_nccl.c).
#ifndef TRAINER_COMM_NCCL_IMPL_H
#define TRAINER_COMM_NCCL_IMPL_H
// defines: Nccl, nccl_setup, nccl_close, nccl_wait, nccl_settle, nccl_fail, nccl_fault, nccl_done,
//          nccl_dtype

#include <cuda_runtime.h> // defines: cudaStream_t
#include <nccl.h>         // defines: ncclComm_t, ncclResult_t, ncclDataType_t
#include <pthread.h>      // defines: pthread_t, pthread_mutex_t
#include <stdatomic.h>    // defines: atomic_int

#include "comm_impl.h" // defines: struct Comm, CommOps

typedef struct {
	ncclComm_t data, ctl; // NULL once aborted (under `nccl`)
	int device;
	double timeout_s;
	CommFatalFn fatal;
	void *fatal_arg;
	KernCtx *cq;       // the comm stream: started all-reduces
	KernCtx *ctlq;     // the control channel's stream
	KEvent *drained;   // recorded on cq by drain
	KEvent *user_last; // after the newest data-plane collective on a caller's stream
	KEvent *cq_mark;   // recorded on cq by each control call: the started all-reduces before it
	void *ctl_buf;     // device buffer of the control channel
	void *ctl_host;    // its pinned host staging (a pageable copy could block the host unbounded)
	size_t ctl_cap, ctl_host_cap, ctl_count;
	int ctl_root;
	ncclRedOp_t ctl_op;
	const char *op; // the data-plane collective being queued
	int grouped;    // inside a group's issue (nccl_group_start): `nccl` held, collectives recorded
	int n_gstream;
	ncclResult_t group_r;             // the first failing collective's result inside the open group
	KernCtx *gstream[COMM_GROUP_MAX]; // the group's collectives' streams, tracked at its end
	// every NCCL call on either communicator, by any thread (the rule: comm_nccl.c's top)
	pthread_mutex_t nccl;
	// the watchdog's view of the newest data-plane collective, and the first fault
	pthread_mutex_t lock;
	KEvent *last;
	double last_t;
	const char *last_op;
	char fault[256]; // the first failure any thread saw ("rank 1: ..."), "" when none
	pthread_t watchdog;
	int watching;
	atomic_int stop, aborted;
} Nccl;

// the state behind c->impl: device, communicators (bounded by o->timeout_s), streams, watchdog
int nccl_setup(Comm *c, KernCtx *ctx, const void *id, const CommNcclOptions *o);
void nccl_close(Comm *c);
// the host waits for stream s, polling the communicators' errors; -ETIMEDOUT past timeout_s,
// -EPIPE on an NCCL error (both abort the communicators and latch the fault). Without `nccl`.
int nccl_wait(Comm *c, cudaStream_t s, const char *op);
// With `nccl` held: the call that returned r on comm (non-blocking: maybe ncclInProgress) until
// ncclCommGetAsyncError says it left ncclInProgress, so its work is on the stream or it failed;
// -ETIMEDOUT past timeout_s. 0, or the fault latched and both communicators aborted.
int nccl_settle(Comm *c, ncclComm_t comm, ncclResult_t r, const char *what);
// With `nccl` held: the fault from an NCCL result, both communicators aborted; the matching -errno
int nccl_fail(Comm *c, ncclResult_t r, const char *what);
// the first fault wins, from any thread; returns rc
int nccl_fault(Comm *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
// on the calling (owning) thread before a call returns rc < 0: c->err becomes the latched fault
int nccl_done(Comm *c, int rc);
ncclDataType_t nccl_dtype(KDtype dt);

#endif
