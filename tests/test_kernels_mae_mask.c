// Checks VideoMAE's host helpers: the tube mask (exact counts, the same positions in every slice,
// ascending lists that partition the tokens, determinism, a clip's mask independent of the batch
// around it, the contract's Fisher–Yates draws, uniform masking frequencies) and the sinusoid table
// against get_sinusoid_encoding_table's formula.
#include "kern_ops.h" // defines: kern_mae_tube_mask, kern_mae_tube_mask_batch, kern_mae_sinusoid_table
#include "stream.h"   // defines: RngStream, rng_stream_init, rng_next_below, RNG_STREAM_MASK

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad;
#define CHECK(c, ...)                                                                                                  \
	do {                                                                                                           \
		if (!(c)) {                                                                                            \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                    \
			printf(__VA_ARGS__);                                                                           \
			printf("\n");                                                                                  \
			bad = 1;                                                                                       \
		}                                                                                                      \
	} while (0)

// counts, tube property, partition and order of one clip's lists
static void check_lists(const int32_t *vis, const int32_t *msk, int Ns, int Tp, int m)
{
	const int nv = (Ns - m) * Tp, nm = m * Tp;
	char *seen = calloc((size_t)Ns * Tp, 1), *tube = calloc((size_t)Ns, 1);
	for (int i = 0; i < nm; i++) {
		CHECK(i == 0 || msk[i] > msk[i - 1], "masked list not ascending at %d", i);
		seen[msk[i]]++;
		if (msk[i] < Ns)
			tube[msk[i]] = 1;
	}
	for (int i = 0; i < nv; i++) {
		CHECK(i == 0 || vis[i] > vis[i - 1], "visible list not ascending at %d", i);
		seen[vis[i]]++;
	}
	int slice0 = 0;
	for (int q = 0; q < Ns; q++)
		slice0 += tube[q];
	CHECK(slice0 == m, "slice 0 masks %d positions, not %d", slice0, m);
	for (int n = 0; n < Ns * Tp; n++) {
		CHECK(seen[n] == 1, "token %d listed %d times", n, seen[n]);
		int is_masked = 0;
		for (int i = 0; i < nm; i++)
			is_masked |= msk[i] == n;
		CHECK(is_masked == tube[n % Ns], "token %d (slice %d) breaks the tube", n, n / Ns);
	}
	free(seen), free(tube);
}

// the contract's words, implemented again: a partial Fisher–Yates of the stream (seed, g, 7)
static void contract_mask(uint64_t seed, uint64_t g, int Ns, int m, char *masked)
{
	int perm[1024];
	for (int q = 0; q < Ns; q++)
		perm[q] = q, masked[q] = 0;
	RngStream r;
	rng_stream_init(&r, seed, g, 7);
	for (int i = 0; i < m; i++) {
		int j = i + (int)rng_next_below(&r, (uint32_t)(Ns - i)), t = perm[i];
		perm[i] = perm[j], perm[j] = t;
	}
	for (int i = 0; i < m; i++)
		masked[perm[i]] = 1;
}

static void counts_and_draws(void)
{
	const int Ns = 196, Tp = 8; // VideoMAE ViT-B: 224/16 squared patches, 16 frames / tubelet 2
	CHECK(kern_mae_mask_count(Ns, 0.9) == 176, "int(0.9 * 196) = 176, got %d", kern_mae_mask_count(Ns, 0.9));
	CHECK(kern_mae_mask_count(Ns, 0.75) == 147, "int(0.75 * 196) = 147");
	CHECK(kern_mae_mask_count(10, 0.0) == 0, "ratio 0 masks nothing");
	CHECK(kern_mae_mask_count(Ns, 1.0) == -EINVAL && kern_mae_mask_count(0, 0.5) == -EINVAL &&
		      kern_mae_mask_count(Ns, -0.1) == -EINVAL && kern_mae_mask_count(Ns, NAN) == -EINVAL,
	      "bad ratios and sizes are refused");
	CHECK(kern_mae_mask_count(1, 0.99) == 0, "one patch: none masked");
	int32_t vis[196 * 8], msk[196 * 8], vis2[196 * 8], msk2[196 * 8];
	for (uint64_t g = 0; g < 40; g++) {
		const uint64_t pos = g * 7919 + (g % 3 ? 0 : (1ull << 40)); // high counter words too
		int nm = kern_mae_tube_mask(42, pos, Ns, Tp, 0.9, vis, msk);
		CHECK(nm == 176 * Tp, "clip %llu: %d masked tokens", (unsigned long long)pos, nm);
		check_lists(vis, msk, Ns, Tp, 176);
		char want[196];
		contract_mask(42, pos, Ns, 176, want);
		for (int i = 0; i < 176; i++)
			CHECK(want[msk[i]], "clip %llu: position %d is not the contract's draw",
			      (unsigned long long)pos, msk[i]);
		CHECK(kern_mae_tube_mask(42, pos, Ns, Tp, 0.9, vis2, msk2) == nm &&
			      !memcmp(vis, vis2, sizeof(int32_t) * 20 * Tp) &&
			      !memcmp(msk, msk2, sizeof(int32_t) * 176 * Tp),
		      "clip %llu: a second call differs", (unsigned long long)pos);
	}
	kern_mae_tube_mask(42, 5, Ns, Tp, 0.9, vis, msk);
	kern_mae_tube_mask(43, 5, Ns, Tp, 0.9, vis2, msk2);
	CHECK(memcmp(msk, msk2, sizeof(int32_t) * 176 * Tp), "another seed, the same mask");
	kern_mae_tube_mask(42, 6, Ns, Tp, 0.9, vis2, msk2);
	CHECK(memcmp(msk, msk2, sizeof(int32_t) * 176 * Tp), "another position, the same mask");
	CHECK(kern_mae_tube_mask(42, 5, Ns, 0, 0.9, vis, msk) == -EINVAL &&
		      kern_mae_tube_mask(42, 5, Ns, 1, 0.9, NULL, msk) == -EINVAL,
	      "bad slices and lists are refused");
}

