// The CUDA backend's device side: devices, non-blocking streams with their cuBLASLt handle and
// scratch, events, device memory per device, pinned and registered host memory, copies, and
// the latch that turns device faults and kernel-reported content errors into named errors.
#include "kattn.h"       // defines: kattn_create, kattn_destroy
#include "kcu_backend.h" // defines: CuDev, CuStream, cu_*

#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cu_use(KernDev *d)
{
	cudaSetDevice(d->device); // cheap when it is current already; errors surface at the next call
}

// Safe from any thread: the NCCL watchdog's event query (cu_event_query -> event_fault) latches
// from its own. kern_latch writes under the device's lock, the first error wins, and the message
// is complete before the atomic code is published, so the stream's thread reads both through
// kern_latched / kern_error_message without a lock.
void cu_dev_latch(KernDev *d, int rc, const char *op, const char *msg)
{
	KernCtx tmp = {.dev = d};
	kern_latch(&tmp, rc, op, "%s", msg);
}

// ---- content errors the kernels reported (kcu.h's slots) ----
static const char *const slot_op[KCU_E_COUNT] = {
	[KCU_E_TOK_EMBED] = "tok_embed",
	[KCU_E_TOK_EMBED_BWD] = "tok_embed_bwd",
	[KCU_E_POOL] = "pool",
	[KCU_E_POOL_BWD] = "pool_bwd",
	[KCU_E_FCCO_LOCAL] = "fcco_local",
	[KCU_E_FCCO_SCATTER] = "fcco_scatter",
	[KCU_E_TEMP_STEP] = "temp_step",
	[KCU_E_OPTIMIZER] = "optimizer",
	[KCU_E_SOFTCE] = "softce",

	[KCU_E_TOKEN_GATHER] = "token_gather",
	[KCU_E_TOKEN_GATHER_BWD] = "token_gather_bwd",
	[KCU_E_MAE_DEC] = "mae_decoder_input",
	[KCU_E_MAE_DEC_BWD] = "mae_decoder_input_bwd",
	[KCU_E_MAE_TARGET] = "mae_target",
};

static void latch_slot(KernCtx *c, int slot, unsigned long long key, int64_t bound)
{
	const long long index = (long long)(key >> 32), b = (long long)bound;
	const uint32_t raw = (uint32_t)key;
	float f;
	memcpy(&f, &raw, sizeof f);
	const char *op = slot_op[slot];
	switch (slot) {
	case KCU_E_TOK_EMBED:
	case KCU_E_TOK_EMBED_BWD:
		kern_latch(c, -ERANGE, op, "token id %d at [%lld] is outside the vocabulary [0, %lld)", (int32_t)raw,
			   index, b);
		break;
	case KCU_E_POOL:
	case KCU_E_POOL_BWD:
		kern_latch(c, -ERANGE, op, "row %lld pools position %d outside [0, %lld)", index, (int32_t)raw, b);
		break;
	case KCU_E_FCCO_LOCAL:
	case KCU_E_FCCO_SCATTER:
		kern_latch(c, -ERANGE, op, "the sample id at [%lld] is outside the table [0, %lld)", index, b);
		break;
	case KCU_E_SOFTCE:
		kern_latch(c, -ERANGE, op, "class id %d of row %lld is outside [-1, %lld)", (int32_t)raw, index, b);
		break;
	case KCU_E_TOKEN_GATHER:
	case KCU_E_TOKEN_GATHER_BWD:
	case KCU_E_MAE_DEC:
	case KCU_E_MAE_DEC_BWD:
	case KCU_E_MAE_TARGET:
		kern_latch(c, -ERANGE, op, "index %d at [%lld] is outside [0, %lld) or not above the one before it",
			   (int32_t)raw, index, b);
		break;
	case KCU_E_TEMP_STEP: kern_latch(c, -ERANGE, op, "the temperature gradient is %g", (double)f); break;
	default: kern_latch(c, -ERANGE, op, "the gradient norm is %g: no update", (double)f); break;
	}
}

