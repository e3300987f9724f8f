// The contract's device side for every backend: opening devices and streams, the error latch,
// the host-wait counter, events and memory. Arguments are checked here once; backends only act.
#include "kern_check.h" // defines: KBackend, KernDev, struct KernCtx, kern_latch, KRUN, kplan

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- the error latch ----
void kern_latch(KernCtx *c, int rc, const char *op, const char *fmt, ...)
{
	KernDev *d = c->dev;
	pthread_mutex_lock(&d->lock);
	if (!atomic_load(&d->err) && rc < 0) {
		int o = snprintf(d->errmsg, sizeof d->errmsg, "%s: ", op);
		va_list ap;
		va_start(ap, fmt);
		if (o > 0 && (size_t)o < sizeof d->errmsg)
			vsnprintf(d->errmsg + o, sizeof d->errmsg - (size_t)o, fmt, ap);
		va_end(ap);
		atomic_store(&d->err, rc);
	}
	pthread_mutex_unlock(&d->lock);
}

int kern_latched(const KernCtx *c)
{
	return atomic_load(&c->dev->err);
}

const char *kern_error_message(const KernCtx *ctx)
{
	return kern_latched(ctx) ? ctx->dev->errmsg : "";
}

static _Thread_local char refusal[256];

int kern_refuse(const char *func, const char *cond)
{
	snprintf(refusal, sizeof refusal, "%s: %s", func, cond);
	return -EINVAL;
}

const char *kern_refusal(void)
{
	return refusal;
}

void kern_error_clear(KernCtx *ctx)
{
	pthread_mutex_lock(&ctx->dev->lock);
	atomic_store(&ctx->dev->err, 0);
	ctx->dev->errmsg[0] = 0;
	pthread_mutex_unlock(&ctx->dev->lock);
}

static int waited(KernCtx *c, int rc)
{
	atomic_fetch_add(&c->dev->waits, 1);
	if (rc < 0)
		kern_latch(c, rc, "sync", "the backend failed to wait");
	return kern_latched(c) ? kern_latched(c) : rc;
}

int64_t kern_ctx_host_waits(const KernCtx *ctx)
{
	return atomic_load(&ctx->dev->waits);
}

int64_t kern_ctx_slow_paths(const KernCtx *ctx)
{
	return ctx && ctx->dev->be->slow_paths ? ctx->dev->be->slow_paths(ctx->dev) : 0;
}

int kern_ctx_slow_path_note(KernCtx *ctx, char *buf, size_t len)
{
	return ctx && ctx->dev->be->slow_path_note ? ctx->dev->be->slow_path_note(ctx->dev, buf, len) : 0;
}

void kern_ctx_set_plan(KernCtx *ctx, KPlanFn fn, void *arg, int dry)
{
	if (!ctx)
		return;
	ctx->dev->plan_arg = arg;
	ctx->dev->plan_dry = fn && dry;
	ctx->dev->plan = fn;
}

int64_t kern_ctx_launches(const KernCtx *ctx)
{
	return ctx && ctx->dev->be->launches ? ctx->dev->be->launches(ctx->dev) : 0;
}

int kern_ctx_memory(const KernCtx *ctx, KMemInfo *out)
{
	if (!ctx || !out)
		return -EINVAL;
	KernDev *d = ctx->dev;
	*out = (KMemInfo){.tensor_bytes = (size_t)atomic_load(&d->mem_bytes),
			  .tensor_peak = (size_t)atomic_load(&d->mem_peak)};
	return d->be->mem_info ? d->be->mem_info(d, &out->device_free, &out->device_total) : -ENOTSUP;
}

void *kern_stream_native(KernCtx *ctx)
{
	return ctx && ctx->dev->be->stream_native ? ctx->dev->be->stream_native(ctx) : NULL;
}

int kern_sync(KernCtx *ctx)
{
	return waited(ctx, ctx->dev->be->dev_sync(ctx->dev));
}

int kern_stream_sync(KernCtx *ctx)
{
	return waited(ctx, ctx->dev->be->stream_sync(ctx));
}

// ---- devices and streams ----
// The CUDA backend (kernels/cuda/) is linked only into programs that ask for it with
// -Wl,-u,kcuda_backend and its libraries (KCUDA_LDFLAGS in kernels/cuda/module.mk); the weak
// reference lets every other program link without CUDA, and then KERN_BACKEND_CUDA is -ENODEV.
extern const KBackend kcuda_backend __attribute__((weak));

