// The CUDA backend's fused optimizer against the CPU backend: a segment table with AdamW and LAMB,
// with and without decay, at a layer-decay lr scale, frozen and clamped segments, segments another op updates (KSEG_EXTERNAL:
// in the norm, weights and moments untouched, copied), gaps no segment covers, aligned and
// unaligned chunks; the gradient norm and clip factor on the device; a non-finite norm latches
// -ERANGE ("optimizer") and changes nothing. The per-step values from a device tensor (KOptHyper.live,
// what a CUDA graph's replay reads): the same bits as from the host on each backend, and the twins
// within the same tolerances.
#include "kcu_twin.h" // defines: KtEnv, KtPair, KT_BOTH, KT_FREE, SH, NSH, kt_*

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const KOptSegment segs[] = {
	{3, 9000, KSEG_DECAY, 0, 0, 0},                                   // AdamW, unaligned start: element accesses
	{9008, 4096, 0, 0, 0, 0},                                         // AdamW without decay, 16-byte accesses
	{13104, 5000, KSEG_LAMB | KSEG_DECAY, 0, 0, 0},                   // LAMB with its trust ratio
	{18200, 777, KSEG_LAMB, 0, 0, 0},                                 // LAMB, trust 1 without decay
	{19000, 1000, KSEG_FROZEN, 0, 0, 0},                              // untouched, copied
	{20000, 3, KSEG_CLAMP, 0.0f, 4.6052f, 0},                         // a logit scale
	{20008, 6000, KSEG_DECAY | KSEG_CLAMP, -0.05f, 0.05f, 0},         // clamped often
	{26016, 40, KSEG_EXTERNAL | KSEG_CLAMP, -0.01f, 0.01f, 0},        // in the norm only: no clamp either
	{26060, 33, KSEG_EXTERNAL | KSEG_LAMB | KSEG_DECAY, 0, 0, 0},     // nor a LAMB pass
	{26100, 2000, KSEG_DECAY | KSEG_LR_SCALE, 0, 0, 0.125},           // AdamW at its layer's rate (lr decay)
	{28104, 1500, KSEG_LAMB | KSEG_DECAY | KSEG_LR_SCALE, 0, 0, 0.5}, // LAMB at its layer's rate
};
enum { NSEG = sizeof segs / sizeof segs[0], NP = 29700 };

// the device tensor equals x0 on every frozen or external segment
static int kept(KtEnv *e, KtPair *t, const double *x0)
{
	double *x = kt_download_f64(e, t, 1);
	int same = 1;
	for (int s = 0; s < NSEG; s++)
		if (segs[s].flags & (KSEG_FROZEN | KSEG_EXTERNAL))
			for (int64_t i = segs[s].offset; i < segs[s].offset + segs[s].length; i++)
				same &= x[i] == x0[i];
	free(x);
	return same;
}

// the device's ‖g‖ is over every segment but the frozen ones (external ones included)
static void norm_covers(KtEnv *e, KtPair *g, KtPair *nc)
{
	double *x = kt_download_f64(e, g, 1), *n = kt_download_f64(e, nc, 1), ss = 0;
	for (int s = 0; s < NSEG; s++)
		if (!(segs[s].flags & KSEG_FROZEN))
			for (int64_t i = segs[s].offset; i < segs[s].offset + segs[s].length; i++)
				ss += x[i] * x[i];
	kt_check(e, fabs(n[0] - sqrt(ss)) <= KT_TOL_F32 * sqrt(ss),
		 "the norm covers every segment but the frozen: %.6g, %.6g", n[0], sqrt(ss));
	free(x), free(n);
}

