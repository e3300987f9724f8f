// Fixed-order column sums of the CUDA backend, the deterministic replacement for float atomics
// (llm.c's bias-gradient kernels): every parameter gradient that sums over rows goes through here.
#ifndef KCU_COLSUM_H
#define KCU_COLSUM_H
// defines: KcColDst, KcVec8, kc_col_slices, kc_colsum_k, kc_colsum8_k, kc_colsum_finish_k, kc_colsum

#include "kcu_dev.h" // defines: KcIn, KcOut, kc_st_acc, KC_TRY

#include <type_traits>

// A source is a struct with `static constexpr int NOUT` (1 or 2 sums per element) and
// `__device__ void at(int g, int64_t m, int col, float *v) const` giving row m of group g at column
// col. Each (g, m, col) is visited exactly once, so a source may also write that element (the
// GELU-backward epilogue does). Block (x, r, g) owns 32 columns of row slice r of group g; its 8
// row lanes sum every 8th row in order, then the lanes are added 0..7; with several slices a
// second kernel adds the slices' partials in slice order. The slice count is a function of the
// shape alone, so every sum has the same order on every run.
// A source may also offer 8 columns at once (16-byte loads): `static constexpr bool VEC8 = true`,
// `__device__ void at8(int g, int64_t m, int col, float v[][8]) const` (col a multiple of 8) and
// `bool aligned() const` (its tensors 16-byte aligned). With C % 8 == 0 and aligned() its sums
// run 8 columns a thread, each column in the same order as above: the same bits.
enum { KC_COL_TILE = 32, KC_COL_ROWS = 8, KC_COL_MAXR = 64, KC_COL_MINROWS = 256 };

// where the sums go: output o of group g at column c is element g * gstride + c of t[o] (t[o].p
// NULL: not wanted), written or added (acc[o]) by the store rule
struct KcColDst {
	KcOut t[2];
	int acc[2];
	int64_t gstride;
};

static inline int kc_col_slices(int G, int64_t M, int C, int nout)
{
	int64_t r = (M + KC_COL_MINROWS - 1) / KC_COL_MINROWS;
	if (r > KC_COL_MAXR)
		r = KC_COL_MAXR;
	int64_t cap = (int64_t)KCU_PART_FLOATS / ((int64_t)nout * G * C);
	if (r > cap)
		r = cap;
	return r < 2 ? 1 : (int)r;
}

template <class Src>
__global__ void __launch_bounds__(KC_COL_TILE *KC_COL_ROWS)
	kc_colsum_k(Src src, int64_t M, int C, int R, float *part, KcColDst dst)
{
	__shared__ float sh[Src::NOUT][KC_COL_ROWS][KC_COL_TILE + 1];
	const int tx = (int)threadIdx.x % KC_COL_TILE, ty = (int)threadIdx.x / KC_COL_TILE;
	const int col = (int)blockIdx.x * KC_COL_TILE + tx, r = (int)blockIdx.y, g = (int)blockIdx.z;
	const int G = (int)gridDim.z;
	const int64_t m0 = M * r / R, m1 = M * (r + 1) / R;
	float acc[Src::NOUT];
	for (int o = 0; o < Src::NOUT; o++)
		acc[o] = 0.0f;
	if (col < C)
		for (int64_t m = m0 + ty; m < m1; m += KC_COL_ROWS) {
			float v[Src::NOUT];
			src.at(g, m, col, v);
			for (int o = 0; o < Src::NOUT; o++)
				acc[o] += v[o];
		}
	for (int o = 0; o < Src::NOUT; o++)
		sh[o][ty][tx] = acc[o];
	__syncthreads();
	if (ty != 0 || col >= C)
		return;
	for (int o = 0; o < Src::NOUT; o++) {
		if (!dst.t[o].p)
			continue;
		float s = sh[o][0][tx];
		for (int y = 1; y < KC_COL_ROWS; y++)
			s += sh[o][y][tx];
		if (R == 1)
			kc_st_acc(dst.t[o], g * dst.gstride + col, s, dst.acc[o]);
		else
			part[((int64_t)(o * G + g) * R + r) * C + col] = s;
	}
}

