// The CUDA backend's device side through the contract: devices (-ENODEV), streams ordered by
// events, zero-filled device memory, pinned and registered host memory for asynchronous copies,
// the host-wait count, workspaces, content errors latched with the op's name at the next sync
// point (a NaN temperature gradient, or a NaN clip factor times a finite one), and what this
// backend refuses (f64, f32 attention).
#include "kcu_twin.h" // defines: KtEnv, SH, kt_*

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int latched(KtEnv *e, int rc, const char *op, const char *what)
{
	const char *msg = kern_error_message(e->dev);
	size_t n = strlen(op);
	int ok = rc == -ERANGE && !strncmp(msg, op, n) && msg[n] == ':';
	kt_check(e, ok, "%s: sync returned %d, \"%s\"", what, rc, msg);
	// every op and sync point returns it until cleared
	KTensor t;
	int again = kern_alloc(e->dev, &t, KDT_F32, 1, SH(4)) ? -1 : kern_zero(e->dev, &t);
	kt_check(e, again == -ERANGE && kern_sync(e->dev) == -ERANGE, "the latched error stands until cleared (%d)",
		 again);
	kern_error_clear(e->dev);
	kt_check(e, kern_zero(e->dev, &t) == 0 && kern_sync(e->dev) == 0, "cleared: ops run again");
	kern_free(e->dev, &t);
	return ok;
}

static void devices(KtEnv *e)
{
	KernCtx *c;
	KCtxOptions bad = {.backend = KERN_BACKEND_CUDA, .device = 4096};
	kt_check(e, kern_ctx_create(&c, &bad) == -ENODEV, "a device index past the last is -ENODEV");
	bad.device = -1;
	kt_check(e, kern_ctx_create(&c, &bad) == -ENODEV, "a negative device index is -ENODEV");
	kt_check(e, !strcmp(kern_ctx_backend_name(e->dev), "cuda"), "backend name %s", kern_ctx_backend_name(e->dev));
	kt_check(e, kern_ctx_set_blas_threads(e->dev, 2) == -EINVAL, "BLAS threads are a CPU setting");
	// zero-filled memory of every dtype
	KTensor t;
	int rc = kern_alloc(e->dev, &t, KDT_BF16, 2, SH(33, 7));
	uint16_t h[33 * 7];
	memset(h, 0x5a, sizeof h);
	rc = rc ? rc : kern_download(e->dev, h, sizeof h, &t);
	int zero = !rc;
	for (int i = 0; i < 33 * 7; i++)
		zero &= h[i] == 0;
	kt_check(e, zero, "kern_alloc memory is zero-filled");
	kern_free(e->dev, &t);
}

