// Tensor-core fragments through kmma.h: the per-lane layouts of mma.m16n8k16 and ldmatrix as
// the PTX ISA documents them, the tile loaders built on them (A also from its stored transpose), and FlashAttention's chain (Q K^T,
// row max over a quad, P V with P kept in registers), in the shim and on a device.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc
#include "kmma.h"      // defines: KFragA, KFragB, KFragC, kmma_bf16, kldmatrix_*, kfrag_*

typedef __nv_bfloat16 bf16;

// D = A B + C with fragments built lane by lane from the layout helpers: A (16x16) and B (16x8,
// k rows of n) row-major in global memory, C and D row-major 16x8
__global__ void k_mma_direct(const bf16 *a, const bf16 *b, const float *c, float *d)
{
	KFragA fa;
	KFragB fb;
	KFragC fc;
	kfrag_load_a_direct(fa, a, 16);
	kfrag_load_b_kn_direct(fb, b, 8);
	int l = klane();
	for (int i = 0; i < 4; i++)
		fc.x[i] = c[kfrag_c_row(l, i) * 8 + kfrag_c_col(l, i)];
	kmma_bf16(fc, fa, fb, fc);
	kfrag_c_store(fc, d, 8);
}

// every ldmatrix variant on a 32 x 16 tile: lane 8j+r points at tile row (3r + 5j) % 32, column
// 8 (j % 2); out[variant][lane][register]
__global__ void k_ldmatrix(const bf16 *tile, uint32_t *out)
{
	__shared__ __align__(16) bf16 s[32 * 16];
	for (int i = threadIdx.x; i < 32 * 16; i += 32)
		s[i] = tile[i];
	__syncwarp();
	int l = threadIdx.x, j = l / 8, r = l % 8;
	const bf16 *row = s + ((3 * r + 5 * j) % 32) * 16 + 8 * (j % 2);
	uint32_t v[6][4] = {};
	kldmatrix_x1(v[0], row);
	kldmatrix_x2(v[1], row);
	kldmatrix_x4(v[2], row);
	kldmatrix_x1_trans(v[3], row);
	kldmatrix_x2_trans(v[4], row);
	kldmatrix_x4_trans(v[5], row);
	for (int k = 0; k < 6; k++)
		for (int q = 0; q < 4; q++)
			out[(k * 32 + l) * 4 + q] = v[k][q];
}

// the ldmatrix-based tile loaders against plain loads of the same fragments; 1 = equal, per lane
__global__ void k_loaders(const bf16 *m, int *same)
{
	__shared__ __align__(16) bf16 s[16 * 24]; // rows of 24 elements: 48 bytes, 16-byte aligned
	for (int i = threadIdx.x; i < 16 * 24; i += 32)
		s[i] = m[i];
	__syncwarp();
	KFragA a1, a2;
	kfrag_load_a(a1, s, 24);
	kfrag_load_a_direct(a2, s, 24);
	KFragB b1, b2, bb[2], bd[2];
	kfrag_load_b_nk(b1, s + 8, 24);
	kfrag_load_b_nk_direct(b2, s + 8, 24);
	kfrag_load_b2_nk(bb, s, 24);
	kfrag_load_b_nk_direct(bd[0], s, 24);
	kfrag_load_b_nk_direct(bd[1], s + 8 * 24, 24);
	KFragB c1, c2, cc[2], cd[2];
	kfrag_load_b_kn(c1, s + 8, 24);
	kfrag_load_b_kn_direct(c2, s + 8, 24);
	kfrag_load_b2_kn(cc, s, 24);
	kfrag_load_b_kn_direct(cd[0], s, 24);
	kfrag_load_b_kn_direct(cd[1], s + 8, 24);
	// A from its transpose stored (K x M): element (m, k) at s[k * 24 + m]
	KFragA at;
	kfrag_load_a_trans(at, s, 24);
	int l = klane(), ok = 1;
	const uint16_t *bits = reinterpret_cast<const uint16_t *>(s);
	for (int r = 0; r < 4; r++) {
		int row = kfrag_a_row(l, 2 * r), k = kfrag_a_col(l, 2 * r);
		ok &= at.x[r] == ((uint32_t)bits[k * 24 + row] | (uint32_t)bits[(k + 1) * 24 + row] << 16);
	}
	for (int i = 0; i < 4; i++)
		ok &= a1.x[i] == a2.x[i];
	for (int i = 0; i < 2; i++) {
		ok &= b1.x[i] == b2.x[i] && bb[0].x[i] == bd[0].x[i] && bb[1].x[i] == bd[1].x[i];
		ok &= c1.x[i] == c2.x[i] && cc[0].x[i] == cd[0].x[i] && cc[1].x[i] == cd[1].x[i];
	}
	same[threadIdx.x] = ok;
}

