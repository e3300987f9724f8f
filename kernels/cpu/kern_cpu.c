// The CPU backend's device side: host memory standing in for device memory, pinned and
// registered ranges (checked like a GPU would need them), streams that run at once, the table.
#include "kern_cpu.h"  // defines: kcpu_*
#include "proc_mem.h"  // defines: proc_mem_available
#include "proc_time.h" // defines: time_mono_s

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> // defines: sysconf
#ifdef HAVE_BLAS
#include <cblas.h>
#endif

#define KCPU_ALIGN 64

// Every block carries a list header, so closing the device frees what is still allocated
// (tensors die with their device, as device memory dies with a CUDA context).
typedef struct Block {
	struct Block *prev, *next;
} Block;

typedef struct {
	pthread_mutex_t lock;
	Block head;         // circular list of live device blocks
	KHostRange *ranges; // host memory usable by asynchronous copies
} CpuDev;

// the stream's scratch arena: chunks that never move until the op ends
typedef struct Chunk {
	struct Chunk *next;
	size_t cap, used;
} Chunk;

typedef struct {
	Chunk *chunks; // newest first
} CpuStream;

_Static_assert(sizeof(Block) <= KCPU_ALIGN, "block header must fit the alignment padding");
_Static_assert(sizeof(Chunk) <= KCPU_ALIGN, "chunk header must fit the alignment padding");

// ---- device memory ----
static int cpu_alloc(KernDev *d, void **p, size_t bytes)
{
	CpuDev *pv = d->priv;
	size_t n = (bytes + KCPU_ALIGN - 1) / KCPU_ALIGN * KCPU_ALIGN + KCPU_ALIGN;
	Block *b = aligned_alloc(KCPU_ALIGN, n);
	if (!b)
		return -ENOMEM;
	// a dry plan run (kern_ctx_set_plan) never reads its tensors: untouched pages cost no memory, so a
	// model larger than this machine's memory gives its op list
	memset(b, 0, d->plan_dry ? KCPU_ALIGN : n);
	pthread_mutex_lock(&pv->lock);
	b->next = pv->head.next;
	b->prev = &pv->head;
	pv->head.next->prev = b;
	pv->head.next = b;
	pthread_mutex_unlock(&pv->lock);
	*p = (char *)b + KCPU_ALIGN;
	return 0;
}

static void cpu_free(KernDev *d, void *p)
{
	CpuDev *pv = d->priv;
	Block *b = (Block *)((char *)p - KCPU_ALIGN);
	pthread_mutex_lock(&pv->lock);
	b->prev->next = b->next;
	b->next->prev = b->prev;
	pthread_mutex_unlock(&pv->lock);
	free(b);
}

// ---- host memory: pinned allocations and registered mappings ----
static int cpu_host_alloc(KernDev *d, void **p, size_t bytes)
{
	void *m = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
	if (!m)
		return -ENOMEM;
	memset(m, 0, bytes);
	CpuDev *pv = d->priv;
	int rc = kern_range_add(&pv->ranges, &pv->lock, m, bytes, 1);
	if (rc < 0) {
		free(m);
		return rc;
	}
	*p = m;
	return 0;
}

static void cpu_host_free(KernDev *d, void *p)
{
	CpuDev *pv = d->priv;
	if (kern_range_take(&pv->ranges, &pv->lock, p, 1) == 0)
		free(p);
}

static int cpu_host_register(KernDev *d, void *p, size_t bytes)
{
	CpuDev *pv = d->priv;
	return kern_range_add(&pv->ranges, &pv->lock, p, bytes, 0);
}

static int cpu_host_unregister(KernDev *d, void *p)
{
	CpuDev *pv = d->priv;
	return kern_range_take(&pv->ranges, &pv->lock, p, 0);
}

static int cpu_host_pinned(KernDev *d, const void *p, size_t n)
{
	CpuDev *pv = d->priv;
	return kern_range_covers(&pv->ranges, &pv->lock, p, n);
}

// ---- copies ----
static int cpu_memcopy(KernCtx *c, void *dst, const void *src, size_t n)
{
	if (dst != src)
		memmove(dst, src, n);
	return 0;
}

static int cpu_upload(KernCtx *c, void *dst, const void *host, size_t n, int async)
{
	return cpu_memcopy(c, dst, host, n);
}

static int cpu_download(KernCtx *c, void *host, const void *src, size_t n, int async)
{
	return cpu_memcopy(c, host, src, n);
}

static int cpu_memzero(KernCtx *c, void *p, size_t n)
{
	memset(p, 0, n);
	return 0;
}

