// Private to the shm backend of trainer/comm/: its per-rank state, the host-memory collective
// engine (comm_shm.c) and the data plane with its comm thread (comm_shm_thread.c).
#ifndef TRAINER_COMM_SHM_IMPL_H
#define TRAINER_COMM_SHM_IMPL_H
// defines: Shm, ShmHeader, ShmJob, SHM_QUEUE, shm_barrier, shm_gather, shm_reduce, shm_reduce_scatter,
//          shm_bcast, shm_thread_init, shm_thread_stop, shm_close_comm, shm_comm_ops

#include <pthread.h> // defines: pthread_t, pthread_mutex_t, pthread_cond_t

#include "comm_impl.h" // defines: CommOps, struct Comm

typedef struct ShmHeader ShmHeader;

// an all-reduce started with comm_allreduce_start, waiting for the comm thread
typedef struct {
	void *buf;
	size_t n;
	KDtype dt;
	CommReduce op;
	KEvent *ready;
} ShmJob;

#define SHM_QUEUE 256

typedef struct {
	ShmHeader *h;
	unsigned char *slots; // (world + 1, slot_bytes): one per rank, then the shared result
	size_t map_bytes;
	double timeout_s;
	// the comm thread (started at the first comm_allreduce_start) and its FIFO
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int started, stop, busy, head, count, thread_rc;
	ShmJob q[SHM_QUEUE];
	Comm tc; // the thread's view of the group: its own error text
} Shm;

// the engine on host memory: every rank calls the same sequence; reductions add ranks in order
int shm_barrier(Comm *c);
int shm_gather(Comm *c, const void *send, void *recv, size_t bytes);
// buf (n) of F32, BF16 (f32 accumulation, one rounding) or F64
int shm_reduce(Comm *c, void *buf, size_t n, KDtype dt, CommReduce op);
int shm_reduce_scatter(Comm *c, const void *send, void *recv, size_t n, KDtype dt, CommReduce op);
int shm_bcast(Comm *c, void *buf, size_t bytes, int root);

void shm_thread_init(Shm *s);
// waits for the queued jobs, stops the thread, frees its resources
void shm_thread_stop(Comm *c);
void shm_close_comm(Comm *c);
extern const CommOps shm_comm_ops;

#endif
