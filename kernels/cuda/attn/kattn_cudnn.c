// cuDNN's fused flash attention (SDPA forward and backward) for kattn.c: plans of the graphs in
// kattn_cudnn_graph.c, built once per shape and cached per stream, and their execution.
#include "kattn_cudnn.h"       // defines: KcAttn, kc_attn_*
#include "kattn_cudnn_graph.h" // defines: Graph, U_*, kcg_sdpa, kcg_plan, kcg_free

#include <cudnn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Execution binds the variant pack: qkv at offsets 0, D, 2D for Q, K, V; out, lse (cuDNN's Stats
// is the contract's lse as it is); dqkv likewise for dQ, dK, dV; the backward's row sums and f32
// dQ accumulator at the front of the workspace, cuDNN's own after them.
#define KC_CACHE 32

typedef struct {
	int used, bwd, B, T, H, hd, causal;
	int status;                    // 0 built, -ENOTSUP refused
	char why[256];                 // the refusal
	Graph g;                       // kept alive with the plan
	cudnnBackendDescriptor_t plan; // NULL when refused
	size_t plan_ws, fe_ws;         // cuDNN's workspace, ours (Dsum, dQacc) in front of it
	int pad;                       // the padding-mask workaround of cuDNN <= 9.15.0 backward
	int32_t *seqlen;               // its sequence lengths (2·B, device)
} KcPlan;

struct KcAttn {
	cudnnHandle_t h;
	int ver; // cudnnGetVersion()
	KcPlan plans[KC_CACHE];
	int next; // the entry replaced next when the cache is full
};

static char version_str[32];