int kcpu_convert(KernCtx *c, KTensor *dst, const KTensor *src)
{
	if (dst->dtype == src->dtype)
		return cpu_memcopy(c, dst->data, src->data, kern_nbytes(src));
	int64_t n = kern_numel(src);
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int64_t i = 0; i < n; i++)
		kcpu_st(dst->data, dst->dtype, i, kcpu_ld(src->data, src->dtype, i));
	return 0;
}

// the machine's memory stands for the device's: what the kernel can still hand out (MemAvailable:
// free pages and the page cache it gives back; MemFree alone refused models that fit) and all of it
static int cpu_mem_info(KernDev *d, size_t *free_bytes, size_t *total_bytes)
{
	long page = sysconf(_SC_PAGESIZE), all = sysconf(_SC_PHYS_PAGES);
	uint64_t avail;
	if (page <= 0 || all <= 0 || proc_mem_available(&avail, NULL) < 0)
		return -ENOTSUP;
	*free_bytes = (size_t)avail;
	*total_bytes = (size_t)all * (size_t)page;
	return 0;
}

// ---- devices, streams, events: everything has run by the time a call returns ----
static int cpu_dev_open(KernDev *d, const KCtxOptions *o)
{
	if (o->device != 0)
		return -ENODEV;
	if (o->attention == KERN_ATTN_CUDNN) // cuDNN is a CUDA library: this backend has only its reference
		return -ENOTSUP;
	CpuDev *pv = calloc(1, sizeof *pv);
	if (!pv)
		return -ENOMEM;
	pthread_mutex_init(&pv->lock, NULL);
	pv->head.next = pv->head.prev = &pv->head;
	d->priv = pv;
#ifdef _OPENMP
	d->nthreads = o->threads > 0 ? o->threads : omp_get_max_threads();
#else
	d->nthreads = 1;
#endif
#ifdef HAVE_BLAS
	openblas_set_num_threads(1); // one thread pool: see kcpu_set_blas_threads
#endif
	return 0;
}

const char *kcpu_attention_name(const KernCtx *c)
{
	(void)c;
	return "the CPU reference (FlashAttention-style tiles, online softmax, f32)";
}

static void cpu_dev_close(KernDev *d)
{
	CpuDev *pv = d->priv;
	while (pv->head.next != &pv->head)
		cpu_free(d, (char *)pv->head.next + KCPU_ALIGN);
	for (KHostRange *r; (r = kern_range_pop(&pv->ranges));) {
		if (r->owned)
			free(r->p);
		free(r);
	}
	pthread_mutex_destroy(&pv->lock);
	free(pv);
}

static int cpu_stream_open(KernCtx *c)
{
	c->priv = calloc(1, sizeof(CpuStream));
	return c->priv ? 0 : -ENOMEM;
}

static void cpu_stream_close(KernCtx *c)
{
	CpuStream *s = c->priv;
	while (s->chunks) {
		Chunk *k = s->chunks;
		s->chunks = k->next;
		free(k);
	}
	free(s);
}

static int cpu_nothing(KernCtx *c)
{
	return 0;
}

static int cpu_dev_sync(KernDev *d)
{
	return 0;
}

static int cpu_event_create(KEvent *e)
{
	return 0;
}

static void cpu_event_destroy(KEvent *e) {}

static int cpu_event_record(KEvent *e, KernCtx *c)
{
	e->t_ms = 1e3 * time_mono_s(); // the ops queued before it have run
	return 0;
}

static int cpu_stream_wait_event(KernCtx *c, KEvent *e)
{
	return 0;
}

static int cpu_event_done(KEvent *e)
{
	return 1;
}

static int cpu_event_sync(KEvent *e)
{
	return 0;
}

static int cpu_event_elapsed(KEvent *a, KEvent *b, double *ms)
{
	*ms = b->t_ms - a->t_ms;
	return 0;
}

// One thread pool by default: OpenBLAS's own pthreads and the OpenMP team otherwise fight for
// the cores (OpenMP workers spin-wait while sgemm runs). Measured on 2 cores: tiny training
// 12.7 s -> 1.6 s, vit-s16 step 5.8 s -> 1.3 s. Many-core machines training big models on
// the CPU may raise it. The setting is process-wide (OpenBLAS has one pool).
static int cpu_set_blas_threads(KernCtx *c, int n)
{
#ifdef HAVE_BLAS
	openblas_set_num_threads(n);
#endif
	return 0;
}

