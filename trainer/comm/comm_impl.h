// Private to trainer/comm/: the backend table every Comm dispatches to and the Comm struct
// itself. The front end (comm.c) checks arguments and counts bytes; a backend only acts.
#ifndef TRAINER_COMM_IMPL_H
#define TRAINER_COMM_IMPL_H
// defines: CommOps, struct Comm, CommCall, comm_elem_bytes

#include "comm.h" // defines: Comm, CommReduce, CommStats, KTensor, KernCtx, KEvent, COMM_GROUP_MAX

// a data-plane collective recorded inside a group (comm_group_start), issued at its outermost end
typedef struct {
	CommOp op;
	KTensor send, recv; // all-reduce: recv only (in place)
	CommReduce red;
	KernCtx *stream;
} CommCall;

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
	// around the issue of a group's recorded collectives (NULL: they are issued one after another);
	// group_end gets the first error of the issue (it must end the group anyway) and returns its own
	int (*group_start)(Comm *c);
	int (*group_end)(Comm *c, int rc);
	void (*close)(Comm *c);
} CommOps;

struct Comm {
	const CommOps *ops;
	void *impl; // backend state
	int rank, world;
	CommStats stats;
	int group_depth, n_group, group_err; // comm_group_start nesting, its recorded collectives, its first failure
	CommCall group[COMM_GROUP_MAX];
	char err[256]; // why the last failing call failed (comm_error)
};

#endif
