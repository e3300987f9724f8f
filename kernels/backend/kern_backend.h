// What a backend provides behind kern_ops.h (private to kernels/): device, stream and event
// state, memory functions and one entry per op. The front end (kern_ctx.c, kern_ops_*.c) checks
// every argument once for all backends and then calls these with the sizes it derived.
#ifndef KERN_BACKEND_H
#define KERN_BACKEND_H
// defines: KBackend, KernDev, struct KernCtx, struct KEvent, struct KOptPlan, KOptChunk, kern_latch,
//          kern_latched, KHostRange, kern_range_add, kern_range_take, kern_range_covers, kern_range_pop,
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
	void *priv; // backend stream state
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
	int (*convert)(KernCtx *c, KTensor *dst, const KTensor *src);
	// events
	int (*event_create)(KEvent *e);
	void (*event_destroy)(KEvent *e);
	int (*event_record)(KEvent *e, KernCtx *c);
	int (*stream_wait_event)(KernCtx *c, KEvent *e);
	int (*event_query)(KEvent *e); // 1 complete, 0 pending
	int (*event_sync)(KEvent *e);
	int (*event_elapsed)(KEvent *a, KEvent *b, double *ms); // both timed and recorded; -EAGAIN pending
	// ops: arguments checked, sizes derived by the front end
	size_t (*linear_ws_bytes)(KernCtx *c);
	int (*linear)(KernCtx *c, const KLinear *a, int64_t N, int IC, int OC);
	int (*linear_bwd)(KernCtx *c, const KLinearBwd *a, int64_t N, int IC, int OC);
	int (*layernorm_fwd)(KernCtx *c, KTensor *out, KTensor *mean, KTensor *rstd, const KTensor *in,
			     const KTensor *w, const KTensor *b, int64_t N, int C);
	int (*layernorm_bwd)(KernCtx *c, KGrad din, KGrad dw, KGrad db, const KTensor *dout, const KTensor *in,
			     const KTensor *w, const KTensor *mean, const KTensor *rstd, int64_t N, int C);
	int (*add)(KernCtx *c, KTensor *out, const KTensor *a, const KTensor *b, int64_t n);
	int (*augment)(KernCtx *c, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip,
		       int patch);
	int (*patchify)(KernCtx *c, KTensor *patches, KGrad dimg, const KTensor *img, int patch); // one of both
	int (*vis_embed_fwd)(KernCtx *c, KTensor *out, const KTensor *x, const KTensor *cls, const KTensor *pos,
			     const KTensor *tpos, int B, int T, int P, int D);
	int (*vis_embed_bwd)(KernCtx *c, KGrad dx, KGrad dcls, KGrad dpos, KGrad dtpos, const KTensor *dout, int B,
			     int T, int P, int D);
	int (*tok_embed_fwd)(KernCtx *c, KTensor *out, const KTensor *ids, const KTensor *wte, const KTensor *pos);
	int (*tok_embed_bwd)(KernCtx *c, KGrad dwte, KGrad dpos, const KTensor *dout, const KTensor *ids);
	int (*argmax_rows)(KernCtx *c, KTensor *pos, const KTensor *ids);
	int (*pool_fwd)(KernCtx *c, KTensor *out, const KTensor *x, const KTensor *pos);
	int (*pool_bwd)(KernCtx *c, KGrad dx, const KTensor *dout, const KTensor *pos);
	int (*l2norm_fwd)(KernCtx *c, KTensor *out, KTensor *norm, const KTensor *in, int64_t N, int C);
	int (*l2norm_bwd)(KernCtx *c, KGrad din, const KTensor *dout, const KTensor *out, const KTensor *norm,
			  int64_t N, int C);
	const char *(*attention_name)(const KernCtx *c); // kern_ctx_attention
	size_t (*attention_ws_bytes)(KernCtx *c, KDtype dt, int B, int T, int H, int hd);
	int (*attention_fwd)(KernCtx *c, KTensor *out, KTensor *lse, const KTensor *qkv, int B, int T, int H, int hd,
			     int causal);
	int (*attention_bwd)(KernCtx *c, KGrad dqkv, const KTensor *dout, const KTensor *qkv, const KTensor *out,
			     const KTensor *lse, int B, int T, int H, int hd, int causal);
	// losses (B local rows, N gathered, width d)
	size_t (*loss_ws_bytes)(KernCtx *c, int B, int N, int d);
	int (*infonce)(KernCtx *c, const KContrastBatch *b, KTensor *loss, KGrad dE1, KGrad dE2, KGrad dlog_s, int B,
		       int N, int d);
	int (*fcco_local)(KernCtx *c, const KContrastBatch *b, const KTensor *ids, const KTensor *table,
			  const KFccoParams *p, KTensor *pack, int B, int N, int d);
	int (*fcco_scatter)(KernCtx *c, KTensor *table, const KTensor *ids_all, const KTensor *pack_all, int w);
	int (*fcco_surrogate)(KernCtx *c, const KContrastBatch *b, const KTensor *pack, const KTensor *pack_all,
			      const KFccoParams *p, KTensor *loss, KGrad de1, KGrad de2, KGrad dlog_s, int B, int N,
			      int d);
	int (*clip_metrics)(KernCtx *c, KTensor *metrics, const KTensor *e1, const KTensor *e2, const KTensor *log_s,
			    int B, int d);
	int (*temp_step)(KernCtx *c, KTensor *log_s, KTensor *mv, const KTensor *grad, const KTensor *norm_clip,
			 KTensor *copy, const KTempStep *h);
	// optimizer
	int (*opt_plan_open)(KOptPlan *p); // device copies of the tables and the partial sums
	void (*opt_plan_close)(KOptPlan *p);
	int (*grad_norm)(KernCtx *c, const KOptPlan *p, KTensor *norm_clip, const KTensor *grads, double clip_norm);
	int (*optimizer)(KernCtx *c, const KOptPlan *p, const KOptHyper *h, KTensor *master, KTensor *copy,
			 const KTensor *grads, KTensor *m, KTensor *v, const KTensor *norm_clip);
	// optional (NULL: not provided). The native stream handle (cudaStream_t) a library such as NCCL
	// queues on; the device's free and total memory in bytes
	void *(*stream_native)(KernCtx *c);
	int (*mem_info)(KernDev *d, size_t *free_bytes, size_t *total_bytes);
	// products off the library's fast path so far, and each such shape's line once (kern_ctx_slow_*)
	int64_t (*slow_paths)(KernDev *d);
	int (*slow_path_note)(KernDev *d, char *buf, size_t len);
	int64_t (*launches)(KernDev *d); // device work items queued so far (kern_ctx_launches)
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

extern const KBackend kcpu_backend;

#endif
