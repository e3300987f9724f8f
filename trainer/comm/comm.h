// Collectives between the trainer's ranks behind one interface (all-gather, all-reduce,
// reduce-scatter, broadcast, barrier), with per-collective byte accounting; backends: comm_shm.
#ifndef TRAINER_COMM_H
#define TRAINER_COMM_H
// defines: Comm, CommOps, CommOp, CommReduce, CommStats, comm_allgather, comm_allreduce_f32,
//          comm_reduce_scatter_f32, comm_broadcast, comm_barrier, comm_error, comm_close,
//          comm_stats_reset, comm_stats_format, comm_op_name, comm_model_bytes

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t

typedef enum { COMM_ALLGATHER = 0, COMM_ALLREDUCE, COMM_REDUCE_SCATTER, COMM_BROADCAST, COMM_BARRIER, COMM_NOPS } CommOp;
typedef enum { COMM_SUM = 0, COMM_AVG } CommReduce;

// Bytes "sent" follow the ring algorithms NCCL uses, i.e. the communication model of DESIGN §7:
// all-gather (K−1)·b, reduce-scatter (K−1)·b (b = this rank's output), all-reduce 2(K−1)/K·b,
// broadcast b for every rank but the last of the ring from the root, barrier 0. The shm backend
// moves the data differently (one copy in, one copy out); the count is the network cost.
typedef struct {
	uint64_t calls[COMM_NOPS];
	double bytes[COMM_NOPS];
} CommStats;

typedef struct Comm Comm;

typedef struct {
	int (*allgather)(Comm *c, const void *send, void *recv, size_t bytes);
	int (*allreduce_f32)(Comm *c, float *buf, size_t n, CommReduce op);
	int (*reduce_scatter_f32)(Comm *c, const float *send, float *recv, size_t n, CommReduce op);
	int (*broadcast)(Comm *c, void *buf, size_t bytes, int root);
	int (*barrier)(Comm *c);
	void (*close)(Comm *c);
} CommOps;

struct Comm {
	const CommOps *ops;
	void *impl;       // backend state
	int rank, world;
	CommStats stats;
	char err[256];    // why the last failing call failed (comm_error)
};

// send (bytes) from every rank lands in recv (world, bytes) in rank order
int comm_allgather(Comm *c, const void *send, void *recv, size_t bytes);
// in place over buf (n); the reduction order is fixed (rank 0, 1, ...), so results are
// bit-identical on every rank and across runs
int comm_allreduce_f32(Comm *c, float *buf, size_t n, CommReduce op);
// send (world, n): block q goes to rank q; recv (n) = reduction over ranks of their block `rank`
int comm_reduce_scatter_f32(Comm *c, const float *send, float *recv, size_t n, CommReduce op);
int comm_broadcast(Comm *c, void *buf, size_t bytes, int root);
int comm_barrier(Comm *c);
// a sentence on the last failure ("rank 2 (pid 123) exited"), "" when none
const char *comm_error(const Comm *c);
void comm_close(Comm *c);
void comm_stats_reset(Comm *c);
// one log line of the counters: "allgather=3/4320B allreduce=1/6000B ..." (ops with calls only);
// returns what snprintf returns
int comm_stats_format(const CommStats *st, char *buf, size_t len);
const char *comm_op_name(CommOp op);
// the model's bytes one rank sends for one call of op with payload b (see CommStats)
double comm_model_bytes(CommOp op, int world, int rank, int root, double b);

#endif
