// The op interface every backend implements: a context handle passed to every op, tensors
// owned by the backend, explicit workspace. Model code calls only these functions.
#ifndef KERN_OPS_H
#define KERN_OPS_H
// defines: KernCtx, KOptHyper, kern_ctx_create_cpu, kern_ctx_set_blas_threads, kern_ctx_destroy, kern_ctx_backend_name, kern_ctx_threads,
//          kern_sync, kern_alloc, kern_free, kern_upload, kern_download, kern_zero, kern_copy, kern_convert,
//          kern_scale, kern_sumsq, kern_linear_fwd/bwd, kern_proj_fwd/bwd, kern_layernorm_fwd/bwd,
//          kern_gelu_fwd/bwd, kern_add_fwd/bwd, kern_patchify_fwd/bwd, kern_vis_embed_fwd/bwd,
//          kern_attention_ws_bytes, kern_attention_fwd/bwd, kern_tok_embed_fwd/bwd, kern_argmax_rows,
//          kern_pool_fwd/bwd, kern_l2norm_fwd/bwd, kern_clip_loss_ws_bytes, kern_clip_loss, kern_adamw_step,
//          kern_lamb_step
//
// Conventions:
// - Every op returns 0 or -errno: -EINVAL for a shape/dtype mismatch, -ENOTSUP for a dtype the
//   backend does not compute in (the CPU backend computes in f32, and in f64 for tests).
// - Backward ops ACCUMULATE (+=) into every gradient they write, inputs and parameters alike,
//   so a residual branch's gradient just adds into the stream's; callers zero what they reuse.
// - Optional pointers (bias, a gradient that is not wanted) may be NULL where noted.
// - Ops are queued on the context's stream (the CPU backend runs them at once); kern_download,
//   kern_sumsq and kern_clip_loss's loss read-back are the only points that wait.

#include "kern_tensor.h" // defines: KTensor, KDtype

#include <stddef.h>
#include <stdint.h>

typedef struct KernCtx KernCtx;

// ---- context and memory ----
// nthreads <= 0: every core OpenMP offers
int kern_ctx_create_cpu(KernCtx **out, int nthreads);
// CPU backend: threads of BLAS calls (1 after creation: the OpenMP team is the only pool)
int kern_ctx_set_blas_threads(KernCtx *ctx, int n);
// frees every tensor still allocated in the context (views and kern_free after this are invalid)
void kern_ctx_destroy(KernCtx *ctx);
const char *kern_ctx_backend_name(const KernCtx *ctx);
int kern_ctx_threads(const KernCtx *ctx);
int kern_sync(KernCtx *ctx);
// zero-filled backend memory of the given dtype and shape
int kern_alloc(KernCtx *ctx, KTensor *t, KDtype dt, int ndim, const int64_t *shape);
void kern_free(KernCtx *ctx, KTensor *t);
// host <-> backend copies of exactly kern_nbytes(t) bytes (nbytes must match)
int kern_upload(KernCtx *ctx, KTensor *dst, const void *host, size_t nbytes);
int kern_download(KernCtx *ctx, void *host, size_t nbytes, const KTensor *src);
int kern_zero(KernCtx *ctx, KTensor *t);
int kern_copy(KernCtx *ctx, KTensor *dst, const KTensor *src);
// element-wise dtype conversion between f32, f64 and bf16 (bf16: round to nearest even)
int kern_convert(KernCtx *ctx, KTensor *dst, const KTensor *src);
int kern_scale(KernCtx *ctx, KTensor *x, double s);
// sum of squares in double, summed in a fixed order (same result for any thread count)
int kern_sumsq(KernCtx *ctx, double *out, const KTensor *x);

// ---- dense ----
// out (N, OC) = in (N, IC) @ w^T, w (OC, IC), + b (OC) when b != NULL. N = all leading dims.
int kern_linear_fwd(KernCtx *ctx, KTensor *out, const KTensor *in, const KTensor *w, const KTensor *b);
// din (N, IC) += dout @ w (din may be NULL); dw += dout^T @ in; db += colsum(dout) (db may be NULL)
int kern_linear_bwd(KernCtx *ctx, KTensor *din, KTensor *dw, KTensor *db, const KTensor *dout, const KTensor *in,
		    const KTensor *w);
// projection: out (N, OC) = in (N, IC) @ p, p (IC, OC) (open_clip's visual.proj / text_projection)
int kern_proj_fwd(KernCtx *ctx, KTensor *out, const KTensor *in, const KTensor *p);
int kern_proj_bwd(KernCtx *ctx, KTensor *din, KTensor *dp, const KTensor *dout, const KTensor *in, const KTensor *p);
// layernorm over the last dim C (eps 1e-5); mean, rstd (N) are saved for backward
int kern_layernorm_fwd(KernCtx *ctx, KTensor *out, KTensor *mean, KTensor *rstd, const KTensor *in, const KTensor *w,
		       const KTensor *b);
int kern_layernorm_bwd(KernCtx *ctx, KTensor *din, KTensor *dw, KTensor *db, const KTensor *dout, const KTensor *in,
		       const KTensor *w, const KTensor *mean, const KTensor *rstd);
