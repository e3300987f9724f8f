// What a backend provides behind kern_ops.h (private to kernels/): device, stream and event
// state, memory functions and one entry per op. The front end (kern_ctx.c, kern_ops_*.c) checks
// every argument once for all backends and then calls these with the sizes it derived.
#ifndef KERN_BACKEND_H
#define KERN_BACKEND_H
// defines: KBackend, KernDev, struct KernCtx, struct KEvent, struct KOptPlan, KOptChunk, kern_latch,
//          kern_latched, kern_refuse, KHostRange, kern_range_add, kern_range_take, kern_range_covers, kern_range_pop,
//          kcpu_backend

#include "kern_ops.h" // defines: the public types

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct KBackend KBackend;

// one device: memory, host registrations and the error latch are shared by its stream handles
typedef struct KernDev {
	const KBackend *be;
	int device, nthreads;
	KAttention attention;             // KCtxOptions.attention, checked by the front end
	pthread_mutex_t lock;             // error latch and handle count
	int handles;                      // live KernCtx handles; the device closes with the last
	atomic_int err;                   // the first latched error (0: none)
	char errmsg[256];                 // "op: what"
	atomic_llong waits;               // host waits (sync points)
	atomic_llong mem_bytes, mem_peak; // bytes of the live kern_alloc tensors, and their most
	KPlanFn plan;                     // kern_ctx_set_plan: the recorder every op reports to (NULL: none)
	void *plan_arg;
	int plan_dry; // ops recorded, not run; allocations not zero-filled
	void *priv;   // backend device state
} KernDev;

struct KernCtx {
	KernDev *dev;
	void *ws; // this stream's workspace (device memory), ws_bytes long
	size_t ws_bytes;
	uint64_t ws_epoch; // counts the workspace's reallocations (a graph captured before one is stale)
	int capturing;     // between kern_graph_begin and kern_graph_end
	int err_at_begin;  // the device's latch when the capture began
	void *priv;        // backend stream state
};

struct KEvent {
	KernDev *dev;
	void *priv;
	int timed;    // made by kern_event_create_timed: the backend keeps its completion time
	int recorded; // kern_event_record has queued it at least once
	double t_ms;  // the CPU backend's clock at the last record (timed events)
};

// a run of at most KERN_OPT_CHUNK elements inside one segment
typedef struct {
	int64_t start, len;
	int32_t seg;
} KOptChunk;

struct KOptPlan {
	KernDev *dev;
	int n_segs, n_chunks;
	int64_t n_params;
	KOptSegment *segs; // host copies of the tables; a device backend keeps its own copies in priv
	KOptChunk *chunks;
	void *priv;
};

struct KBackend {
	const char *name;
	int has_f64; // computes the f64 path
	// device and streams
	int (*dev_open)(KernDev *d, const KCtxOptions *o);
	void (*dev_close)(KernDev *d);
	int (*stream_open)(KernCtx *c);
	void (*stream_close)(KernCtx *c);
	int (*stream_sync)(KernCtx *c);
	int (*dev_sync)(KernDev *d);
	int (*set_blas_threads)(KernCtx *c, int n);
	// memory
	int (*alloc)(KernDev *d, void **p, size_t bytes); // zero-filled
	void (*free)(KernDev *d, void *p);
	int (*host_alloc)(KernDev *d, void **p, size_t bytes);
	void (*host_free)(KernDev *d, void *p);
	int (*host_register)(KernDev *d, void *p, size_t bytes);
	int (*host_unregister)(KernDev *d, void *p);
	int (*host_pinned)(KernDev *d, const void *p, size_t bytes); // 1 when the range is pinned or registered
	int (*upload)(KernCtx *c, void *dst, const void *host, size_t n, int async);
	int (*download)(KernCtx *c, void *host, const void *src, size_t n, int async);
	int (*memzero)(KernCtx *c, void *p, size_t n);
	int (*memcopy)(KernCtx *c, void *dst, const void *src, size_t n);
	// events
	int (*event_create)(KEvent *e);
	void (*event_destroy)(KEvent *e);
	int (*event_record)(KEvent *e, KernCtx *c);
	int (*stream_wait_event)(KernCtx *c, KEvent *e);
	int (*event_query)(KEvent *e); // 1 complete, 0 pending
	int (*event_sync)(KEvent *e);
	int (*event_elapsed)(KEvent *a, KEvent *b, double *ms); // both timed and recorded; -EAGAIN pending
	// ops (kern_ops.def): arguments checked, sizes derived by the front end
#define KOP(name, label, params, args) int (*name)(KernCtx * c, KOP_LIST params);
#define KOP_OWN(ret, name, params) ret(*name) params;
#include "kern_ops.def" // defines: one slot per op
	// optional (NULL: not provided). The native stream handle (cudaStream_t) a library such as NCCL
	// queues on; the device's free and total memory in bytes
	void *(*stream_native)(KernCtx *c);
	int (*mem_info)(KernDev *d, size_t *free_bytes, size_t *total_bytes);
	// products off the library's fast path so far, and each such shape's line once (kern_ctx_slow_*)
	int64_t (*slow_paths)(KernDev *d);
	int (*slow_path_note)(KernDev *d, char *buf, size_t len);
	int64_t (*launches)(KernDev *d); // device work items queued so far (kern_ctx_launches)
	// graphs (kern_graph_*; NULL: none). begin: c's stream records from now on; end: the recorded
	// work instantiated into *exec, *nodes the work items it holds; why gets a failure's reason
	int (*graph_begin)(KernCtx *c, char *why, size_t len);
	int (*graph_end)(KernCtx *c, void **exec, int64_t *nodes, char *why, size_t len);
	int (*graph_launch)(KernCtx *c, void *exec);
	void (*graph_destroy)(KernDev *d, void *exec);
};

// A device's pinned allocations and registered mappings, the host memory asynchronous copies may
// use; every backend keeps one list under its own lock (kern_ctx.c implements these)
typedef struct KHostRange {
	struct KHostRange *next;
	char *p;
	size_t n;
	int owned; // 1: kern_host_alloc made it, 0: kern_host_register
} KHostRange;
// adds [p, p+n): -EEXIST when it overlaps a range, -ENOMEM
int kern_range_add(KHostRange **list, pthread_mutex_t *lock, void *p, size_t n, int owned);
// removes the range starting at p with that ownership; -ENOENT when there is none
int kern_range_take(KHostRange **list, pthread_mutex_t *lock, void *p, int owned);
// 1 when [p, p+n) lies inside one range
int kern_range_covers(KHostRange **list, pthread_mutex_t *lock, const void *p, size_t n);
// unlinks and returns the first range, NULL when none is left (a device's close frees them)
KHostRange *kern_range_pop(KHostRange **list);

// latches rc (< 0) as the device's asynchronous error, named "op: message", unless one is latched
// already; backends call it for content errors and device failures
void kern_latch(KernCtx *c, int rc, const char *op, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
// the latched error of c's device, 0 when none
int kern_latched(const KernCtx *c);
// KCK's refusal: records "func: cond" for kern_refusal() and returns -EINVAL
int kern_refuse(const char *func, const char *cond);

extern const KBackend kcpu_backend;

#endif
