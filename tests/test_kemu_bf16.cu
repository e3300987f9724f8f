// bf16 conversions from cuda_bf16.h in the shim (the header's host path) and on a device,
// against round-to-nearest-even worked out from the two neighbouring bf16 values: ties, signed
// zeros, subnormals, overflow to infinity, infinities and NaNs.
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc

__global__ void k_convert(const float *x, int n, uint16_t *rn, uint16_t *dflt, float *back, uint32_t *pair, float *lo,
			  float *hi)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		__nv_bfloat16 a = __float2bfloat16_rn(x[i]);
		rn[i] = __bfloat16_as_ushort(a);
		dflt[i] = __bfloat16_as_ushort(__float2bfloat16(x[i]));
		back[i] = __bfloat162float(a);
		float y = x[n - 1 - i];
		__nv_bfloat162 p = __floats2bfloat162_rn(x[i], y);
		pair[i] = (uint32_t)__bfloat16_as_ushort(p.x) | (uint32_t)__bfloat16_as_ushort(p.y) << 16;
		float2 f = __bfloat1622float2(p);
		lo[i] = f.x;
		hi[i] = __high2float(p);
	}
}

static float from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static uint32_t to_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

// the nearer of the two bf16 values around x (the even one on a tie), by value, not by bits
static uint16_t expect_rne(float x)
{
	if (isnan(x))
		return 0x7fff;
	uint32_t u = to_bits(x);
	uint16_t down = (uint16_t)(u >> 16); // truncation: toward zero
	float fd = from_bits((uint32_t)down << 16);
	if (fd == x)
		return down;
	uint16_t up = (uint16_t)(down + 1); // the next one away from zero (0x7f7f + 1 is infinity)
	double dd = fabs((double)x - (double)fd), du = fabs((double)from_bits((uint32_t)up << 16) - (double)x);
	if ((up & 0x7fff) == 0x7f80) // above the largest finite value the distance is to 2^128
		du = fabs(ldexp(1.0, 128) - fabs((double)x));
	if (dd != du)
		return dd < du ? down : up;
	return (down & 1) ? up : down;
}

int main()
{
	kt_setup("test_kemu_bf16");
	std::vector<float> x = {0.0f,
				-0.0f,
				1.0f,
				-1.0f,
				INFINITY,
				-INFINITY,
				NAN,
				-NAN,
				from_bits(0x7f800001u),
				from_bits(0xffc12345u),
				from_bits(0x7fbfffffu), // NaN payloads
				from_bits(0x3f808000u),
				from_bits(0x3f818000u), // ties: to 1.0 (even), to 1+2^-6
				from_bits(0x3f808001u),
				from_bits(0x3f807fffu), // just above and below a tie
				from_bits(0x7f7fffffu),
				from_bits(0x7f7f7fffu),
				from_bits(0x7f7f8000u), // overflow, tie to inf
				from_bits(0x00000001u),
				from_bits(0x00008000u),
				from_bits(0x00018000u),
				from_bits(0x007fffffu),
				from_bits(0x80008001u),
				from_bits(0x00800000u),
				3.14159265f,
				-2.71828f,
				1e-40f,
				65504.0f};
	for (uint32_t b = 0; b < 65536; b += 7) // every 7th bf16 value, exactly and +- half an ulp
		for (uint32_t low : {0u, 0x8000u, 0x7fffu, 0x8001u})
			x.push_back(from_bits(b << 16 | low));
	for (int i = 0; i < 100000; i++)
		x.push_back(from_bits((uint32_t)kt_rand()));
	int n = (int)x.size();
	float *dx = kt_dev_alloc<float>(n), *dback = kt_dev_alloc<float>(n), *dlo = kt_dev_alloc<float>(n),
	      *dhi = kt_dev_alloc<float>(n);
	uint16_t *drn = kt_dev_alloc<uint16_t>(n), *ddf = kt_dev_alloc<uint16_t>(n);
	uint32_t *dpair = kt_dev_alloc<uint32_t>(n);
	kt_upload(dx, x);
	KLAUNCH(NULL, k_convert, 64, 256, 0, 0, dx, n, drn, ddf, dback, dpair, dlo, dhi);
	std::vector<uint16_t> rn = kt_download(drn, n), df = kt_download(ddf, n);
	std::vector<float> back = kt_download(dback, n), lo = kt_download(dlo, n), hi = kt_download(dhi, n);
	std::vector<uint32_t> pair = kt_download(dpair, n);
	int bad = 0, nan_bits = 0, shown = 0;
	for (int i = 0; i < n; i++) {
		uint16_t want = expect_rne(x[i]), want_y = expect_rne(x[n - 1 - i]);
		bool ok;
		if (isnan(x[i])) { // a NaN stays a NaN; the shim's (cuda_bf16.h's host path) is 0x7fff
			ok = (rn[i] & 0x7fff) > 0x7f80 && (df[i] & 0x7fff) > 0x7f80 && isnan(back[i]) && isnan(lo[i]);
			nan_bits |= rn[i] != 0x7fff;
		} else {
			ok = rn[i] == want && df[i] == want && to_bits(back[i]) == (uint32_t)want << 16 &&
			     (pair[i] & 0xffff) == want && to_bits(lo[i]) == (uint32_t)want << 16;
		}
		if (isnan(x[n - 1 - i]))
			ok = ok && ((pair[i] >> 16) & 0x7fff) > 0x7f80 && isnan(hi[i]);
		else
			ok = ok && (pair[i] >> 16) == want_y && to_bits(hi[i]) == (uint32_t)want_y << 16;
		if (!ok && shown++ < 10)
			fprintf(stderr, "x = %a (0x%08x): got 0x%04x, want 0x%04x\n", (double)x[i], to_bits(x[i]),
				rn[i], want);
		bad += !ok;
	}
	KT_CHECK(bad == 0, "%d of %d conversions differ from round-to-nearest-even", bad, n);
	printf("%d conversions; NaN converts to %s\n", n,
	       nan_bits ? "a NaN other than 0x7fff on this target" : "0x7fff");
#if !KT_ON_DEVICE
	KT_CHECK(!nan_bits, "cuda_bf16.h's host path turns every NaN into 0x7fff");
#endif
	for (void *p : {(void *)dx, (void *)dback, (void *)dlo, (void *)dhi, (void *)drn, (void *)ddf, (void *)dpair})
		cuda_check(cudaFree(p));
	return kt_finish("test_kemu_bf16");
}