// exact GELU 0.5 x (1 + erf(x / sqrt 2)) (torch.nn.GELU, open_clip's default)
int kern_gelu_fwd(KernCtx *ctx, KTensor *out, const KTensor *in);
int kern_gelu_bwd(KernCtx *ctx, KTensor *din, const KTensor *dout, const KTensor *in);
// residual add: out = a + b; backward da += dout, db += dout (either may be NULL)
int kern_add_fwd(KernCtx *ctx, KTensor *out, const KTensor *a, const KTensor *b);
int kern_add_bwd(KernCtx *ctx, KTensor *da, KTensor *db, const KTensor *dout);

// ---- embeddings and pooling ----
// img (B, T, H, W, C) channels-last -> out (B, T*P, C*p*p), P = (H/p)*(W/p) patches in raster
// order, each flattened as (c, i, j) to match open_clip's conv1.weight (D, C, p, p)
int kern_patchify_fwd(KernCtx *ctx, KTensor *out, const KTensor *img, int patch);
int kern_patchify_bwd(KernCtx *ctx, KTensor *dimg, const KTensor *dout, int patch);
// x (B, T*P, D) -> out (B, 1+T*P, D): out[b,0] = cls + pos[0];
// out[b, 1+t*P+p] = x[b, t*P+p] + pos[1+p] + tpos[t]; pos (1+P, D), tpos (T, D)
int kern_vis_embed_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KTensor *cls, const KTensor *pos,
		       const KTensor *tpos);
int kern_vis_embed_bwd(KernCtx *ctx, KTensor *dx, KTensor *dcls, KTensor *dpos, KTensor *dtpos, const KTensor *dout);
// ids (B, L) i32 -> out (B, L, D) = wte[ids] + pos[:L]; wte (V, D), pos (Lmax >= L, D).
// An id outside [0, V) is -ERANGE.
int kern_tok_embed_fwd(KernCtx *ctx, KTensor *out, const KTensor *ids, const KTensor *wte, const KTensor *pos);
int kern_tok_embed_bwd(KernCtx *ctx, KTensor *dwte, KTensor *dpos, const KTensor *dout, const KTensor *ids);
// pos (B) i32 = index of each row's largest id (CLIP's end token has the largest id)
int kern_argmax_rows(KernCtx *ctx, KTensor *pos, const KTensor *ids);
// out (B, D) = x[b, pos[b], :], x (B, L, D); end-token pooling (pos from kern_argmax_rows)
// and class-token pooling (pos all 0)
int kern_pool_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KTensor *pos);
int kern_pool_bwd(KernCtx *ctx, KTensor *dx, const KTensor *dout, const KTensor *pos);
// out (N, C) = in / max(||in||, 1e-12) per row; norm (N) saved for backward
int kern_l2norm_fwd(KernCtx *ctx, KTensor *out, KTensor *norm, const KTensor *in);
int kern_l2norm_bwd(KernCtx *ctx, KTensor *din, const KTensor *dout, const KTensor *out, const KTensor *norm);

// ---- attention ----
// qkv (B, T, 3*D) packed as [q | k | v], each D = H * hd split into heads (open_clip's
// in_proj layout) -> out (B, T, D), lse (B, H, T) f32/f64 log-sum-exp of each query row.
// Tiled with an online softmax: no T x T matrix is ever stored; backward recomputes scores.
size_t kern_attention_ws_bytes(KernCtx *ctx, KDtype dt, int B, int T, int H, int hd);
int kern_attention_fwd(KernCtx *ctx, KTensor *out, KTensor *lse, const KTensor *qkv, int heads, int causal,
		       KTensor *ws);
int kern_attention_bwd(KernCtx *ctx, KTensor *dqkv, const KTensor *dout, const KTensor *qkv, const KTensor *out,
		       const KTensor *lse, int heads, int causal, KTensor *ws);

// ---- loss ----
// Symmetric InfoNCE on the local batch: logits = exp(ls) * img @ txt^T (B x B), loss =
// (CE(rows) + CE(columns)) / 2 written to loss (1); dimg, dtxt (B, E) and dls (1) += gradients.
size_t kern_clip_loss_ws_bytes(KernCtx *ctx, KDtype dt, int B);
int kern_clip_loss(KernCtx *ctx, KTensor *loss, KTensor *dimg, KTensor *dtxt, KTensor *dls, const KTensor *img,
		   const KTensor *txt, const KTensor *ls, KTensor *ws);

// ---- optimizer steps on one parameter tensor (p, g, m, v all the same shape) ----
typedef struct {
	double lr, beta1, beta2, eps, weight_decay;
	int64_t step; // 1 on the first update (bias correction)
} KOptHyper;
// torch.optim.AdamW: p *= 1 - lr*wd; p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps)
int kern_adamw_step(KernCtx *ctx, KTensor *p, const KTensor *g, KTensor *m, KTensor *v, const KOptHyper *h);
// LAMB (You et al.): r = mhat/(sqrt(vhat)+eps) + wd*p; p -= lr * (||p||/||r||) * r (ratio 1 if a norm is 0)
int kern_lamb_step(KernCtx *ctx, KTensor *p, const KTensor *g, KTensor *m, KTensor *v, const KOptHyper *h);

#endif
