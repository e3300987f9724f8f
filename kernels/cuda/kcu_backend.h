// The CUDA backend's device side (private to kernels/cuda/): device and stream state behind the
// KBackend table, and the helpers its op entries use to run a kernel call and latch its failure.
#ifndef KCU_BACKEND_H
#define KCU_BACKEND_H
// defines: CuDev, CuStream, cu_use, cu_stream_check, cu_begin, cu_end, cu_dev_latch, KCU_OP, KS,
//          cu_dev_open .. cu_event_sync, cu_stream_native, cu_mem_info (the device half of the table),
//          cu_graph_begin, cu_graph_end, cu_graph_launch, cu_graph_destroy

#include "kcu.h"          // defines: KcuStream
#include "kcu_slow.h"     // defines: KcuSlow
#include "kern_backend.h" // defines: KBackend, KernDev, struct KernCtx, kern_latch

typedef struct CuStream {
	KcuStream k;           // what the kernels see
	struct CuStream *next; // the device's streams
	KernCtx *ctx;
	const char *last_op; // the last op queued: named when a device fault surfaces at a sync
	struct KAttn *attn;  // this stream's attention selection (kattn.h), made with the device's choice
	long long captured0; // kcheck_captured() when this stream's capture began
} CuStream;

typedef struct {
	pthread_mutex_t lock;
	void **blocks; // live device allocations, released with the device
	int n_blocks, cap_blocks;
	KHostRange *ranges; // pinned and registered host memory
	float *lut;         // device: kern_augment's 3 x 256 normalization table
	CuStream *streams;  // every open stream of the device
	int sync_each;      // KERN_CUDA_SYNC=1: wait after every op, so a fault names its op
	KcuSlow slow;       // products and epilogues off cuBLASLt's path, every stream's
} CuDev;

#define KS(c) (&((CuStream *)(c)->priv)->k)

// makes d's GPU the calling thread's current device
void cu_use(KernDev *d);
// after a wait on c's stream (e: its result): latches a device fault, then the content errors its
// kernels reported; returns the latched error or 0
int cu_stream_check(KernCtx *c, int e);
// latches a failure on the device of an event or plan (no stream at hand)
void cu_dev_latch(KernDev *d, int rc, const char *op, const char *msg);
// an op on c: begin clears the stream's error record; end latches a CUDA/cuBLAS failure with the
// op's name (argument refusals return without latching) and, with KERN_CUDA_SYNC=1, waits
KcuStream *cu_begin(KernCtx *c);
int cu_end(KernCtx *c, const char *op, int rc);
#define KCU_OP(c, name, expr) cu_end((c), (name), ((void)cu_begin(c), (expr)))

// the table's device half (kcu_backend.c); kcu_ops.c holds the table
int cu_dev_open(KernDev *d, const KCtxOptions *o);
void cu_dev_close(KernDev *d);
int cu_stream_open(KernCtx *c);
void cu_stream_close(KernCtx *c);
int cu_stream_sync(KernCtx *c);
int cu_dev_sync(KernDev *d);
int cu_alloc(KernDev *d, void **p, size_t bytes);
void cu_free(KernDev *d, void *p);
int cu_host_alloc(KernDev *d, void **p, size_t bytes);
void cu_host_free(KernDev *d, void *p);
int cu_host_register(KernDev *d, void *p, size_t bytes);
int cu_host_unregister(KernDev *d, void *p);
int cu_host_pinned(KernDev *d, const void *p, size_t n);
int cu_upload(KernCtx *c, void *dst, const void *host, size_t n, int async);
int cu_download(KernCtx *c, void *host, const void *src, size_t n, int async);
int cu_memzero(KernCtx *c, void *p, size_t n);
int cu_memcopy(KernCtx *c, void *dst, const void *src, size_t n);
int cu_event_create(KEvent *e);
void cu_event_destroy(KEvent *e);
int cu_event_record(KEvent *e, KernCtx *c);
int cu_event_elapsed(KEvent *a, KEvent *b, double *ms);
int cu_stream_wait_event(KernCtx *c, KEvent *e);
int cu_event_query(KEvent *e);
int cu_event_sync(KEvent *e);
void *cu_stream_native(KernCtx *c);
int cu_mem_info(KernDev *d, size_t *free_bytes, size_t *total_bytes);
int64_t cu_slow_paths(KernDev *d);
int cu_slow_path_note(KernDev *d, char *buf, size_t len);
int64_t cu_launches(KernDev *d);
// graphs (kcu_graph.c)
int cu_graph_begin(KernCtx *c, char *why, size_t len);
int cu_graph_end(KernCtx *c, void **exec, int64_t *nodes, char *why, size_t len);
int cu_graph_launch(KernCtx *c, void *exec);
void cu_graph_destroy(KernDev *d, void *exec);

// the table (kcu_ops.c); kern_ctx.c refers to it weakly (see there)
extern const KBackend kcuda_backend;

#endif
