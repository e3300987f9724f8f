// kgemm on a device (cuBLASLt) against the reference GEMM on the host: every transpose and
// epilogue for bf16 and f32; the combinations the CUDA backend's linear layers use must be
// supported, the rest are reported. Two runs give the same bits. Exit 77 without a GPU.
#include "kgemm.h"     // defines: KGemm, KgCall, kgemm, kgemm_ref, kgemm_epi_name
#include "test_seed.h" // defines: test_seed

#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;
static double uni(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static size_t esize(KgType t)
{
	return t == KGEMM_BF16 ? 2 : 4;
}
static double get(const void *p, KgType t, size_t i)
{
	if (t == KGEMM_F32)
		return ((const float *)p)[i];
	uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static void fill(void *p, KgType t, size_t n, double scale)
{
	for (size_t i = 0; i < n; i++) {
		float f = (float)(scale * uni());
		if (t == KGEMM_F32) {
			((float *)p)[i] = f;
		} else {
			uint32_t u;
			memcpy(&u, &f, 4);
			((uint16_t *)p)[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
		}
	}
}
static double rel_l2(const void *got, const void *want, KgType t, size_t n)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		double d = get(got, t, i) - get(want, t, i);
		num += d * d, den += get(want, t, i) * get(want, t, i);
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

// the combinations the linear layers use (column-major terms, see kgcall_from_row_major):
// forward TN with a bias (and GELU saving its input), input gradient NN (with dGELU), weight
// gradient NT accumulating, with the bias gradient
static int required(KgOp a, KgOp b, KgEpi e, int acc)
{
	if (a == KGEMM_T && b == KGEMM_N)
		return !acc && (e == KGEMM_EPI_NONE || e == KGEMM_EPI_BIAS || e == KGEMM_EPI_GELU_AUX_BIAS);
	if (a == KGEMM_N && b == KGEMM_N)
		return e == KGEMM_EPI_NONE || e == KGEMM_EPI_DGELU || e == KGEMM_EPI_DGELU_BGRAD;
	if (a == KGEMM_N && b == KGEMM_T)
		return e == KGEMM_EPI_NONE || e == KGEMM_EPI_BGRADB;
	return 0;
}

static int failures, unsupported;

static void one_case(KGemm *g, KgOp opA, KgOp opB, KgEpi epi, KgType ab, KgType ct, int acc)
{
	const int M = 96, N = 80, K = 136;
	KgCall c;
	memset(&c, 0, sizeof c);
	c.opA = opA, c.opB = opB, c.M = M, c.N = N, c.K = K, c.ab = ab, c.c = ct, c.epi = epi;
	c.alpha = 1.0f, c.accumulate = acc, c.bias_type = ct, c.ldaux = M;
	c.lda = opA == KGEMM_N ? M : K, c.ldb = opB == KGEMM_N ? K : N, c.ldc = M;
	size_t asz = (size_t)c.lda * (opA == KGEMM_N ? K : M), bsz = (size_t)c.ldb * (opB == KGEMM_N ? N : K);
	size_t csz = (size_t)M * N, nb = (size_t)(M > N ? M : N);
	void *hA = malloc(asz * 4), *hB = malloc(bsz * 4), *hC = malloc(csz * 4), *hX = malloc(csz * 4),
	     *hb = malloc(nb * 4);
	void *rC = malloc(csz * 4), *rX = malloc(csz * 4), *rb = malloc(nb * 4);
	void *gC = malloc(csz * 4), *gX = malloc(csz * 4), *gb = malloc(nb * 4), *gC2 = malloc(csz * 4);
	fill(hA, ab, asz, 1.0), fill(hB, ab, bsz, 1.0), fill(hC, ct, csz, 1.0), fill(hX, ct, csz, 2.0);
	fill(hb, ct, nb, 1.0);
	void *dA, *dB, *dC, *dX, *db;
	cuda_check(cudaMalloc(&dA, asz * 4)), cuda_check(cudaMalloc(&dB, bsz * 4)),
		cuda_check(cudaMalloc(&dC, csz * 4));
	cuda_check(cudaMalloc(&dX, csz * 4)), cuda_check(cudaMalloc(&db, nb * 4));
	int rc = 0;
	for (int run = 0; run < 2 && !rc; run++) {
		cuda_check(cudaMemcpy(dA, hA, asz * esize(ab), cudaMemcpyHostToDevice));
		cuda_check(cudaMemcpy(dB, hB, bsz * esize(ab), cudaMemcpyHostToDevice));
		cuda_check(cudaMemcpy(dC, hC, csz * esize(ct), cudaMemcpyHostToDevice));
		cuda_check(cudaMemcpy(dX, hX, csz * esize(ct), cudaMemcpyHostToDevice));
		cuda_check(cudaMemcpy(db, hb, nb * esize(ct), cudaMemcpyHostToDevice));
		KgCall d = c;
		d.A = dA, d.B = dB, d.C = dC, d.aux = dX, d.bias = db;
		KErr e = {0, ""};
		rc = kgemm(g, NULL, &d, &e);
		if (rc == -ENOTSUP) {
			unsupported++;
			printf("%s op %c%c %s %s->%s acc %d: %s\n",
			       required(opA, opB, epi, acc) ? "FAIL (needed)" : "not supported", "NT"[opA], "NT"[opB],
			       kgemm_epi_name(epi), ab ? "bf16" : "f32", ct ? "bf16" : "f32", acc, e.msg);
			failures += required(opA, opB, epi, acc);
			break;
		}
		if (rc) {
			printf("FAIL op %c%c %s: %s\n", "NT"[opA], "NT"[opB], kgemm_epi_name(epi), e.msg);
			failures++;
			break;
		}
		cuda_check(cudaDeviceSynchronize());
		cuda_check(cudaMemcpy(run ? gC2 : gC, dC, csz * esize(ct), cudaMemcpyDeviceToHost));
		cuda_check(cudaMemcpy(gX, dX, csz * esize(ct), cudaMemcpyDeviceToHost));
		cuda_check(cudaMemcpy(gb, db, nb * esize(ct), cudaMemcpyDeviceToHost));
	}
	if (!rc) {
		memcpy(rC, hC, csz * 4), memcpy(rX, hX, csz * 4), memcpy(rb, hb, nb * 4);
		KgCall h = c;
		h.A = hA, h.B = hB, h.C = rC, h.aux = rX, h.bias = rb;
		KErr e = {0, ""};
		kgemm_ref(&h, &e);
		double tol = ct == KGEMM_BF16 ? 1e-2 : 1e-5;
		double ec = rel_l2(gC, rC, ct, csz), ex = rel_l2(gX, rX, ct, csz), eb = rel_l2(gb, rb, ct, nb);
		int same = memcmp(gC, gC2, csz * esize(ct)) == 0;
		int ok = ec <= tol && ex <= tol && eb <= tol && same;
		if (!ok)
			printf("FAIL op %c%c %s %s->%s acc %d: rel L2 D %.2e aux %.2e bias %.2e (tolerance %.0e), two runs %s\n",
			       "NT"[opA], "NT"[opB], kgemm_epi_name(epi), ab ? "bf16" : "f32", ct ? "bf16" : "f32", acc,
			       ec, ex, eb, tol, same ? "identical" : "DIFFER");
		failures += !ok;
	}
	cuda_check(cudaFree(dA)), cuda_check(cudaFree(dB)), cuda_check(cudaFree(dC)), cuda_check(cudaFree(dX)),
		cuda_check(cudaFree(db));
	void *all[] = {hA, hB, hC, hX, hb, rC, rX, rb, gC, gX, gb, gC2};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		free(all[i]);
}

int main(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		printf("no CUDA device: skipped\n");
		return 77;
	}
	rng = test_seed("test_kgemm_gpu");
	printf("test_kgemm_gpu: seed %llu\n", (unsigned long long)rng);
	KGemm *g;
	KErr e = {0, ""};
	if (kgemm_create(&g, 0, &e)) {
		printf("kgemm_create: %s\n", e.msg);
		return 1;
	}
	const KgType types[3][2] = {{KGEMM_BF16, KGEMM_BF16}, {KGEMM_BF16, KGEMM_F32}, {KGEMM_F32, KGEMM_F32}};
	int cases = 0;
	for (int opA = 0; opA < 2; opA++)
		for (int opB = 0; opB < 2; opB++)
			for (int epi = 0; epi < KGEMM_EPI_COUNT; epi++)
				for (int t = 0; t < 3; t++)
					for (int acc = 0; acc < 2; acc++, cases++)
						one_case(g, (KgOp)opA, (KgOp)opB, (KgEpi)epi, types[t][0], types[t][1],
							 acc);
	kgemm_destroy(g);
	printf("%d cases, %d not supported by cuBLASLt here, %d failed\n", cases, unsupported, failures);
	printf("test_kgemm_gpu: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