const char *kc_attn_version(void)
{
	size_t v = cudnnGetVersion();
	if (v < 90000)
		return NULL;
	snprintf(version_str, sizeof version_str, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
	return version_str;
}

// ---- the handle, the plan cache, execution ----
int kc_attn_create(KcAttn **out, KErr *e)
{
	KcAttn *c = calloc(1, sizeof *c);
	if (!c)
		return kerr_set(e, -ENOMEM, "kc_attn_create: out of memory");
	c->ver = (int)cudnnGetVersion();
	int rc = cudnn_try(e, cudnnCreate(&c->h));
	if (rc < 0) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void kc_attn_destroy(KcAttn *c)
{
	if (!c)
		return;
	for (int i = 0; i < KC_CACHE; i++) {
		kcg_free(&c->plans[i].g);
		cudaFree(c->plans[i].seqlen);
	}
	cudnnDestroy(c->h);
	free(c);
}

static size_t up256(size_t n)
{
	return (n + 255) & ~(size_t)255;
}

static KcPlan *find(KcAttn *c, int bwd, int B, int T, int H, int hd, int causal)
{
	for (int i = 0; i < KC_CACHE; i++) {
		KcPlan *p = &c->plans[i];
		if (p->used && p->bwd == bwd && p->B == B && p->T == T && p->H == H && p->hd == hd &&
		    p->causal == causal)
			return p;
	}
	return NULL;
}

static int build(KcAttn *c, KcPlan *p, KErr *e)
{
	Graph *g = &p->g;
	memset(g, 0, sizeof *g);
	// shapes and versions cudnn-frontend refuses before cuDNN sees them (known wrong results)
	const char *rule = c->ver == 91000 || c->ver == 91001 ? "SDPA bf16 has known bugs in cuDNN 9.10.0/9.10.1"
			   : p->bwd && p->T == 1              ? "cuDNN's SDPA backward does not take s_q = s_kv = 1"
							      : NULL;
	if (rule) {
		p->status = -ENOTSUP;
		snprintf(p->why, sizeof p->why, "%s", rule);
		return -ENOTSUP;
	}
	// cuDNN <= 9.15.0 backward needs a padding mask when T is not a multiple of 128 (the frontend's workaround)
	p->pad = p->bwd && c->ver <= 91500 && p->T % 128;
	p->plan = kcg_sdpa(g, p->bwd, p->B, p->T, p->H, p->hd, p->causal, p->pad, c->ver) ? NULL : kcg_plan(g, c->h);
	if (!p->plan) {
		p->status = g->rc == -ENOMEM || g->rc == -EIO ? g->rc : -ENOTSUP;
		snprintf(p->why, sizeof p->why, "%s", g->why);
		kcg_free(g);
		return p->status == -ENOTSUP ? -ENOTSUP : kerr_set(e, p->status, "cuDNN attention graph: %s", p->why);
	}
	int64_t ws = 0;
	cudnnStatus_t s = cudnnBackendGetAttribute(p->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
						   1, NULL, &ws);
	if (s != CUDNN_STATUS_SUCCESS)
		return cudnn_try(e, s);
	p->plan_ws = (size_t)ws;
	const size_t rows = (size_t)p->B * p->H * p->T;
	p->fe_ws = p->bwd ? up256(rows * 4) + (p->bwd == KC_BWD ? up256(rows * p->hd * 4) : 0) : 0;
	if (p->pad) { // every sequence is whole: T queries and T keys
		int32_t *host = malloc(2 * (size_t)p->B * sizeof *host);
		if (!host)
			return kerr_set(e, -ENOMEM, "cuDNN attention: out of memory");
		for (int i = 0; i < 2 * p->B; i++)
			host[i] = p->T;
		int rc = cuda_try(e, cudaMalloc((void **)&p->seqlen, 2 * (size_t)p->B * sizeof *host));
		rc = rc ? rc
			: cuda_try(e, cudaMemcpy(p->seqlen, host, 2 * (size_t)p->B * sizeof *host,
						 cudaMemcpyHostToDevice));
		free(host);
		if (rc < 0)
			return rc;
	}
	p->status = 0;
	return 0;
}

int kc_attn_plan(KcAttn *c, int bwd, int B, int T, int H, int hd, int causal, size_t *ws, const char **why, KErr *e)
{
	KcPlan *p = find(c, bwd, B, T, H, hd, causal != 0);
	if (!p) {
		p = &c->plans[c->next];
		c->next = (c->next + 1) % KC_CACHE;
		kcg_free(&p->g);
		cudaFree(p->seqlen);
		memset(p, 0, sizeof *p);
		*p = (KcPlan){.used = 1, .bwd = bwd, .B = B, .T = T, .H = H, .hd = hd, .causal = causal != 0};
		int rc = build(c, p, e);
		if (rc < 0 && rc != -ENOTSUP) {
			kcg_free(&p->g);
			p->used = 0;
			return rc;
		}
	}
	if (why)
		*why = p->why;
	if (ws)
		*ws = p->status ? 0 : up256(p->fe_ws) + p->plan_ws;
	return p->status;
}

static int execute(KcAttn *c, cudaStream_t s, KcPlan *p, const int64_t *uids, void *const *ptrs, int n, void *ws,
		   size_t ws_bytes, KErr *e)
{
	size_t need = up256(p->fe_ws) + p->plan_ws;
	if (ws_bytes < need || (need && !ws))
		return kerr_set(e, -ENOSPC, "cuDNN attention: workspace %zu bytes, %zu needed", ws_bytes, need);
	int rc = cudnn_try(e, cudnnSetStream(c->h, s));
	cudnnBackendDescriptor_t vp = NULL;
	rc = rc ? rc : cudnn_try(e, cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp));
	void *plan_ws = (char *)ws + up256(p->fe_ws);
	rc = rc ? rc
		: cudnn_try(e, cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n,
							uids));
	rc = rc ? rc
		: cudnn_try(e, cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
							n, ptrs));
	rc = rc ? rc
		: cudnn_try(e, cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
							&plan_ws));
	rc = rc ? rc : cudnn_try(e, cudnnBackendFinalize(vp));
	rc = rc ? rc : cudnn_try(e, cudnnBackendExecute(c->h, p->plan, vp));
	if (vp)
		cudnnBackendDestroyDescriptor(vp);
	return rc;
}

static int planned(KcAttn *c, int bwd, int B, int T, int H, int hd, int causal, KcPlan **out, KErr *e)
{
	const char *why;
	int rc = kc_attn_plan(c, bwd, B, T, H, hd, causal, NULL, &why, e);
	if (rc == -ENOTSUP)
		return kerr_set(e, rc, "cuDNN refuses attention %s B %d T %d H %d hd %d%s: %s",
				bwd ? "backward" : "forward", B, T, H, hd, causal ? " causal" : "", why);
	*out = find(c, bwd, B, T, H, hd, causal != 0);
	return rc;
}