// stream a uploads from pinned memory, records an event; stream b waits for it, adds, downloads
static void streams(KtEnv *e)
{
	KernCtx *b;
	KEvent *ev, *never;
	const int n = 4096;
	float *pin = NULL, *host = malloc(sizeof(float) * n);
	int rc = kern_stream_create(e->dev, &b) || kern_event_create(e->dev, &ev) ||
		 kern_event_create(e->dev, &never) || kern_host_alloc(e->dev, (void **)&pin, sizeof(float) * n);
	kt_check(e, !rc, "a second stream, events and pinned memory");
	if (rc)
		exit(1);
	kt_check(e, kern_event_query(never) == 1, "an event never recorded is complete");
	KTensor x, y;
	rc = kern_alloc(e->dev, &x, KDT_F32, 1, SH(n)) || kern_alloc(b, &y, KDT_F32, 1, SH(n));
	for (int i = 0; i < n; i++)
		pin[i] = (float)i, host[i] = 0;
	int64_t waits = kern_ctx_host_waits(e->dev);
	kt_check(e, kern_upload_async(e->dev, &x, host, sizeof(float) * n) == -EINVAL,
		 "an asynchronous copy from pageable memory is refused");
	rc = rc || kern_upload_async(e->dev, &x, pin, sizeof(float) * n) || kern_event_record(ev, e->dev) ||
	     kern_stream_wait_event(b, ev) || kern_add(b, &y, &x, &x) ||
	     kern_download_async(b, pin, sizeof(float) * n, &y);
	kt_check(e, !rc && kern_ctx_host_waits(e->dev) == waits, "queued ops and async copies do not wait (%lld waits)",
		 (long long)(kern_ctx_host_waits(e->dev) - waits));
	KEvent *done;
	rc = rc || kern_event_create(b, &done) || kern_event_record(done, b) || kern_event_sync(done);
	int ok = !rc && kern_event_query(done) == 1 && kern_event_query(ev) == 1;
	for (int i = 0; i < n && ok; i++)
		ok = pin[i] == 2.0f * (float)i;
	kt_check(e, ok, "stream b saw stream a's upload through the event: y = 2x");
	kt_check(e, kern_ctx_host_waits(e->dev) == waits + 1, "one host wait: the event sync");
	// timed events: cudaEventElapsedTime between two records, never a wait; events made without
	// timing (cudaEventDisableTiming) have none
	KEvent *ta, *tb;
	double ms = -1;
	rc = kern_event_create_timed(e->dev, &ta) || kern_event_create_timed(b, &tb);
	kt_check(e, !rc && kern_event_elapsed(ta, tb, &ms) == -EINVAL, "elapsed before a record is -EINVAL");
	rc = rc || kern_event_record(ta, e->dev) || kern_add(b, &y, &x, &x) || kern_event_record(tb, b) ||
	     kern_event_sync(tb);
	int erc = rc ? -1 : kern_event_elapsed(ta, tb, &ms);
	kt_check(e, erc == 0 && ms >= 0 && ms < 1e4, "elapsed between two recorded timed events: %d, %.3f ms", erc, ms);
	kt_check(e, kern_event_elapsed(ta, ev, &ms) == -EINVAL, "elapsed against an event without timing is -EINVAL");
	kern_event_destroy(ta), kern_event_destroy(tb);
	// a registered mapping (the ring's role): async copies allowed while registered
	char *ring = aligned_alloc(4096, 1 << 16);
	rc = kern_host_register(e->dev, ring, 1 << 16);
	if (rc == -ENOTSUP || rc == -EPERM || rc == -ENOMEM) {
		printf("note: host registration refused here (%d): callers stage through pinned memory\n", rc);
	} else {
		kt_check(e, rc == 0, "kern_host_register: %d", rc);
		kt_check(e, kern_host_register(e->dev, ring + 4096, 4096) == -EEXIST,
			 "an overlapping registration is -EEXIST");
		memcpy(ring, host, sizeof(float) * 64);
		KTensor s;
		rc = kern_view(&s, &x, 0, 1, SH(64)) || kern_upload_async(e->dev, &s, ring, sizeof(float) * 64) ||
		     kern_stream_sync(e->dev);
		kt_check(e, !rc, "an async copy from registered memory");
		kt_check(e, kern_host_unregister(e->dev, ring) == 0, "unregistered");
		kt_check(e, kern_upload_async(e->dev, &s, ring, sizeof(float) * 64) == -EINVAL,
			 "no async copies from it after unregistering");
	}
	free(ring);
	kern_host_free(e->dev, pin);
	kern_event_destroy(ev), kern_event_destroy(never), kern_event_destroy(done);
	kern_free(e->dev, &x), kern_free(b, &y);
	kern_ctx_destroy(b);
	free(host);
}

