// kgemm under the execution shim: device memory is host memory, so the handle's GEMM is the
// reference (kgemm_ref.c), an op of the stream (run at once unless the shim's streams are
// asynchronous); the workspace is only accounted for.
#include "kgemm.h" // defines: KGemm, kgemm_create, kgemm_destroy, kgemm, kgemm_ref, kgemm_check

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

// the shim's (kemu_sched.cpp, kemu_check.cpp): queue run(ctx) on the stream; the GEMM's accesses
int kemu_async_c(void);
int kemu_enqueue_c(void *stream, const char *name, int (*run)(void *ctx), void *ctx, void (*drop)(void *ctx));
void kemu_check_order_range_c(const void *p, size_t n, int write);

struct KGemm {
	size_t ws_bytes;
};

int kgemm_create(KGemm **out, size_t ws_bytes, KErr *e)
{
	*out = calloc(1, sizeof **out);
	if (!*out)
		return kerr_set(e, -ENOMEM, "kgemm_create: no memory");
	(*out)->ws_bytes = ws_bytes ? ws_bytes : (size_t)32 << 20;
	return 0;
}

void kgemm_destroy(KGemm *g)
{
	free(g);
}

// a column-major rows x cols matrix with leading dimension ld, column by column (the gaps between
// columns are not touched)
static void matrix_access(const void *p, KgType t, int rows, int cols, int ld, int write)
{
	const size_t es = t == KGEMM_BF16 ? 2 : 4;
	for (int j = 0; p && j < cols; j++)
		kemu_check_order_range_c((const char *)p + (size_t)j * (size_t)ld * es, (size_t)rows * es, write);
}

static void gemm_accesses(const KgCall *c)
{
	matrix_access(c->A, c->ab, c->opA == KGEMM_N ? c->M : c->K, c->opA == KGEMM_N ? c->K : c->M, c->lda, 0);
	matrix_access(c->B, c->ab, c->opB == KGEMM_N ? c->K : c->N, c->opB == KGEMM_N ? c->N : c->K, c->ldb, 0);
	if (c->accumulate)
		matrix_access(c->Cin ? c->Cin : c->C, c->c, c->M, c->N, c->ldc, 0);
	matrix_access(c->C, c->c, c->M, c->N, c->ldc, 1);
	const KgEpi x = c->epi;
	const int bias_read = x == KGEMM_EPI_BIAS || x == KGEMM_EPI_GELU_BIAS || x == KGEMM_EPI_GELU_AUX_BIAS;
	const int bias_write = x == KGEMM_EPI_DGELU_BGRAD || x == KGEMM_EPI_BGRADA || x == KGEMM_EPI_BGRADB;
	if (bias_read || bias_write)
		matrix_access(c->bias, c->bias_type, x == KGEMM_EPI_BGRADB ? c->N : c->M, 1, 0, bias_write);
	if (x == KGEMM_EPI_GELU_AUX || x == KGEMM_EPI_GELU_AUX_BIAS || x == KGEMM_EPI_DGELU ||
	    x == KGEMM_EPI_DGELU_BGRAD)
		matrix_access(c->aux, c->c, c->M, c->N, c->ldaux,
			      x == KGEMM_EPI_GELU_AUX || x == KGEMM_EPI_GELU_AUX_BIAS);
}

static int gemm_run(void *ctx)
{
	const KgCall *c = ctx;
	KErr e = {0};
	gemm_accesses(c);
	if (kgemm_ref(c, &e) == 0)
		return 0;
	fprintf(stderr, "kemu: a queued kgemm failed: %s\n", e.msg);
	return 719; // cudaErrorLaunchFailure: sticky, as a failed kernel
}

int kgemm(KGemm *g, void *stream, const KgCall *c, KErr *e)
{
	if (!g)
		return kerr_set(e, -EINVAL, "kgemm: no handle");
	if (!kemu_async_c()) {
		int rc = kgemm_ref(c, e);
		if (!rc)
			kcheck_count_launch(); // as the device's kgemm counts a queued matmul
		return rc;
	}
	int rc = kgemm_check(c, e); // refused at the call, as cuBLASLt does
	if (rc)
		return rc;
	KgCall *copy = malloc(sizeof *copy);
	if (!copy)
		return kerr_set(e, -ENOMEM, "kgemm: no memory");
	*copy = *c;
	int ce = kemu_enqueue_c(stream, "kgemm", gemm_run, copy, free);
	if (ce)
		return kerr_set(e, -EIO, "kgemm: the stream's earlier work failed (CUDA error %d)", ce);
	kcheck_count_launch();
	return 0;
}
