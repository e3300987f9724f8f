// Attention on the GPU against the CPU reference of the op contract (kern_attention_fwd/bwd on the
// CPU backend): out, lse, dQ, dK, dV within a relative L2 of 1e-2 (bf16), run twice bit-identical
// (the own backward with dQ by atomics: within the tolerance, bits not required).
// The backward of both sides gets the same out (the reference's, rounded to bf16 as a bf16 model
// stores it) and lse: its row term D = dO·O then agrees, and where dS = P∘(dP − D) cancels (tiny
// T) the comparison measures the kernel, not the rounding of its own forward output.
// In the shim (make test) the own kernel on a subset of shapes with shuffled thread order; on a
// device (make test-gpu) the full list, for the own kernel and for cuDNN when this build has it.
// Built with KT_LENGTHS=1 (test_kattn_lengths) it sweeps every length 1..130 and the remainders of
// vit-b16's 785 and 3137 tokens instead, once each.
#include "kattn.h"     // defines: kattn_own_fwd, kattn_own_bwd[_opts], kattn_own_ws_bytes[_opts], KAttn, kattn_fwd, ...
#include "kemu_test.h" // defines: kt_setup, KT_CHECK, kt_dev_alloc, kt_upload, kt_download, kt_rel_l2

extern "C" {
#include "kern_ops.h" // defines: the CPU reference (kern_ctx_create_cpu, kern_attention_fwd, ...)
}

#ifndef KT_LENGTHS
#define KT_LENGTHS 0
#endif

typedef __nv_bfloat16 bf16;

// relative L2 error allowed in out, lse, dQ, dK, dV: bf16 inputs and outputs, f32 accumulation
static const double tol_bf16 = 1e-2;

struct Case {
	int B, T, H, hd, causal;
};

// on a device: lengths 1 to 3,200, heads 1 to 16, head dims 32, 64 and 128, causal and not
static const Case full_cases[] = {
	{1, 1, 1, 64, 0},    {2, 1, 3, 64, 1},    {1, 2, 16, 64, 1},    {3, 7, 5, 64, 0},     {1, 31, 8, 128, 1},
	{2, 63, 4, 64, 0},   {1, 64, 16, 64, 1},  {2, 65, 2, 128, 0},   {1, 77, 8, 64, 1},    {2, 127, 12, 64, 0},
	{1, 128, 6, 128, 1}, {1, 129, 16, 64, 0}, {2, 200, 3, 64, 1},   {1, 256, 1, 128, 0},  {1, 500, 10, 64, 1},
	{2, 785, 12, 64, 0}, {1, 785, 4, 128, 1}, {1, 1024, 2, 64, 1},  {1, 1500, 16, 64, 0}, {1, 2048, 3, 128, 0},
	{1, 3137, 2, 64, 0}, {1, 3137, 1, 64, 1}, {1, 3200, 12, 64, 1}, {1, 3200, 1, 128, 0}, {1, 1, 1, 32, 0},
	{2, 77, 2, 32, 1},   {1, 65, 4, 32, 0},   {2, 500, 3, 32, 1},
};
// in the shim (~150 k warp-wide mma/s), and on a device under compute-sanitizer (KT_QUICK=1):
// small shapes, each length class once (145 and 193 end their 128-, 64- and 32-row tiles as 785 and
// 3137 do: 17, 17, 17 and 65, 1, 1 rows); the last, longer one only in the shim
static const Case quick_cases[] = {
	{1, 1, 1, 64, 0},   {1, 2, 2, 64, 1},   {2, 63, 1, 64, 0},  {1, 64, 3, 64, 1},   {1, 65, 2, 64, 0},
	{1, 127, 1, 64, 1}, {2, 77, 1, 64, 1},  {1, 33, 16, 64, 1}, {1, 130, 1, 128, 1}, {1, 70, 2, 128, 0},
	{2, 77, 2, 32, 1},  {1, 65, 3, 32, 0},  {1, 145, 1, 64, 1}, {3, 193, 1, 64, 0},  {1, 145, 1, 128, 0},
	{1, 193, 1, 32, 1}, {1, 785, 1, 64, 0},
};