static void content_errors(KtEnv *e)
{
	KTensor ids, wte, pos, out, x, p, o, table, ida, pack;
	int32_t bad_ids[6] = {1, 2, 3, 9, 2, 1}; // 9 is past a vocabulary of 5
	int rc = kern_alloc(e->dev, &ids, KDT_I32, 2, SH(2, 3)) || kern_alloc(e->dev, &wte, KDT_F32, 2, SH(5, 4)) ||
		 kern_alloc(e->dev, &pos, KDT_F32, 2, SH(3, 4)) || kern_alloc(e->dev, &out, KDT_F32, 3, SH(2, 3, 4)) ||
		 kern_upload(e->dev, &ids, bad_ids, sizeof bad_ids);
	kt_check(e, kern_tok_embed_fwd(e->dev, &out, &ids, &wte, &pos) == 0, "a bad token id: the op itself returns 0");
	latched(e, kern_sync(e->dev), "tok_embed", "token id outside the vocabulary");
	kt_check(e, kern_tok_embed_bwd(e->dev, KG_SET(&wte), KG_SET(&pos), &out, &ids) == 0, "the same in backward");
	latched(e, kern_stream_sync(e->dev), "tok_embed_bwd", "backward: found at kern_stream_sync");
	int32_t pp[2] = {0, 7};
	rc = rc || kern_alloc(e->dev, &x, KDT_F32, 3, SH(2, 3, 4)) || kern_alloc(e->dev, &p, KDT_I32, 1, SH(2)) ||
	     kern_alloc(e->dev, &o, KDT_F32, 2, SH(2, 4)) || kern_upload(e->dev, &p, pp, sizeof pp);
	kt_check(e, kern_pool_fwd(e->dev, &o, &x, &p) == 0, "pooling a row past the end returns 0");
	float back[8];
	latched(e, kern_download(e->dev, back, sizeof back, &o), "pool",
		"pool position outside the rows (at a download)");
	// a scatter with a bad sample id writes nothing
	int64_t ia[3] = {1, 4, 2};
	float pk[6] = {1, 2, 3, 4, 5, 6}, tb[8];
	rc = rc || kern_alloc(e->dev, &table, KDT_F32, 2, SH(4, 2)) || kern_alloc(e->dev, &ida, KDT_I64, 1, SH(3)) ||
	     kern_alloc(e->dev, &pack, KDT_F32, 2, SH(3, 2)) || kern_upload(e->dev, &ida, ia, sizeof ia) ||
	     kern_upload(e->dev, &pack, pk, sizeof pk);
	kt_check(e, !rc, "setup of the error cases");
	kt_check(e, kern_fcco_scatter(e->dev, &table, &ida, &pack, KFCCO_V0) == 0, "a scatter with a bad id returns 0");
	latched(e, kern_sync(e->dev), "fcco_scatter", "sample id outside the table");
	int untouched = kern_download(e->dev, tb, sizeof tb, &table) == 0;
	for (int i = 0; i < 8; i++)
		untouched &= tb[i] == 0.0f;
	kt_check(e, untouched, "nothing was scattered");
	// a non-finite temperature gradient changes nothing
	KTensor ls, mv, g;
	float lsv = 2.5f, gv = NAN, after = 0;
	rc = kern_alloc(e->dev, &ls, KDT_F32, 1, SH(1)) || kern_alloc(e->dev, &mv, KDT_F32, 1, SH(2)) ||
	     kern_alloc(e->dev, &g, KDT_F32, 1, SH(1)) || kern_upload(e->dev, &ls, &lsv, 4) ||
	     kern_upload(e->dev, &g, &gv, 4);
	KTempStep h = {.lr = 0.1, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .step = 1, .lo = 0, .hi = 4.6};
	kt_check(e, !rc && kern_temp_step(e->dev, &ls, &mv, &g, NULL, NULL, &h) == 0,
		 "temp_step with a NaN gradient returns 0");
	latched(e, kern_sync(e->dev), "temp_step", "non-finite temperature gradient");
	kt_check(e, kern_download(e->dev, &after, 4, &ls) == 0 && after == lsv, "log_s unchanged");
	// nor does a finite one times a NaN clip factor (a non-finite model norm: kern_grad_norm's)
	KTensor nc;
	float ncv[2] = {INFINITY, NAN};
	gv = 0.5f;
	rc = kern_alloc(e->dev, &nc, KDT_F32, 1, SH(2)) || kern_upload(e->dev, &nc, ncv, sizeof ncv) ||
	     kern_upload(e->dev, &g, &gv, 4);
	kt_check(e, !rc && kern_temp_step(e->dev, &ls, &mv, &g, &nc, NULL, &h) == 0,
		 "temp_step with a NaN clip factor returns 0");
	latched(e, kern_sync(e->dev), "temp_step", "non-finite temperature gradient");
	kt_check(e, kern_download(e->dev, &after, 4, &ls) == 0 && after == lsv, "log_s unchanged");
	KTensor *all[] = {&ids, &wte, &pos, &out, &x, &p, &o, &table, &ida, &pack, &ls, &mv, &g, &nc};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		kern_free(e->dev, all[i]);
}