// FlashAttention's inner step for one 16-query tile and 16 keys, head dim 16:
// S = Q K^T (Q, K, V row-major 16 x 16 in shared memory), m = row max of S, P = exp(S - m),
// l = row sum of P, O = P V / l. Outputs O (16 x 16 f32), m and l (16).
__global__ void k_attention_tile(const bf16 *q, const bf16 *k, const bf16 *v, float *o, float *mrow, float *lrow)
{
	__shared__ __align__(16) bf16 sq[16 * 16], sk[16 * 16], sv[16 * 16];
	for (int i = threadIdx.x; i < 256; i += 32)
		sq[i] = q[i], sk[i] = k[i], sv[i] = v[i];
	__syncwarp();
	KFragA fq;
	KFragB fk[2];
	kfrag_load_a(fq, sq, 16);
	kfrag_load_b2_nk(fk, sk, 16); // keys 0..7 and 8..15
	KFragC s[2];
	for (int j = 0; j < 2; j++) {
		kfrag_c_zero(s[j]);
		kmma_bf16(s[j], fq, fk[j], s[j]);
	}
	// element i of s[j] is in row g + 8 (i / 2): a quad holds a row's 16 scores
	float m[2], l[2];
	for (int h = 0; h < 2; h++) {
		float x = fmaxf(fmaxf(s[0].x[2 * h], s[0].x[2 * h + 1]), fmaxf(s[1].x[2 * h], s[1].x[2 * h + 1]));
		m[h] = kquad_max(x);
		float sum = 0.0f;
		for (int j = 0; j < 2; j++)
			for (int e = 0; e < 2; e++) {
				s[j].x[2 * h + e] = __expf(s[j].x[2 * h + e] - m[h]);
				sum += s[j].x[2 * h + e];
			}
		l[h] = kquad_sum(sum);
	}
	KFragA fp;
	kfrag_c_to_a(fp, s[0], s[1]); // P stays in registers as the next A
	KFragB fv[2];
	kfrag_load_b2_kn(fv, sv, 16); // head dims 0..7 and 8..15
	int lane = klane();
	for (int j = 0; j < 2; j++) {
		KFragC acc;
		kfrag_c_zero(acc);
		kmma_bf16(acc, fp, fv[j], acc);
		for (int i = 0; i < 4; i++)
			o[kfrag_c_row(lane, i) * 16 + 8 * j + kfrag_c_col(lane, i)] = acc.x[i] / l[i / 2];
	}
	if (lane % 4 == 0)
		for (int h = 0; h < 2; h++)
			mrow[lane / 4 + 8 * h] = m[h], lrow[lane / 4 + 8 * h] = l[h];
}

#if !KT_ON_DEVICE
__global__ void k_ldmatrix_global(const bf16 *g, uint32_t *out)
{
	uint32_t r[4];
	kldmatrix_x4(r, g + 16 * (threadIdx.x % 16));
	out[threadIdx.x] = r[0];
}
__global__ void k_ldmatrix_misaligned(uint32_t *out)
{
	__shared__ __align__(16) bf16 s[64 * 16];
	for (int i = threadIdx.x; i < 64 * 16; i += 32)
		s[i] = __float2bfloat16(0.0f);
	__syncwarp();
	uint32_t r[1];
	kldmatrix_x1(r, s + 16 * threadIdx.x + 4); // 8 bytes off
	out[threadIdx.x] = r[0];
}
#endif