int cu_stream_check(KernCtx *c, int e)
{
	CuStream *cs = c->priv;
	cudaStream_t st = cs->k.stream;
	if (kcheck_errno_cuda(e) == -EPERM) { // refused: the stream captures a graph (not a device fault)
		kern_latch(c, -EPERM, "sync", "%s (%s): a host wait on a stream that captures a graph",
			   cudaGetErrorName((cudaError_t)e), cudaGetErrorString((cudaError_t)e));
		cudaGetLastError();
		return kern_latched(c);
	}
	if (e != cudaSuccess) { // a device fault: sticky, so every later call reports it too
		kern_latch(c, kcheck_errno_cuda(e), cs->last_op ? cs->last_op : "sync",
			   "%s (%s) surfaced at a sync point after this op (the last one queued on the stream; "
			   "KERN_CUDA_SYNC=1 waits after every op and names the failing one): %s",
			   cudaGetErrorName((cudaError_t)e), cudaGetErrorString((cudaError_t)e), kcheck_hint_cuda(e));
		cudaGetLastError();
		return kern_latched(c);
	}
	unsigned long long keys[KCU_E_COUNT];
	int rc = (int)cudaMemcpyAsync(keys, cs->k.errs, sizeof keys, cudaMemcpyDeviceToHost, st);
	rc = rc ? rc : (int)cudaStreamSynchronize(st);
	if (rc) {
		cudaGetLastError();
		kern_latch(c, kcheck_errno_cuda(rc), "sync", "reading the error slots failed: %s",
			   cudaGetErrorName((cudaError_t)rc));
		return kern_latched(c);
	}
	int any = 0;
	for (int k = 0; k < KCU_E_COUNT; k++)
		if (keys[k] != ~0ull) {
			latch_slot(c, k, keys[k], cs->k.err_bound[k]);
			any = 1;
		}
	if (any && (cudaMemsetAsync(cs->k.errs, 0xff, sizeof keys, st) || cudaStreamSynchronize(st)))
		cudaGetLastError(); // the latched error stands; clearing the slots is best effort
	return kern_latched(c);
}

KcuStream *cu_begin(KernCtx *c)
{
	CuStream *cs = c->priv;
	cu_use(c->dev);
	kerr_clear(&cs->k.err);
	cs->k.ws = c->ws;
	cs->k.ws_bytes = c->ws_bytes;
	return &cs->k;
}

int cu_end(KernCtx *c, const char *op, int rc)
{
	CuStream *cs = c->priv;
	if (cs->k.err.code) {
		kern_latch(c, cs->k.err.code, op, "%s", cs->k.err.msg);
		cudaGetLastError();
		return kern_latched(c);
	}
	if (rc < 0)
		return rc; // refused before anything was queued (an argument this backend does not take)
	cs->last_op = op;
	if (((CuDev *)c->dev->priv)->sync_each)
		return cu_stream_check(c, cudaStreamSynchronize(cs->k.stream));
	return 0;
}

// ---- device memory: zero-filled, tracked so the device releases what is left ----
int cu_alloc(KernDev *d, void **p, size_t bytes)
{
	CuDev *pv = d->priv;
	cu_use(d);
	if (cudaMalloc(p, bytes) != cudaSuccess) {
		cudaGetLastError();
		return -ENOMEM;
	}
	// the legacy stream orders the fill before any stream's later work once it has completed
	if (cudaMemset(*p, 0, bytes) || cudaStreamSynchronize(0)) {
		cudaGetLastError();
		cudaFree(*p);
		return -EIO;
	}
	pthread_mutex_lock(&pv->lock);
	if (pv->n_blocks == pv->cap_blocks) {
		int cap = pv->cap_blocks ? 2 * pv->cap_blocks : 256;
		void **nb = realloc(pv->blocks, sizeof *nb * (size_t)cap);
		if (!nb) {
			pthread_mutex_unlock(&pv->lock);
			cudaFree(*p);
			return -ENOMEM;
		}
		pv->blocks = nb, pv->cap_blocks = cap;
	}
	pv->blocks[pv->n_blocks++] = *p;
	pthread_mutex_unlock(&pv->lock);
	return 0;
}

void cu_free(KernDev *d, void *p)
{
	CuDev *pv = d->priv;
	cu_use(d);
	pthread_mutex_lock(&pv->lock);
	for (int i = pv->n_blocks - 1; i >= 0; i--) // recent allocations are freed first
		if (pv->blocks[i] == p) {
			pv->blocks[i] = pv->blocks[--pv->n_blocks];
			break;
		}
	pthread_mutex_unlock(&pv->lock);
	cudaFree(p); // waits for the device: memory may still be in use by queued work
}