// the CPU backend on the bf16-rounded inputs, in f32; the backward from the bf16-rounded out
struct Ref {
	std::vector<float> out, lse, dqkv;
	std::vector<bf16> out_b;
};
static Ref reference(KernCtx *c, const std::vector<float> &qkv, const std::vector<float> &dout, const Case &k)
{
	const int64_t D = (int64_t)k.H * k.hd, sq[3] = {k.B, k.T, 3 * D}, so[3] = {k.B, k.T, D},
		      sl[3] = {k.B, k.H, k.T};
	KTensor tq, to, tl, tdo, tdq;
	Ref r;
	r.out.resize((size_t)k.B * k.T * D), r.lse.resize((size_t)k.B * k.H * k.T), r.dqkv.resize(qkv.size());
	int rc = kern_alloc(c, &tq, KDT_F32, 3, sq) | kern_alloc(c, &to, KDT_F32, 3, so) |
		 kern_alloc(c, &tl, KDT_F32, 3, sl) | kern_alloc(c, &tdo, KDT_F32, 3, so) |
		 kern_alloc(c, &tdq, KDT_F32, 3, sq);
	rc |= kern_ctx_reserve_workspace(c, kern_attention_ws_bytes(c, KDT_F32, k.B, k.T, k.H, k.hd));
	rc |= kern_upload(c, &tq, qkv.data(), qkv.size() * 4) | kern_upload(c, &tdo, dout.data(), dout.size() * 4);
	rc |= kern_attention_fwd(c, &to, &tl, &tq, k.H, k.causal);
	rc |= kern_download(c, r.out.data(), r.out.size() * 4, &to) |
	      kern_download(c, r.lse.data(), r.lse.size() * 4, &tl);
	std::vector<float> rounded(r.out.size());
	r.out_b.resize(r.out.size());
	for (size_t i = 0; i < rounded.size(); i++)
		r.out_b[i] = __float2bfloat16(r.out[i]), rounded[i] = __bfloat162float(r.out_b[i]);
	rc |= kern_upload(c, &to, rounded.data(), rounded.size() * 4);
	rc |= kern_attention_bwd(c, KG_SET(&tdq), &tdo, &tq, &to, &tl, k.H, k.causal);
	rc |= kern_download(c, r.dqkv.data(), r.dqkv.size() * 4, &tdq);
	if (rc)
		fprintf(stderr, "the CPU reference failed: %s\n", kern_error_message(c)), exit(1);
	for (KTensor *t : {&tq, &to, &tl, &tdo, &tdq})
		kern_free(c, t);
	return r;
}

static std::vector<float> widen(const std::vector<bf16> &x)
{
	std::vector<float> y(x.size());
	for (size_t i = 0; i < x.size(); i++)
		y[i] = __bfloat162float(x[i]);
	return y;
}

// the q, k or v part (which 0, 1, 2) of a (B, T, 3·D) tensor
static std::vector<float> part(const std::vector<float> &x, int which, int64_t D)
{
	std::vector<float> y;
	for (size_t r = 0; r < x.size() / (3 * D); r++)
		y.insert(y.end(), x.begin() + r * 3 * D + which * D, x.begin() + r * 3 * D + (which + 1) * D);
	return y;
}

// worst relative L2 error seen per quantity, for the closing line
static double worst[5];
static const char *const names[5] = {"out", "lse", "dq", "dk", "dv"};

// one implementation: forward (fwd NULL: none, the backward of another option) and backward twice
// (another thread schedule in the shim), results bit-identical (want_same) and against the reference
struct Impl {
	const char *name;
	int (*fwd)(void *ctx, bf16 *out, float *lse, const bf16 *qkv, const Case &k, void *ws, size_t wsb, KErr *e);
	int (*bwd)(void *ctx, bf16 *dqkv, int acc, const bf16 *dout, const bf16 *qkv, const bf16 *out, const float *lse,
		   const Case &k, void *ws, size_t wsb, KErr *e);
	size_t (*ws)(void *ctx, const Case &k);
	void *ctx;
	bool want_same;
	bool (*runs_on)(const Case &k, size_t n); // in the shim, the shapes it runs (NULL: all)
};