static float bf(float x)
{
	return __bfloat162float(__float2bfloat16(x));
}

static std::vector<bf16> to_bf16(const std::vector<float> &x)
{
	std::vector<bf16> y(x.size());
	for (size_t i = 0; i < x.size(); i++)
		y[i] = __float2bfloat16(x[i]);
	return y;
}

int main()
{
	kt_setup("test_kemu_mma");
	// 1. mma through the layout helpers: small integers, so every sum is exact in any order
	for (int rep = 0; rep < 4; rep++) {
		std::vector<float> a(256), b(128), c(128);
		for (auto &x : a)
			x = (float)((int)(kt_rand() % 17) - 8);
		for (auto &x : b)
			x = (float)((int)(kt_rand() % 17) - 8);
		for (auto &x : c)
			x = (float)((int)(kt_rand() % 201) - 100);
		bf16 *da = kt_dev_alloc<bf16>(256), *db = kt_dev_alloc<bf16>(128);
		float *dc = kt_dev_alloc<float>(128), *dd = kt_dev_alloc<float>(128);
		kt_upload(da, to_bf16(a)), kt_upload(db, to_bf16(b)), kt_upload(dc, c);
		KLAUNCH(NULL, k_mma_direct, 1, 32, 0, 0, da, db, dc, dd);
		std::vector<float> d = kt_download(dd, 128);
		int bad = 0;
		for (int m = 0; m < 16; m++)
			for (int n = 0; n < 8; n++) {
				float want = c[m * 8 + n];
				for (int k = 0; k < 16; k++)
					want += a[m * 16 + k] * b[k * 8 + n];
				bad += d[m * 8 + n] != want;
			}
		KT_CHECK(bad == 0, "mma.m16n8k16 with the documented fragments: %d of 128 wrong", bad);
		for (void *p : {(void *)da, (void *)db, (void *)dc, (void *)dd})
			cuda_check(cudaFree(p));
	}

	// 2. ldmatrix: element (r, c) of the tile holds r * 16 + c (exact in bf16 up to 256... and
	// beyond 256 the value still differs per element, which is all that matters here)
	std::vector<float> tile(32 * 16);
	for (int i = 0; i < 32 * 16; i++)
		tile[i] = (float)i;
	std::vector<bf16> tb = to_bf16(tile);
	bf16 *dtile = kt_dev_alloc<bf16>(tile.size());
	uint32_t *dld = kt_dev_alloc<uint32_t>(6 * 32 * 4);
	kt_upload(dtile, tb);
	KLAUNCH(NULL, k_ldmatrix, 1, 32, 0, 0, dtile, dld);
	std::vector<uint32_t> ld = kt_download(dld, 6 * 32 * 4);
	int bad = 0;
	const int nmat[6] = {1, 2, 4, 1, 2, 4};
	for (int var = 0; var < 6; var++)
		for (int l = 0; l < 32; l++)
			for (int j = 0; j < nmat[var]; j++) {
				bool trans = var >= 3;
				// matrix j's rows come from lanes 8j..8j+7
				int r0 = trans ? 2 * (l % 4) : l / 4, r1 = trans ? r0 + 1 : r0;
				int c0 = trans ? l / 4 : 2 * (l % 4), c1 = trans ? c0 : c0 + 1;
				auto at = [&](int r, int c) {
					int trow = (3 * r + 5 * j) % 32, tcol = 8 * (j % 2) + c;
					return kt_bf16_bits(tb[trow * 16 + tcol]);
				};
				uint32_t want = at(r0, c0) | (uint32_t)at(r1, c1) << 16;
				bad += ld[(var * 32 + l) * 4 + j] != want;
			}
	KT_CHECK(bad == 0, "ldmatrix x1/x2/x4 and .trans: %d registers wrong", bad);

	// 3. the tile loaders agree with plain loads of the documented fragments
	std::vector<float> mm(16 * 24);
	for (auto &x : mm)
		x = kt_uniform(-4, 4);
	bf16 *dm = kt_dev_alloc<bf16>(mm.size());
	int *dsame = kt_dev_alloc<int>(32);
	kt_upload(dm, to_bf16(mm));
	KLAUNCH(NULL, k_loaders, 1, 32, 0, 0, dm, dsame);
	std::vector<int> same = kt_download(dsame, 32);
	bad = 0;
	for (int x : same)
		bad += x != 1;
	KT_CHECK(bad == 0, "ldmatrix tile loaders differ from plain loads in %d lanes", bad);

	// 4. FlashAttention's step against the same math on the host (P rounded to bf16 as the kernel does)
	std::vector<float> q(256), k(256), v(256);
	for (auto *t : {&q, &k, &v})
		for (auto &x : *t)
			x = bf(kt_uniform(-1.5f, 1.5f));
	bf16 *dq = kt_dev_alloc<bf16>(256), *dk = kt_dev_alloc<bf16>(256), *dv = kt_dev_alloc<bf16>(256);
	float *dout = kt_dev_alloc<float>(256), *dmr = kt_dev_alloc<float>(16), *dlr = kt_dev_alloc<float>(16);
	kt_upload(dq, to_bf16(q)), kt_upload(dk, to_bf16(k)), kt_upload(dv, to_bf16(v));
	KLAUNCH(NULL, k_attention_tile, 1, 32, 0, 0, dq, dk, dv, dout, dmr, dlr);
	std::vector<float> o = kt_download(dout, 256), mr = kt_download(dmr, 16), lr = kt_download(dlr, 16);
	std::vector<float> want_o(256);
	double max_m_err = 0, max_l_err = 0;
	for (int r = 0; r < 16; r++) {
		double s[16], m = -1e30, l = 0;
		for (int c = 0; c < 16; c++) {
			s[c] = 0;
			for (int d = 0; d < 16; d++)
				s[c] += (double)q[r * 16 + d] * k[c * 16 + d];
			m = s[c] > m ? s[c] : m;
		}
		for (int c = 0; c < 16; c++)
			l += exp(s[c] - m);
		for (int d = 0; d < 16; d++) {
			double acc = 0;
			for (int c = 0; c < 16; c++)
				acc += (double)bf((float)exp(s[c] - m)) * v[c * 16 + d];
			want_o[r * 16 + d] = (float)(acc / l);
		}
		max_m_err = fmax(max_m_err, fabs(mr[r] - m));
		max_l_err = fmax(max_l_err, fabs(lr[r] - l) / l);
	}
	double err = kt_rel_l2(o.data(), want_o.data(), 256);
	printf("attention tile: rel L2 of O %.2e, row max error %.2e, row sum rel error %.2e\n", err, max_m_err,
	       max_l_err);
	KT_CHECK(max_m_err < 1e-5, "row max over the quad: error %g", max_m_err);
	KT_CHECK(max_l_err < 1e-5, "row sum over the quad: rel error %g", max_l_err);
	KT_CHECK(err < 1e-5, "O = P V / l: rel L2 %g", err); // P rounded alike on both sides

#if !KT_ON_DEVICE
	KErr e = {0, ""};
	int rc = KLAUNCH(&e, k_ldmatrix_global, 1, 32, 0, 0, dtile, dld);
	KT_CHECK(rc == -EIO && strstr(e.msg, "not in shared memory"), "ldmatrix from global memory: %d %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
	kerr_clear(&e);
	rc = KLAUNCH(&e, k_ldmatrix_misaligned, 1, 32, 0, 0, dld);
	KT_CHECK(rc == -EIO && strstr(e.msg, "16-byte aligned"), "misaligned ldmatrix: %d %s", rc, e.msg);
	printf("refused as expected: %s\n", e.msg);
#endif
	for (void *p : {(void *)dtile, (void *)dld, (void *)dm, (void *)dsame, (void *)dq, (void *)dk, (void *)dv,
			(void *)dout, (void *)dmr, (void *)dlr})
		cuda_check(cudaFree(p));
	return kt_finish("test_kemu_mma");
}