// the 8-column form: thread (tx, ty) sums columns 8·(32·x + tx) .. +7 of the same rows as above
template <class Src>
__global__ void __launch_bounds__(KC_COL_TILE *KC_COL_ROWS)
	kc_colsum8_k(Src src, int64_t M, int C, int R, float *part, KcColDst dst)
{
	__shared__ float sh[Src::NOUT][KC_COL_ROWS][8 * KC_COL_TILE + 1];
	const int tx = (int)threadIdx.x % KC_COL_TILE, ty = (int)threadIdx.x / KC_COL_TILE;
	const int col = 8 * ((int)blockIdx.x * KC_COL_TILE + tx), r = (int)blockIdx.y, g = (int)blockIdx.z;
	const int G = (int)gridDim.z;
	const int64_t m0 = M * r / R, m1 = M * (r + 1) / R;
	float acc[Src::NOUT][8] = {};
	if (col < C)
		for (int64_t m = m0 + ty; m < m1; m += KC_COL_ROWS) {
			float v[Src::NOUT][8];
			src.at8(g, m, col, v);
			for (int o = 0; o < Src::NOUT; o++)
				for (int k = 0; k < 8; k++)
					acc[o][k] += v[o][k];
		}
	for (int o = 0; o < Src::NOUT; o++)
		for (int k = 0; k < 8; k++)
			sh[o][ty][8 * tx + k] = acc[o][k];
	__syncthreads();
	if (ty != 0 || col >= C)
		return;
	for (int o = 0; o < Src::NOUT; o++) {
		if (!dst.t[o].p)
			continue;
		for (int k = 0; k < 8; k++) {
			float s = sh[o][0][8 * tx + k];
			for (int y = 1; y < KC_COL_ROWS; y++)
				s += sh[o][y][8 * tx + k];
			if (R == 1)
				kc_st_acc(dst.t[o], g * dst.gstride + col + k, s, dst.acc[o]);
			else
				part[((int64_t)(o * G + g) * R + r) * C + col + k] = s;
		}
	}
}

// whether a source offers at8 (VEC8 true)
template <class S, class = void>
struct KcVec8 : std::false_type {
};
template <class S>
struct KcVec8<S, decltype((void)S::VEC8)> : std::integral_constant<bool, S::VEC8> {
};

template <int NOUT>
__global__ void __launch_bounds__(KC_THREADS) kc_colsum_finish_k(const float *part, int G, int C, int R, KcColDst dst)
{
	const int col = (int)blockIdx.x * KC_THREADS + (int)threadIdx.x, g = (int)blockIdx.y;
	if (col >= C)
		return;
	for (int o = 0; o < NOUT; o++) {
		if (!dst.t[o].p)
			continue;
		float s = 0.0f;
		for (int r = 0; r < R; r++)
			s += part[((int64_t)(o * G + g) * R + r) * C + col];
		kc_st_acc(dst.t[o], g * dst.gstride + col, s, dst.acc[o]);
	}
}

// the first pass: the 8-column kernel where the source offers it and the shape allows
template <class Src>
static int kc_colsum_slices(KcuStream *s, const Src &src, int G, int64_t M, int C, int R, const KcColDst &dst)
{
	const cudaStream_t st = (cudaStream_t)s->stream;
	if constexpr (KcVec8<Src>::value)
		if (C % 8 == 0 && src.aligned()) {
			dim3 grid((unsigned)((C / 8 + KC_COL_TILE - 1) / KC_COL_TILE), (unsigned)R, (unsigned)G);
			return KLAUNCH(&s->err, (kc_colsum8_k<Src>), grid, KC_COL_TILE * KC_COL_ROWS, 0, st, src, M, C,
				       R, s->part, dst);
		}
	dim3 grid((unsigned)((C + KC_COL_TILE - 1) / KC_COL_TILE), (unsigned)R, (unsigned)G);
	return KLAUNCH(&s->err, (kc_colsum_k<Src>), grid, KC_COL_TILE * KC_COL_ROWS, 0, st, src, M, C, R, s->part, dst);
}

// sums G groups of M rows of C columns from src into dst, in a fixed order
template <class Src>
static int kc_colsum(KcuStream *s, const Src &src, int G, int64_t M, int C, const KcColDst &dst)
{
	if (G < 1 || G > 65535 || C < 1)
		return kerr_set(&s->err, -EINVAL, "colsum: %d groups of %d columns (1..65535 groups)", G, C);
	const int R = kc_col_slices(G, M, C, Src::NOUT);
	const cudaStream_t st = (cudaStream_t)s->stream;
	KC_TRY(kc_colsum_slices(s, src, G, M, C, R, dst));
	if (R == 1)
		return 0;
	dim3 fgrid((unsigned)((C + KC_THREADS - 1) / KC_THREADS), (unsigned)G);
	return KLAUNCH(&s->err, (kc_colsum_finish_k<Src::NOUT>), fgrid, KC_THREADS, 0, st, s->part, G, C, R, dst);
}

#endif
