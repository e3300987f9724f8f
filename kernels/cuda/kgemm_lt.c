// kgemm on the device through cuBLASLt: one handle, one workspace, and per shape a cached
// matmul descriptor, three layouts and the algorithm the heuristics chose (kgemm.h).
#include "kgemm.h" // defines: KGemm, KgCall, kgemm_create, kgemm_destroy, kgemm, kgemm_check

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { PLANS = 64 };

// Everything the heuristics' answer depends on. The pointers' alignments are part of it: an
// algorithm chosen for 256-byte aligned operands may not run on 16-byte aligned ones.
typedef struct {
	int opA, opB, M, N, K, lda, ldb, ldc, ab, c, epi, bias_type, ldaux, accumulate;
	int align[5]; // A, B, C, bias, aux
} PlanKey;

typedef struct {
	PlanKey key;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t a, b, c;
	cublasLtMatmulAlgo_t algo;
	uint64_t used; // for eviction: the least recently used plan goes
} Plan;

struct KGemm {
	cublasLtHandle_t lt;
	void *ws;
	size_t ws_bytes;
	Plan plans[PLANS];
	int nplans;
	uint64_t clock;
};

static const cublasLtEpilogue_t epilogues[KGEMM_EPI_COUNT] = {
	CUBLASLT_EPILOGUE_DEFAULT,   CUBLASLT_EPILOGUE_BIAS,        CUBLASLT_EPILOGUE_GELU,
	CUBLASLT_EPILOGUE_GELU_BIAS, CUBLASLT_EPILOGUE_GELU_AUX,    CUBLASLT_EPILOGUE_GELU_AUX_BIAS,
	CUBLASLT_EPILOGUE_DGELU,     CUBLASLT_EPILOGUE_DGELU_BGRAD, CUBLASLT_EPILOGUE_BGRADA,
	CUBLASLT_EPILOGUE_BGRADB,
};

static cudaDataType_t dtype(KgType t)
{
	return t == KGEMM_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

static int align_of(const void *p)
{
	uintptr_t u = (uintptr_t)p;
	int a = 256;
	while (a > 1 && u % (uintptr_t)a)
		a /= 2;
	return p ? a : 256;
}

int kgemm_create(KGemm **out, size_t ws_bytes, KErr *e)
{
	KGemm *g = calloc(1, sizeof *g);
	*out = NULL;
	if (!g)
		return kerr_set(e, -ENOMEM, "kgemm_create: no memory");
	g->ws_bytes = ws_bytes ? ws_bytes : (size_t)32 << 20;
	int rc = cublas_try(e, cublasLtCreate(&g->lt));
	if (!rc)
		rc = cuda_try(e, cudaMalloc(&g->ws, g->ws_bytes));
	if (rc) {
		kgemm_destroy(g);
		return rc;
	}
	*out = g;
	return 0;
}

static void plan_free(Plan *p)
{
	if (p->op)
		cublasLtMatmulDescDestroy(p->op);
	if (p->a)
		cublasLtMatrixLayoutDestroy(p->a);
	if (p->b)
		cublasLtMatrixLayoutDestroy(p->b);
	if (p->c)
		cublasLtMatrixLayoutDestroy(p->c);
	memset(p, 0, sizeof *p);
}

void kgemm_destroy(KGemm *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->nplans; i++)
		plan_free(&g->plans[i]);
	if (g->ws)
		cudaFree(g->ws);
	if (g->lt)
		cublasLtDestroy(g->lt);
	free(g);
}

static PlanKey key_of(const KgCall *c)
{
	PlanKey k;
	memset(&k, 0, sizeof k); // padding too: keys are compared with memcmp
	k.opA = c->opA, k.opB = c->opB, k.M = c->M, k.N = c->N, k.K = c->K;
	k.lda = c->lda, k.ldb = c->ldb, k.ldc = c->ldc, k.ab = c->ab, k.c = c->c, k.epi = c->epi;
	k.bias_type = c->bias_type, k.ldaux = c->ldaux, k.accumulate = c->accumulate != 0;
	k.align[0] = align_of(c->A), k.align[1] = align_of(c->B), k.align[2] = align_of(c->C);
	k.align[3] = align_of(c->bias), k.align[4] = align_of(c->aux);
	return k;
}

#define SET(desc, attr, val) cublasLtMatmulDescSetAttribute((desc), (attr), &(val), sizeof(val))

