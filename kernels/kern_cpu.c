// The CPU backend: host memory, BLAS gemm wrappers, dtype conversion and the backend table
// (f32 for training, f64 for gradient checks; bf16 tensors are stored and converted only).
#include "kern_cpu.h" // defines: kcpu_gemm_f32, kcpu_gemm_f64, kcpu_backend

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_BLAS
#include <cblas.h>
#endif

#define KCPU_ALIGN 64

// Every block carries a list header, so destroying the context frees what is still allocated
// (tensors die with their backend context, as device memory dies with a CUDA context).
typedef struct Block {
	struct Block *prev, *next;
} Block;

typedef struct {
	pthread_mutex_t lock;
	Block head; // circular list of live blocks
} CpuPriv;

_Static_assert(sizeof(Block) <= KCPU_ALIGN, "block header must fit the alignment padding");

static int cpu_alloc(KernCtx *c, void **p, size_t bytes)
{
	CpuPriv *pv = c->priv;
	size_t n = (bytes + KCPU_ALIGN - 1) / KCPU_ALIGN * KCPU_ALIGN + KCPU_ALIGN;
	Block *b = aligned_alloc(KCPU_ALIGN, n);
	if (!b)
		return -ENOMEM;
	memset(b, 0, n);
	pthread_mutex_lock(&pv->lock);
	b->next = pv->head.next;
	b->prev = &pv->head;
	pv->head.next->prev = b;
	pv->head.next = b;
	pthread_mutex_unlock(&pv->lock);
	*p = (char *)b + KCPU_ALIGN;
	return 0;
}

static void cpu_free(KernCtx *c, void *p)
{
	CpuPriv *pv = c->priv;
	Block *b = (Block *)((char *)p - KCPU_ALIGN);
	pthread_mutex_lock(&pv->lock);
	b->prev->next = b->next;
	b->next->prev = b->prev;
	pthread_mutex_unlock(&pv->lock);
	free(b);
}

static int cpu_copy(KernCtx *c, void *dst, const void *src, size_t n)
{
	if (dst != src)
		memmove(dst, src, n);
	return 0;
}

static int cpu_download(KernCtx *c, void *host, const void *src, size_t n)
{
	return cpu_copy(c, host, src, n);
}

static int cpu_memzero(KernCtx *c, void *p, size_t n)
{
	memset(p, 0, n);
	return 0;
}

static double load(const void *p, KDtype dt, int64_t i)
{
	switch (dt) {
	case KDT_F32: return ((const float *)p)[i];
	case KDT_F64: return ((const double *)p)[i];
	case KDT_BF16: return kern_f32_from_bf16(((const uint16_t *)p)[i]);
	default: return 0;
	}
}

static int cpu_convert(KernCtx *c, void *dst, KDtype ddt, const void *src, KDtype sdt, int64_t n)
{
	if (ddt == sdt)
		return cpu_copy(c, dst, src, (size_t)n * kern_dtype_size(ddt));
	int nt = kcpu_threads(c);
	(void)nt;
	KOMP("omp parallel for num_threads(nt) schedule(static)")
	for (int64_t i = 0; i < n; i++) {
		double x = load(src, sdt, i);
		if (ddt == KDT_F32)
			((float *)dst)[i] = (float)x;
		else if (ddt == KDT_F64)
			((double *)dst)[i] = x;
		else
			((uint16_t *)dst)[i] = kern_bf16_from_f32((float)x);
	}
	return 0;
}

static int cpu_check_ids(KernCtx *c, const int32_t *ids, int64_t n, int V)
{
	for (int64_t i = 0; i < n; i++)
		if (ids[i] < 0 || ids[i] >= V)
			return -ERANGE;
	return 0;
}

static void cpu_argmax_rows(KernCtx *c, int32_t *pos, const int32_t *ids, int B, int L)
{
	for (int b = 0; b < B; b++) {
		int best = 0;
		for (int l = 1; l < L; l++)
			if (ids[(int64_t)b * L + l] > ids[(int64_t)b * L + best])
				best = l;
		pos[b] = best;
	}
}

static int cpu_sync(KernCtx *c)
{
	return 0;
}

static void cpu_destroy(KernCtx *c)
{
	CpuPriv *pv = c->priv;
	while (pv->head.next != &pv->head)
		cpu_free(c, (char *)pv->head.next + KCPU_ALIGN);
	pthread_mutex_destroy(&pv->lock);
	free(pv);
	free(c);
}

const KBackendImpl kcpu_backend = {
	.name = "cpu",
	.ops = {[KDT_F32] = &kcpu_ops_f32, [KDT_F64] = &kcpu_ops_f64},
	.alloc = cpu_alloc,
	.free = cpu_free,
	.upload = cpu_copy,
	.download = cpu_download,
	.memzero = cpu_memzero,
	.memcopy = cpu_copy,
	.convert = cpu_convert,
	.check_ids = cpu_check_ids,
	.argmax_rows = cpu_argmax_rows,
	.sync = cpu_sync,
	.destroy = cpu_destroy,
};

int kern_ctx_create_cpu(KernCtx **out, int nthreads)
{
	KernCtx *c = calloc(1, sizeof *c);
	CpuPriv *pv = calloc(1, sizeof *pv);
	if (!c || !pv) {
		free(c);
		free(pv);
		return -ENOMEM;
	}
	pthread_mutex_init(&pv->lock, NULL);
	pv->head.next = pv->head.prev = &pv->head;
	c->priv = pv;
	c->be = &kcpu_backend;
#ifdef _OPENMP
	c->nthreads = nthreads > 0 ? nthreads : omp_get_max_threads();
#else
	c->nthreads = 1;
#endif
	kern_ctx_set_blas_threads(c, 1);
	*out = c;
	return 0;
}

// One thread pool by default: OpenBLAS's own pthreads and the OpenMP team otherwise fight for
// the cores (OpenMP workers spin-wait while sgemm runs). Measured on 2 cores: tiny training
// 12.7 s -> 1.6 s, vit-s16 step 5.8 s -> 1.3 s. Many-core machines training big models on
// the CPU may raise it. The setting is process-wide (OpenBLAS has one pool).
int kern_ctx_set_blas_threads(KernCtx *c, int n)
{
	if (c->be != &kcpu_backend || n < 1)
		return -EINVAL;
#ifdef HAVE_BLAS
	openblas_set_num_threads(n);
#endif
	return 0;
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
				s += (ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]) *                         \
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
