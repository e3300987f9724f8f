// Warp collectives of the shim: shuffles by PTX shfl.sync's rule, votes, and the tensor-core
// instructions mma.sync m16n8k16 (bf16 -> f32) and ldmatrix with PTX's documented fragment layouts.
#include "kemu_impl.h" // defines: kemu::warp_sync, kemu::fault, kemu::in_shared, kemu_check_ldmatrix

// The fragment layouts, written as CuTe writes SM80_16x8x16_F32BF16BF16F32_TN: a lane t = t0 + 4*t1
// (t0 < 4, t1 < 8) and value v (bits v0, v1, v2) map to a column-major offset inside the matrix,
// A (16x16 MxK): 32*t0 + t1 + 16*v0 + 8*v1 + 128*v2; B (8x16 NxK): 16*t0 + t1 + 8*v0 + 64*v1;
// C (16x8 MxN): 32*t0 + t1 + 16*v0 + 8*v1. kmma.h states the same layouts the PTX ISA's way
// (groupID / threadID_in_group); the shim's tests hold the two against each other.
static int a_offset(int t, int v)
{
	return 32 * (t & 3) + (t >> 2) + 16 * (v & 1) + 8 * ((v >> 1) & 1) + 128 * (v >> 2);
}
static int b_offset(int t, int v)
{
	return 16 * (t & 3) + (t >> 2) + 8 * (v & 1) + 64 * (v >> 1);
}
static int c_offset(int t, int v)
{
	return 32 * (t & 3) + (t >> 2) + 16 * (v & 1) + 8 * (v >> 1);
}

static float bf16_at(uint32_t pair, int hi) // element 0 of a .bf16x2 register is its low half
{
	uint32_t bits = (hi ? pair >> 16 : pair & 0xffffu) << 16;
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

int kemu::shfl_source(int mode, unsigned lane, unsigned b, int width)
{
	if (width < 1 || width > 32 || (width & (width - 1)))
		fault("shuffle width %d is not a power of two up to 32", width);
	// CUDA's intrinsics pass c = ((32 - width) << 8) | clamp; PTX then clamps to the segment
	unsigned segmask = (unsigned)(32 - width) & 31, clamp = mode == SH_UP ? 0 : 31;
	unsigned min_lane = lane & segmask, max_lane = min_lane | (clamp & ~segmask);
	long j;
	bool ok;
	switch (mode) {
	case SH_UP:
		j = (long)lane - (long)b;
		ok = j >= (long)max_lane;
		break;
	case SH_DOWN:
		j = (long)lane + (long)b;
		ok = j <= (long)max_lane;
		break;
	case SH_BFLY:
		j = (long)(lane ^ b);
		ok = j <= (long)max_lane;
		break;
	default:
		j = (long)(min_lane | (b & ~segmask & 31));
		ok = j <= (long)max_lane;
		break;
	}
	return ok ? (int)j : (int)lane;
}

unsigned kemu::vote(unsigned mask, int pred, const char *file, int line)
{
	int p = pred != 0;
	const Slot *s = warp_sync(K_VOTE, mask, &p, sizeof p, nullptr, nullptr, file, line);
	unsigned ballot = 0;
	for (int l = 0; l < 32; l++) {
		int v;
		memcpy(&v, s[l].b, sizeof v);
		ballot |= (unsigned)v << l;
	}
	return ballot;
}

// ---- mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 ----
struct MmaLane {
	uint32_t a[4], b[2];
	float c[4];
};
static_assert(sizeof(MmaLane) <= sizeof(kemu::Slot), "an mma lane's fragments fit a slot");

// Runs once per warp when all 32 lanes have deposited A, B, C: rebuilds the matrices from the
// fragments, multiplies (products exact, sums in double in k order, one rounding), and leaves
// each lane's D in its slot.
static void mma_combine(kemu::Slot *slots, void *)
{
	float A[256], B[128], C[128]; // column-major: A[m + 16k], B[n + 8k], C[m + 16n]
	for (int t = 0; t < 32; t++) {
		MmaLane x;
		memcpy(&x, slots[t].b, sizeof x);
		for (int v = 0; v < 8; v++)
			A[a_offset(t, v)] = bf16_at(x.a[v >> 1], v & 1);
		for (int v = 0; v < 4; v++)
			B[b_offset(t, v)] = bf16_at(x.b[v >> 1], v & 1);
		for (int v = 0; v < 4; v++)
			C[c_offset(t, v)] = x.c[v];
	}
	for (int t = 0; t < 32; t++) {
		float d[4];
		for (int v = 0; v < 4; v++) {
			int o = c_offset(t, v), m = o % 16, n = o / 16;
			double acc = 0;
			for (int k = 0; k < 16; k++)
				acc += (double)A[m + 16 * k] * (double)B[n + 8 * k];
			d[v] = (float)(acc + (double)C[o]);
		}
		memcpy(slots[t].b, d, sizeof d);
	}
}

void kemu::mma_bf16_16816(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4], const char *file,
			  int line)
{
	MmaLane x;
	memcpy(x.a, a, sizeof x.a);
	memcpy(x.b, b, sizeof x.b);
	memcpy(x.c, c, sizeof x.c);
	const Slot *s = warp_sync(K_MMA, 0xffffffffu, &x, sizeof x, mma_combine, nullptr, file, line);
	memcpy(d, s[cur->lane].b, 4 * sizeof(float));
}

