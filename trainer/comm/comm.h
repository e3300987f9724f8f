// trainer/comm: collectives between the trainer's ranks (the one public header of this folder).
// Data plane on device buffers ordered on a stream, a host control channel, bucketed gradient
// all-reduce over the flat buffer, the shared-memory backend, and the rendezvous.
#ifndef TRAINER_COMM_H
#define TRAINER_COMM_H
// defines: Comm, CommOp, CommReduce, CommStats, comm_rank, comm_world, comm_stats, comm_allgather,
//          comm_allreduce, comm_reduce_scatter, comm_allreduce_start, comm_drain, comm_group_start,
//          comm_group_end, COMM_GROUP_MAX, comm_ctl_allgather,
//          comm_ctl_allreduce, comm_ctl_broadcast, comm_ctl_barrier, comm_error, comm_close, comm_stats_reset,
//          comm_stats_format, comm_model_bytes, comm_local_open, comm_shm_create,
//          comm_shm_attach, comm_shm_unlink, COMM_SHM_MAX_WORLD, CommFatalFn, CommNcclOptions, comm_nccl_open,
//          comm_nccl_unique_id, comm_nccl_id_bytes, comm_nccl_available, CommBuckets, comm_buckets_create,
//          comm_buckets_ready, comm_buckets_finish, comm_buckets_count, comm_buckets_free,
//          RdvMethod, RdvOptions, RdvInfo, RDV_BLOB_MAX, RDV_DEFAULT_PORT, RDV_DEFAULT_TIMEOUT_MS,
//          rdv_options_default, rdv_resolve, rdv_describe, rdv_method_name, rdv_method_parse,
//          rdv_exchange, rdv_exchange_tcp, rdv_exchange_file, rdv_exchange_ring, rdv_hostlist_count,
//          rdv_hostlist_nth, rdv_tasks_per_node, rdv_job_token
//
// ---- The contract a comm backend fills (shm for CPU ranks, NCCL for GPU ranks) ----
//
// DATA PLANE: device buffers (KTensor of kernels/kern_ops.h; the dtype is the tensor's) and a
// stream (KernCtx). A collective called with `stream` starts after the work queued on stream
// before the call, and work queued on stream after the call sees its result: what
// ncclAllGather/ncclAllReduce/ncclReduceScatter on that stream's cudaStream_t do. It may return
// before it has run. The shm backend, which moves host memory, first makes sure the stream's work
// is done (an event, waited for only when it is still pending: never on the CPU backend, whose
// events complete when recorded) and returns when the collective is complete.
//
// OVERLAP: comm_allreduce_start queues an in-place all-reduce that starts once `ready` completes,
// on the communicator's own queue (NCCL: a comm stream that waits for the event; shm: a comm
// thread), and returns at once; comm_drain(stream) orders the work queued on stream afterwards
// after every started collective (NCCL: an event on the comm stream the stream waits for; shm: the
// host waits for the comm thread, which is not a device wait). Every other call drains first, so
// collectives run in the order they were called, which must be the same on every rank.
//
// GROUPS: the data-plane collectives (all-gather, all-reduce, reduce-scatter) called between
// comm_group_start and comm_group_end are issued together at the outermost end (nested groups count
// depth), in the order they were called: on NCCL inside ncclGroupStart/ncclGroupEnd, so NCCL launches
// them as one; elsewhere one after another. Until that end they are only recorded (tensors copied,
// buffers not): none has run or is queued on its stream, so work queued inside the group must not
// read their results nor write their buffers, and a control call, a started all-reduce or a drain
// inside a group is refused (-EINVAL: on NCCL a host wait inside a group waits for collectives that
// are not on their streams yet). Every rank groups the same collectives in the same order.
//
// CONTROL CHANNEL: small host buffers for the agreement on stop and stream positions and for the
// logged metrics (comm_ctl_*); it never touches the device.
//
// DETERMINISM: reductions add ranks in the order 0, 1, ..., K−1 (f32 accumulation, a bf16 result
// rounded once), so every rank gets the same bits, run after run. Bytes "sent" are counted per
// data-plane collective with the ring model (comm_model_bytes), whatever the backend does.

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t

#include "kern_ops.h" // defines: KTensor, KernCtx, KEvent
#include "ring.h"     // defines: Ring (rdv_exchange_ring)