// clip g's rows in a batch are its rows alone, whatever the other positions
static void batch_independence(void)
{
	enum { Ns = 64, Tp = 3, B = 5 };
	const int m = kern_mae_mask_count(Ns, 0.75), nv = (Ns - m) * Tp, nm = m * Tp;
	int64_t g1[B] = {10, 11, 12, 13, 14}, g2[B] = {99, 12, 7, 1000000007, 3};
	int32_t v1[B * 48], m1[B * 144], v2[B * 48], m2[B * 144], vs[48], ms[144];
	CHECK(kern_mae_tube_mask_batch(9, g1, B, Ns, Tp, 0.75, v1, m1) == nm, "batch 1");
	CHECK(kern_mae_tube_mask_batch(9, g2, B, Ns, Tp, 0.75, v2, m2) == nm, "batch 2");
	kern_mae_tube_mask(9, 12, Ns, Tp, 0.75, vs, ms);
	CHECK(!memcmp(v1 + 2 * nv, vs, sizeof(int32_t) * nv) && !memcmp(v2 + 1 * nv, vs, sizeof(int32_t) * nv),
	      "position 12's visible rows depend on the batch");
	CHECK(!memcmp(m1 + 2 * nm, ms, sizeof(int32_t) * nm) && !memcmp(m2 + 1 * nm, ms, sizeof(int32_t) * nm),
	      "position 12's masked rows depend on the batch");
}

// every position masked with frequency m/Ns over many clips: within 5 binomial standard deviations
static void uniformity(int Ns, double ratio, int clips)
{
	const int m = kern_mae_mask_count(Ns, ratio);
	int *count = calloc((size_t)Ns, sizeof(int));
	int32_t *vis = malloc(sizeof(int32_t) * (size_t)Ns), *msk = malloc(sizeof(int32_t) * (size_t)Ns);
	for (int g = 0; g < clips; g++) {
		kern_mae_tube_mask(2026, (uint64_t)g, Ns, 1, ratio, vis, msk);
		for (int i = 0; i < m; i++)
			count[msk[i]]++;
	}
	const double p = (double)m / Ns, tol = 5 * sqrt(p * (1 - p) / clips);
	double worst = 0;
	for (int q = 0; q < Ns; q++)
		worst = fmax(worst, fabs((double)count[q] / clips - p));
	printf("%-4s uniformity Ns %d ratio %.2f over %d clips: worst |freq - %.4f| = %.4f (tolerance %.4f = 5 sd)\n",
	       worst <= tol ? "ok" : "FAIL", Ns, ratio, clips, p, worst, tol);
	bad |= worst > tol;
	free(count), free(vis), free(msk);
}

static void sinusoid(void)
{
	enum { N = 50, D = 12 };
	float t[N * D];
	CHECK(kern_mae_sinusoid_table(t, N, D) == 0, "table");
	double worst = 0;
	for (int pos = 0; pos < N; pos++)
		for (int j = 0; j < D; j++) { // np.power(10000, 2 * (hid_j // 2) / d_hid), sin even, cos odd
			double angle = pos / pow(10000.0, (double)(2 * (j / 2)) / D);
			double want = j % 2 == 0 ? sin(angle) : cos(angle);
			worst = fmax(worst, fabs(t[pos * D + j] - want));
		}
	CHECK(worst <= 6e-8, "sinusoid table differs from the formula by %g (more than f32 rounding)", worst);
	CHECK(t[0] == 0.0f && t[1] == 1.0f && t[D + 0] == (float)sin(1.0) && t[D + 1] == (float)cos(1.0),
	      "rows 0 and 1 of the table");
	CHECK(t[3 * D + D - 1] == (float)cos(3 / pow(10000.0, (double)(D - 2) / D)), "the last column");
	CHECK(kern_mae_sinusoid_table(t, 0, D) == -EINVAL && kern_mae_sinusoid_table(NULL, N, D) == -EINVAL,
	      "bad sizes are refused");
}

int main(void)
{
	counts_and_draws();
	batch_independence();
	uniformity(196, 0.9, 4000);
	uniformity(16, 0.5, 4000);
	sinusoid();
	printf("%s\n", bad ? "FAIL tube mask / sinusoid table" : "PASS tube mask and sinusoid table");
	return bad;
}
