// The reference GEMM with cuBLASLt's semantics on host memory (kgemm.h): what the shim runs for
// kgemm, and what the device tests hold cuBLASLt's results against.
#include "kgemm.h" // defines: KgCall, kgemm_ref, kgemm_check, kgemm_gelu, kgemm_dgelu

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static float bf16_to_f32(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

// round to nearest even, NaN to the canonical 0x7fff (as cuda_bf16.h's __float2bfloat16)
static uint16_t f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return 0x7fff;
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static double load(const void *p, KgType t, size_t i)
{
	return t == KGEMM_BF16 ? (double)bf16_to_f32(((const uint16_t *)p)[i]) : (double)((const float *)p)[i];
}

// the device computes the epilogue in f32 and converts that to the output type
static void store(void *p, KgType t, size_t i, double v)
{
	if (t == KGEMM_BF16)
		((uint16_t *)p)[i] = f32_to_bf16((float)v);
	else
		((float *)p)[i] = (float)v;
}

// op(X) as a dense rows x K array (row r holds op(X)[r][0..K)); exact for bf16 and f32
static float *gather(const void *X, KgType t, int ld, KgOp op, int rows, int K, int x_is_b)
{
	float *out = malloc((size_t)rows * (size_t)K * sizeof(float));
	if (!out)
		return NULL;
	for (int r = 0; r < rows; r++)
		for (int k = 0; k < K; k++) {
			// A: op(A)[r][k] is A[r + k ld] (N) or A[k + r ld] (T); B is K x N after op, so
			// its column r: op(B)[k][r] is B[k + r ld] (N) or B[r + k ld] (T)
			int trans = x_is_b ? op == KGEMM_N : op == KGEMM_T;
			size_t i = trans ? (size_t)k + (size_t)r * (size_t)ld : (size_t)r + (size_t)k * (size_t)ld;
			out[(size_t)r * (size_t)K + (size_t)k] = (float)load(X, t, i);
		}
	return out;
}

int kgemm_ref(const KgCall *c, KErr *e)
{
	int rc = kgemm_check(c, e);
	if (rc)
		return rc;
	const int M = c->M, N = c->N, K = c->K;
	float *a = gather(c->A, c->ab, c->lda, c->opA, M, K, 0);
	float *b = gather(c->B, c->ab, c->ldb, c->opB, N, K, 1);
	double *bgrad = calloc((size_t)(M > N ? M : N), sizeof(double));
	if (!a || !b || !bgrad) {
		free(a);
		free(b);
		free(bgrad);
		return kerr_set(e, -ENOMEM, "kgemm_ref: no memory for %d x %d x %d", M, N, K);
	}
	const KgEpi epi = c->epi;
	const void *cin = c->Cin ? c->Cin : c->C;
	for (int n = 0; n < N; n++)
		for (int m = 0; m < M; m++) {
			const float *ar = a + (size_t)m * (size_t)K, *br = b + (size_t)n * (size_t)K;
			double acc = 0;
			for (int k = 0; k < K; k++)
				acc += (double)ar[k] * (double)br[k]; // exact products, sums in k order
			size_t ci = (size_t)m + (size_t)n * (size_t)c->ldc,
			       xi = (size_t)m + (size_t)n * (size_t)c->ldaux;
			double x = (double)c->alpha * acc + (c->accumulate ? load(cin, c->c, ci) : 0.0), d = x;
			if (epi == KGEMM_EPI_BIAS || epi == KGEMM_EPI_GELU_BIAS || epi == KGEMM_EPI_GELU_AUX_BIAS)
				x = d = x + load(c->bias, c->bias_type, (size_t)m);
			if (epi == KGEMM_EPI_GELU_AUX || epi == KGEMM_EPI_GELU_AUX_BIAS)
				store(c->aux, c->c, xi, x);
			if (epi == KGEMM_EPI_GELU || epi == KGEMM_EPI_GELU_BIAS || epi == KGEMM_EPI_GELU_AUX ||
			    epi == KGEMM_EPI_GELU_AUX_BIAS)
				d = kgemm_gelu(x);
			if (epi == KGEMM_EPI_DGELU || epi == KGEMM_EPI_DGELU_BGRAD)
				d = x * kgemm_dgelu(load(c->aux, c->c, xi));
			if (epi == KGEMM_EPI_DGELU_BGRAD)
				bgrad[m] += d;
			store(c->C, c->c, ci, d);
		}
	if (epi == KGEMM_EPI_BGRADA || epi == KGEMM_EPI_BGRADB) {
		const float *x = epi == KGEMM_EPI_BGRADA ? a : b;
		for (int r = 0; r < (epi == KGEMM_EPI_BGRADA ? M : N); r++)
			for (int k = 0; k < K; k++)
				bgrad[r] += (double)x[(size_t)r * (size_t)K + (size_t)k];
	}
	if (epi == KGEMM_EPI_DGELU_BGRAD || epi == KGEMM_EPI_BGRADA || epi == KGEMM_EPI_BGRADB)
		for (int r = 0; r < (epi == KGEMM_EPI_BGRADB ? N : M); r++)
			store(c->bias, c->bias_type, (size_t)r, bgrad[r]);
	free(a);
	free(b);
	free(bgrad);
	return 0;
}