// Descriptors and layouts for a new shape, and the heuristics' first algorithm for it.
static int plan_make(KGemm *g, Plan *p, const KgCall *c, KErr *e)
{
	p->key = key_of(c);
	cublasOperation_t ta = c->opA == KGEMM_T ? CUBLAS_OP_T : CUBLAS_OP_N,
			  tb = c->opB == KGEMM_T ? CUBLAS_OP_T : CUBLAS_OP_N;
	cublasLtEpilogue_t epi = epilogues[c->epi];
	int32_t bias_type = dtype(c->bias_type), aux_type = dtype(c->c);
	int64_t ldaux = c->ldaux;
	int rc = cublas_try(e, cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	rc = rc ? rc : cublas_try(e, SET(p->op, CUBLASLT_MATMUL_DESC_TRANSA, ta));
	rc = rc ? rc : cublas_try(e, SET(p->op, CUBLASLT_MATMUL_DESC_TRANSB, tb));
	rc = rc ? rc : cublas_try(e, SET(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, epi));
	if (!rc && c->bias) {
		rc = cublas_try(e, SET(p->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type));
		rc = rc ? rc : cublas_try(e, SET(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, c->bias));
	}
	if (!rc && c->aux) {
		rc = cublas_try(e, SET(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, ldaux));
		rc = rc ? rc : cublas_try(e, SET(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, aux_type));
		rc = rc ? rc : cublas_try(e, SET(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, c->aux));
	}
	int arows = c->opA == KGEMM_N ? c->M : c->K, acols = c->opA == KGEMM_N ? c->K : c->M;
	int brows = c->opB == KGEMM_N ? c->K : c->N, bcols = c->opB == KGEMM_N ? c->N : c->K;
	rc = rc ? rc : cublas_try(e, cublasLtMatrixLayoutCreate(&p->a, dtype(c->ab), arows, acols, c->lda));
	rc = rc ? rc : cublas_try(e, cublasLtMatrixLayoutCreate(&p->b, dtype(c->ab), brows, bcols, c->ldb));
	rc = rc ? rc : cublas_try(e, cublasLtMatrixLayoutCreate(&p->c, dtype(c->c), c->M, c->N, c->ldc));
	if (rc)
		return rc;

	cublasLtMatmulPreference_t pref;
	rc = cublas_try(e, cublasLtMatmulPreferenceCreate(&pref));
	if (rc)
		return rc;
	uint32_t al[4] = {(uint32_t)p->key.align[0], (uint32_t)p->key.align[1], (uint32_t)p->key.align[2],
			  (uint32_t)p->key.align[2]};
	cublasLtMatmulPreferenceAttributes_t which[4] = {
		CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
		CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
	rc = cublas_try(e, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
								&g->ws_bytes, sizeof g->ws_bytes));
	for (int i = 0; i < 4 && !rc; i++)
		rc = cublas_try(e, cublasLtMatmulPreferenceSetAttribute(pref, which[i], &al[i], sizeof al[i]));
	cublasLtMatmulHeuristicResult_t res;
	int found = 0;
	if (!rc)
		rc = cublas_try(
			e, cublasLtMatmulAlgoGetHeuristic(g->lt, p->op, p->a, p->b, p->c, p->c, pref, 1, &res, &found));
	cublasLtMatmulPreferenceDestroy(pref);
	if (!rc && found == 0)
		rc = kerr_set(e, -ENOTSUP,
			      "kgemm: cuBLASLt has no algorithm for op %c%c, M %d N %d K %d, %s -> %s, epilogue %s "
			      "(alignments %d/%d/%d bytes)",
			      "NT"[c->opA], "NT"[c->opB], c -> M, c -> N, c -> K,
			      c -> ab == KGEMM_BF16 ? "bf16" : "f32", c->c == KGEMM_BF16 ? "bf16" : "f32",
			      kgemm_epi_name(c->epi), al[0], al[1], al[2]);
	if (!rc)
		p->algo = res.algo;
	return rc;
}

static int plan_for(KGemm *g, const KgCall *c, Plan **out, KErr *e)
{
	PlanKey k = key_of(c);
	Plan *victim = NULL;
	for (int i = 0; i < g->nplans; i++) {
		if (!memcmp(&g->plans[i].key, &k, sizeof k)) {
			*out = &g->plans[i];
			return 0;
		}
		if (!victim || g->plans[i].used < victim->used)
			victim = &g->plans[i];
	}
	Plan *p = g->nplans < PLANS ? &g->plans[g->nplans++] : victim;
	plan_free(p);
	int rc = plan_make(g, p, c, e);
	if (rc) {
		plan_free(p);
		if (p == &g->plans[g->nplans - 1])
			g->nplans--;
		else { // keep the array dense; the moved plan's handles now belong to p alone
			*p = g->plans[--g->nplans];
			memset(&g->plans[g->nplans], 0, sizeof *p);
		}
		return rc;
	}
	*out = p;
	return 0;
}

int kgemm(KGemm *g, void *stream, const KgCall *c, KErr *e)
{
	if (!g)
		return kerr_set(e, -EINVAL, "kgemm: no handle");
	int rc = kgemm_check(c, e);
	Plan *p = NULL;
	rc = rc ? rc : plan_for(g, c, &p, e);
	if (rc)
		return rc;
	p->used = ++g->clock;
	// the pointers change from call to call; the descriptor carries them
	if (c->bias)
		rc = cublas_try(e, SET(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, c->bias));
	if (!rc && c->aux)
		rc = cublas_try(e, SET(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, c->aux));
	float beta = c->accumulate ? 1.0f : 0.0f;
	const void *cin = c->Cin ? c->Cin : c->C; // C read, D written: a residual needs no copy first
	if (!rc)
		rc = cublas_try(e, cublasLtMatmul(g->lt, p->op, &c->alpha, c->A, p->a, c->B, p->b, &beta, cin, p->c,
						  c->C, p->c, &p->algo, g->ws, g->ws_bytes, (cudaStream_t)stream));
	if (!rc)
		kcheck_count_launch();
	return rc;
}