typedef enum { COMM_ALLGATHER = 0, COMM_ALLREDUCE, COMM_REDUCE_SCATTER, COMM_NOPS } CommOp;
typedef enum { COMM_SUM = 0, COMM_AVG } CommReduce;

// Bytes "sent" follow the ring algorithms NCCL uses, i.e. the communication model of DESIGN §7:
// all-gather (K−1)·b, reduce-scatter (K−1)·b (b = this rank's output), all-reduce 2(K−1)/K·b.
typedef struct {
	uint64_t calls[COMM_NOPS];
	double bytes[COMM_NOPS];
} CommStats;

typedef struct Comm Comm;

int comm_rank(const Comm *c);
int comm_world(const Comm *c);
// the data plane's counters since the last comm_stats_reset
const CommStats *comm_stats(const Comm *c);

// recv (world · numel(send)), the dtype of send: rank r's send lands at r · numel(send)
int comm_allgather(Comm *c, const KTensor *send, KTensor *recv, KernCtx *stream);
// in place; F32 or BF16
int comm_allreduce(Comm *c, KTensor *buf, CommReduce op, KernCtx *stream);
// send (world · n): block q goes to rank q; recv (n) = the reduction over ranks of their block
// `rank`; F32 or BF16, both the same dtype
int comm_reduce_scatter(Comm *c, const KTensor *send, KTensor *recv, CommReduce op, KernCtx *stream);
// the in-place all-reduce of buf, queued: it starts when `ready` completes (record it on the stream
// that produced buf); buf must stay untouched until comm_drain
int comm_allreduce_start(Comm *c, KTensor *buf, CommReduce op, KEvent *ready);
// work queued on stream from now on sees every collective started so far; returns the first error
// any of them had
int comm_drain(Comm *c, KernCtx *stream);
// see GROUPS; at most COMM_GROUP_MAX collectives in one group (-E2BIG). A call that fails inside a
// group (bad arguments, too many) drops the whole group: comm_group_end issues nothing and returns
// that error; otherwise it returns the first error of the issue. -EINVAL without an open group.
#define COMM_GROUP_MAX 16
int comm_group_start(Comm *c);
int comm_group_end(Comm *c);

// control channel: host memory only
int comm_ctl_allgather(Comm *c, const void *send, void *recv, size_t bytes);
int comm_ctl_allreduce(Comm *c, double *buf, size_t n, CommReduce op);
int comm_ctl_broadcast(Comm *c, void *buf, size_t bytes, int root);
int comm_ctl_barrier(Comm *c);

// a sentence on the last failure ("rank 2 (pid 123) exited"), "" when none
const char *comm_error(const Comm *c);
void comm_close(Comm *c);
void comm_stats_reset(Comm *c);
// one log line of the counters: "allgather=3/4320B allreduce=1/6000B ..." (ops with calls only);
// returns what snprintf returns
int comm_stats_format(const CommStats *st, char *buf, size_t len);
// the model's bytes one rank sends for one call of op with payload b (see CommStats)
double comm_model_bytes(CommOp op, int world, double b);

// ---- backends ----
// a world of one (a trainer run as a single rank without a group): the all-gather and the
// reduce-scatter are copies on the stream (any kernels backend), the rest does nothing. -ENOMEM.
int comm_local_open(Comm **out);

// Same-host shared memory for K CPU rank processes (the CPU backend's tensors: host memory;
// another kernels backend gets -ENOTSUP): one POSIX shm segment with a slot per rank, a
// process-shared futex barrier, dead-peer detection so no rank hangs, and a comm thread per rank
// that runs the started all-reduces while backward goes on.
#define COMM_SHM_MAX_WORLD 64
// Creates (or re-creates) the segment "/name" for world ranks, slot_bytes of staging per rank
// (larger collectives are cut into rounds). Done once by the launcher before the ranks start.
// -EINVAL on bad arguments, other -errno from shm_open/ftruncate/mmap.
int comm_shm_create(const char *name, int world, size_t slot_bytes);
// Joins the segment as rank. Every wait (barrier) checks the peers: a peer that exited or left
// makes the call fail with -EPIPE and comm_error() naming it; no progress for timeout_s seconds
// fails with -ETIMEDOUT. A failure is recorded in the segment so every other rank fails too.
// -EBUSY when a live process already holds the rank, -EPROTO on a segment of another version.
int comm_shm_attach(const char *name, int rank, double timeout_s, Comm **out);
int comm_shm_unlink(const char *name);

