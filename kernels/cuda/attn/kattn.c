// The attention selection of one stream: the own kernel, cuDNN's fused attention, or cuDNN where
// it accepts the call and the own kernel otherwise (auto); what ran and why, for the log.
#include "kattn.h" // defines: KAttn, KAttnImpl, kattn_*

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#if HAVE_CUDNN
#include "kattn_cudnn.h" // defines: KcAttn, kc_attn_*
#endif

struct KAttn {
	KAttnImpl impl, last;
	KAttnOwnOpts own; // the own backward's options (kattn_set_own_opts)
	int bwd_graph;    // cuDNN's backward: KC_BWD (cudnn), KC_BWD_DET (auto on Hopper), 0 none (auto elsewhere)
#if HAVE_CUDNN
	KcAttn *cudnn; // NULL: the own kernel only
#endif
	char note[160]; // why auto runs without cuDNN
	char desc[2048];
};

int kattn_cudnn_available(void)
{
#if HAVE_CUDNN
	return kc_attn_version() != NULL;
#else
	return 0;
#endif
}

int kattn_create(KAttn **out, KAttnImpl impl, int device, KErr *e)
{
	if (impl != KATTN_AUTO && impl != KATTN_OWN && impl != KATTN_CUDNN)
		return kerr_set(e, -EINVAL, "kattn_create: implementation %d (auto 0, own 1, cudnn 2)", (int)impl);
	KAttn *a = calloc(1, sizeof *a);
	if (!a)
		return kerr_set(e, -ENOMEM, "kattn_create: out of memory");
	a->impl = impl;
	a->last = KATTN_OWN;
	int rc = cuda_try(e, cudaSetDevice(device));
	if (rc < 0 || impl == KATTN_OWN) {
		if (rc < 0)
			free(a);
		else
			*out = a;
		return rc;
	}
#if HAVE_CUDNN
	if (!kattn_cudnn_available()) {
		snprintf(a->note, sizeof a->note, "the loaded cuDNN is older than 9.0");
	} else {
		KErr ce = {0, ""};
		if (kc_attn_create(&a->cudnn, &ce) < 0)
			snprintf(a->note, sizeof a->note, "no cuDNN handle: %.120s", ce.msg);
	}
#else
	snprintf(a->note, sizeof a->note, "this build has no cuDNN (HAVE_CUDNN)");
#endif
#if HAVE_CUDNN
	if (a->cudnn) {
		// auto stays bit-reproducible: cuDNN's backward only in the deterministic graph, and only on
		// compute capability 9.0, where cudnn-frontend documents that graph as its deterministic
		// algorithm (Blackwell's needs engine knobs, Ampere's and Ada's is not documented)
		int major = 0, minor = 0;
		cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
		cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
		a->bwd_graph = impl == KATTN_CUDNN ? KC_BWD : major == 9 && minor == 0 ? KC_BWD_DET : 0;
		*out = a;
		return 0;
	}
#endif
	if (impl == KATTN_CUDNN) {
		rc = kerr_set(e, -ENOTSUP, "--attention cudnn: %s", a->note);
		free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void kattn_destroy(KAttn *a)
{
	if (!a)
		return;
#if HAVE_CUDNN
	kc_attn_destroy(a->cudnn);
#endif
	free(a);
}

const char *kattn_describe(const KAttn *a)
{
	KAttn *m = (KAttn *)a; // the text is composed on demand into the handle's buffer
	const char *own = a->own.dq_atomic ? "the own FlashAttention-2-style kernel (head dims 32, 64, 128; dQ by "
					     "atomics: not bit-reproducible)"
					   : "the own FlashAttention-2-style kernel (head dims 32, 64, 128)";
	if (a->impl == KATTN_OWN) {
		snprintf(m->desc, sizeof m->desc, "own: %s", own);
		return a->desc;
	}
#if HAVE_CUDNN
	if (a->cudnn) {
		char shapes[1536];
		kc_attn_decisions(a->cudnn, shapes, sizeof shapes);
		snprintf(m->desc, sizeof m->desc, "%s: cuDNN %s fused attention%s%s%s%s",
			 a->impl == KATTN_AUTO ? "auto" : "cudnn", kc_attn_version(),
			 a->impl != KATTN_AUTO ? ""
			 : a->bwd_graph
				 ? " (backward: its deterministic graph) where it accepts the shape, else "
				 : " forward where it accepts the shape (not sm_90: no deterministic backward), else "
				   "(and for every backward) ",
			 a->impl == KATTN_AUTO ? own : "", shapes[0] ? "; planned: " : "", shapes);
		return a->desc;
	}
#endif
	snprintf(m->desc, sizeof m->desc, "auto: %s (%s)", own, a->note);
	return a->desc;
}

#if HAVE_CUDNN
static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}
#endif

size_t kattn_ws_bytes(KAttn *a, int B, int T, int H, int hd)
{
	size_t ws = a->impl == KATTN_CUDNN ? 0 : kattn_own_ws_bytes_opts(B, T, H, hd, &a->own);
#if HAVE_CUDNN
	if (a->cudnn)
		for (int k = 0; k < (a->bwd_graph ? 2 : 1); k++) // the forward, cuDNN's backward if it runs one
			for (int causal = 0; causal < 2; causal++) {
				size_t w = 0;
				KErr ignored = {0, ""}; // a failure shows again, with its message, when the op runs
				const int graph = k ? a->bwd_graph : KC_FWD;
				if (kc_attn_plan(a->cudnn, graph, B, T, H, hd, causal, &w, NULL, &ignored) == 0)
					ws = max_sz(ws, w);
			}
#endif
	return ws;
}

KAttnImpl kattn_last_impl(const KAttn *a)
{
	return a->last;
}

void kattn_set_own_opts(KAttn *a, const KAttnOwnOpts *o)
{
	a->own = *o;
}

// 1: run cuDNN; 0: run the own kernel; < 0: an error (latched)
static int use_cudnn(KAttn *a, int bwd, int acc, int B, int T, int H, int hd, int causal, KErr *e)
{
	if (a->impl == KATTN_OWN)
		return 0;
#if HAVE_CUDNN
	// auto keeps a run bit-reproducible: cuDNN's default backward accumulates dQ with atomics, so auto
	// runs its deterministic graph (sm_90) or the own backward, which has one writer per element
	if (bwd && !a->bwd_graph)
		return 0;
	if (a->cudnn) {
		if (acc) // cuDNN writes its bf16 result; adding it would round twice
			return a->impl == KATTN_CUDNN
				       ? kerr_set(e, -ENOTSUP, "--attention cudnn: cuDNN cannot add into dqkv (KG_ADD)")
				       : 0;
		const char *why = "";
		int rc = kc_attn_plan(a->cudnn, bwd ? a->bwd_graph : KC_FWD, B, T, H, hd, causal, NULL, &why, e);
		if (rc == 0)
			return 1;
		if (rc != -ENOTSUP || a->impl == KATTN_CUDNN)
			return rc == -ENOTSUP
				       ? kerr_set(
						 e, rc,
						 "--attention cudnn: cuDNN refuses attention %s B %d T %d H %d hd %d%s: %s",
						 bwd ? "backward" : "forward", B, T, H, hd, causal ? " causal" : "",
						 why)
				       : rc;
		return 0;
	}
#else
	(void)bwd, (void)acc, (void)B, (void)T, (void)H, (void)hd, (void)causal;
#endif
	return a->impl == KATTN_CUDNN ? kerr_set(e, -ENOTSUP, "--attention cudnn: %s", a->note) : 0;
}

int kattn_fwd(KAttn *a, cudaStream_t s, void *out, float *lse, const void *qkv, int B, int T, int H, int hd, int causal,
	      void *ws, size_t ws_bytes, KErr *e)
{
	int c = use_cudnn(a, 0, 0, B, T, H, hd, causal, e);
	if (c < 0)
		return c;
	a->last = c ? KATTN_CUDNN : KATTN_OWN;
#if HAVE_CUDNN
	if (c)
		return kc_attn_fwd(a->cudnn, s, out, lse, qkv, B, T, H, hd, causal, ws, ws_bytes, e);
#else
	(void)ws, (void)ws_bytes;
#endif
	return kattn_own_fwd(e, out, lse, qkv, B, T, H, hd, causal, s);
}

int kattn_bwd(KAttn *a, cudaStream_t s, void *dqkv, int acc, const void *dout, const void *qkv, const void *out,
	      const float *lse, int B, int T, int H, int hd, int causal, void *ws, size_t ws_bytes, KErr *e)
{
	int c = use_cudnn(a, 1, acc, B, T, H, hd, causal, e);
	if (c < 0)
		return c;
	a->last = c ? KATTN_CUDNN : KATTN_OWN;
#if HAVE_CUDNN
	if (c)
		return kc_attn_bwd(a->cudnn, a->bwd_graph, s, dqkv, dout, qkv, out, lse, B, T, H, hd, causal, ws,
				   ws_bytes, e);
#endif
	return kattn_own_bwd_opts(e, dqkv, acc, dout, qkv, out, lse, B, T, H, hd, causal, ws, ws_bytes, &a->own, s);
}