static void refusals(KtEnv *e)
{
	KTensor a, b, m, r, q, lse, o, d;
	int rc = kern_alloc(e->dev, &a, KDT_F64, 2, SH(3, 4)) || kern_alloc(e->dev, &b, KDT_F64, 1, SH(4)) ||
		 kern_alloc(e->dev, &m, KDT_F64, 1, SH(3)) || kern_alloc(e->dev, &r, KDT_F64, 1, SH(3)) ||
		 kern_alloc(e->dev, &q, KDT_F32, 3, SH(2, 5, 3 * 8)) ||
		 kern_alloc(e->dev, &lse, KDT_F32, 3, SH(2, 2, 5)) || kern_alloc(e->dev, &o, KDT_F32, 3, SH(2, 5, 8)) ||
		 kern_alloc(e->dev, &d, KDT_F32, 2, SH(3, 4));
	kt_check(e, !rc, "setup of the refusals");
	kt_check(e, kern_layernorm_fwd(e->dev, &a, &m, &r, &a, &b, &b) == -ENOTSUP, "the f64 path is -ENOTSUP");
	kt_check(e, kern_convert(e->dev, &d, &a) == -ENOTSUP && kern_sync(e->dev) == 0,
		 "converting f64: -ENOTSUP, nothing latched");
	// attention runs in bf16 only (kernels/cuda/attn): f32 is refused before anything runs
	kt_check(e, kern_attention_fwd(e->dev, &o, &lse, &q, 2, 0) == -ENOTSUP && kern_sync(e->dev) == 0,
		 "f32 attention: -ENOTSUP, nothing latched");
	const char *what = kern_ctx_attention(e->dev);
	kt_check(e, what && strstr(what, "own"), "kern_ctx_attention: %s", what ? what : "(null)");
	KernCtx *cd;
	KCtxOptions oc = {.backend = KERN_BACKEND_CUDA, .device = 0, .attention = KERN_ATTN_CUDNN};
	int rcd = kern_ctx_create(&cd, &oc);
	kt_check(e, rcd == 0 || rcd == -ENOTSUP, "--attention cudnn: %s",
		 rcd == 0 ? kern_ctx_attention(cd) : "-ENOTSUP (no cuDNN in this build: the shim has none)");
	if (rcd == 0)
		kern_ctx_destroy(cd);
	kt_check(e, kern_sync(e->dev) == 0, "no error latched by the refusals");
	// the linear op needs no workspace of the handle's (its epilogues read the stored product)
	KernCtx *b2;
	KTensor x, w, y;
	rc = kern_stream_create(e->dev, &b2) || kern_alloc(b2, &x, KDT_F32, 2, SH(4, 8)) ||
	     kern_alloc(b2, &w, KDT_F32, 2, SH(8, 8)) || kern_alloc(b2, &y, KDT_F32, 2, SH(4, 8));
	KLinear l = {.out = &y, .in = &x, .w = &w, .trans_w = 1};
	kt_check(e, !rc && kern_linear_ws_bytes(b2) == 0 && kern_linear(b2, &l) == 0 && kern_stream_sync(b2) == 0,
		 "a linear runs on a handle without a workspace (it asks for %zu bytes)", kern_linear_ws_bytes(b2));
	kern_free(b2, &x), kern_free(b2, &w), kern_free(b2, &y);
	// NCCL queues on each handle's own stream; the memory plan reads the device's memory
	kt_check(e,
		 kern_stream_native(b2) && kern_stream_native(e->dev) &&
			 kern_stream_native(b2) != kern_stream_native(e->dev),
		 "kern_stream_native: each handle its own stream");
	KMemInfo mi = {0};
	int mrc = kern_ctx_memory(e->dev, &mi);
	kt_check(e, mrc == 0 && mi.device_total > 0 && mi.device_free <= mi.device_total,
		 "kern_ctx_memory: device free %zu of %zu bytes", mi.device_free, mi.device_total);
	kern_ctx_destroy(b2);
	KTensor *all[] = {&a, &b, &m, &r, &q, &lse, &o, &d};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		kern_free(e->dev, all[i]);
}

int main(void)
{
	KtEnv e;
	kt_setup(&e, "test_kcuda_backend");
	devices(&e);
	streams(&e);
	content_errors(&e);
	refusals(&e);
	return kt_finish(&e);
}