// NCCL for GPU ranks (any number of machines): the data plane on the callers' device streams
// (kern_stream_native: the CUDA backend), started all-reduces on a comm stream, the control channel
// through a second communicator on a stream of its own (its host waits end by timeout_s); a control
// call runs on the device after the data-plane collectives called before it (one order for both
// communicators, so they cannot deadlock: comm_nccl.c's rules), so it waits for them. A
// watchdog thread aborts both communicators on an NCCL error or a data-plane collective older than
// timeout_s and calls fatal(arg, "rank 3: ...") from its thread: the caller ends the process there
// (a trainer cannot go on), so no rank hangs. A build without NCCL: comm_nccl_available() is 0 and
// the functions return -ENOTSUP.
typedef void (*CommFatalFn)(void *arg, const char *msg);
typedef struct {
	double timeout_s;  // every host wait of init and the control channel; the watchdog's bound
	CommFatalFn fatal; // NULL: the watchdog only aborts and the next call fails with comm_error
	void *fatal_arg;
} CommNcclOptions;
int comm_nccl_available(void);
// bytes of the bootstrap id (NCCL's unique id: RDV_BLOB_MAX); 0 without NCCL
size_t comm_nccl_id_bytes(void);
// rank 0 makes the id that every rank passes to comm_nccl_open (hand it out with rdv_exchange)
int comm_nccl_unique_id(void *blob, size_t len);
// joins the group on ctx's device (the calling thread's current device becomes it). -EINVAL bad
// arguments, -ENOTSUP a backend without native streams, -ETIMEDOUT peers missing after timeout_s,
// -EPIPE/-EIO NCCL failures; err names this rank and the reason.
int comm_nccl_open(Comm **out, KernCtx *ctx, int rank, int world, const void *id, size_t id_len,
		   const CommNcclOptions *o, char *err, size_t errlen);

// ---- bucketed gradient all-reduce (average), in place over the flat gradient buffer ----
// groups: the (offset, length) element ranges of grads in the order backward finishes them,
// adjacent and descending (ClipModel.groups); a bucket merges consecutive groups up to
// bucket_bytes (a larger group is a bucket of its own), so every bucket is one contiguous range
// of grads, all-reduced where it lies: no packing, no copies. Events come from ctx's device.
typedef struct CommBuckets CommBuckets;
int comm_buckets_create(CommBuckets **out, Comm *c, KernCtx *ctx, KTensor *grads, const int64_t *offsets,
			const int64_t *lengths, int n_groups, size_t bucket_bytes);
// the group [offset, offset + length) is final once the work queued on stream so far completes; it
// must be the next group in order (-EINVAL otherwise). Completing a bucket starts its all-reduce.
int comm_buckets_ready(CommBuckets *b, KernCtx *stream, int64_t offset, int64_t length);
// after backward: every group must have been reported (-EINVAL); work queued on stream afterwards
// sees the averaged gradients; the buckets are re-armed for the next step
int comm_buckets_finish(CommBuckets *b, KernCtx *stream);
int comm_buckets_count(const CommBuckets *b);
void comm_buckets_free(CommBuckets *b);

// ---- rendezvous: who this process is among the ranks, and rank 0's bootstrap blob (NCCL id) ----
#define RDV_BLOB_MAX 128              // an NCCL unique id
#define RDV_DEFAULT_PORT 29500        // without MASTER_PORT, --master-port or Slurm
#define RDV_DEFAULT_TIMEOUT_MS 300000 // every wait of the rendezvous

typedef enum {
	RDV_AUTO = 0, // file when a path is set, tcp across machines, ring on one
	RDV_TCP,      // rank 0 listens on MASTER_PORT, the others connect to MASTER_ADDR
	RDV_FILE,     // rank 0 writes a file on a shared filesystem, the others poll it
	RDV_RING,     // one machine: the ring's control block (ring_boot_*)
} RdvMethod;

// What the caller was told explicitly (flags, a config file). Each field wins over the
// environment; -1 / NULL / RDV_AUTO: not given.
typedef struct {
	int rank, world_size, local_rank, local_world_size, node_rank, nodes;
	const char *master; // "host", "host:port", "[v6addr]:port" or a bare IPv6 address
	int master_port;
	const char *job; // job id; ranks of one job must agree, two jobs must not
	RdvMethod method;
	const char *file; // the file for RDV_FILE
	int timeout_ms;
} RdvOptions;

