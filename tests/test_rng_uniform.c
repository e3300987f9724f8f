// Uniformity sanity of the counter-based draws: floats in [0,1) pass a 64-bin chi-square
// test and have mean 1/2; rng_next_below covers [0, n) evenly; first draws over consecutive g too.
#include "stream.h"   // defines: rng_stream_init, rng_next_float, rng_next_below
#include "testutil.h" // defines: CHECK

static double chi2(const long *bins, int k, long total)
{
	double e = (double)total / k, x = 0;
	for (int i = 0; i < k; i++)
		x += (bins[i] - e) * (bins[i] - e) / e;
	return x;
}

int main(void)
{
	enum { K = 64, N = 640000 };
	long bins[K] = {0};
	RngStream s;
	rng_stream_init(&s, 7, 0, RNG_STREAM_CROP);
	double sum = 0;
	for (int i = 0; i < N; i++) {
		float f = rng_next_float(&s);
		CHECK(f >= 0.0f && f < 1.0f);
		sum += f;
		bins[(int)(f * K)]++;
	}
	double x = chi2(bins, K, N);
	printf("floats: mean %.5f chi2(63) %.1f\n", sum / N, x);
	CHECK(sum / N > 0.498 && sum / N < 0.502);
	CHECK(x < 110); // p < 1e-4 for 63 degrees of freedom
	// the first draw of each position g (how the loader uses it) is uniform across g
	long b2[K] = {0};
	for (int g = 0; g < N; g++) {
		rng_stream_init(&s, 7, (uint64_t)g, RNG_STREAM_CROP);
		b2[(int)(rng_next_float(&s) * K)]++;
	}
	double x2 = chi2(b2, K, N);
	printf("first draw over g: chi2(63) %.1f\n", x2);
	CHECK(x2 < 110);
	long b3[10] = {0};
	rng_stream_init(&s, 9, 3, RNG_STREAM_CLIP_SAMPLE);
	for (int i = 0; i < 100000; i++) {
		uint32_t v = rng_next_below(&s, 10);
		CHECK(v < 10);
		b3[v]++;
	}
	double x3 = chi2(b3, 10, 100000);
	printf("below(10): chi2(9) %.1f\n", x3);
	CHECK(x3 < 33); // p < 1e-4 for 9 degrees of freedom
	return 0;
}