static void run(KtEnv *e, KDtype gdt, double clip, int use_nc)
{
	printf("-- optimizer: grads %s, clip %g, norm_clip %s\n", kern_dtype_name(gdt), clip, use_nc ? "used" : "NULL");
	KOptPlan *pc, *pd;
	KT_BOTH(e, kern_opt_plan_create(e->cpu, &pc, segs, NSEG, NP),
		kern_opt_plan_create(e->dev, &pd, segs, NSEG, NP));
	KtPair w, g, m, v, copy, nc;
	kt_alloc(e, &w, "master", KDT_F32, NSH(NP));
	kt_alloc(e, &g, "grads", gdt, NSH(NP));
	kt_alloc(e, &m, "m", KDT_F32, NSH(NP));
	kt_alloc(e, &v, "v", KDT_F32, NSH(NP));
	kt_alloc(e, &copy, "bf16 copy", KDT_BF16, NSH(NP));
	kt_alloc(e, &nc, "norm_clip", KDT_F32, NSH(2));
	kt_fill(e, &w, -0.2, 0.2), kt_fill(e, &m, -0.01, 0.01), kt_fill(e, &v, 0, 1e-4), kt_poison(e, &copy);
	double *w0 = kt_download_f64(e, &w, 1), *m0 = kt_download_f64(e, &m, 1), *v0 = kt_download_f64(e, &v, 1);
	for (int step = 1; step <= 3; step++) {
		kt_fill(e, &g, -1, 1);
		kt_poison(e, &nc);
		KT_BOTH(e, kern_grad_norm(e->cpu, pc, &nc.c, &g.c, clip),
			kern_grad_norm(e->dev, pd, &nc.d, &g.d, clip));
		kt_compare(e, &nc, 0);
		if (step == 1)
			norm_covers(e, &g, &nc);
		KOptHyper h = {.lr = 1e-2, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .weight_decay = 0.1, .step = step};
		KT_BOTH(e, kern_optimizer(e->cpu, pc, &h, &w.c, &copy.c, &g.c, &m.c, &v.c, use_nc ? &nc.c : NULL),
			kern_optimizer(e->dev, pd, &h, &w.d, &copy.d, &g.d, &m.d, &v.d, use_nc ? &nc.d : NULL));
	}
	// copy: every element of every segment; the gaps keep the poison on both
	kt_compare(e, &w, 0), kt_compare(e, &m, 0), kt_compare(e, &v, 0);
	kt_check(e, kept(e, &w, w0) && kept(e, &m, m0) && kept(e, &v, v0),
		 "frozen and external segments: master and moments untouched on the device");
	free(w0), free(m0), free(v0);
	double *cc = kt_download_f64(e, &copy, 0), *cd = kt_download_f64(e, &copy, 1), num = 0, den = 0;
	int gaps_ok = 1;
	for (int64_t i = 0, s = 0; i < NP; i++) {
		while (s < NSEG && i >= segs[s].offset + segs[s].length)
			s++;
		int in = s < NSEG && i >= segs[s].offset;
		if (!in)
			gaps_ok &= isnan(cc[i]) && isnan(cd[i]);
		else
			num += (cd[i] - cc[i]) * (cd[i] - cc[i]), den += cc[i] * cc[i];
	}
	kt_check(e, sqrt(num / den) <= KT_TOL_BF16, "bf16 copy over the segments: rel L2 %.3e", sqrt(num / den));
	kt_check(e, gaps_ok, "elements in no segment are never touched");
	free(cc), free(cd);
	// a non-finite gradient: NaN factor, the update latches -ERANGE and changes nothing
	if (use_nc) {
		void *before = kt_bits(e, &w.d);
		float f = INFINITY;
		KTensor one, f32; // grads[17] = inf
		KT_BOTH(e, 0, kern_view(&one, &g.d, 17, 1, SH(1)));
		KT_BOTH(e, 0, kern_alloc(e->dev, &f32, KDT_F32, 1, SH(1)));
		KT_BOTH(e, 0, kern_upload(e->dev, &f32, &f, sizeof f));
		KT_BOTH(e, 0, kern_convert(e->dev, &one, &f32));
		KOptHyper h = {.lr = 1e-2, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .weight_decay = 0.1, .step = 4};
		KT_BOTH(e, 0, kern_grad_norm(e->dev, pd, &nc.d, &g.d, clip));
		KT_BOTH(e, 0, kern_optimizer(e->dev, pd, &h, &w.d, &copy.d, &g.d, &m.d, &v.d, &nc.d));
		int rc = kern_sync(e->dev);
		const char *msg = kern_error_message(e->dev);
		kt_check(e, rc == -ERANGE && !strncmp(msg, "optimizer: ", 11), "non-finite norm latched: %d \"%s\"", rc,
			 msg);
		kern_error_clear(e->dev);
		void *after = kt_bits(e, &w.d);
		kt_check(e, !memcmp(before, after, kern_nbytes(&w.d)),
			 "master weights unchanged by the refused update");
		free(before), free(after);
		kern_free(e->dev, &f32);
	}
	KT_FREE(e, &w, &g, &m, &v, &copy, &nc);
	kern_opt_plan_destroy(pc);
	kern_opt_plan_destroy(pd);
}

