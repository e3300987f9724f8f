// Host helpers of VideoMAE pretraining: the deterministic tube mask of a clip from the counter RNG
// and VideoMAE's fixed sinusoidal position table (kern_ops.h, "VideoMAE pretraining").
#include "kern_ops.h" // defines: kern_mae_mask_count, kern_mae_tube_mask, kern_mae_sinusoid_table
#include "stream.h"   // defines: RngStream, rng_stream_init, rng_next_below, RNG_STREAM_MASK

#include <errno.h>
#include <math.h>
#include <stdlib.h>

_Static_assert(RNG_STREAM_MASK == 7, "the contract names stream 7 for the tube mask");

int kern_mae_mask_count(int Ns, double ratio)
{
	if (Ns < 1 || !(ratio >= 0 && ratio < 1))
		return -EINVAL;
	const int m = (int)floor(ratio * (double)Ns); // Python's int() of the positive product
	return m < Ns ? m : -EINVAL;
}

// masked[q] = 1 for the m positions the clip's shuffle puts first
static int tube_positions(uint64_t seed, uint64_t g, int Ns, int m, unsigned char *masked)
{
	int *perm = malloc(sizeof(int) * (size_t)Ns);
	if (!perm)
		return -ENOMEM;
	for (int q = 0; q < Ns; q++)
		perm[q] = q, masked[q] = 0;
	RngStream r;
	rng_stream_init(&r, seed, g, RNG_STREAM_MASK);
	for (int i = 0; i < m; i++) {
		int j = i + (int)rng_next_below(&r, (uint32_t)(Ns - i)), t = perm[i];
		perm[i] = perm[j], perm[j] = t;
		masked[perm[i]] = 1;
	}
	free(perm);
	return 0;
}

int kern_mae_tube_mask(uint64_t seed, uint64_t g, int Ns, int Tp, double ratio, int32_t *vis, int32_t *masked)
{
	const int m = kern_mae_mask_count(Ns, ratio);
	if (m < 0 || Tp < 1 || !vis || !masked || (int64_t)Ns * Tp > INT32_MAX)
		return -EINVAL;
	unsigned char *is_masked = malloc((size_t)Ns);
	if (!is_masked)
		return -ENOMEM;
	int rc = tube_positions(seed, g, Ns, m, is_masked);
	int64_t nv = 0, nm = 0;
	for (int t = 0; t < Tp && !rc; t++)
		for (int q = 0; q < Ns; q++) {
			const int32_t n = (int32_t)((int64_t)t * Ns + q);
			if (is_masked[q])
				masked[nm++] = n;
			else
				vis[nv++] = n;
		}
	free(is_masked);
	return rc ? rc : (int)nm;
}

int kern_mae_tube_mask_batch(uint64_t seed, const int64_t *g, int B, int Ns, int Tp, double ratio, int32_t *vis,
			     int32_t *masked)
{
	const int m = kern_mae_mask_count(Ns, ratio);
	if (m < 0 || B < 0 || Tp < 1 || (!g && B > 0))
		return -EINVAL;
	const int64_t nv = (int64_t)(Ns - m) * Tp, nm = (int64_t)m * Tp;
	for (int b = 0; b < B; b++) {
		int rc = kern_mae_tube_mask(seed, (uint64_t)g[b], Ns, Tp, ratio, vis + b * nv, masked + b * nm);
		if (rc < 0)
			return rc;
	}
	return (int)nm;
}

int kern_mae_sinusoid_table(float *out, int n, int d)
{
	if (!out || n < 1 || d < 1)
		return -EINVAL;
	for (int pos = 0; pos < n; pos++)
		for (int j = 0; j < d; j++) {
			const double a = pos / pow(10000.0, 2.0 * (j / 2) / d);
			out[(int64_t)pos * d + j] = (float)(j % 2 ? cos(a) : sin(a));
		}
	return 0;
}