static void reschedule(uint64_t seed)
{
#if !KT_ON_DEVICE
	kemu_config(1, seed);
#else
	(void)seed;
#endif
}

static void run_case(const Impl &im, const Case &k, const Ref &ref, const std::vector<bf16> &qkv,
		     const std::vector<bf16> &dout, uint64_t seed, int runs)
{
	const int64_t D = (int64_t)k.H * k.hd;
	const size_t nx = qkv.size(), no = dout.size(), nl = (size_t)k.B * k.H * k.T, wsb = im.ws(im.ctx, k);
	bf16 *dx = kt_dev_alloc<bf16>(nx), *dy = kt_dev_alloc<bf16>(no), *ddo = kt_dev_alloc<bf16>(no);
	bf16 *ddx = kt_dev_alloc<bf16>(nx), *ry = kt_dev_alloc<bf16>(no);
	float *dl = kt_dev_alloc<float>(nl), *rl = kt_dev_alloc<float>(nl);
	void *ws = kt_dev_alloc<unsigned char>(wsb + 16);
	kt_upload(dx, qkv), kt_upload(ddo, dout), kt_upload(ry, ref.out_b), kt_upload(rl, ref.lse);
	auto release = [&] {
		for (void *p :
		     {(void *)dx, (void *)dy, (void *)ddo, (void *)ddx, (void *)dl, (void *)ry, (void *)rl, ws})
			cuda_check(cudaFree(p));
	};
	std::vector<bf16> out[2], dq[2];
	std::vector<float> lse[2];
	KErr e = {0, ""};
	for (int run = 0; run < runs; run++) {
		reschedule(seed + (uint64_t)run);
		int rc = im.fwd ? im.fwd(im.ctx, dy, dl, dx, k, ws, wsb, &e) : 0; // NULL: another backward only
		rc = rc ? rc : im.bwd(im.ctx, ddx, 0, ddo, dx, ry, rl, k, ws, wsb, &e);
		// cuDNN may refuse a shape (auto then runs the own kernel), but not the model's
		bool model_shape = (k.T == 77 || k.T == 785 || k.T == 3137) && k.hd == 64;
		if (rc == -ENOTSUP && !im.want_same && !model_shape) {
			printf("%-5s B %d T %4d H %2d hd %3d: refused: %s\n", im.name, k.B, k.T, k.H, k.hd, e.msg);
			break;
		}
		KT_CHECK(rc == 0, "%s: %s", im.name, e.msg);
		if (rc)
			break;
		if (im.fwd)
			out[run] = kt_download(dy, no), lse[run] = kt_download(dl, nl);
		dq[run] = kt_download(ddx, nx);
	}
	if (dq[runs - 1].empty()) // refused or failed: nothing to compare
		return release();
	std::vector<float> got_out = widen(out[0]), got_dq = widen(dq[0]);
	double err[5] = {0, 0};
	if (im.fwd)
		err[0] = kt_rel_l2(got_out.data(), ref.out.data(), no),
		err[1] = kt_rel_l2(lse[0].data(), ref.lse.data(), nl);
	for (int w = 0; w < 3; w++) {
		std::vector<float> g = part(got_dq, w, D), r = part(ref.dqkv, w, D);
		err[2 + w] = kt_rel_l2(g.data(), r.data(), g.size());
	}
	printf("%-5s B %d T %4d H %2d hd %3d %-6s rel L2: out %.1e lse %.1e dq %.1e dk %.1e dv %.1e\n", im.name, k.B,
	       k.T, k.H, k.hd, k.causal ? "causal" : "full", err[0], err[1], err[2], err[3], err[4]);
	for (int i = 0; i < 5; i++) {
		KT_CHECK(err[i] <= tol_bf16, "%s B %d T %d H %d hd %d causal %d: %s rel L2 %g", im.name, k.B, k.T, k.H,
			 k.hd, k.causal, names[i], err[i]);
		worst[i] = fmax(worst[i], err[i]);
	}
	if (runs < 2)
		;
	else if (im.want_same)
		KT_CHECK((!im.fwd || (!memcmp(out[0].data(), out[1].data(), no * 2) &&
				      !memcmp(lse[0].data(), lse[1].data(), nl * 4))) &&
				 !memcmp(dq[0].data(), dq[1].data(), nx * 2),
			 "%s T %d H %d: two runs differ", im.name, k.T, k.H);
	else
		printf("%-5s T %d: two runs %s\n", im.name, k.T,
		       !memcmp(dq[0].data(), dq[1].data(), nx * 2) ? "bit-identical" : "differ (not required)");
	release();
}

