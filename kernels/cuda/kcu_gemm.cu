// The CUDA backend's matrix products: row-major descriptions turned into kgemm calls (cuBLASLt on
// a device, the reference in the shim), and an own tiled kernel for what cuBLASLt does not take.
#include "kcu_mm.h"   // defines: KcMM, kc_mm, kc_mm_epi, kc_mm_f64
#include "kcu_slow.h" // defines: kcu_slow_hit

#include <stdio.h>

enum { TILE = 16 };

static int kg_type(int dt, KgType *t)
{
	if (dt == KC_F64)
		return 0;
	*t = dt == KC_BF16 ? KGEMM_BF16 : KGEMM_F32;
	return 1;
}

// the column-major call computing m's memory, when cuBLASLt takes its types
static int to_kgcall(const KcMM &m, KgCall *c)
{
	KgType ta, tb, tc, tbias = KGEMM_F32;
	if (!kg_type(m.A.dt, &ta) || !kg_type(m.B.dt, &tb) || !kg_type(m.C.dt, &tc) || ta != tb ||
	    (ta == KGEMM_F32 && tc == KGEMM_BF16) || (m.bias.p && !kg_type(m.bias.dt, &tbias)))
		return 0;
	if (m.M > INT32_MAX || m.N > INT32_MAX || m.K > INT32_MAX || m.lda > INT32_MAX || m.ldb > INT32_MAX ||
	    m.ldc > INT32_MAX)
		return 0;
	memset(c, 0, sizeof *c);
	c->opA = m.ta ? KGEMM_T : KGEMM_N;
	c->opB = m.tb ? KGEMM_T : KGEMM_N;
	c->M = (int)m.M, c->N = (int)m.N, c->K = (int)m.K;
	c->A = m.A.p, c->lda = (int)m.lda, c->B = m.B.p, c->ldb = (int)m.ldb;
	c->C = m.C.p, c->ldc = (int)m.ldc, c->Cin = m.Cin.p;
	c->ab = ta, c->c = tc;
	c->epi = m.bias.p ? KGEMM_EPI_BIAS : KGEMM_EPI_NONE;
	c->bias = (void *)m.bias.p, c->bias_type = tbias;
	c->alpha = m.alpha;
	c->accumulate = m.accumulate;
	kgcall_from_row_major(c);
	return 1;
}

// One output per thread, 16 x 16 tiles of op(A) and op(B) staged in shared memory; every sum
// runs over k in order. Acc: float (linear layers) or double (the loss ops). TA, TB: how A and B
// are read, KcIn (storage chosen at run time) or KcInT<T> (the loss ops' products: instantiated per
// storage, no branch per load); they replace m.A and m.B.
template <class Acc, class In>
__device__ __forceinline__ Acc mm_ld(In t, int64_t i)
{
	if constexpr (sizeof(Acc) == sizeof(double))
		return kc_ldd(t, i);
	else
		return kc_ld(t, i);
}

template <class Acc, class TA, class TB>
__global__ void __launch_bounds__(TILE *TILE) mm_kernel(KcMM m, TA A, TB B)
{
	__shared__ Acc as[TILE][TILE + 1], bs[TILE][TILE + 1];
	const int tx = (int)threadIdx.x % TILE, ty = (int)threadIdx.x / TILE;
	const int64_t row = (int64_t)blockIdx.y * TILE + ty, col = (int64_t)blockIdx.x * TILE + tx;
	Acc acc = 0;
	for (int64_t k0 = 0; k0 < m.K; k0 += TILE) {
		const int64_t ar = (int64_t)blockIdx.y * TILE + ty, ak = k0 + tx; // op(A)[ar][ak]
		const int64_t bk = k0 + ty, bc = (int64_t)blockIdx.x * TILE + tx; // op(B)[bk][bc]
		as[ty][tx] = ar < m.M && ak < m.K ? mm_ld<Acc>(A, m.ta ? ak * m.lda + ar : ar * m.lda + ak) : Acc(0);
		bs[ty][tx] = bk < m.K && bc < m.N ? mm_ld<Acc>(B, m.tb ? bc * m.ldb + bk : bk * m.ldb + bc) : Acc(0);
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += as[ty][k] * bs[k][tx];
		__syncthreads();
	}
	if (row >= m.M || col >= m.N)
		return;
	const int64_t at = row * m.ldc + col;
	Acc v = (Acc)m.alpha * acc;
	if (m.accumulate)
		v += mm_ld<Acc>(m.Cin.p ? m.Cin : KcIn{m.C.p, m.C.dt}, at);
	if (m.bias.p)
		v += mm_ld<Acc>(m.bias, col);
	kc_std(m.C, at, (double)v);
}

// bf16 operands: 64 x 64 block tiles of op(A) op(B) on the tensor cores (mma.sync m16n8k16
// through kmma.h), any transposes, leading dimensions and alignment. Each tile of 32 k is staged
// into shared memory as op(A)[m][k] and op(B)ᵀ[n][k], consecutive threads along the stored rows
// (coalesced for either layout), zeros outside the matrices; warp w owns a 32 x 32 quarter.
enum { TC_BM = 64, TC_BN = 64, TC_BK = 32, TC_LDS = TC_BK + 8, TC_THREADS = 128 };