// ---- host memory: pinned allocations and registered mappings ----
int cu_host_alloc(KernDev *d, void **p, size_t bytes)
{
	cu_use(d);
	if (cudaHostAlloc(p, bytes, cudaHostAllocPortable) != cudaSuccess) {
		cudaGetLastError();
		return -ENOMEM;
	}
	memset(*p, 0, bytes);
	CuDev *pv = d->priv;
	int rc = kern_range_add(&pv->ranges, &pv->lock, *p, bytes, 1);
	if (rc < 0)
		cudaFreeHost(*p);
	return rc;
}

void cu_host_free(KernDev *d, void *p)
{
	CuDev *pv = d->priv;
	if (kern_range_take(&pv->ranges, &pv->lock, p, 1) == 0)
		cudaFreeHost(p);
}

// A refusal (containers often forbid pinning a shared mapping) comes back as -errno and leaves
// nothing behind, so the caller can fall back to staging through kern_host_alloc memory.
int cu_host_register(KernDev *d, void *p, size_t bytes)
{
	CuDev *pv = d->priv;
	int rc = kern_range_add(&pv->ranges, &pv->lock, p, bytes, 0);
	if (rc < 0)
		return rc;
	cu_use(d);
	cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
	if (e == cudaSuccess)
		return 0;
	cudaGetLastError();
	kern_range_take(&pv->ranges, &pv->lock, p, 0);
	return e == cudaErrorHostMemoryAlreadyRegistered ? -EEXIST
	       : e == cudaErrorNotSupported              ? -ENOTSUP
	       : e == cudaErrorMemoryAllocation          ? -ENOMEM
							 : -EPERM;
}

int cu_host_unregister(KernDev *d, void *p)
{
	CuDev *pv = d->priv;
	int rc = kern_range_take(&pv->ranges, &pv->lock, p, 0);
	if (rc < 0)
		return rc;
	cu_use(d);
	if (cudaHostUnregister(p) != cudaSuccess) {
		cudaGetLastError();
		return -EINVAL;
	}
	return 0;
}

int cu_host_pinned(KernDev *d, const void *p, size_t n)
{
	CuDev *pv = d->priv;
	return kern_range_covers(&pv->ranges, &pv->lock, p, n);
}

// ---- copies: queued on the stream; the synchronous ones wait and report like a sync point ----
static int copy(KernCtx *c, const char *op, void *dst, const void *src, size_t n, int kind, int async)
{
	KcuStream *s = cu_begin(c);
	int rc = cuda_try(&s->err, cudaMemcpyAsync(dst, src, n, (enum cudaMemcpyKind)kind, s->stream));
	rc = cu_end(c, op, rc);
	if (rc < 0 || async)
		return rc;
	return cu_stream_check(c, cudaStreamSynchronize(s->stream));
}

int cu_upload(KernCtx *c, void *dst, const void *host, size_t n, int async)
{
	return copy(c, "upload", dst, host, n, cudaMemcpyHostToDevice, async);
}

int cu_download(KernCtx *c, void *host, const void *src, size_t n, int async)
{
	return copy(c, "download", host, src, n, cudaMemcpyDeviceToHost, async);
}

int cu_memcopy(KernCtx *c, void *dst, const void *src, size_t n)
{
	if (dst == src)
		return 0;
	return copy(c, "copy", dst, src, n, cudaMemcpyDeviceToDevice, 1);
}

int cu_memzero(KernCtx *c, void *p, size_t n)
{
	KcuStream *s = cu_begin(c);
	return cu_end(c, "zero", cuda_try(&s->err, cudaMemsetAsync(p, 0, n, s->stream)));
}

// ---- devices and streams ----
static const double clip_mean[3] = {0.48145466, 0.4578275, 0.40821073};
static const double clip_std[3] = {0.26862954, 0.26130258, 0.27577711};