// ---- the stream's scratch arena ----
void *kcpu_arena_alloc(KernCtx *c, size_t bytes)
{
	CpuStream *s = c->priv;
	bytes = (bytes + KCPU_ALIGN - 1) / KCPU_ALIGN * KCPU_ALIGN;
	Chunk *k = s->chunks;
	if (!k || k->cap - k->used < bytes) {
		size_t cap = bytes > ((size_t)1 << 20) ? bytes : ((size_t)1 << 20);
		if (k && cap < 2 * k->cap)
			cap = 2 * k->cap;
		Chunk *n = aligned_alloc(KCPU_ALIGN, KCPU_ALIGN + cap);
		if (!n)
			return NULL;
		*n = (Chunk){.next = k, .cap = cap};
		s->chunks = k = n;
	}
	void *p = (char *)k + KCPU_ALIGN + k->used;
	k->used += bytes;
	return p;
}

// after an op: keep one chunk as large as everything the op used, so the next ops fit in it
void kcpu_arena_reset(KernCtx *c)
{
	CpuStream *s = c->priv;
	if (!s->chunks)
		return;
	if (!s->chunks->next) {
		s->chunks->used = 0;
		return;
	}
	size_t total = 0;
	while (s->chunks) {
		Chunk *k = s->chunks;
		s->chunks = k->next;
		total += k->cap;
		free(k);
	}
	Chunk *n = aligned_alloc(KCPU_ALIGN, KCPU_ALIGN + total);
	if (n) {
		*n = (Chunk){.cap = total};
		s->chunks = n;
	}
}

// ---- gemm: BLAS when the build found one, else a plain loop over rows ----
#ifdef HAVE_BLAS
void kcpu_gemm_f32(KernCtx *c, int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
		   const float *B, int ldb, float beta, float *C, int ldc)
{
	if (M == 0 || N == 0)
		return;
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A,
		    lda, B, ldb, beta, C, ldc);
}

void kcpu_gemm_f64(KernCtx *c, int ta, int tb, int M, int N, int K, double alpha, const double *A, int lda,
		   const double *B, int ldb, double beta, double *C, int ldc)
{
	if (M == 0 || N == 0)
		return;
	cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A,
		    lda, B, ldb, beta, C, ldc);
}
#else
#define NAIVE_GEMM(real)                                                                                               \
	int nt = kcpu_threads(c);                                                                                      \
	(void)nt;                                                                                                      \
	KOMP("omp parallel for num_threads(nt) schedule(static)")                                                      \
	for (int i = 0; i < M; i++)                                                                                    \
		for (int j = 0; j < N; j++) {                                                                          \
			real s = 0;                                                                                    \
			for (int k = 0; k < K; k++)                                                                    \
				s += (ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]) *                          \
				     (tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j]);                           \
			C[(size_t)i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * C[(size_t)i * ldc + j]);          \
		}

void kcpu_gemm_f32(KernCtx *c, int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
		   const float *B, int ldb, float beta, float *C, int ldc)
{
	NAIVE_GEMM(float)
}

void kcpu_gemm_f64(KernCtx *c, int ta, int tb, int M, int N, int K, double alpha, const double *A, int lda,
		   const double *B, int ldb, double beta, double *C, int ldc)
{
	NAIVE_GEMM(double)
}
#endif

const KBackend kcpu_backend = {
	.name = "cpu",
	.has_f64 = 1,
	.dev_open = cpu_dev_open,
	.mem_info = cpu_mem_info,
	.dev_close = cpu_dev_close,
	.stream_open = cpu_stream_open,
	.stream_close = cpu_stream_close,
	.stream_sync = cpu_nothing,
	.dev_sync = cpu_dev_sync,
	.set_blas_threads = cpu_set_blas_threads,
	.alloc = cpu_alloc,
	.free = cpu_free,
	.host_alloc = cpu_host_alloc,
	.host_free = cpu_host_free,
	.host_register = cpu_host_register,
	.host_unregister = cpu_host_unregister,
	.host_pinned = cpu_host_pinned,
	.upload = cpu_upload,
	.download = cpu_download,
	.memzero = cpu_memzero,
	.memcopy = cpu_memcopy,
	.event_create = cpu_event_create,
	.event_destroy = cpu_event_destroy,
	.event_record = cpu_event_record,
	.stream_wait_event = cpu_stream_wait_event,
	.event_query = cpu_event_done,
	.event_sync = cpu_event_sync,
	.event_elapsed = cpu_event_elapsed,
#define KOP(name, label, params, args) .name = kcpu_##name,
#define KOP_OWN(ret, name, params) .name = kcpu_##name,
#include "kern_ops.def" // defines: the op entries, kcpu_* each
};
