// The CUDA backend's table: every op of the contract queued on the handle's stream through its
// kernels (kcu_*.cu, attention through kattn.h), a failure latched with the op's name; the f64
// path stays on the CPU backend.
#include "kattn.h"       // defines: KAttn, kattn_fwd, kattn_bwd, kattn_ws_bytes, kattn_describe
#include "kcu_backend.h" // defines: CuDev, CuStream, KCU_OP, KS, cu_*

#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---- the KOPs of kern_ops.def: the kernel call (kcu_*) on the handle's stream, latched under the label ----
#define KOP(name, label, params, args)                                                                                 \
	static int cu_##name(KernCtx *c, KOP_LIST params)                                                              \
	{                                                                                                              \
		return KCU_OP(c, label, kcu_##name(KS(c), KOP_LIST args));                                             \
	}
#define KOP_OWN(ret, name, params)
#include "kern_ops.def" // defines: cu_convert, cu_linear, .. cu_temp_step

// ---- dense ----
// none: cuBLASLt's own workspace belongs to the stream's kgemm handle (32 MiB, made with the
// stream), and the own epilogues read the product as stored (kcu_dense.cu)
static size_t cu_linear_ws_bytes(KernCtx *c)
{
	(void)c;
	return 0;
}

// ---- attention: kernels/cuda/attn/ (kattn.h), one selection per stream handle ----
static KAttn *attn_of(const KernCtx *c)
{
	return ((const CuStream *)c->priv)->attn;
}

static const char *cu_attention_name(const KernCtx *c)
{
	return kattn_describe(attn_of(c));
}

static size_t cu_attention_ws_bytes(KernCtx *c, KDtype dt, int B, int T, int H, int hd)
{
	if (dt != KDT_BF16)
		return 0; // refused when it runs
	cu_use(c->dev);
	return kattn_ws_bytes(attn_of(c), B, T, H, hd);
}

// the attention kernels take bf16 storage in 16-byte aligned memory: anything else is refused
// before it runs (-ENOTSUP, nothing latched), as an f64 argument is
static int attn_takes(const KTensor *const *t, int n)
{
	for (int i = 0; i < n; i++)
		if (t[i] && (t[i]->dtype != KDT_BF16 || (uintptr_t)t[i]->data % 16))
			return 0;
	return 1;
}

static int cu_attention_fwd(KernCtx *c, KTensor *out, KTensor *lse, const KTensor *qkv, int B, int T, int H, int hd,
			    int causal)
{
	if (!attn_takes((const KTensor *[]){out, qkv}, 2))
		return -ENOTSUP;
	return KCU_OP(c, "attention",
		      kattn_fwd(attn_of(c), KS(c)->stream, out->data, lse->data, qkv->data, B, T, H, hd, causal, c->ws,
				c->ws_bytes, &KS(c)->err));
}

static int cu_attention_bwd(KernCtx *c, KGrad dqkv, const KTensor *dout, const KTensor *qkv, const KTensor *out,
			    const KTensor *lse, int B, int T, int H, int hd, int causal)
{
	if (!attn_takes((const KTensor *[]){dqkv.t, dout, qkv, out}, 4))
		return -ENOTSUP;
	return KCU_OP(c, "attention_bwd",
		      kattn_bwd(attn_of(c), KS(c)->stream, dqkv.t->data, dqkv.acc, dout->data, qkv->data, out->data,
				lse->data, B, T, H, hd, causal, c->ws, c->ws_bytes, &KS(c)->err));
}

// ---- losses ----
static size_t cu_loss_ws_bytes(KernCtx *c, int B, int N, int d)
{
	return kcu_loss_ws_bytes(B, N, d);
}

// ---- the optimizer: the plan's chunk and segment tables copied to the device once ----
static void plan_free(KcuPlan *kp)
{
	if (!kp)
		return;
	cudaFree(kp->chunks);
	cudaFree(kp->segs);
	cudaFree(kp->part);
	cudaFree(kp->step);
	cudaGetLastError();
	free(kp);
}

static int cu_opt_plan_open(KOptPlan *p)
{
	KcuPlan *kp = calloc(1, sizeof *kp);
	KcuChunk *hc = calloc((size_t)p->n_chunks, sizeof *hc);
	KcuSeg *hs = calloc((size_t)p->n_segs, sizeof *hs);
	int rc = kp && hc && hs ? 0 : -ENOMEM;
	for (int s = 0; s < p->n_segs && !rc; s++) {
		const KOptSegment *g = &p->segs[s];
		hs[s] = (KcuSeg){
			.flags = g->flags, .lo = g->clamp_lo, .hi = g->clamp_hi, .chunk0 = -1, .lr_scale = g->lr_scale};
		kp->has_lamb |= (g->flags & KSEG_LAMB) && !(g->flags & (KSEG_FROZEN | KSEG_EXTERNAL));
	}
	for (int k = 0; k < p->n_chunks && !rc; k++) { // chunks come segment by segment, in order
		const KOptChunk *ch = &p->chunks[k];
		hc[k] = (KcuChunk){.start = ch->start, .len = (int32_t)ch->len, .seg = ch->seg};
		if (hs[ch->seg].chunk0 < 0)
			hs[ch->seg].chunk0 = k;
		hs[ch->seg].nchunks++;
	}
	if (!rc) {
		cu_use(p->dev);
		kp->n_chunks = p->n_chunks, kp->n_segs = p->n_segs;
		if (cudaMalloc((void **)&kp->chunks, sizeof *hc * (size_t)p->n_chunks) ||
		    cudaMalloc((void **)&kp->segs, sizeof *hs * (size_t)p->n_segs) ||
		    cudaMalloc((void **)&kp->part, 2 * sizeof(double) * (size_t)p->n_chunks) ||
		    cudaMalloc((void **)&kp->step, sizeof(float) * (size_t)p->n_segs))
			rc = -ENOMEM;
		// from pageable memory cudaMemcpy returns once the source is staged, on the legacy stream,
		// which the backend's non-blocking streams do not wait for: the update reads the tables
		else if (cudaMemcpy(kp->chunks, hc, sizeof *hc * (size_t)p->n_chunks, cudaMemcpyHostToDevice) ||
			 cudaMemcpy(kp->segs, hs, sizeof *hs * (size_t)p->n_segs, cudaMemcpyHostToDevice) ||
			 cudaStreamSynchronize(0))
			rc = -EIO;
		cudaGetLastError();
	}
	free(hc);
	free(hs);
	if (rc) {
		plan_free(kp);
		return rc;
	}
	p->priv = kp;
	return 0;
}

static void cu_opt_plan_close(KOptPlan *p)
{
	cu_use(p->dev);
	cudaDeviceSynchronize(); // a queued update may still read the tables
	plan_free(p->priv);
}

static int cu_grad_norm(KernCtx *c, const KOptPlan *p, KTensor *norm_clip, const KTensor *grads, double clip_norm)
{
	return KCU_OP(c, "grad_norm", kcu_grad_norm(KS(c), p->priv, norm_clip, grads, clip_norm));
}

static int cu_optimizer(KernCtx *c, const KOptPlan *p, const KOptHyper *hy, KTensor *master, KTensor *copy,
			const KTensor *grads, KTensor *m, KTensor *v, const KTensor *norm_clip)
{
	// the scalars rounded exactly as the CPU twin (kern_cpu_optim.c) rounds them, from the same
	// per-step values; with hy->live the kernels derive them from its device copy instead
	double lv[KOPT_LIVE_N];
	kern_opt_live(hy, lv);
	KcuOptHyp h = {.b1 = (float)hy->beta1,
		       .b2 = (float)hy->beta2,
		       .eps = (float)hy->eps,
		       .lr = lv[KOPT_LIVE_LR],
		       .wd = hy->weight_decay,
		       .live = hy->live ? (const double *)hy->live->data : NULL};
	h.bc1 = (float)lv[KOPT_LIVE_BC1];
	h.bc2 = (float)lv[KOPT_LIVE_BC2];
	h.bc2s = (float)sqrt(lv[KOPT_LIVE_BC2]);
	h.step = (float)(lv[KOPT_LIVE_LR] / lv[KOPT_LIVE_BC1]);
	h.bc1d = lv[KOPT_LIVE_BC1];
	return KCU_OP(c, "optimizer", kcu_optimizer(KS(c), p->priv, &h, master, copy, grads, m, v, norm_clip));
}

const KBackend kcuda_backend = {
	.name = "cuda",
	.has_f64 = 0,
	.dev_open = cu_dev_open,
	.dev_close = cu_dev_close,
	.stream_open = cu_stream_open,
	.stream_close = cu_stream_close,
	.stream_sync = cu_stream_sync,
	.dev_sync = cu_dev_sync,
	.set_blas_threads = NULL, // kern_ctx_set_blas_threads: -EINVAL, a CPU setting
	.alloc = cu_alloc,
	.free = cu_free,
	.host_alloc = cu_host_alloc,
	.host_free = cu_host_free,
	.host_register = cu_host_register,
	.host_unregister = cu_host_unregister,
	.host_pinned = cu_host_pinned,
	.upload = cu_upload,
	.download = cu_download,
	.memzero = cu_memzero,
	.memcopy = cu_memcopy,
	.event_create = cu_event_create,
	.event_destroy = cu_event_destroy,
	.event_record = cu_event_record,
	.stream_wait_event = cu_stream_wait_event,
	.event_query = cu_event_query,
	.event_sync = cu_event_sync,
	.event_elapsed = cu_event_elapsed,
	.stream_native = cu_stream_native,
	.mem_info = cu_mem_info,
	.slow_paths = cu_slow_paths,
	.slow_path_note = cu_slow_path_note,
	.launches = cu_launches,
	.graph_begin = cu_graph_begin,
	.graph_end = cu_graph_end,
	.graph_launch = cu_graph_launch,
	.graph_destroy = cu_graph_destroy,
#define KOP(name, label, params, args) .name = cu_##name,
#define KOP_OWN(ret, name, params) .name = cu_##name,
#include "kern_ops.def" // defines: the op entries, cu_* each
};
