// What a backend provides to kern_ops.c: memory functions and one table of raw ops per
// compute dtype. kern_ops.c checks shapes once for all backends and then calls these.
#ifndef KERN_BACKEND_H
#define KERN_BACKEND_H
// defines: KRawOps, KBackendImpl, struct KernCtx, kcpu_backend

#include "kern_ops.h" // defines: KernCtx, KOptHyper

#include <stddef.h>
#include <stdint.h>

// Raw ops take backend pointers of the table's dtype and plain dimensions (already checked).
typedef struct KRawOps {
	void (*linear_fwd)(KernCtx *c, void *out, const void *in, const void *w, const void *b, int64_t N, int IC, int OC);
	void (*linear_bwd)(KernCtx *c, void *din, void *dw, void *db, const void *dout, const void *in, const void *w,
			   int64_t N, int IC, int OC);
	void (*proj_fwd)(KernCtx *c, void *out, const void *in, const void *p, int64_t N, int IC, int OC);
	void (*proj_bwd)(KernCtx *c, void *din, void *dp, const void *dout, const void *in, const void *p, int64_t N,
			 int IC, int OC);
	void (*layernorm_fwd)(KernCtx *c, void *out, void *mean, void *rstd, const void *in, const void *w,
			      const void *b, int64_t N, int C);
	void (*layernorm_bwd)(KernCtx *c, void *din, void *dw, void *db, const void *dout, const void *in,
			      const void *w, const void *mean, const void *rstd, int64_t N, int C);
	void (*gelu_fwd)(KernCtx *c, void *out, const void *in, int64_t n);
	void (*gelu_bwd)(KernCtx *c, void *din, const void *dout, const void *in, int64_t n);
	void (*add_fwd)(KernCtx *c, void *out, const void *a, const void *b, int64_t n);
	void (*acc)(KernCtx *c, void *dst, const void *src, int64_t n); // dst += src
	void (*patchify)(KernCtx *c, void *patches, void *img, int B, int T, int H, int W, int C, int p,
			 int backward); // backward: img += scatter(patches)
	void (*vis_embed_fwd)(KernCtx *c, void *out, const void *x, const void *cls, const void *pos,
			      const void *tpos, int B, int T, int P, int D);
	void (*vis_embed_bwd)(KernCtx *c, void *dx, void *dcls, void *dpos, void *dtpos, const void *dout, int B,
			      int T, int P, int D);
	size_t (*attention_ws_bytes)(KernCtx *c, int B, int T, int H, int hd);
	void (*attention_fwd)(KernCtx *c, void *out, void *lse, const void *qkv, int B, int T, int H, int hd,
			      int causal, void *ws);
	void (*attention_bwd)(KernCtx *c, void *dqkv, const void *dout, const void *qkv, const void *out,
			      const void *lse, int B, int T, int H, int hd, int causal, void *ws);
	void (*tok_embed_fwd)(KernCtx *c, void *out, const int32_t *ids, const void *wte, const void *pos, int B,
			      int L, int D);
	void (*tok_embed_bwd)(KernCtx *c, void *dwte, void *dpos, const void *dout, const int32_t *ids, int B, int L,
			      int D, int V);
	void (*pool_fwd)(KernCtx *c, void *out, const void *x, const int32_t *pos, int B, int L, int D);
	void (*pool_bwd)(KernCtx *c, void *dx, const void *dout, const int32_t *pos, int B, int L, int D);
	void (*l2norm_fwd)(KernCtx *c, void *out, void *norm, const void *in, int64_t N, int C);
	void (*l2norm_bwd)(KernCtx *c, void *din, const void *dout, const void *out, const void *norm, int64_t N,
			   int C);
	size_t (*clip_loss_ws_bytes)(KernCtx *c, int B);
	void (*clip_loss)(KernCtx *c, void *loss, void *dimg, void *dtxt, void *dls, const void *img, const void *txt,
			  const void *ls, int B, int E, void *ws);
	void (*adamw)(KernCtx *c, void *p, const void *g, void *m, void *v, int64_t n, const KOptHyper *h);
	void (*lamb)(KernCtx *c, void *p, const void *g, void *m, void *v, int64_t n, const KOptHyper *h);
	void (*scale)(KernCtx *c, void *x, double s, int64_t n);
	double (*sumsq)(KernCtx *c, const void *x, int64_t n);
} KRawOps;

typedef struct KBackendImpl {
	const char *name;
	const KRawOps *ops[KDT_COUNT]; // NULL: the backend does not compute in that dtype
	int (*alloc)(KernCtx *c, void **p, size_t bytes); // zero-filled
	void (*free)(KernCtx *c, void *p);
	int (*upload)(KernCtx *c, void *dst, const void *host, size_t n);
	int (*download)(KernCtx *c, void *host, const void *src, size_t n);
	int (*memzero)(KernCtx *c, void *p, size_t n);
	int (*memcopy)(KernCtx *c, void *dst, const void *src, size_t n);
	int (*convert)(KernCtx *c, void *dst, KDtype ddt, const void *src, KDtype sdt, int64_t n);
	int (*check_ids)(KernCtx *c, const int32_t *ids, int64_t n, int V); // -ERANGE when any id is outside [0, V)
	void (*argmax_rows)(KernCtx *c, int32_t *pos, const int32_t *ids, int B, int L);
	int (*sync)(KernCtx *c);
	void (*destroy)(KernCtx *c);
} KBackendImpl;

struct KernCtx {
	const KBackendImpl *be;
	int nthreads;
	void *priv; // backend state (CUDA: stream, cuBLAS handle)
};

extern const KBackendImpl kcpu_backend;

#endif
