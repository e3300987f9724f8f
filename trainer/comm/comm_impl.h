// Private to trainer/comm/: the backend table every Comm dispatches to and the Comm struct
// itself. The front end (comm.c) checks arguments and counts bytes; a backend only acts.
#ifndef TRAINER_COMM_IMPL_H
#define TRAINER_COMM_IMPL_H
// defines: CommOps, struct Comm, comm_elem_bytes

#include "comm.h" // defines: Comm, CommReduce, CommStats, KTensor, KernCtx, KEvent

typedef struct {
	// data plane (checked: dtypes and element counts agree, see comm.h)
	int (*allgather)(Comm *c, const KTensor *send, KTensor *recv, KernCtx *stream);
	int (*allreduce)(Comm *c, KTensor *buf, CommReduce op, KernCtx *stream);
	int (*reduce_scatter)(Comm *c, const KTensor *send, KTensor *recv, CommReduce op, KernCtx *stream);
	int (*allreduce_start)(Comm *c, KTensor *buf, CommReduce op, KEvent *ready);
	int (*drain)(Comm *c, KernCtx *stream);
	// control channel
	int (*ctl_allgather)(Comm *c, const void *send, void *recv, size_t bytes);
	int (*ctl_allreduce)(Comm *c, double *buf, size_t n, CommReduce op);
	int (*ctl_broadcast)(Comm *c, void *buf, size_t bytes, int root);
	int (*ctl_barrier)(Comm *c);
	void (*close)(Comm *c);
} CommOps;

struct Comm {
	const CommOps *ops;
	void *impl; // backend state
	int rank, world;
	CommStats stats;
	char err[256]; // why the last failing call failed (comm_error)
};

#endif
