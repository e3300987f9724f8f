// Private to the NCCL backend of comm: its state, the bounded host wait, the watchdog and setup
// (comm_nccl_setup.c), shared with the collectives (comm_nccl.c).
#ifndef TRAINER_COMM_NCCL_IMPL_H
#define TRAINER_COMM_NCCL_IMPL_H
// defines: Nccl, nccl_setup, nccl_close, nccl_wait, nccl_fail, nccl_dtype

#include <cuda_runtime.h> // defines: cudaStream_t
#include <nccl.h>         // defines: ncclComm_t, ncclResult_t, ncclDataType_t
#include <pthread.h>      // defines: pthread_t, pthread_mutex_t
#include <stdatomic.h>    // defines: atomic_int

#include "comm_impl.h" // defines: struct Comm, CommOps

typedef struct {
	ncclComm_t data, ctl;
	int device;
	double timeout_s;
	CommFatalFn fatal;
	void *fatal_arg;
	KernCtx *cq;     // the comm stream: started all-reduces
	KEvent *drained; // recorded on cq by drain
	cudaStream_t ctl_stream;
	void *ctl_buf; // device buffer of the control channel
	size_t ctl_cap, ctl_count;
	int ctl_root;
	ncclRedOp_t ctl_op;
	const char *op; // the data-plane collective being queued
	// the watchdog's view of the newest data-plane collective
	pthread_mutex_t lock;
	KEvent *last;
	double last_t;
	const char *last_op;
	pthread_t watchdog;
	int watching;
	atomic_int stop, aborted;
} Nccl;

// the state behind c->impl: device, communicators (bounded by o->timeout_s), streams, watchdog
int nccl_setup(Comm *c, KernCtx *ctx, const void *id, const CommNcclOptions *o);
void nccl_close(Comm *c);
// the host waits for stream s, polling the communicators' errors; -ETIMEDOUT past timeout_s,
// -EPIPE on an NCCL error (both abort the communicators; c->err says why, naming this rank)
int nccl_wait(Comm *c, cudaStream_t s, const char *op);
// c->err from an NCCL result, the communicators aborted; returns the matching -errno
int nccl_fail(Comm *c, ncclResult_t r, const char *op);
ncclDataType_t nccl_dtype(KDtype dt);

#endif
