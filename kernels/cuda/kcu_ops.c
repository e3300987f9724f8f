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

static int cu_convert(KernCtx *c, KTensor *dst, const KTensor *src)
{
	return KCU_OP(c, "convert", kcu_convert(KS(c), dst, src));
}

// ---- dense ----
// none: cuBLASLt's own workspace belongs to the stream's kgemm handle (32 MiB, made with the
// stream), and the own epilogues read the product as stored (kcu_dense.cu)
static size_t cu_linear_ws_bytes(KernCtx *c)
{
	(void)c;
	return 0;
}

static int cu_linear(KernCtx *c, const KLinear *a, int64_t N, int IC, int OC)
{
	return KCU_OP(c, "linear", kcu_linear(KS(c), a, N, IC, OC));
}

static int cu_linear_bwd(KernCtx *c, const KLinearBwd *a, int64_t N, int IC, int OC)
{
	return KCU_OP(c, "linear_bwd", kcu_linear_bwd(KS(c), a, N, IC, OC));
}

static int cu_layernorm_fwd(KernCtx *c, KTensor *out, KTensor *mean, KTensor *rstd, const KTensor *in, const KTensor *w,
			    const KTensor *b, int64_t N, int C)
{
	return KCU_OP(c, "layernorm", kcu_layernorm_fwd(KS(c), out, mean, rstd, in, w, b, N, C));
}

static int cu_layernorm_bwd(KernCtx *c, KGrad din, KGrad dw, KGrad db, const KTensor *dout, const KTensor *in,
			    const KTensor *w, const KTensor *mean, const KTensor *rstd, int64_t N, int C)
{
	return KCU_OP(c, "layernorm_bwd", kcu_layernorm_bwd(KS(c), din, dw, db, dout, in, w, mean, rstd, N, C));
}

static int cu_add(KernCtx *c, KTensor *out, const KTensor *a, const KTensor *b, int64_t n)
{
	return KCU_OP(c, "add", kcu_add(KS(c), out, a, b, n));
}

// ---- augmentation, embeddings, pooling ----
static int cu_augment(KernCtx *c, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip,
		      int patch)
{
	return KCU_OP(c, "augment", kcu_augment(KS(c), out, clips, pos, seed, flip, patch));
}

static int cu_patchify(KernCtx *c, KTensor *patches, KGrad dimg, const KTensor *img, int patch)
{
	return KCU_OP(c, img ? "patchify" : "patchify_bwd", kcu_patchify(KS(c), patches, dimg, img, patch));
}

static int cu_vis_embed_fwd(KernCtx *c, KTensor *out, const KTensor *x, const KTensor *cls, const KTensor *pos,
			    const KTensor *tpos, int B, int T, int P, int D)
{
	return KCU_OP(c, "vis_embed", kcu_vis_embed_fwd(KS(c), out, x, cls, pos, tpos, B, T, P, D));
}

static int cu_vis_embed_bwd(KernCtx *c, KGrad dx, KGrad dcls, KGrad dpos, KGrad dtpos, const KTensor *dout, int B,
			    int T, int P, int D)
{
	return KCU_OP(c, "vis_embed_bwd", kcu_vis_embed_bwd(KS(c), dx, dcls, dpos, dtpos, dout, B, T, P, D));
}

static int cu_tok_embed_fwd(KernCtx *c, KTensor *out, const KTensor *ids, const KTensor *wte, const KTensor *pos)
{
	return KCU_OP(c, "tok_embed", kcu_tok_embed_fwd(KS(c), out, ids, wte, pos));
}

static int cu_tok_embed_bwd(KernCtx *c, KGrad dwte, KGrad dpos, const KTensor *dout, const KTensor *ids)
{
	return KCU_OP(c, "tok_embed_bwd", kcu_tok_embed_bwd(KS(c), dwte, dpos, dout, ids));
}

static int cu_argmax_rows(KernCtx *c, KTensor *pos, const KTensor *ids)
{
	return KCU_OP(c, "argmax_rows", kcu_argmax_rows(KS(c), pos, ids));
}

static int cu_pool_fwd(KernCtx *c, KTensor *out, const KTensor *x, const KTensor *pos)
{
	return KCU_OP(c, "pool", kcu_pool_fwd(KS(c), out, x, pos));
}

static int cu_pool_bwd(KernCtx *c, KGrad dx, const KTensor *dout, const KTensor *pos)
{
	return KCU_OP(c, "pool_bwd", kcu_pool_bwd(KS(c), dx, dout, pos));
}

static int cu_l2norm_fwd(KernCtx *c, KTensor *out, KTensor *norm, const KTensor *in, int64_t N, int C)
{
	return KCU_OP(c, "l2norm", kcu_l2norm_fwd(KS(c), out, norm, in, N, C));
}