// ---- the own kernel, called directly ----
static int own_fwd(void *, bf16 *out, float *lse, const bf16 *qkv, const Case &k, void *, size_t, KErr *e)
{
	return kattn_own_fwd(e, out, lse, qkv, k.B, k.T, k.H, k.hd, k.causal, 0);
}
static int own_bwd(void *, bf16 *dqkv, int acc, const bf16 *dout, const bf16 *qkv, const bf16 *out, const float *lse,
		   const Case &k, void *ws, size_t wsb, KErr *e)
{
	return kattn_own_bwd(e, dqkv, acc, dout, qkv, out, lse, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, 0);
}
static size_t own_ws(void *, const Case &k)
{
	return kattn_own_ws_bytes(k.B, k.T, k.H, k.hd);
}
// the own backward with dQ summed by f32 atomics (KAttnOwnOpts.dq_atomic)
static const KAttnOwnOpts atomic_opts = {1, 0};
static int atomic_bwd(void *, bf16 *dqkv, int acc, const bf16 *dout, const bf16 *qkv, const bf16 *out, const float *lse,
		      const Case &k, void *ws, size_t wsb, KErr *e)
{
	return kattn_own_bwd_opts(e, dqkv, acc, dout, qkv, out, lse, k.B, k.T, k.H, k.hd, k.causal, ws, wsb,
				  &atomic_opts, 0);
}
static size_t atomic_ws(void *, const Case &k)
{
	return kattn_own_ws_bytes_opts(k.B, k.T, k.H, k.hd, &atomic_opts);
}
// the deterministic backward with one block walking every key block of a head (min_blocks 1: one
// dQ slot, added to in key-block order), where the default runs a block per key block at these B·H
static const KAttnOwnOpts walk_opts = {0, 1};
static int walk_bwd(void *, bf16 *dqkv, int acc, const bf16 *dout, const bf16 *qkv, const bf16 *out, const float *lse,
		    const Case &k, void *ws, size_t wsb, KErr *e)
{
	return kattn_own_bwd_opts(e, dqkv, acc, dout, qkv, out, lse, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, &walk_opts,
				  0);
}
static size_t walk_ws(void *, const Case &k)
{
	return kattn_own_ws_bytes_opts(k.B, k.T, k.H, k.hd, &walk_opts);
}
static bool every_third(const Case &, size_t n)
{
	return n % 3 == 0;
}
static bool several_key_blocks(const Case &k, size_t)
{
	return k.T > 128 && k.T < 500;
}

#if KT_ON_DEVICE
// ---- an implementation chosen through the selection (kattn.c), forced ----
static int sel_fwd(void *a, bf16 *out, float *lse, const bf16 *qkv, const Case &k, void *ws, size_t wsb, KErr *e)
{
	return kattn_fwd((KAttn *)a, 0, out, lse, qkv, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, e);
}
static int sel_bwd(void *a, bf16 *dqkv, int acc, const bf16 *dout, const bf16 *qkv, const bf16 *out, const float *lse,
		   const Case &k, void *ws, size_t wsb, KErr *e)
{
	return kattn_bwd((KAttn *)a, 0, dqkv, acc, dout, qkv, out, lse, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, e);
}
static size_t sel_ws(void *a, const Case &k)
{
	return kattn_ws_bytes((KAttn *)a, k.B, k.T, k.H, k.hd);
}
#endif