// rows [r0, r0 + 64) x k [k0, k0 + 32) of a bf16 operand X (R x K after op; trans: stored K x R)
__device__ __forceinline__ void tc_stage(bf16 *tile, const bf16 *x, int trans, int64_t ld, int64_t R, int64_t K,
					 int64_t r0, int64_t k0)
{
	for (int i = threadIdx.x; i < TC_BM * TC_BK; i += TC_THREADS) {
		const int r = trans ? i % TC_BM : i / TC_BK, c = trans ? i / TC_BM : i % TC_BK;
		const int64_t row = r0 + r, k = k0 + c;
		bf16 v = __float2bfloat16(0.0f);
		if (row < R && k < K)
			v = x[trans ? k * ld + row : row * ld + k];
		tile[r * TC_LDS + c] = v;
	}
}

__global__ void __launch_bounds__(TC_THREADS) mm_tc_kernel(KcMM m)
{
	__shared__ __align__(16) bf16 as[TC_BM * TC_LDS];
	__shared__ __align__(16) bf16 bs[TC_BN * TC_LDS];
	const int warp = (int)threadIdx.x / 32, wm = 32 * (warp / 2), wn = 32 * (warp % 2);
	const int64_t m0 = (int64_t)TC_BM * blockIdx.y, n0 = (int64_t)TC_BN * blockIdx.x;
	KFragC acc[2][4];
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			kfrag_c_zero(acc[i][j]);
	for (int64_t k0 = 0; k0 < m.K; k0 += TC_BK) {
		tc_stage(as, (const bf16 *)m.A.p, m.ta, m.lda, m.M, m.K, m0, k0);
		tc_stage(bs, (const bf16 *)m.B.p, !m.tb, m.ldb, m.N, m.K, n0, k0); // op(B)ᵀ is N x K
		__syncthreads();
		for (int kk = 0; kk < TC_BK; kk += 16) {
			KFragA fa[2];
			KFragB fb[4];
			for (int i = 0; i < 2; i++)
				kfrag_load_a(fa[i], as + (wm + 16 * i) * TC_LDS + kk, TC_LDS);
			for (int j = 0; j < 2; j++)
				kfrag_load_b2_nk(&fb[2 * j], bs + (wn + 16 * j) * TC_LDS + kk, TC_LDS);
			for (int i = 0; i < 2; i++)
				for (int j = 0; j < 4; j++)
					kmma_bf16(acc[i][j], fa[i], fb[j], acc[i][j]);
		}
		__syncthreads(); // the next tiles overwrite these
	}
	const int lane = klane();
	const KcIn cin = m.Cin.p ? m.Cin : KcIn{m.C.p, m.C.dt};
	// unrolled, so that acc stays in registers (an indexed loop put it on the stack: a spill on sm_90)
	KUNROLL
	for (int q = 0; q < 32; q++) {
		const int i = q / 16, j = q / 4 % 4, v = q % 4;
		const int64_t r = m0 + wm + 16 * i + kfrag_c_row(lane, v), col = n0 + wn + 8 * j + kfrag_c_col(lane, v);
		if (r >= m.M || col >= m.N)
			continue;
		float x = m.alpha * acc[i][j].x[v];
		if (m.accumulate)
			x += kc_ld(cin, r * m.ldc + col);
		if (m.bias.p)
			x += kc_ld(m.bias, col);
		kc_st(m.C, r * m.ldc + col, x);
	}
}

template <class Acc, class TA, class TB>
static int mm_tiles(KcuStream *s, const KcMM &m, dim3 grid, TA A, TB B)
{
	return KLAUNCH(&s->err, (mm_kernel<Acc, TA, TB>), grid, TILE * TILE, 0, (cudaStream_t)s->stream, m, A, B);
}

// the loss ops' double products read feature (f32 or bf16) and f64 scratch operands: the pairs
// they use are instantiated per storage, any other pair reads through KcIn
static int mm_tiles_f64(KcuStream *s, const KcMM &m, dim3 grid)
{
	const void *a = m.A.p, *b = m.B.p;
	if (m.A.dt == KC_F32 && m.B.dt == KC_F32)
		return mm_tiles<double>(s, m, grid, KcInT<float>{(const float *)a}, KcInT<float>{(const float *)b});
	if (m.A.dt == KC_BF16 && m.B.dt == KC_BF16)
		return mm_tiles<double>(s, m, grid, KcInT<bf16>{(const bf16 *)a}, KcInT<bf16>{(const bf16 *)b});
	if (m.A.dt == KC_F64 && m.B.dt == KC_F32)
		return mm_tiles<double>(s, m, grid, KcInT<double>{(const double *)a}, KcInT<float>{(const float *)b});
	if (m.A.dt == KC_F64 && m.B.dt == KC_BF16)
		return mm_tiles<double>(s, m, grid, KcInT<double>{(const double *)a}, KcInT<bf16>{(const bf16 *)b});
	return mm_tiles<double>(s, m, grid, m.A, m.B);
}

