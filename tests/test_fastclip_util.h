// Helpers shared by the FastCLIP tests: a seeded RNG, random L2-normalized features, and a
// relative-error check that prints the worst element.
#ifndef TESTS_TEST_FASTCLIP_UTIL_H
#define TESTS_TEST_FASTCLIP_UTIL_H
// defines: tf_rng, tf_uniform, tf_features, tf_max_rel, tf_max_rel_f

#include <math.h>   // defines: sqrt, fabs, fmax
#include <stdint.h> // defines: uint64_t, int64_t
#include <stdio.h>  // defines: printf

static inline uint64_t tf_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline double tf_uniform(uint64_t *s)
{
	return (double)(tf_rng(s) >> 11) / 9007199254740992.0;
}

// n rows of d features, each row L2-normalized; x (n, d)
static inline void tf_features(float *x, int n, int d, uint64_t *s)
{
	for (int i = 0; i < n; i++) {
		double nrm = 0.0;
		for (int k = 0; k < d; k++) {
			x[i * d + k] = (float)(tf_uniform(s) * 2.0 - 1.0);
			nrm += (double)x[i * d + k] * x[i * d + k];
		}
		for (int k = 0; k < d; k++)
			x[i * d + k] = (float)(x[i * d + k] / sqrt(nrm));
	}
}

// max |a−b| / (max |b| + floor) over n elements
static inline double tf_max_rel(const double *a, const double *b, int n, double floor)
{
	double mb = 0.0, md = 0.0;
	for (int i = 0; i < n; i++) {
		if (fabs(b[i]) > mb)
			mb = fabs(b[i]);
		if (fabs(a[i] - b[i]) > md)
			md = fabs(a[i] - b[i]);
	}
	return md / (mb + floor);
}

// max |a−b| / max |b| over n floats (0 when both are all zero)
static inline double tf_max_rel_f(const float *a, const float *b, int64_t n)
{
	double md = 0.0, mb = 1e-30;
	for (int64_t i = 0; i < n; i++) {
		md = fmax(md, fabs((double)a[i] - b[i]));
		mb = fmax(mb, fabs((double)b[i]));
	}
	return md / mb;
}

#endif