int kc_attn_fwd(KcAttn *c, cudaStream_t s, void *out, float *lse, const void *qkv, int B, int T, int H, int hd,
		int causal, void *ws, size_t ws_bytes, KErr *e)
{
	KcPlan *p;
	int rc = planned(c, 0, B, T, H, hd, causal, &p, e);
	if (rc < 0)
		return rc;
	const size_t D = (size_t)H * hd;
	float scale = 1.0f / sqrtf((float)hd), neginf = c->ver < 91000 ? -3.402823466e38f : -INFINITY;
	int64_t uids[] = {U_Q, U_K, U_V, U_O, U_STATS, U_SCALE, U_NEGINF};
	void *ptrs[] = {(void *)qkv, (char *)qkv + 2 * D, (char *)qkv + 4 * D, out, lse, &scale, &neginf};
	return execute(c, s, p, uids, ptrs, causal ? 7 : 6, ws, ws_bytes, e);
}

int kc_attn_bwd(KcAttn *c, int bwd, cudaStream_t s, void *dqkv, const void *dout, const void *qkv, const void *out,
		const float *lse, int B, int T, int H, int hd, int causal, void *ws, size_t ws_bytes, KErr *e)
{
	KcPlan *p;
	if (bwd != KC_BWD && bwd != KC_BWD_DET)
		return kerr_set(e, -EINVAL, "kc_attn_bwd: graph %d is not a backward", bwd);
	int rc = planned(c, bwd, B, T, H, hd, causal, &p, e);
	if (rc < 0)
		return rc;
	const size_t D = (size_t)H * hd, dsum_bytes = up256((size_t)B * H * T * 4);
	float scale = 1.0f / sqrtf((float)hd), neginf = c->ver < 91000 ? -3.402823466e38f : -INFINITY, one = 1.0f;
	char *fe = ws;
	// cuDNN before 9.6 expects the f32 dQ accumulator zeroed (the frontend's memset); later ones zero it
	if (bwd == KC_BWD && c->ver < 90600 && fe &&
	    (rc = cuda_try(e, cudaMemsetAsync(fe + dsum_bytes, 0, (size_t)B * H * T * hd * 4, s))))
		return rc;
	int64_t uids[16] = {U_Q, U_K, U_V, U_O, U_DO, U_STATS, U_DQ, U_DK, U_DV, U_DSUM, U_DQACC, U_SCALE, U_ONE};
	void *ptrs[16] = {
		(void *)qkv, (char *)qkv + 2 * D,  (char *)qkv + 4 * D,  (void *)out, (void *)dout,    (void *)lse,
		dqkv,        (char *)dqkv + 2 * D, (char *)dqkv + 4 * D, fe,          fe + dsum_bytes, &scale,
		&one};
	int n = 13;
	if (bwd == KC_BWD_DET) { // no accumulator: U_DQACC's slot (10) goes
		memmove(uids + 10, uids + 11, 2 * sizeof uids[0]);
		memmove(ptrs + 10, ptrs + 11, 2 * sizeof ptrs[0]);
		n = 12;
	}
	if (causal || p->pad)
		uids[n] = U_NEGINF, ptrs[n++] = &neginf;
	if (p->pad) {
		uids[n] = U_SEQQ, ptrs[n++] = p->seqlen;
		uids[n] = U_SEQKV, ptrs[n++] = p->seqlen + B;
	}
	return execute(c, s, p, uids, ptrs, n, ws, ws_bytes, e);
}

void kc_attn_decisions(const KcAttn *c, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (int i = 0; i < KC_CACHE && n < len; i++) {
		const KcPlan *p = &c->plans[i];
		if (!p->used)
			continue;
		int w = snprintf(buf + n, len - n, "%sT %d H %d hd %d %s %s: %s", n ? "; " : "", p->T, p->H, p->hd,
				 p->causal ? "causal" : "full",
				 p->bwd == KC_BWD_DET ? "bwd deterministic"
				 : p->bwd             ? "bwd"
						      : "fwd",
				 p->status ? "cuDNN refuses it" : "cuDNN");
		n += w > 0 ? (size_t)w : 0;
	}
}
