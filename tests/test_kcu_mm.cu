// The CUDA backend's own GEMM (kc_mm_own: what kc_mm falls back to when cuBLASLt refuses) against
// the reference GEMM (kgemm_ref, cuBLASLt's semantics) over odd shapes, every transpose pair,
// padded leading dimensions, bias, accumulate onto a separate C input, f32 and bf16 outputs; and
// the bits of two runs under different thread orders.
#include "kcu_mm.h"    // defines: KcMM, kc_mm_own
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc, kt_upload, kt_download
#include "kgemm.h"     // defines: KgCall, kgemm_ref, kgcall_from_row_major

// bf16 operands through mma.sync with f32 accumulation: the reference sums exactly in double
#define TOL_MM_F32 1e-5
#define TOL_MM_BF16 1e-2 // the output's rounding

typedef __nv_bfloat16 bf16;

// acc reads an f32 Cin: only with an f32 output (Cin is in C's dtype)
struct Case {
	int M, N, K, ta, tb, pad, bias, acc, out_bf16;
};

static std::vector<bf16> rand_bf16(size_t n)
{
	std::vector<bf16> v(n);
	for (auto &x : v)
		x = __float2bfloat16(kt_uniform(-1, 1));
	return v;
}

// the reference on host copies, as kc_mm's row-major call turns into cuBLASLt's column-major one
static std::vector<float> reference(const Case &c, const KcMM &m, const std::vector<bf16> &a,
				    const std::vector<bf16> &b, const std::vector<bf16> &bias,
				    const std::vector<float> &cin)
{
	std::vector<float> out((size_t)c.M * m.ldc, 0.0f);
	KgCall g = {};
	g.opA = c.ta ? KGEMM_T : KGEMM_N, g.opB = c.tb ? KGEMM_T : KGEMM_N;
	g.M = c.M, g.N = c.N, g.K = c.K, g.A = a.data(), g.lda = (int)m.lda, g.B = b.data(), g.ldb = (int)m.ldb;
	g.C = out.data(), g.ldc = (int)m.ldc, g.Cin = cin.data(), g.ab = KGEMM_BF16, g.c = KGEMM_F32;
	g.epi = c.bias ? KGEMM_EPI_BIAS : KGEMM_EPI_NONE, g.bias = (void *)bias.data(), g.bias_type = KGEMM_BF16;
	g.alpha = 0.75f, g.accumulate = c.acc;
	kgcall_from_row_major(&g);
	KErr e = {0, ""};
	int rc = kgemm_ref(&g, &e);
	KT_CHECK(rc == 0, "kgemm_ref: %s", e.msg);
	return out;
}

static std::vector<float> run_own(const Case &c, KcMM m, void *dc, size_t n)
{
	KcuStream s = {};
	int rc = kc_mm_own(&s, m);
	KT_CHECK(rc == 0, "kc_mm_own: %s", s.err.msg);
	std::vector<float> got(n);
	if (c.out_bf16) {
		std::vector<bf16> h = kt_download((const bf16 *)dc, n);
		for (size_t i = 0; i < n; i++)
			got[i] = __bfloat162float(h[i]);
	} else
		got = kt_download((const float *)dc, n);
	return got;
}

static void one_case(const Case &c, uint64_t seed)
{
	KcMM m = {};
	m.ta = c.ta, m.tb = c.tb, m.M = c.M, m.N = c.N, m.K = c.K, m.alpha = 0.75f, m.accumulate = c.acc;
	m.lda = (c.ta ? c.M : c.K) + c.pad, m.ldb = (c.tb ? c.K : c.N) + c.pad, m.ldc = c.N + c.pad;
	const size_t na = (size_t)(c.ta ? c.K : c.M) * m.lda, nb = (size_t)(c.tb ? c.N : c.K) * m.ldb,
		     nc = (size_t)c.M * m.ldc;
	std::vector<bf16> a = rand_bf16(na), b = rand_bf16(nb), bias = rand_bf16((size_t)c.N);
	std::vector<float> cin(nc);
	for (auto &x : cin)
		x = kt_uniform(-1, 1);
	bf16 *da = kt_dev_alloc<bf16>(na), *db = kt_dev_alloc<bf16>(nb), *dbias = kt_dev_alloc<bf16>((size_t)c.N);
	float *dcin = kt_dev_alloc<float>(nc);
	void *dc = c.out_bf16 ? (void *)kt_dev_alloc<bf16>(nc) : (void *)kt_dev_alloc<float>(nc);
	kt_upload(da, a), kt_upload(db, b), kt_upload(dbias, bias), kt_upload(dcin, cin);
	m.A = KcIn{da, KC_BF16}, m.B = KcIn{db, KC_BF16}, m.C = KcOut{dc, c.out_bf16 ? KC_BF16 : KC_F32};
	m.Cin = KcIn{dcin, KC_F32}, m.bias = c.bias ? KcIn{dbias, KC_BF16} : KcIn{nullptr, 0};
	std::vector<float> want = reference(c, m, a, b, bias, cin), got[2];
	for (int run = 0; run < 2; run++) {
#if !KT_ON_DEVICE
		kemu_config(1, seed + (uint64_t)run);
#else
		(void)seed;
#endif
		got[run] = run_own(c, m, dc, nc);
	}
	// only the M x N values: the padding between rows is not C's
	std::vector<float> g, w;
	for (int r = 0; r < c.M; r++)
		for (int n = 0; n < c.N; n++)
			g.push_back(got[0][(size_t)r * m.ldc + n]), w.push_back(want[(size_t)r * m.ldc + n]);
	double err = kt_rel_l2(g.data(), w.data(), g.size()), tol = c.out_bf16 ? TOL_MM_BF16 : TOL_MM_F32;
	KT_CHECK(err <= tol, "%dx%dx%d t%d%d pad %d bias %d acc %d %s: rel L2 %.3e (tol %.0e)", c.M, c.N, c.K, c.ta,
		 c.tb, c.pad, c.bias, c.acc, c.out_bf16 ? "bf16" : "f32", err, tol);
	KT_CHECK(memcmp(got[0].data(), got[1].data(), nc * sizeof(float)) == 0, "%dx%dx%d t%d%d: runs differ", c.M, c.N,
		 c.K, c.ta, c.tb);
	printf("%-4s own GEMM %4dx%-4dx%-4d t%d%d pad %d bias %d acc %d %-4s rel L2 %.3e\n", err <= tol ? "ok" : "FAIL",
	       c.M, c.N, c.K, c.ta, c.tb, c.pad, c.bias, c.acc, c.out_bf16 ? "bf16" : "f32", err);
	for (void *p : {(void *)da, (void *)db, (void *)dbias, (void *)dcin, dc})
		cuda_check(cudaFree(p));
}

int main()
{
	uint64_t seed = kt_setup("test_kcu_mm");
	const int shapes[][3] = {{1, 1, 1}, {7, 5, 3}, {65, 70, 33}, {130, 64, 48}, {17, 129, 77}};
	int i = 0;
	for (auto &sh : shapes)
		for (int t = 0; t < 4; t++, i++) {
			Case c = {sh[0], sh[1], sh[2], t & 1, t >> 1, i % 3 == 1 ? 3 : 0, i % 2, i % 3 == 2, 0};
			one_case(c, seed + (uint64_t)i);
		}
	one_case(Case{33, 40, 50, 1, 0, 0, 1, 0, 1}, seed); // bf16 output
	one_case(Case{33, 40, 50, 0, 1, 2, 1, 1, 0}, seed);
	return kt_finish("test_kcu_mm");
}