int cu_dev_open(KernDev *d, const KCtxOptions *o)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || o->device < 0 || o->device >= n) {
		cudaGetLastError();
		return -ENODEV;
	}
	CuDev *pv = calloc(1, sizeof *pv);
	if (!pv)
		return -ENOMEM;
	pthread_mutex_init(&pv->lock, NULL);
	kcu_slow_init(&pv->slow);
	d->priv = pv;
	d->nthreads = 1;
	const char *env = getenv("KERN_CUDA_SYNC");
	pv->sync_each = env && atoi(env) != 0;
	if (cudaSetDevice(o->device) != cudaSuccess) {
		cudaGetLastError();
		cu_dev_close(d);
		return -ENODEV;
	}
	// kern_augment's table, in double then rounded as the CPU twin's
	float lut[3 * 256];
	for (int ch = 0; ch < 3; ch++)
		for (int v = 0; v < 256; v++)
			lut[ch * 256 + v] = (float)((v / 255.0 - clip_mean[ch]) / clip_std[ch]);
	void *p;
	int rc = cu_alloc(d, &p, sizeof lut);
	// the streams are non-blocking: the copy (done once its source is staged) is waited for here
	if (!rc && (cudaMemcpy(p, lut, sizeof lut, cudaMemcpyHostToDevice) != cudaSuccess ||
		    cudaStreamSynchronize(0) != cudaSuccess)) {
		cudaGetLastError();
		rc = -EIO;
	}
	pv->lut = p;
	if (rc) {
		cu_dev_close(d);
		return rc;
	}
	return 0;
}

void cu_dev_close(KernDev *d)
{
	CuDev *pv = d->priv;
	cu_use(d);
	cudaDeviceSynchronize();
	while (pv->n_blocks)
		cu_free(d, pv->blocks[pv->n_blocks - 1]);
	for (KHostRange *r; (r = kern_range_pop(&pv->ranges));) {
		if (r->owned)
			cudaFreeHost(r->p);
		else
			cudaHostUnregister(r->p);
		free(r);
	}
	cudaGetLastError();
	free(pv->blocks);
	pthread_mutex_destroy(&pv->lock);
	kcu_slow_destroy(&pv->slow);
	free(pv);
}

int cu_stream_open(KernCtx *c)
{
	CuDev *pv = c->dev->priv;
	CuStream *cs = calloc(1, sizeof *cs);
	if (!cs)
		return -ENOMEM;
	c->priv = cs;
	cs->ctx = c;
	cu_use(c->dev);
	KcuStream *s = &cs->k;
	void *scratch = NULL;
	int rc = cudaStreamCreateWithFlags((cudaStream_t *)&s->stream, cudaStreamNonBlocking) ? -ENOMEM : 0;
	rc = rc ? rc : kgemm_create(&s->gemm, 0, &s->err);
	rc = rc ? rc : kattn_create(&cs->attn, (KAttnImpl)c->dev->attention, c->dev->device, &s->err);
	rc = rc ? rc : cudaMalloc(&scratch, KCU_SCRATCH_BYTES) ? -ENOMEM : 0;
	if (!rc && (cudaMemset(scratch, 0xff, KCU_ERR_BYTES) ||
		    cudaMemset((char *)scratch + KCU_ERR_BYTES, 0, KCU_SCRATCH_HEAD - KCU_ERR_BYTES) ||
		    cudaStreamSynchronize(0)))
		rc = -EIO;
	if (rc) {
		cudaGetLastError();
		if (scratch)
			cudaFree(scratch);
		cu_stream_close(c);
		return rc;
	}
	_Static_assert(KCU_E_COUNT * sizeof(unsigned long long) <= KCU_ERR_BYTES,
		       "the error slots fit the scratch head");
	_Static_assert((int)KATTN_AUTO == (int)KERN_ATTN_AUTO && (int)KATTN_OWN == (int)KERN_ATTN_OWN &&
			       (int)KATTN_CUDNN == (int)KERN_ATTN_CUDNN,
		       "kattn.h's choices are KCtxOptions.attention's");
	s->errs = scratch;
	s->flags = (int *)((char *)scratch + KCU_ERR_BYTES);
	s->part = (float *)((char *)scratch + KCU_SCRATCH_HEAD);
	s->aug_lut = pv->lut;
	s->slow = &pv->slow;
	pthread_mutex_lock(&pv->lock);
	cs->next = pv->streams;
	pv->streams = cs;
	pthread_mutex_unlock(&pv->lock);
	return 0;
}

void cu_stream_close(KernCtx *c)
{
	CuDev *pv = c->dev->priv;
	CuStream *cs = c->priv;
	cu_use(c->dev);
	pthread_mutex_lock(&pv->lock);
	for (CuStream **q = &pv->streams; *q; q = &(*q)->next)
		if (*q == cs) {
			*q = cs->next;
			break;
		}
	pthread_mutex_unlock(&pv->lock);
	if (cs->k.stream)
		cudaStreamSynchronize(cs->k.stream);
	if (cs->k.errs)
		cudaFree(cs->k.errs);
	kgemm_destroy(cs->k.gemm);
	kattn_destroy(cs->attn);
	if (cs->k.stream)
		cudaStreamDestroy(cs->k.stream);
	cudaGetLastError();
	free(cs);
}