static int open_stream(KernDev *d, KernCtx **out)
{
	KernCtx *c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->dev = d;
	int rc = d->be->stream_open(c);
	if (rc < 0) {
		free(c);
		return rc;
	}
	pthread_mutex_lock(&d->lock);
	d->handles++;
	pthread_mutex_unlock(&d->lock);
	*out = c;
	return 0;
}

int kern_ctx_create(KernCtx **out, const KCtxOptions *opt)
{
	if (!out || !opt || (int)opt->attention < 0 || (int)opt->attention > KERN_ATTN_CUDNN)
		return -EINVAL;
	const KBackend *be = NULL;
	if (opt->backend == KERN_BACKEND_CPU)
		be = &kcpu_backend;
	else if (opt->backend == KERN_BACKEND_CUDA && &kcuda_backend)
		be = &kcuda_backend;
	if (!be)
		return -ENODEV; // this build has no such backend
	KernDev *d = calloc(1, sizeof *d);
	if (!d)
		return -ENOMEM;
	d->be = be;
	d->device = opt->device;
	d->attention = opt->attention;
	pthread_mutex_init(&d->lock, NULL);
	int rc = be->dev_open(d, opt);
	if (rc < 0) {
		pthread_mutex_destroy(&d->lock);
		free(d);
		return rc;
	}
	rc = open_stream(d, out);
	if (rc < 0) {
		be->dev_close(d);
		pthread_mutex_destroy(&d->lock);
		free(d);
	}
	return rc;
}

int kern_ctx_create_cpu(KernCtx **out, int threads)
{
	KCtxOptions o = {.backend = KERN_BACKEND_CPU, .device = 0, .threads = threads};
	return kern_ctx_create(out, &o);
}

int kern_stream_create(KernCtx *ctx, KernCtx **out)
{
	if (!ctx || !out)
		return -EINVAL;
	return open_stream(ctx->dev, out);
}