// The resolved rendezvous; every field is set.
typedef struct {
	int rank, world_size, local_rank, local_world_size, node_rank, nodes;
	char master_addr[256]; // host name or address, without brackets
	int master_port;
	char job[192];    // e.g. "slurm:1234.0", "torchrun:abc:0", "job:x", or "none"
	uint64_t token;   // rdv_job_token(job): in every message and file, so jobs never cross
	RdvMethod method; // never RDV_AUTO
	char file[1024];
	int timeout_ms;
	const char *source;      // where the ranks came from: "flags", "torchrun", "slurm", "single"
	const char *master_from; // "--master", "MASTER_ADDR", "SLURM_STEP_NODELIST", ..., "default"
} RdvInfo;

void rdv_options_default(RdvOptions *opt);

// Fills info from opt and the environment (envp: "NAME=value" strings ending in NULL, or NULL
// for this process's environment). Precedence per value: opt, then the torchrun-style set
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE) when RANK or
// WORLD_SIZE is set, else Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID,
// SLURM_TASKS_PER_NODE, the first host of SLURM_JOB_NODELIST) when SLURM_PROCID is set, else
// one process. MASTER_ADDR / MASTER_PORT win over Slurm's first host and the default port;
// AVCLIP_JOB, AVCLIP_RDV_METHOD, AVCLIP_RDV_FILE and AVCLIP_RDV_TIMEOUT (seconds) fill the rest.
// -EINVAL with a sentence naming the variable and its value when something is missing,
// malformed or inconsistent.
int rdv_resolve(RdvInfo *info, const RdvOptions *opt, char *const *envp, char *err, size_t errlen);
// One line for the log: "rank 3/8 (local 1/4, node 0/2) from slurm, master node01:20412 (from
// SLURM_STEP_NODELIST), job slurm:1234.0, method tcp, timeout 300 s"
int rdv_describe(const RdvInfo *info, char *buf, size_t len);
const char *rdv_method_name(RdvMethod m);
// "auto", "tcp", "file", "ring" -> 0; -EINVAL otherwise
int rdv_method_parse(const char *s, RdvMethod *m);

// Rank 0 hands blob (len bytes, 1..RDV_BLOB_MAX) to every other rank; on the other ranks blob
// receives it. Every wait ends by info->timeout_ms with an error naming this rank and what it
// waited for. ring: the job's ring (RDV_RING only, else may be NULL). 0 or -errno.
int rdv_exchange(const RdvInfo *info, Ring *ring, void *blob, size_t len, char *err, size_t errlen);
// rank 0 listens on every interface at master_port and returns once every rank has its copy;
// the others connect to master_addr:master_port (IPv4, IPv6 or a host name), retrying until the
// deadline. A master of another job (token) is an error at once; it is never used.
int rdv_exchange_tcp(const RdvInfo *info, void *blob, size_t len, char *err, size_t errlen);
// rank 0 writes info->file (temp file, fsync, rename); the others poll it, ignoring a file of
// another job (token) or a torn one, until the deadline. Rank 0 does not learn who read it.
int rdv_exchange_file(const RdvInfo *info, void *blob, size_t len, char *err, size_t errlen);
// one machine: rank 0 publishes in ring's control block, the others wait for it (see ring.h)
int rdv_exchange_ring(const RdvInfo *info, Ring *ring, void *blob, size_t len, char *err, size_t errlen);

// Slurm's compressed host lists: "node[01-04,07],gpu5,rack[1-2]n[1-2]". rdv_hostlist_count
// returns the number of hosts (or -EINVAL); rdv_hostlist_nth writes host n (0-based, in Slurm's
// order: the last bracket varies fastest) to out: 0, -EINVAL (syntax), -ERANGE (n too large),
// -ENAMETOOLONG.
long rdv_hostlist_count(const char *list);
int rdv_hostlist_nth(const char *list, long n, char *out, size_t outlen);
// Slurm's tasks-per-node syntax "4(x2),3": node's task count (node < 0: none wanted) and the
// totals; 0 or -EINVAL (syntax) or -ERANGE (node beyond the list).
int rdv_tasks_per_node(const char *s, int node, int *tasks, int *nodes_total, long *tasks_total);
// 64-bit FNV-1a of the job string (never 0)
uint64_t rdv_job_token(const char *job);

#endif