static int cu_l2norm_bwd(KernCtx *c, KGrad din, const KTensor *dout, const KTensor *out, const KTensor *norm, int64_t N,
			 int C)
{
	return KCU_OP(c, "l2norm_bwd", kcu_l2norm_bwd(KS(c), din, dout, out, norm, N, C));
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

static int cu_infonce(KernCtx *c, const KContrastBatch *b, KTensor *loss, KGrad dE1, KGrad dE2, KGrad dlog_s, int B,
		      int N, int d)
{
	return KCU_OP(c, "infonce", kcu_infonce(KS(c), b, loss, dE1, dE2, dlog_s, B, N, d));
}

static int cu_fcco_local(KernCtx *c, const KContrastBatch *b, const KTensor *ids, const KTensor *table,
			 const KFccoParams *p, KTensor *pack, int B, int N, int d)
{
	return KCU_OP(c, "fcco_local", kcu_fcco_local(KS(c), b, ids, table, p, pack, B, N, d));
}

static int cu_fcco_scatter(KernCtx *c, KTensor *table, const KTensor *ids_all, const KTensor *pack_all, int pw)
{
	return KCU_OP(c, "fcco_scatter", kcu_fcco_scatter(KS(c), table, ids_all, pack_all, pw));
}

static int cu_fcco_surrogate(KernCtx *c, const KContrastBatch *b, const KTensor *pack, const KTensor *pack_all,
			     const KFccoParams *p, KTensor *loss, KGrad de1, KGrad de2, KGrad dlog_s, int B, int N,
			     int d)
{
	return KCU_OP(c, "fcco_surrogate",
		      kcu_fcco_surrogate(KS(c), b, pack, pack_all, p, loss, de1, de2, dlog_s, B, N, d));
}

static int cu_clip_metrics(KernCtx *c, KTensor *metrics, const KTensor *e1, const KTensor *e2, const KTensor *log_s,
			   int B, int d)
{
	return KCU_OP(c, "clip_metrics", kcu_clip_metrics(KS(c), metrics, e1, e2, log_s, B, d));
}

static int cu_temp_step(KernCtx *c, KTensor *log_s, KTensor *mv, const KTensor *grad, const KTensor *norm_clip,
			KTensor *copy, const KTempStep *h)
{
	return KCU_OP(c, "temp_step", kcu_temp_step(KS(c), log_s, mv, grad, norm_clip, copy, h));
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
		hs[s] = (KcuSeg){.flags = g->flags, .lo = g->clamp_lo, .hi = g->clamp_hi, .chunk0 = -1};
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
	// the scalars rounded exactly as the CPU twin (kern_cpu_optim.c) rounds them
	const double t = (double)hy->step;
	KcuOptHyp h = {.b1 = (float)hy->beta1,
		       .b2 = (float)hy->beta2,
		       .eps = (float)hy->eps,
		       .lr = hy->lr,
		       .wd = hy->weight_decay};
	h.bc1 = (float)(1 - pow(hy->beta1, t));
	h.bc2 = (float)(1 - pow(hy->beta2, t));
	h.bc2s = (float)sqrt(1 - pow(hy->beta2, t));
	h.step = (float)(hy->lr / (1 - pow(hy->beta1, t)));
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
	.convert = cu_convert,
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
	.linear_ws_bytes = cu_linear_ws_bytes,
	.linear = cu_linear,
	.linear_bwd = cu_linear_bwd,
	.layernorm_fwd = cu_layernorm_fwd,
	.layernorm_bwd = cu_layernorm_bwd,
	.add = cu_add,
	.augment = cu_augment,
	.patchify = cu_patchify,
	.vis_embed_fwd = cu_vis_embed_fwd,
	.vis_embed_bwd = cu_vis_embed_bwd,
	.tok_embed_fwd = cu_tok_embed_fwd,
	.tok_embed_bwd = cu_tok_embed_bwd,
	.argmax_rows = cu_argmax_rows,
	.pool_fwd = cu_pool_fwd,
	.pool_bwd = cu_pool_bwd,
	.l2norm_fwd = cu_l2norm_fwd,
	.l2norm_bwd = cu_l2norm_bwd,
	.attention_name = cu_attention_name,
	.attention_ws_bytes = cu_attention_ws_bytes,
	.attention_fwd = cu_attention_fwd,
	.attention_bwd = cu_attention_bwd,
	.loss_ws_bytes = cu_loss_ws_bytes,
	.infonce = cu_infonce,
	.fcco_local = cu_fcco_local,
	.fcco_scatter = cu_fcco_scatter,
	.fcco_surrogate = cu_fcco_surrogate,
	.clip_metrics = cu_clip_metrics,
	.temp_step = cu_temp_step,
	.opt_plan_open = cu_opt_plan_open,
	.opt_plan_close = cu_opt_plan_close,
	.grad_norm = cu_grad_norm,
	.optimizer = cu_optimizer,
};
