// Checks bf16 storage: the store rule (round to nearest even incl. ties, NaN stays NaN, infinities
// and overflow to inf, signed zero), and that an op with bf16 arguments stores exactly the rounded
// result of the f32 op on the widened arguments, accumulating outputs summed in f32 and rounded once.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: kern_bf16_from_f32, kern_linear, kern_linear_bwd

#include <math.h>
#include <stdio.h>
#include <string.h>

static float from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static int rule(void)
{
	// input bits -> expected bf16 bits
	static const struct {
		uint32_t in;
		uint16_t want;
		const char *what;
	} cases[] = {
		{0x3f800000, 0x3f80, "1.0 exact"},
		{0x3f808000, 0x3f80, "1 + 2^-8: tie to even (down)"},
		{0x3f818000, 0x3f82, "1 + 3*2^-8: tie to even (up)"},
		{0x3f808001, 0x3f81, "just above a tie rounds up"},
		{0x3f807fff, 0x3f80, "just below a tie rounds down"},
		{0xc0200000, 0xc020, "-2.5 exact"},
		{0x80000000, 0x8000, "-0 keeps its sign"},
		{0x7f800000, 0x7f80, "+inf"},
		{0xff800000, 0xff80, "-inf"},
		{0x7f7fffff, 0x7f80, "largest float overflows to inf"},
		{0x00000001, 0x0000, "smallest denormal rounds to 0"},
		{0x00018000, 0x0002, "denormal tie to even (up)"},
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint16_t got = kern_bf16_from_f32(from_bits(cases[i].in));
		int ok = got == cases[i].want;
		printf("%-4s %-36s %08x -> %04x (want %04x)\n", ok ? "ok" : "FAIL", cases[i].what, cases[i].in, got,
		       cases[i].want);
		bad |= !ok;
	}
	// NaNs whose payload lies only in the dropped bits must not become infinities
	const uint32_t nans[] = {0x7f800001, 0xff800001, 0x7fc00000, 0x7f80ffff};
	for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
		uint16_t got = kern_bf16_from_f32(from_bits(nans[i]));
		int ok = isnan(kern_f32_from_bf16(got)) && (got >> 15) == (nans[i] >> 31);
		printf("%-4s NaN %08x -> %04x stays a NaN of the same sign\n", ok ? "ok" : "FAIL", nans[i], got);
		bad |= !ok;
	}
	return bad;
}

// a linear op with bf16 storage against the f32 op on the same values, rounded by the rule
static int op_store(KernCtx *c)
{
	const int64_t sx[] = {9, 11}, sw[] = {5, 11}, sb[] = {5}, so[] = {9, 5};
	KTensor x, w, b, o, x16, w16, b16, o16, dw, dw16, dw0;
	if (kern_alloc(c, &x, KDT_F32, 2, sx) || kern_alloc(c, &w, KDT_F32, 2, sw) ||
	    kern_alloc(c, &b, KDT_F32, 1, sb) || kern_alloc(c, &o, KDT_F32, 2, so) ||
	    kern_alloc(c, &x16, KDT_BF16, 2, sx) || kern_alloc(c, &w16, KDT_BF16, 2, sw) ||
	    kern_alloc(c, &b16, KDT_BF16, 1, sb) || kern_alloc(c, &o16, KDT_BF16, 2, so) ||
	    kern_alloc(c, &dw, KDT_F32, 2, sw) || kern_alloc(c, &dw16, KDT_BF16, 2, sw) ||
	    kern_alloc(c, &dw0, KDT_F32, 2, sw))
		return 1;
	// bf16 values first, so the f32 op sees exactly the widened bf16 arguments
	kgc_fill(&x16, 1, 2);
	kgc_fill(&w16, 2, 1);
	kgc_fill(&b16, 3, 1);
	kern_convert(c, &x, &x16);
	kern_convert(c, &w, &w16);
	kern_convert(c, &b, &b16);
	int bad = 0;
	for (int act = KACT_NONE; act <= KACT_QUICKGELU; act++) {
		KLinear a = {.out = &o, .in = &x, .w = &w, .trans_w = 1, .bias = &b, .act = (KAct)act};
		KLinear h = {.out = &o16, .in = &x16, .w = &w16, .trans_w = 1, .bias = &b16, .act = (KAct)act};
		bad |= kern_linear(c, &a) | kern_linear(c, &h);
		int64_t diff = 0;
		for (int64_t i = 0; i < kern_numel(&o); i++)
			diff += ((uint16_t *)o16.data)[i] != kern_bf16_from_f32(((float *)o.data)[i]);
		printf("%-4s linear act %d: bf16 output == RNE(f32 output) (%lld differ)\n", diff ? "FAIL" : "ok", act,
		       (long long)diff);
		bad |= diff != 0;
	}
	// accumulating into bf16: old (widened) + the f32 result, rounded once
	kgc_fill(&dw16, 4, 3);
	kern_convert(c, &dw0, &dw16);
	KLinearBwd g = {.dw = KG_SET(&dw), .dout = &o, .in = &x, .w = &w, .trans_w = 1};
	KLinearBwd g16 = {.dw = KG_ADD(&dw16), .dout = &o, .in = &x, .w = &w, .trans_w = 1};
	bad |= kern_linear_bwd(c, &g) | kern_linear_bwd(c, &g16);
	int64_t diff = 0;
	for (int64_t i = 0; i < kern_numel(&dw); i++) {
		float want = ((float *)dw0.data)[i] + ((float *)dw.data)[i];
		diff += ((uint16_t *)dw16.data)[i] != kern_bf16_from_f32(want);
	}
	printf("%-4s bf16 += : RNE(old + f32 result) (%lld differ)\n", diff ? "FAIL" : "ok", (long long)diff);
	bad |= diff != 0;
	return bad;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2))
		return 1;
	int bad = rule() | op_store(c);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL bf16 storage" : "PASS bf16 storage rounds to nearest even at every store");
	return bad;
}