// KG_ADD: the gradient is added to what dqkv holds, summed in f32 and rounded once: onto zeros it
// gives the bits of a write; onto a base b it gives b + the gradient
static void test_accumulate(const Case &k, const Ref &ref, const std::vector<bf16> &qkv, const std::vector<bf16> &dout)
{
	const size_t nx = qkv.size(), no = dout.size(), nl = (size_t)k.B * k.H * k.T;
	const size_t wsb = kattn_own_ws_bytes(k.B, k.T, k.H, k.hd);
	bf16 *dx = kt_dev_alloc<bf16>(nx), *dy = kt_dev_alloc<bf16>(no), *ddo = kt_dev_alloc<bf16>(no);
	bf16 *ddx = kt_dev_alloc<bf16>(nx);
	float *dl = kt_dev_alloc<float>(nl);
	void *ws = kt_dev_alloc<unsigned char>(wsb);
	kt_upload(dx, qkv), kt_upload(ddo, dout), kt_upload(dy, ref.out_b), kt_upload(dl, ref.lse);
	KErr e = {0, ""};
	KT_CHECK(kattn_own_bwd(&e, ddx, 0, ddo, dx, dy, dl, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, 0) == 0, "%s",
		 e.msg);
	std::vector<bf16> set = kt_download(ddx, nx);
	cuda_check(cudaMemset(ddx, 0, nx * 2));
	KT_CHECK(kattn_own_bwd(&e, ddx, 1, ddo, dx, dy, dl, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, 0) == 0, "%s",
		 e.msg);
	std::vector<bf16> onto0 = kt_download(ddx, nx);
	KT_CHECK(!memcmp(set.data(), onto0.data(), nx * 2), "acc onto zeros differs from a write");
	double rms = kt_rel_l2(ref.dqkv.data(), std::vector<float>(nx, 0.0f).data(), nx) / sqrt((double)nx);
	std::vector<bf16> basev(nx);
	for (auto &v : basev)
		v = __float2bfloat16(kt_uniform(-1, 1) * (float)rms);
	kt_upload(ddx, basev);
	KT_CHECK(kattn_own_bwd(&e, ddx, 1, ddo, dx, dy, dl, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, 0) == 0, "%s",
		 e.msg);
	std::vector<float> sum = widen(kt_download(ddx, nx)), base = widen(basev);
	for (size_t i = 0; i < nx; i++)
		sum[i] -= base[i];
	double err = kt_rel_l2(sum.data(), ref.dqkv.data(), nx);
	// the sum is rounded at the base's magnitude (as large as the gradient's): one more bf16 rounding
	KT_CHECK(err <= 2 * tol_bf16, "acc onto a base: the added gradient has rel L2 %g", err);
	printf("acc   T %d: onto zeros = a write; onto a base: rel L2 %.1e\n", k.T, err);
	for (void *p : {(void *)dx, (void *)dy, (void *)ddo, (void *)ddx, (void *)dl, ws})
		cuda_check(cudaFree(p));
}