int cu_stream_sync(KernCtx *c)
{
	cu_use(c->dev);
	return cu_stream_check(c, cudaStreamSynchronize(((CuStream *)c->priv)->k.stream));
}

// every stream of the device, each checked for its own errors
int cu_dev_sync(KernDev *d)
{
	CuDev *pv = d->priv;
	cu_use(d);
	int rc = 0;
	pthread_mutex_lock(&pv->lock);
	for (CuStream *cs = pv->streams; cs; cs = cs->next) {
		int r = cu_stream_check(cs->ctx, cudaStreamSynchronize(cs->k.stream));
		rc = rc ? rc : r;
	}
	pthread_mutex_unlock(&pv->lock);
	return rc;
}

// ---- events ----
int cu_event_create(KEvent *e)
{
	cu_use(e->dev);
	cudaEvent_t ev;
	if (cudaEventCreateWithFlags(&ev, e->timed ? cudaEventDefault : cudaEventDisableTiming) != cudaSuccess) {
		cudaGetLastError();
		return -ENOMEM;
	}
	e->priv = ev;
	return 0;
}

void cu_event_destroy(KEvent *e)
{
	cu_use(e->dev);
	cudaEventDestroy(e->priv);
	cudaGetLastError();
}

int cu_event_record(KEvent *e, KernCtx *c)
{
	KcuStream *s = cu_begin(c);
	return cu_end(c, "event_record", cuda_try(&s->err, cudaEventRecord(e->priv, s->stream)));
}

int cu_stream_wait_event(KernCtx *c, KEvent *e)
{
	KcuStream *s = cu_begin(c);
	return cu_end(c, "stream_wait_event", cuda_try(&s->err, cudaStreamWaitEvent(s->stream, e->priv, 0)));
}

static int event_fault(KEvent *e, cudaError_t r, const char *op)
{
	char msg[256];
	snprintf(msg, sizeof msg, "%s (%s) surfaced while waiting on an event: %s", cudaGetErrorName(r),
		 cudaGetErrorString(r), kcheck_hint_cuda(r));
	cudaGetLastError();
	cu_dev_latch(e->dev, kcheck_errno_cuda(r), op, msg);
	return kcheck_errno_cuda(r);
}

int cu_event_query(KEvent *e)
{
	cu_use(e->dev);
	cudaError_t r = cudaEventQuery(e->priv);
	if (r == cudaSuccess)
		return 1;
	if (r == cudaErrorNotReady) {
		cudaGetLastError();
		return 0;
	}
	return event_fault(e, r, "event_query");
}

// NCCL queues its collectives on the stream the trainer's ops use
void *cu_stream_native(KernCtx *c)
{
	return ((CuStream *)c->priv)->k.stream;
}

// the device's own free and total memory (the memory plan checks a batch against it)
int cu_mem_info(KernDev *d, size_t *free_bytes, size_t *total_bytes)
{
	cu_use(d);
	cudaError_t r = cudaMemGetInfo(free_bytes, total_bytes);
	if (r != cudaSuccess) {
		cudaGetLastError(); // a refused query is not a fault of the device's work
		return -EIO;
	}
	return 0;
}

int cu_event_sync(KEvent *e)
{
	cu_use(e->dev);
	cudaError_t r = cudaEventSynchronize(e->priv);
	return r == cudaSuccess ? 0 : event_fault(e, r, "event_sync");
}

int cu_event_elapsed(KEvent *a, KEvent *b, double *ms)
{
	cu_use(a->dev);
	float f = 0;
	cudaError_t r = cudaEventElapsedTime(&f, a->priv, b->priv);
	if (r == cudaErrorNotReady) {
		cudaGetLastError();
		return -EAGAIN;
	}
	if (r != cudaSuccess)
		return event_fault(a, r, "event_elapsed");
	*ms = f;
	return 0;
}

int64_t cu_slow_paths(KernDev *d)
{
	return kcu_slow_count(&((CuDev *)d->priv)->slow);
}

int cu_slow_path_note(KernDev *d, char *buf, size_t len)
{
	return kcu_slow_note(&((CuDev *)d->priv)->slow, buf, len);
}

int64_t cu_launches(KernDev *d)
{
	(void)d; // the count is the process's: one device per trainer process
	return kcheck_launches();
}
