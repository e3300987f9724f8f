// cuDNN's SDPA operation graphs for kattn_cudnn.c (private to attn/): descriptors built through
// the backend API with a sticky first error, the forward and backward graphs, their plan.
#ifndef KATTN_CUDNN_GRAPH_H
#define KATTN_CUDNN_GRAPH_H
// defines: Graph, U_*, KC_MAX_DESC, KC_MAX_OPS, kcg_sdpa, kcg_plan, kcg_free, kc_attn_graph_check

#include <cudnn.h>
#include <stddef.h>
#include <stdint.h>

#include "kattn_cudnn.h" // defines: KC_FWD, KC_BWD, KC_BWD_DET

enum { // tensor ids in the variant pack
	U_Q = 1,
	U_K,
	U_V,
	U_O,
	U_STATS,
	U_SCALE,
	U_NEGINF,
	U_DO,
	U_DQ,
	U_DK,
	U_DV,
	U_DSUM,
	U_DQACC,
	U_ONE,
	U_SEQQ,
	U_SEQKV,
	U_VIRTUAL = 100,
};
#define KC_MAX_DESC 192
#define KC_MAX_OPS 48

// a graph under construction: every descriptor it creates (destroyed with it), its operations,
// and the first failure (later calls do nothing)
typedef struct {
	cudnnBackendDescriptor_t d[KC_MAX_DESC], ops[KC_MAX_OPS];
	int nd, nops, rc;
	int64_t uid;
	char why[256];
} Graph;

// the operations of one SDPA graph (bwd: KC_FWD, KC_BWD, KC_BWD_DET of kattn_cudnn.h) into g; pad: the padding-mask workaround of cuDNN
// <= 9.15 backward; ver: the cuDNN version it is for. Returns g->rc (0, -ENOTSUP, -ENOMEM, -EIO).
int kcg_sdpa(Graph *g, int bwd, int B, int T, int H, int hd, int causal, int pad, int ver);
// the operation graph, heuristics (mode A) and the first engine configuration that finalizes; NULL
// with g->rc and g->why set when none does
cudnnBackendDescriptor_t kcg_plan(Graph *g, cudnnHandle_t h);
// destroys every descriptor of g
void kcg_free(Graph *g);
// the graph of a plan without a device (for tests): every operation and the operation graph
// finalized. 0, or -errno with the failing step in why.
int kc_attn_graph_check(int bwd, int B, int T, int H, int hd, int causal, int pad, int ver, int *nops, char *why,
			size_t len);

#endif
