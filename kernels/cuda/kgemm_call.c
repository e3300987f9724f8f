// What every kgemm implementation shares: the checks of a call, the row-major conversion, the
// epilogues' names and GELU's tanh approximation (kgemm.h).
#include "kgemm.h" // defines: KgCall, kgemm_check, kgcall_from_row_major, kgemm_epi_name, kgemm_gelu

#include <errno.h>
#include <math.h>

const char *kgemm_epi_name(KgEpi epi)
{
	static const char *names[KGEMM_EPI_COUNT] = {"none",          "bias",  "gelu",        "gelu_bias", "gelu_aux",
						     "gelu_aux_bias", "dgelu", "dgelu_bgrad", "bgrada",    "bgradb"};
	return (unsigned)epi < KGEMM_EPI_COUNT ? names[epi] : "?";
}

static int epi_reads_bias(KgEpi e)
{
	return e == KGEMM_EPI_BIAS || e == KGEMM_EPI_GELU_BIAS || e == KGEMM_EPI_GELU_AUX_BIAS;
}
static int epi_writes_bias(KgEpi e)
{
	return e == KGEMM_EPI_DGELU_BGRAD || e == KGEMM_EPI_BGRADA || e == KGEMM_EPI_BGRADB;
}
static int epi_uses_aux(KgEpi e)
{
	return e == KGEMM_EPI_GELU_AUX || e == KGEMM_EPI_GELU_AUX_BIAS || e == KGEMM_EPI_DGELU ||
	       e == KGEMM_EPI_DGELU_BGRAD;
}

int kgemm_check(const KgCall *c, KErr *e)
{
	if (!c)
		return kerr_set(e, -EINVAL, "kgemm: no call");
	if (c->M < 1 || c->N < 1 || c->K < 1)
		return kerr_set(e, -EINVAL, "kgemm: M, N, K = %d, %d, %d must be >= 1", c->M, c->N, c->K);
	if ((unsigned)c->opA > KGEMM_T || (unsigned)c->opB > KGEMM_T || (unsigned)c->epi >= KGEMM_EPI_COUNT)
		return kerr_set(e, -EINVAL, "kgemm: unknown transpose or epilogue");
	int arows = c->opA == KGEMM_N ? c->M : c->K, brows = c->opB == KGEMM_N ? c->K : c->N;
	if (c->lda < arows || c->ldb < brows || c->ldc < c->M)
		return kerr_set(e, -EINVAL,
				"kgemm: leading dimensions lda %d ldb %d ldc %d below the stored rows %d, %d, %d "
				"(column-major)",
				c->lda, c->ldb, c->ldc, arows, brows, c->M);
	if ((unsigned)c->ab > KGEMM_BF16 || (unsigned)c->c > KGEMM_BF16 || (unsigned)c->bias_type > KGEMM_BF16)
		return kerr_set(e, -EINVAL, "kgemm: unknown dtype");
	if (c->ab == KGEMM_F32 && c->c == KGEMM_BF16)
		return kerr_set(e, -ENOTSUP, "kgemm: f32 operands with a bf16 output is not a cuBLASLt combination");
	if (!c->A || !c->B || !c->C)
		return kerr_set(e, -EINVAL, "kgemm: NULL operand");
	if ((epi_reads_bias(c->epi) || epi_writes_bias(c->epi)) && !c->bias)
		return kerr_set(e, -EINVAL, "kgemm: epilogue %s needs a bias vector", kgemm_epi_name(c->epi));
	if (epi_uses_aux(c->epi) && (!c->aux || c->ldaux < c->M || c->ldaux % 8))
		return kerr_set(e, -EINVAL,
				"kgemm: epilogue %s needs aux with ldaux >= M (%d) and a multiple of 8, got %d",
				kgemm_epi_name(c->epi), c->M, c->ldaux);
	return 0;
}

void kgcall_from_row_major(KgCall *c)
{
	KgOp op = c->opA;
	c->opA = c->opB;
	c->opB = op;
	int t = c->M;
	c->M = c->N;
	c->N = t;
	const void *p = c->A;
	c->A = c->B;
	c->B = p;
	t = c->lda;
	c->lda = c->ldb;
	c->ldb = t;
	if (c->epi == KGEMM_EPI_BGRADA)
		c->epi = KGEMM_EPI_BGRADB;
	else if (c->epi == KGEMM_EPI_BGRADB)
		c->epi = KGEMM_EPI_BGRADA;
}

#define GELU_K 0.7978845608028654 // sqrt(2 / pi)
#define GELU_C 0.044715

double kgemm_gelu(double x)
{
	return 0.5 * x * (1.0 + tanh(GELU_K * (x + GELU_C * x * x * x)));
}

double kgemm_dgelu(double x)
{
	double t = tanh(GELU_K * (x + GELU_C * x * x * x));
	return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_K * (1.0 + 3.0 * GELU_C * x * x);
}