// the per-step values read from a device tensor: four steps at a changing rate, once with lr and
// step in the host struct and once with them only in `live` (the struct holding stale ones, so an
// update that read the struct would differ), on the same inputs; every segment kind
static void live_case(KtEnv *e)
{
	printf("-- optimizer: lr and step from a device tensor (KOptHyper.live)\n");
	KOptPlan *pc, *pd;
	KT_BOTH(e, kern_opt_plan_create(e->cpu, &pc, segs, NSEG, NP),
		kern_opt_plan_create(e->dev, &pd, segs, NSEG, NP));
	KtPair w[2], m[2], v[2], copy[2], g, nc, live;
	const char *names[2] = {"master (host values)", "master (live values)"};
	for (int k = 0; k < 2; k++) {
		kt_alloc(e, &w[k], names[k], KDT_F32, NSH(NP));
		kt_alloc(e, &m[k], "m", KDT_F32, NSH(NP));
		kt_alloc(e, &v[k], "v", KDT_F32, NSH(NP));
		kt_alloc(e, &copy[k], "bf16 copy", KDT_BF16, NSH(NP));
	}
	kt_alloc(e, &g, "grads", KDT_BF16, NSH(NP));
	kt_alloc(e, &nc, "norm_clip", KDT_F32, NSH(2));
	kt_alloc(e, &live, "live", KDT_F64, NSH(KOPT_LIVE_N));
	kt_fill(e, &w[0], -0.2, 0.2), kt_fill(e, &m[0], -0.01, 0.01), kt_fill(e, &v[0], 0, 1e-4);
	KT_BOTH(e, kern_copy(e->cpu, &w[1].c, &w[0].c), kern_copy(e->dev, &w[1].d, &w[0].d));
	KT_BOTH(e, kern_copy(e->cpu, &m[1].c, &m[0].c), kern_copy(e->dev, &m[1].d, &m[0].d));
	KT_BOTH(e, kern_copy(e->cpu, &v[1].c, &v[0].c), kern_copy(e->dev, &v[1].d, &v[0].d));
	for (int step = 1; step <= 4; step++) {
		kt_fill(e, &g, -1, 1);
		KT_BOTH(e, kern_grad_norm(e->cpu, pc, &nc.c, &g.c, 2.0), kern_grad_norm(e->dev, pd, &nc.d, &g.d, 2.0));
		KOptHyper h = {
			.lr = 1e-2 * step, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .weight_decay = 0.1, .step = step};
		double lv[KOPT_LIVE_N];
		kern_opt_live(&h, lv);
		kt_set(e, &live, lv);
		KOptHyper hl = h;
		hl.lr = 1.0, hl.step = 1; // stale: the op must take live's
		KT_BOTH(e, kern_optimizer(e->cpu, pc, &h, &w[0].c, &copy[0].c, &g.c, &m[0].c, &v[0].c, &nc.c),
			kern_optimizer(e->dev, pd, &h, &w[0].d, &copy[0].d, &g.d, &m[0].d, &v[0].d, &nc.d));
		hl.live = &live.c;
		KT_BOTH(e, kern_optimizer(e->cpu, pc, &hl, &w[1].c, &copy[1].c, &g.c, &m[1].c, &v[1].c, &nc.c), 0);
		hl.live = &live.d;
		KT_BOTH(e, 0, kern_optimizer(e->dev, pd, &hl, &w[1].d, &copy[1].d, &g.d, &m[1].d, &v[1].d, &nc.d));
	}
	for (int b = 0; b < 2; b++) {
		KernCtx *c = b ? e->dev : e->cpu;
		int same = kt_same_bytes(c, b ? &w[0].d : &w[0].c, b ? &w[1].d : &w[1].c) &&
			   kt_same_bytes(c, b ? &m[0].d : &m[0].c, b ? &m[1].d : &m[1].c) &&
			   kt_same_bytes(c, b ? &v[0].d : &v[0].c, b ? &v[1].d : &v[1].c) &&
			   kt_same_bytes(c, b ? &copy[0].d : &copy[0].c, b ? &copy[1].d : &copy[1].c);
		kt_check(e, same, "%s: live values give the host values' bits (master, m, v, copy)",
			 b ? "CUDA" : "CPU");
	}
	kt_compare(e, &w[1], 0), kt_compare(e, &m[1], 0), kt_compare(e, &v[1], 0);
	KOptHyper bad = {.lr = 1e-2, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .step = 1, .live = &nc.d};
	kt_check(e, kern_optimizer(e->dev, pd, &bad, &w[1].d, NULL, &g.d, &m[1].d, &v[1].d, NULL) == -EINVAL,
		 "a live tensor that is not (3) F64: -EINVAL");
	KT_FREE(e, &w[0], &w[1], &m[0], &m[1], &v[0], &v[1], &copy[0], &copy[1], &g, &nc, &live);
	kern_opt_plan_destroy(pc);
	kern_opt_plan_destroy(pd);
}

int main(void)
{
	KtEnv e;
	kt_setup(&e, "test_kcuda_optim");
	run(&e, KDT_F32, 1.0, 1);
	run(&e, KDT_BF16, 50.0, 1);
	run(&e, KDT_F32, 0.0, 0);
	live_case(&e);
	kt_sync(&e, "optimizer");
	return kt_finish(&e);
}