// the own kernels: tensor cores for bf16 operands, else the exact f32 (or f64) scalar tiles
template <class Acc>
static int mm_own(KcuStream *s, const KcMM &m)
{
	if (sizeof(Acc) == sizeof(float) && m.A.dt == KC_BF16 && m.B.dt == KC_BF16 && m.K > 0) {
		const int64_t gx = (m.N + TC_BN - 1) / TC_BN, gy = (m.M + TC_BM - 1) / TC_BM;
		if (gx <= INT32_MAX && gy <= 65535)
			return KLAUNCH(&s->err, mm_tc_kernel, dim3((unsigned)gx, (unsigned)gy), TC_THREADS, 0,
				       (cudaStream_t)s->stream, m);
	}
	const int64_t gx = (m.N + TILE - 1) / TILE, gy = (m.M + TILE - 1) / TILE;
	if (gx > INT32_MAX || gy > 65535)
		return kerr_set(&s->err, -EINVAL, "matmul: %lld x %lld is too large for the own kernel", (long long)m.M,
				(long long)m.N);
	dim3 grid((unsigned)gx, (unsigned)gy);
	if constexpr (sizeof(Acc) == sizeof(double))
		return mm_tiles_f64(s, m, grid);
	else
		return mm_tiles<Acc>(s, m, grid, m.A, m.B);
}

static const char *dt_name(int dt)
{
	return dt == KC_BF16 ? "bf16" : dt == KC_F64 ? "f64" : "f32";
}

// counts a product off cuBLASLt's path, its shape described once (kern_ctx_slow_paths)
static void slow_hit(KcuStream *s, const KcMM &m, const char *path, const char *why)
{
	if (!s->slow)
		return;
	char key[96];
	snprintf(key, sizeof key, "%s %c%c %lldx%lldx%lld %s,%s->%s", path, "NT"[m.ta != 0], "NT"[m.tb != 0],
		 (long long)m.M, (long long)m.N, (long long)m.K, dt_name(m.A.dt), dt_name(m.B.dt), dt_name(m.C.dt));
	kcu_slow_hit(s->slow, key, why);
}

// cuBLASLt turns a call down before running anything: no algorithm or an unsupported
// combination (NOT_SUPPORTED), or a layout, alignment or epilogue it does not take (INVALID_VALUE)
static bool refused(int rc)
{
	return rc == -ENOTSUP || rc == -EINVAL;
}

int kc_mm(KcuStream *s, const KcMM &m)
{
	if (m.M == 0 || m.N == 0)
		return 0;
	KgCall c;
	// a bias of another type than the output: cuBLASLt's bias epilogue may not take the pair (bf16
	// bias into an f32 tile), so the product runs bare and one pass adds the bias
	const bool split = m.bias.p && m.bias.dt != m.C.dt && m.ldc == m.N && !m.accumulate;
	KcMM bare = m;
	if (split)
		bare.bias = KcIn{nullptr, 0};
	if (m.K > 0 && to_kgcall(bare, &c)) {
		int rc = kgemm(s->gemm, s->stream, &c, &s->err);
		if (!refused(rc))
			return rc || !split ? rc : kc_map_bias(s, m.C, KcIn{m.C.p, m.C.dt}, m.bias, m.N, m.M * m.N);
		slow_hit(s, m, "own GEMM", s->err.msg);
		kerr_clear(&s->err); // cuBLASLt takes no such call: the own kernel does it
	} else if (m.K > 0)
		slow_hit(s, m, "own GEMM", "operand types cuBLASLt does not take (mixed storage)");
	return mm_own<float>(s, m);
}

int kc_mm_own(KcuStream *s, const KcMM &m)
{
	return m.M == 0 || m.N == 0 ? 0 : mm_own<float>(s, m);
}

int kc_mm_epi(KcuStream *s, const KcMM &m, KgEpi epi, KcOut aux, KcOut grad)
{
	KgCall c;
	KgType t;
	if (m.M == 0 || m.N == 0 || m.K == 0 || !to_kgcall(m, &c))
		return -ENOTSUP;
	c.epi = epi;
	char path[40];
	snprintf(path, sizeof path, "unfused %s", kgemm_epi_name(epi));
	if (aux.p) {
		if (aux.dt != m.C.dt || c.ldc % 8) { // cuBLASLt: aux in C's type, its leading dimension a multiple of 8
			slow_hit(s, m, path,
				 "aux not in the output's type, or its leading dimension not a multiple of 8");
			return -ENOTSUP;
		}
		c.aux = aux.p;
		c.ldaux = c.ldc;
	}
	if (grad.p) {
		if (!kg_type(grad.dt, &t))
			return -ENOTSUP;
		c.bias = grad.p;
		c.bias_type = t;
	}
	int rc = kgemm(s->gemm, s->stream, &c, &s->err);
	if (!refused(rc))
		return rc;
	slow_hit(s, m, path, s->err.msg);
	kerr_clear(&s->err);
	return -ENOTSUP;
}

int kc_mm_f64(KcuStream *s, const KcMM &m)
{
	if (m.M == 0 || m.N == 0)
		return 0;
	return mm_own<double>(s, m);
}