void kern_ctx_destroy(KernCtx *ctx)
{
	if (!ctx)
		return;
	KernDev *d = ctx->dev;
	d->be->stream_sync(ctx);
	if (ctx->ws)
		d->be->free(d, ctx->ws);
	d->be->stream_close(ctx);
	free(ctx);
	pthread_mutex_lock(&d->lock);
	int last = --d->handles == 0;
	pthread_mutex_unlock(&d->lock);
	if (!last)
		return;
	d->be->dev_close(d);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

const char *kern_ctx_backend_name(const KernCtx *ctx)
{
	return ctx->dev->be->name;
}

const char *kern_ctx_attention(const KernCtx *ctx)
{
	return ctx->dev->be->attention_name(ctx);
}

int kern_ctx_device(const KernCtx *ctx)
{
	return ctx->dev->device;
}

int kern_ctx_threads(const KernCtx *ctx)
{
	return ctx->dev->nthreads;
}

int kern_ctx_set_blas_threads(KernCtx *ctx, int n)
{
	if (!ctx || n < 1 || !ctx->dev->be->set_blas_threads)
		return -EINVAL;
	return ctx->dev->be->set_blas_threads(ctx, n);
}

int kern_ctx_reserve_workspace(KernCtx *ctx, size_t bytes)
{
	if (!ctx)
		return -EINVAL;
	if (bytes <= ctx->ws_bytes)
		return 0;
	if (ctx->capturing)
		return -EPERM; // it waits and moves the workspace, which the capture's ops point into
	KernDev *d = ctx->dev;
	int rc = d->be->stream_sync(ctx);
	if (rc < 0)
		return rc;
	void *p;
	if ((rc = d->be->alloc(d, &p, bytes)) < 0)
		return rc;
	if (ctx->ws)
		d->be->free(d, ctx->ws);
	ctx->ws = p;
	ctx->ws_bytes = bytes;
	ctx->ws_epoch++;
	return 0;
}

size_t kern_ctx_workspace_bytes(const KernCtx *ctx)
{
	return ctx->ws_bytes;
}

// ---- events ----
static int event_new(KernCtx *ctx, KEvent **out, int timed)
{
	if (!ctx || !out)
		return -EINVAL;
	KEvent *e = calloc(1, sizeof *e);
	if (!e)
		return -ENOMEM;
	e->dev = ctx->dev;
	e->timed = timed;
	int rc = ctx->dev->be->event_create(e);
	if (rc < 0) {
		free(e);
		return rc;
	}
	*out = e;
	return 0;
}

int kern_event_create(KernCtx *ctx, KEvent **out)
{
	return event_new(ctx, out, 0);
}

int kern_event_create_timed(KernCtx *ctx, KEvent **out)
{
	return event_new(ctx, out, 1);
}

void kern_event_destroy(KEvent *ev)
{
	if (!ev)
		return;
	ev->dev->be->event_destroy(ev);
	free(ev);
}

int kern_event_record(KEvent *ev, KernCtx *stream)
{
	if (!ev || !stream || ev->dev != stream->dev)
		return -EINVAL;
	if (kern_latched(stream))
		return kern_latched(stream);
	int rc = stream->dev->be->event_record(ev, stream);
	ev->recorded |= rc == 0;
	return rc;
}

int kern_stream_wait_event(KernCtx *stream, KEvent *ev)
{
	if (!ev || !stream || ev->dev != stream->dev)
		return -EINVAL;
	if (kern_latched(stream))
		return kern_latched(stream);
	return stream->dev->be->stream_wait_event(stream, ev);
}

int kern_event_query(KEvent *ev)
{
	if (!ev)
		return -EINVAL;
	int err = atomic_load(&ev->dev->err);
	return err ? err : ev->dev->be->event_query(ev);
}

int kern_event_sync(KEvent *ev)
{
	if (!ev)
		return -EINVAL;
	KernDev *d = ev->dev;
	int rc = d->be->event_sync(ev);
	atomic_fetch_add(&d->waits, 1);
	int err = atomic_load(&d->err);
	return err ? err : rc;
}

int kern_event_elapsed(KEvent *a, KEvent *b, double *ms)
{
	if (!a || !b || !ms || a->dev != b->dev || !a->timed || !b->timed || !a->recorded || !b->recorded)
		return -EINVAL;
	int err = atomic_load(&a->dev->err);
	return err ? err : a->dev->be->event_elapsed(a, b, ms);
}

// ---- the host ranges backends keep (kern_backend.h) ----
int kern_range_add(KHostRange **list, pthread_mutex_t *lock, void *p, size_t n, int owned)
{
	KHostRange *r = calloc(1, sizeof *r);
	if (!r)
		return -ENOMEM;
	*r = (KHostRange){.p = p, .n = n, .owned = owned};
	pthread_mutex_lock(lock);
	for (KHostRange *q = *list; q; q = q->next)
		if ((char *)p < q->p + q->n && q->p < (char *)p + n) {
			pthread_mutex_unlock(lock);
			free(r);
			return -EEXIST;
		}
	r->next = *list;
	*list = r;
	pthread_mutex_unlock(lock);
	return 0;
}

int kern_range_take(KHostRange **list, pthread_mutex_t *lock, void *p, int owned)
{
	pthread_mutex_lock(lock);
	for (KHostRange **q = list; *q; q = &(*q)->next)
		if ((*q)->p == p && (*q)->owned == owned) {
			KHostRange *r = *q;
			*q = r->next;
			pthread_mutex_unlock(lock);
			free(r);
			return 0;
		}
	pthread_mutex_unlock(lock);
	return -ENOENT;
}

int kern_range_covers(KHostRange **list, pthread_mutex_t *lock, const void *p, size_t n)
{
	const char *a = p;
	int ok = 0;
	pthread_mutex_lock(lock);
	for (KHostRange *r = *list; r && !ok; r = r->next)
		ok = a >= r->p && a + n <= r->p + r->n;
	pthread_mutex_unlock(lock);
	return ok;
}

KHostRange *kern_range_pop(KHostRange **list)
{
	KHostRange *r = *list;
	if (r)
		*list = r->next;
	return r;
}

// ---- memory ----
int kern_alloc(KernCtx *ctx, KTensor *t, KDtype dt, int ndim, const int64_t *shape)
{
	if (!ctx || !t || ndim < 0 || ndim > KERN_MAX_DIMS || (unsigned)dt >= KDT_COUNT || (ndim && !shape))
		return -EINVAL;
	for (int i = 0; i < ndim; i++)
		if (shape[i] < 0)
			return -EINVAL;
	*t = kern_tensor_make(NULL, dt, ndim, shape);
	size_t n = kern_nbytes(t);
	int rc = ctx->dev->be->alloc(ctx->dev, &t->data, n ? n : 1);
	if (rc)
		return rc;
	t->owned = 1;
	long long now = atomic_fetch_add(&ctx->dev->mem_bytes, (long long)n) + (long long)n;
	for (long long peak = atomic_load(&ctx->dev->mem_peak);
	     now > peak && !atomic_compare_exchange_weak(&ctx->dev->mem_peak, &peak, now);)
		;
	return 0;
}

void kern_free(KernCtx *ctx, KTensor *t)
{
	if (t && t->owned && t->data) {
		ctx->dev->be->free(ctx->dev, t->data);
		atomic_fetch_sub(&ctx->dev->mem_bytes, (long long)kern_nbytes(t));
	}
	if (t)
		memset(t, 0, sizeof *t);
}

int kern_host_alloc(KernCtx *ctx, void **p, size_t bytes)
{
	if (!ctx || !p || !bytes)
		return -EINVAL;
	return ctx->dev->be->host_alloc(ctx->dev, p, bytes);
}

void kern_host_free(KernCtx *ctx, void *p)
{
	if (ctx && p)
		ctx->dev->be->host_free(ctx->dev, p);
}

int kern_host_register(KernCtx *ctx, void *p, size_t bytes)
{
	if (!ctx || !p || !bytes)
		return -EINVAL;
	return ctx->dev->be->host_register(ctx->dev, p, bytes);
}

int kern_host_unregister(KernCtx *ctx, void *p)
{
	if (!ctx || !p)
		return -EINVAL;
	return ctx->dev->be->host_unregister(ctx->dev, p);
}

static int copy_ok(const KernCtx *ctx, const void *host, size_t nbytes, const KTensor *t)
{
	return ctx && host && t && t->data && nbytes == kern_nbytes(t);
}

int kern_upload(KernCtx *ctx, KTensor *dst, const void *host, size_t nbytes)
{
	if (!copy_ok(ctx, host, nbytes, dst))
		return -EINVAL;
	if (kern_latched(ctx))
		return kern_latched(ctx);
	return waited(ctx, ctx->dev->be->upload(ctx, dst->data, host, nbytes, 0));
}

int kern_download(KernCtx *ctx, void *host, size_t nbytes, const KTensor *src)
{
	if (!copy_ok(ctx, host, nbytes, src))
		return -EINVAL;
	if (kern_latched(ctx))
		return kern_latched(ctx);
	return waited(ctx, ctx->dev->be->download(ctx, host, src->data, nbytes, 0));
}

int kern_upload_async(KernCtx *ctx, KTensor *dst, const void *host, size_t nbytes)
{
	if (!copy_ok(ctx, host, nbytes, dst) || !ctx->dev->be->host_pinned(ctx->dev, host, nbytes))
		return -EINVAL;
	if (kern_latched(ctx))
		return kern_latched(ctx);
	return ctx->dev->be->upload(ctx, dst->data, host, nbytes, 1);
}

int kern_download_async(KernCtx *ctx, void *host, size_t nbytes, const KTensor *src)
{
	if (!copy_ok(ctx, host, nbytes, src) || !ctx->dev->be->host_pinned(ctx->dev, host, nbytes))
		return -EINVAL;
	if (kern_latched(ctx))
		return kern_latched(ctx);
	return ctx->dev->be->download(ctx, host, src->data, nbytes, 1);
}

int kern_zero(KernCtx *ctx, KTensor *t)
{
	if (!ctx || !t || !t->data)
		return -EINVAL;
	if (kern_latched(ctx))
		return kern_latched(ctx);
	return KRUN(ctx, kplan("zero", 0, kplan_t(t), 0, 0, "%zu B", kern_nbytes(t)),
		    ctx->dev->be->memzero(ctx, t->data, kern_nbytes(t)));
}

int kern_copy(KernCtx *ctx, KTensor *dst, const KTensor *src)
{
	if (!ctx || !dst || !src || !dst->data || !src->data || dst->dtype != src->dtype ||
	    kern_numel(dst) != kern_numel(src))
		return -EINVAL;
	if (kern_latched(ctx))
		return kern_latched(ctx);
	return KRUN(ctx, kplan("copy", 0, 2 * kplan_t(src), 0, 0, "%zu B", kern_nbytes(src)),
		    ctx->dev->be->memcopy(ctx, dst->data, src->data, kern_nbytes(src)));
}

static int is_float(KDtype dt)
{
	return dt == KDT_F32 || dt == KDT_BF16 || dt == KDT_F64;
}

int kern_convert(KernCtx *ctx, KTensor *dst, const KTensor *src)
{
	if (!ctx || !dst || !src || !dst->data || !src->data || kern_numel(dst) != kern_numel(src) ||
	    !is_float(dst->dtype) || !is_float(src->dtype))
		return -EINVAL;
	if (kern_latched(ctx))
		return kern_latched(ctx);
	return KRUN(ctx, kplan("convert", 0, kplan_t(src) + kplan_t(dst), 0, 0, "%lld", (long long)kern_numel(src)),
		    ctx->dev->be->convert(ctx, dst, src));
}