// ---- ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 ----
struct LdmLane {
	const uint16_t *row;
	int nmat, trans;
};

// Runs once per warp, so the warp reads shared memory at one instant as the instruction does:
// lanes 8j..8j+7 gave the row addresses of matrix j; lane l receives, per matrix, elements
// (l/4, 2(l%4)) and (l/4, 2(l%4)+1), or with .trans (2(l%4), l/4) and (2(l%4)+1, l/4).
static void ldmatrix_combine(kemu::Slot *slots, void *)
{
	LdmLane x[32];
	for (int l = 0; l < 32; l++)
		memcpy(&x[l], slots[l].b, sizeof x[l]);
	const uint16_t *rows[32];
	for (int l = 0; l < 32; l++)
		rows[l] = x[l].row;
	int nmat = x[0].nmat, trans = x[0].trans; // one instruction: the same for every lane
	uint32_t out[32][4];
	for (int l = 0; l < 32; l++)
		for (int j = 0; j < nmat; j++) {
			uint16_t lo, hi;
			if (trans) {
				lo = rows[8 * j + 2 * (l % 4)][l / 4];
				hi = rows[8 * j + 2 * (l % 4) + 1][l / 4];
			} else {
				lo = rows[8 * j + l / 4][2 * (l % 4)];
				hi = rows[8 * j + l / 4][2 * (l % 4) + 1];
			}
			out[l][j] = (uint32_t)lo | (uint32_t)hi << 16;
		}
	for (int l = 0; l < 32; l++)
		memcpy(slots[l].b, out[l], sizeof out[l]);
}

void kemu::ldmatrix(uint32_t *r, int nmat, bool trans, const void *row, const char *file, int line)
{
	if (nmat != 1 && nmat != 2 && nmat != 4)
		fault("ldmatrix of %d matrices at %s:%d (x1, x2 or x4)", nmat, file, line);
	if ((int)cur->lane < 8 * nmat) { // the lanes whose addresses the instruction reads
		if ((uintptr_t)row % 16)
			fault("ldmatrix at %s:%d: row address %p is not 16-byte aligned", file, line, row);
		if (!in_shared(row, 16))
			fault("ldmatrix at %s:%d: row address %p is not in shared memory", file, line, row);
	}
	LdmLane x = {(const uint16_t *)row, nmat, trans};
	const Slot *s = warp_sync(K_LDMATRIX, 0xffffffffu, &x, sizeof x, ldmatrix_combine, nullptr, file, line);
	if ((int)cur->lane < 8 * nmat)
		kemu_check_ldmatrix(row, 16); // the row the warp read for this lane, at the instruction
	memcpy(r, s[cur->lane].b, (size_t)nmat * sizeof(uint32_t));
}