#if KT_ON_DEVICE
// the selection: own always runs the own kernel; auto runs cuDNN where it can and the own kernel
// for what cuDNN cannot do (adding into dqkv); a forced cudnn refuses that with a reason
static void test_selection(void)
{
	const Case k = {2, 77, 8, 64, 1};
	const size_t D = (size_t)k.H * k.hd, nx = (size_t)k.B * k.T * 3 * D, no = nx / 3, nl = (size_t)k.B * k.H * k.T;
	bf16 *x = kt_dev_alloc<bf16>(nx), *y = kt_dev_alloc<bf16>(no), *dy = kt_dev_alloc<bf16>(no),
	     *dx = kt_dev_alloc<bf16>(nx);
	float *l = kt_dev_alloc<float>(nl);
	std::vector<bf16> hx(nx, __float2bfloat16(0.5f));
	kt_upload(x, hx), kt_upload(dy, std::vector<bf16>(no, __float2bfloat16(0.25f)));
	cuda_check(cudaMemset(dx, 0, nx * 2));
	KErr e = {0, ""};
	KAttn *a = NULL;
	KT_CHECK(kattn_create(&a, (KAttnImpl)7, 0, &e) == -EINVAL, "implementation 7 is refused");
	for (KAttnImpl impl : {KATTN_OWN, KATTN_AUTO, KATTN_CUDNN}) {
		kerr_clear(&e);
		if (impl == KATTN_CUDNN && !kattn_cudnn_available())
			continue;
		KT_CHECK(kattn_create(&a, impl, 0, &e) == 0, "kattn_create(%d): %s", (int)impl, e.msg);
		size_t wsb = kattn_ws_bytes(a, k.B, k.T, k.H, k.hd);
		void *ws = kt_dev_alloc<unsigned char>(wsb + 16);
		int rc = kattn_fwd(a, 0, y, l, x, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, &e);
		KT_CHECK(rc == 0, "%s", e.msg);
		KAttnImpl ran = kattn_last_impl(a);
		KT_CHECK(ran == (impl == KATTN_OWN || !kattn_cudnn_available() ? KATTN_OWN : KATTN_CUDNN),
			 "implementation %d ran %d: %s", (int)impl, (int)ran, kattn_describe(a));
		rc = kattn_bwd(a, 0, dx, 1, dy, x, y, l, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, &e);
		if (impl == KATTN_CUDNN)
			KT_CHECK(rc == -ENOTSUP, "a forced cudnn adding into dqkv: %d", rc);
		else
			KT_CHECK(rc == 0 && kattn_last_impl(a) == KATTN_OWN, "KG_ADD under %d: %d, ran %d", (int)impl,
				 rc, (int)kattn_last_impl(a));
		if (impl == KATTN_AUTO) { // auto's backward: cuDNN's deterministic graph on sm_90, else the own
			int major = 0, minor = 0;
			cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
			cuda_check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
			rc = kattn_bwd(a, 0, dx, 0, dy, x, y, l, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, &e);
			const KAttnImpl b1 = kattn_last_impl(a);
			std::vector<bf16> g1 = kt_download(dx, nx);
			rc |= kattn_bwd(a, 0, dx, 0, dy, x, y, l, k.B, k.T, k.H, k.hd, k.causal, ws, wsb, &e);
			std::vector<bf16> g2 = kt_download(dx, nx);
			KT_CHECK(rc == 0 && (b1 == KATTN_OWN || (major == 9 && minor == 0)),
				 "auto's backward on sm_%d%d: %d, ran %d", major, minor, rc, (int)b1);
			KT_CHECK(!memcmp(g1.data(), g2.data(), nx * sizeof(bf16)),
				 "auto's backward (ran %d) is not bit-identical twice", (int)b1);
		}
		printf("selection %d: %s\n", (int)impl, kattn_describe(a));
		kattn_destroy(a);
		cuda_check(cudaFree(ws));
	}
	for (void *p : {(void *)x, (void *)y, (void *)dy, (void *)dx, (void *)l})
		cuda_check(cudaFree(p));
}
#endif

static void test_errors(void)
{
	KErr e = {0, ""};
	char *p = kt_dev_alloc<char>(1 << 16);
	KT_CHECK(kattn_own_fwd(&e, p, (float *)p, p, 1, 8, 1, 48, 0, 0) == -ENOTSUP, "head dim 48 is not supported");
	kerr_clear(&e);
	KT_CHECK(kattn_own_fwd(&e, p + 2, (float *)p, p, 1, 8, 1, 64, 0, 0) == -EINVAL, "a misaligned out is refused");
	kerr_clear(&e);
	KT_CHECK(kattn_own_fwd(&e, p, (float *)p, p, 1, 0, 1, 64, 0, 0) == -EINVAL, "T 0 is refused");
	kerr_clear(&e);
	KT_CHECK(kattn_own_bwd(&e, p, 0, p, p, p, (float *)p, 1, 8, 2, 64, 0, p, 63, 0) == -ENOSPC,
		 "a workspace of 63 bytes for 64 is refused");
	cuda_check(cudaFree(p));
}

