// The reference GEMM (what the shim runs for kgemm, and what device results are held against)
// against naive loops: every transpose, epilogue, dtype pair and accumulate flag, called
// column-major directly and through the row-major conversion a row-major caller uses.
#include "kgemm.h"     // defines: KgCall, kgemm_ref, kgcall_from_row_major, kgemm_gelu, kgemm_dgelu
#include "test_seed.h" // defines: test_seed

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);                                     \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fputc('\n', stderr);                                                                           \
			failures++;                                                                                    \
		}                                                                                                      \
	} while (0)

static uint64_t rng;
static double uni(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static uint16_t to_bf16(float f) // round to nearest even
{
	uint32_t u;
	memcpy(&u, &f, 4);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}
static double from_bf16(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static double get(const void *p, KgType t, size_t i)
{
	return t == KGEMM_BF16 ? from_bf16(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}
static void put(void *p, KgType t, size_t i, double v)
{
	if (t == KGEMM_BF16)
		((uint16_t *)p)[i] = to_bf16((float)v);
	else
		((float *)p)[i] = (float)v;
}
static void *random_matrix(KgType t, size_t n, double scale)
{
	void *p = malloc(n * 4);
	for (size_t i = 0; i < n; i++)
		put(p, t, i, scale * uni());
	return p;
}

// The naive version in the caller's own terms. Row-major (rm = 1): C[i][j] at C[i*ldc + j],
// op(A)[i][k] = A[i*lda + k] (N) or A[k*lda + i] (T); bias runs along j, BGRADA sums op(A)'s
// rows, BGRADB op(B)'s columns. Column-major (rm = 0): as kgemm.h states.
static void naive(const KgCall *c, int rm, void *C, void *bias, void *aux)
{
	const int M = c->M, N = c->N, K = c->K;
	double bg[256] = {0};
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double acc = 0;
			for (int k = 0; k < K; k++) {
				size_t ai = rm ? (c->opA == KGEMM_N ? (size_t)i * c->lda + k : (size_t)k * c->lda + i)
					       : (c->opA == KGEMM_N ? (size_t)i + (size_t)k * c->lda
								    : (size_t)k + (size_t)i * c->lda);
				size_t bi = rm ? (c->opB == KGEMM_N ? (size_t)k * c->ldb + j : (size_t)j * c->ldb + k)
					       : (c->opB == KGEMM_N ? (size_t)k + (size_t)j * c->ldb
								    : (size_t)j + (size_t)k * c->ldb);
				acc += get(c->A, c->ab, ai) * get(c->B, c->ab, bi);
			}
			size_t ci = rm ? (size_t)i * c->ldc + j : (size_t)i + (size_t)j * c->ldc;
			size_t xi = rm ? (size_t)i * c->ldaux + j : (size_t)i + (size_t)j * c->ldaux;
			int bidx = rm ? j : i; // the bias runs along D's rows in cuBLASLt's (column-major) terms
			double x = (double)c->alpha * acc + (c->accumulate ? get(C, c->c, ci) : 0.0), d = x;
			switch (c->epi) {
			case KGEMM_EPI_BIAS: d = x + get(c->bias, c->bias_type, bidx); break;
			case KGEMM_EPI_GELU: d = kgemm_gelu(x); break;
			case KGEMM_EPI_GELU_BIAS: d = kgemm_gelu(x + get(c->bias, c->bias_type, bidx)); break;
			case KGEMM_EPI_GELU_AUX: put(aux, c->c, xi, x), d = kgemm_gelu(x); break;
			case KGEMM_EPI_GELU_AUX_BIAS:
				x += get(c->bias, c->bias_type, bidx);
				put(aux, c->c, xi, x), d = kgemm_gelu(x);
				break;
			case KGEMM_EPI_DGELU: d = x * kgemm_dgelu(get(aux, c->c, xi)); break;
			case KGEMM_EPI_DGELU_BGRAD: d = x * kgemm_dgelu(get(aux, c->c, xi)), bg[bidx] += d; break;
			default: break;
			}
			put(C, c->c, ci, d);
		}
	if (c->epi == KGEMM_EPI_BGRADA || c->epi == KGEMM_EPI_BGRADB) {
		int rows_of_a = c->epi == KGEMM_EPI_BGRADA; // in the caller's terms
		int n = rows_of_a ? M : N;
		for (int r = 0; r < n; r++)
			for (int k = 0; k < K; k++) {
				size_t idx;
				if (rows_of_a)
					idx = rm ? (c->opA == KGEMM_N ? (size_t)r * c->lda + k : (size_t)k * c->lda + r)
						 : (c->opA == KGEMM_N ? (size_t)r + (size_t)k * c->lda
								      : (size_t)k + (size_t)r * c->lda);
				else
					idx = rm ? (c->opB == KGEMM_N ? (size_t)k * c->ldb + r : (size_t)r * c->ldb + k)
						 : (c->opB == KGEMM_N ? (size_t)k + (size_t)r * c->ldb
								      : (size_t)r + (size_t)k * c->ldb);
				bg[r] += get(rows_of_a ? c->A : c->B, c->ab, idx);
			}
	}
	if (c->epi == KGEMM_EPI_DGELU_BGRAD || c->epi == KGEMM_EPI_BGRADA || c->epi == KGEMM_EPI_BGRADB) {
		int n = c->epi == KGEMM_EPI_BGRADA ? M : c->epi == KGEMM_EPI_BGRADB ? N : (rm ? N : M);
		for (int r = 0; r < n; r++)
			put(bias, c->bias_type, r, bg[r]);
	}
}

static int one_case(KgOp opA, KgOp opB, KgEpi epi, KgType ab, KgType ct, int acc, int rm)
{
	const int M = 13, N = 9, K = 17; // the caller's shape
	KgCall c;
	memset(&c, 0, sizeof c);
	c.opA = opA, c.opB = opB, c.M = M, c.N = N, c.K = K, c.ab = ab, c.c = ct, c.epi = epi;
	c.alpha = acc ? 0.5f : 1.0f, c.accumulate = acc,
	c.bias_type = ct == KGEMM_F32 ? KGEMM_F32 : (epi % 2 ? KGEMM_BF16 : KGEMM_F32);
	// leading dimensions with padding, in the caller's layout
	int arows = rm ? (opA == KGEMM_N ? M : K) : (opA == KGEMM_N ? M : K), acols = opA == KGEMM_N ? K : M;
	int brows = opB == KGEMM_N ? K : N, bcols = opB == KGEMM_N ? N : K;
	c.lda = (rm ? acols : arows) + 3, c.ldb = (rm ? bcols : brows) + 2, c.ldc = (rm ? N : M) + 1;
	c.ldaux = 24; // >= 13 and a multiple of 8 either way
	size_t asz = (size_t)c.lda * (rm ? arows : acols), bsz = (size_t)c.ldb * (rm ? brows : bcols);
	size_t csz = (size_t)c.ldc * (rm ? M : N), xsz = (size_t)c.ldaux * 24;
	void *A = random_matrix(ab, asz, 1.0), *B = random_matrix(ab, bsz, 1.0), *C0 = random_matrix(ct, csz, 2.0);
	void *X0 = random_matrix(ct, xsz, 2.0), *bias0 = random_matrix(c.bias_type, 32, 1.0);
	void *C1 = malloc(csz * 4), *C2 = malloc(csz * 4), *X1 = malloc(xsz * 4), *X2 = malloc(xsz * 4);
	void *b1 = malloc(32 * 4), *b2 = malloc(32 * 4);
	memcpy(C1, C0, csz * 4), memcpy(C2, C0, csz * 4), memcpy(X1, X0, xsz * 4), memcpy(X2, X0, xsz * 4);
	memcpy(b1, bias0, 32 * 4), memcpy(b2, bias0, 32 * 4);
	c.A = A, c.B = B;

	KgCall want = c;
	want.C = C1, want.aux = X1, want.bias = b1;
	naive(&want, rm, C1, b1, X1);

	KgCall got = c;
	got.C = C2, got.aux = X2, got.bias = b2;
	if (rm)
		kgcall_from_row_major(&got);
	KErr e = {0, ""};
	int rc = kgemm_ref(&got, &e);
	int bad = rc != 0;
	bad += memcmp(C1, C2, csz * (ct == KGEMM_BF16 ? 2 : 4)) != 0;
	bad += memcmp(X1, X2, xsz * (ct == KGEMM_BF16 ? 2 : 4)) != 0;
	bad += memcmp(b1, b2, 32 * (c.bias_type == KGEMM_BF16 ? 2 : 4)) != 0;
	CHECK(bad == 0, "%s op %c%c %s, %s -> %s, accumulate %d: rc %d %s (outputs differ from the naive loops)",
	      rm ? "row-major" : "column-major", "NT"[opA], "NT"[opB], kgemm_epi_name(epi), ab ? "bf16" : "f32",
	      ct ? "bf16" : "f32", acc, rc, e.msg);
	void *all[] = {A, B, C0, X0, bias0, C1, C2, X1, X2, b1, b2};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		free(all[i]);
	return bad == 0;
}

static void check_refusals(void)
{
	float a[64] = {0}, b[64] = {0}, c[64] = {0};
	KgCall ok = {.opA = KGEMM_N,
		     .opB = KGEMM_N,
		     .M = 4,
		     .N = 4,
		     .K = 4,
		     .A = a,
		     .lda = 4,
		     .B = b,
		     .ldb = 4,
		     .C = c,
		     .ldc = 4,
		     .ab = KGEMM_F32,
		     .c = KGEMM_F32,
		     .alpha = 1};
	KErr e = {0, ""};
	CHECK(kgemm_ref(&ok, &e) == 0, "a plain call: %s", e.msg);
	KgCall bad = ok;
	bad.lda = 3;
	CHECK(kgemm_ref(&bad, &e) == -EINVAL && strstr(e.msg, "leading dimensions"), "lda below M: %s", e.msg);
	kerr_clear(&e), bad = ok, bad.opA = KGEMM_T, bad.M = 5;
	CHECK(kgemm_ref(&bad, &e) == -EINVAL, "op T: lda must cover K rows, M %d ldc %d", bad.M, bad.ldc);
	kerr_clear(&e), bad = ok, bad.epi = KGEMM_EPI_BIAS;
	CHECK(kgemm_ref(&bad, &e) == -EINVAL && strstr(e.msg, "bias"), "bias missing: %s", e.msg);
	kerr_clear(&e), bad = ok, bad.epi = KGEMM_EPI_GELU_AUX, bad.aux = c, bad.ldaux = 6;
	CHECK(kgemm_ref(&bad, &e) == -EINVAL && strstr(e.msg, "multiple of 8"), "ldaux 6: %s", e.msg);
	kerr_clear(&e), bad = ok, bad.c = KGEMM_BF16;
	CHECK(kgemm_ref(&bad, &e) == -ENOTSUP, "f32 in, bf16 out: %s", e.msg);
	kerr_clear(&e), bad = ok, bad.K = 0;
	CHECK(kgemm_ref(&bad, &e) == -EINVAL, "K 0: %s", e.msg);
}

int main(void)
{
	rng = test_seed("test_kgemm_ref");
	printf("test_kgemm_ref: seed %llu (KT_SEED reproduces it)\n", (unsigned long long)rng);
	// GELU's tanh approximation (what cuBLASLt's epilogue computes), values from Python
	CHECK(fabs(kgemm_gelu(1.0) - 0.8411919906082768) < 1e-15, "gelu(1) %.17g", kgemm_gelu(1.0));
	CHECK(fabs(kgemm_gelu(-1.0) + 0.15880800939172324) < 1e-15, "gelu(-1) %.17g", kgemm_gelu(-1.0));
	CHECK(fabs(kgemm_dgelu(1.0) - 1.0829640838457826) < 1e-15, "gelu'(1) %.17g", kgemm_dgelu(1.0));
	CHECK(fabs(kgemm_dgelu(-2.0) + 0.08609925662361825) < 1e-15, "gelu'(-2) %.17g", kgemm_dgelu(-2.0));
	int cases = 0, passed = 0;
	const KgType types[3][2] = {{KGEMM_BF16, KGEMM_BF16}, {KGEMM_BF16, KGEMM_F32}, {KGEMM_F32, KGEMM_F32}};
	for (int rm = 0; rm < 2; rm++)
		for (int opA = 0; opA < 2; opA++)
			for (int opB = 0; opB < 2; opB++)
				for (int epi = 0; epi < KGEMM_EPI_COUNT; epi++)
					for (int t = 0; t < 3; t++)
						for (int acc = 0; acc < 2; acc++, cases++)
							passed += one_case((KgOp)opA, (KgOp)opB, (KgEpi)epi,
									   types[t][0], types[t][1], acc, rm);
	check_refusals();
	printf("%d of %d cases match the naive loops bit for bit\n", passed, cases);
	printf("test_kgemm_ref: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
