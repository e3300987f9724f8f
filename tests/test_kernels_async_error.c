// Checks asynchronous error latching: an error found in tensor contents (a token id out of range,
// a sample id outside the FastCLIP table, a non-finite gradient norm) is not returned by the op
// but latched in the device with the op's name; every later op and sync point of the device, on
// any stream, returns it without running, until kern_error_clear.
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: the ops

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int bad;

static void expect(const char *what, int got, int want)
{
	printf("%-4s %-54s rc %d (want %d)\n", got == want ? "ok" : "FAIL", what, got, want);
	bad |= got != want;
}

static void named(KernCtx *c, const char *op)
{
	const char *msg = kern_error_message(c);
	int ok = strncmp(msg, op, strlen(op)) == 0 && msg[strlen(op)] == ':';
	printf("%-4s the message names the op: \"%s\"\n", ok ? "ok" : "FAIL", msg);
	bad |= !ok;
}

int main(void)
{
	KernCtx *c, *c2;
	KEvent *ev;
	if (kern_ctx_create_cpu(&c, 2) || kern_stream_create(c, &c2) || kern_event_create(c, &ev))
		return 1;
	KTensor ids, wte, pos, out, a;
	const int64_t si[] = {2, 3}, sw[] = {10, 4}, sp[] = {3, 4}, so[] = {2, 3, 4};
	if (kern_alloc(c, &ids, KDT_I32, 2, si) || kern_alloc(c, &wte, KDT_F32, 2, sw) ||
	    kern_alloc(c, &pos, KDT_F32, 2, sp) || kern_alloc(c, &out, KDT_F32, 3, so) ||
	    kern_alloc(c, &a, KDT_F32, 3, so))
		return 1;
	kgc_fill(&wte, 1, 1);
	kgc_set(&ids, 4, 10); // == vocab size
	expect("tok_embed with an id out of range returns at once", kern_tok_embed_fwd(c, &out, &ids, &wte, &pos), 0);
	named(c, "tok_embed");
	kgc_set(&a, 0, 5);
	expect("a later op returns the latched error", kern_add(c, &a, &out, &out), -ERANGE);
	expect("... without running", (int)kgc_get(&a, 0), 5);
	expect("kern_sync returns it", kern_sync(c), -ERANGE);
	expect("kern_stream_sync on another stream returns it", kern_stream_sync(c2), -ERANGE);
	float host[24];
	expect("kern_download returns it", kern_download(c, host, sizeof host, &out), -ERANGE);
	expect("kern_event_query returns it", kern_event_query(ev), -ERANGE);
	expect("kern_event_sync returns it", kern_event_sync(ev), -ERANGE);
	expect("it stays latched", kern_sync(c), -ERANGE);
	kern_error_clear(c);
	expect("after kern_error_clear the device syncs", kern_sync(c2), 0);
	kgc_set(&ids, 4, 9);
	expect("tok_embed with good ids", kern_tok_embed_fwd(c, &out, &ids, &wte, &pos), 0);
	expect("... and nothing latched", kern_sync(c), 0);

	// a FastCLIP sample id outside the table, on the second stream
	KTensor e, tab, pk, sid, ls;
	if (kern_alloc(c, &e, KDT_F32, 2, (int64_t[]){2, 3}) || kern_alloc(c, &tab, KDT_F32, 2, (int64_t[]){5, 2}) ||
	    kern_alloc(c, &pk, KDT_F32, 2, (int64_t[]){2, 2}) || kern_alloc(c, &sid, KDT_I64, 1, (int64_t[]){2}) ||
	    kern_alloc(c, &ls, KDT_F32, 1, (int64_t[]){1}) ||
	    kern_ctx_reserve_workspace(c2, kern_loss_ws_bytes(c2, 2, 2, 3)))
		return 1;
	kgc_fill(&e, 3, 1);
	((int64_t *)sid.data)[1] = 5;
	KContrastBatch b = {.e1 = &e, .e2 = &e, .E1 = &e, .E2 = &e, .log_s = &ls};
	KFccoParams p = {.version = KFCCO_V1, .gamma = 1, .eps = 1e-14, .rho = 8};
	expect("fcco_local with a sample id outside the table", kern_fcco_local(c2, &b, &sid, &tab, &p, &pk), 0);
	named(c2, "fcco_local");
	expect("the first stream sees it", kern_stream_sync(c), -ERANGE);
	kern_error_clear(c);

	// a non-finite gradient norm stops the optimizer without changing the weights
	KOptPlan *plan;
	KOptSegment seg = {.offset = 0, .length = 6, .flags = KSEG_DECAY};
	KTensor w, g, m, v, nc;
	const int64_t s6[] = {6}, s2[] = {2};
	if (kern_opt_plan_create(c, &plan, &seg, 1, 6) || kern_alloc(c, &w, KDT_F32, 1, s6) ||
	    kern_alloc(c, &g, KDT_F32, 1, s6) || kern_alloc(c, &m, KDT_F32, 1, s6) ||
	    kern_alloc(c, &v, KDT_F32, 1, s6) || kern_alloc(c, &nc, KDT_F32, 1, s2))
		return 1;
	kgc_fill(&w, 4, 1);
	kgc_fill(&g, 5, 1);
	kgc_set(&g, 2, INFINITY);
	double w0 = kgc_get(&w, 0);
	KOptHyper h = {.lr = 0.1, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .weight_decay = 0.1, .step = 1};
	expect("grad_norm of an infinite gradient", kern_grad_norm(c, plan, &nc, &g, 1.0), 0);
	expect("optimizer with the NaN clip factor", kern_optimizer(c, plan, &h, &w, NULL, &g, &m, &v, &nc), 0);
	named(c, "optimizer");
	expect("sync returns it", kern_sync(c), -ERANGE);
	expect("the weights are unchanged", kgc_get(&w, 0) == w0 && kgc_get(&m, 0) == 0, 1);
	kern_opt_plan_destroy(plan);
	kern_event_destroy(ev);
	kern_ctx_destroy(c2);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL asynchronous errors" : "PASS asynchronous errors latch with the op's name");
	return bad;
}