// the lengths sweep (test_kattn_lengths): every T of 1..130 once, head dims and masks in turn, and
// the remainders of 785 and 3137 tokens at every head dim
static std::vector<Case> length_cases(void)
{
	std::vector<Case> c;
	static const int hds[3] = {64, 32, 128};
	for (int T = 1; T <= 130; T++)
		c.push_back({1, T, 1, hds[T % 3], T % 2});
	for (int hd : hds)
		for (int T : {145, 193})
			c.push_back({1, T, 1, hd, (T + hd / 32) % 2});
	return c;
}

int main()
{
	uint64_t seed = kt_setup(KT_LENGTHS ? "test_kattn_lengths" : "test_kattn");
	KernCtx *cpu;
	if (kern_ctx_create_cpu(&cpu, 0))
		return fprintf(stderr, "no CPU kernel context\n"), 1;
	const bool quick = !KT_ON_DEVICE || getenv("KT_QUICK");
	std::vector<Impl> impls = {{"own", own_fwd, own_bwd, own_ws, NULL, true, NULL}};
	if (!KT_LENGTHS) { // dQ by atomics, and one block a head (quick: on some shapes)
		impls.push_back({"atom", NULL, atomic_bwd, atomic_ws, NULL, false, quick ? every_third : NULL});
		impls.push_back({"walk", NULL, walk_bwd, walk_ws, NULL, true, quick ? several_key_blocks : NULL});
	}
#if KT_ON_DEVICE
	KErr e = {0, ""};
	KAttn *cud = NULL;
	// KT_QUICK=cudnn: the small shapes with cuDNN too (tools/gpu-check.sh's quick correctness pass)
	const char *quick_env = getenv("KT_QUICK");
	if (KT_LENGTHS) {
	} else if (quick_env && strcmp(quick_env, "cudnn")) {
		printf("KT_QUICK: the own kernel on small shapes only (cuDNN's plans are slow to build under a sanitizer)\n");
	} else if (kattn_cudnn_available()) {
		if (kattn_create(&cud, KATTN_CUDNN, 0, &e))
			KT_CHECK(0, "kattn_create(cudnn): %s", e.msg);
		else
			impls.push_back({"cudnn", sel_fwd, sel_bwd, sel_ws, cud, false, NULL}),
				printf("%s\n", kattn_describe(cud));
	} else {
		printf("cuDNN: not in this build or not loadable: only the own kernel is checked\n");
	}
#endif
	std::vector<Case> cases;
	if (KT_LENGTHS)
		cases = length_cases();
	else if (quick)
		cases.assign(quick_cases, quick_cases + sizeof quick_cases / sizeof *quick_cases - KT_ON_DEVICE);
	else
		cases.assign(full_cases, full_cases + sizeof full_cases / sizeof *full_cases);
	for (size_t n = 0; n < cases.size(); n++) {
		const Case &k = cases[n];
		const int64_t D = (int64_t)k.H * k.hd;
		std::vector<bf16> qkv((size_t)k.B * k.T * 3 * D), dout((size_t)k.B * k.T * D);
		for (auto &v : qkv)
			v = __float2bfloat16(kt_uniform(-2, 2));
		for (auto &v : dout)
			v = __float2bfloat16(kt_uniform(-1, 1));
		Ref ref = reference(cpu, widen(qkv), widen(dout), k);
		for (const Impl &im : impls)
			if (!im.runs_on || im.runs_on(k, n))
				// two runs (in the shim under two thread orders) where their bits must match
				run_case(im, k, ref, qkv, dout, seed + 100 * (uint64_t)n,
					 KT_LENGTHS || (!KT_ON_DEVICE && !im.want_same) ? 1 : 2);
		if (!KT_LENGTHS && n == 4)
			test_accumulate(k, ref, qkv, dout);
	}
	if (!KT_LENGTHS)
		test_errors();
#if KT_ON_DEVICE
	if (!KT_LENGTHS)
		test_selection();
#endif
	printf("worst rel L2 over %zu shapes:", cases.size());
	for (int i = 0; i < 5; i++)
		printf(" %s %.1e", names[i], worst[i]);
	printf("\n");
#if KT_ON_DEVICE
	kattn_destroy(cud);
#endif
	kern_ctx_destroy(cpu);
	return kt_finish(KT_LENGTHS ? "test_kattn_lengths" : "test_kattn");
}
