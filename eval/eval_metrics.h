// Retrieval and classification metrics on similarity matrices (tools/eval and the trainer): ranks, R@K,
// median rank, EPIC-KITCHENS-100 style mAP and nDCG over a relevance matrix, top-k accuracy.
#ifndef EVAL_EVAL_METRICS_H
#define EVAL_EVAL_METRICS_H
// defines: EvalRetrieval, EvalRel, eval_similarity, eval_ranks, eval_ranks_grouped, eval_ranks_distinct,
//          eval_retrieval, eval_chance,
//          eval_chance_grouped, eval_rel_transpose,
//          eval_rel_free, eval_map, eval_ndcg, eval_topk_accuracy

#include <stdint.h> // defines: int64_t

typedef struct {
	int64_t n;          // queries
	double r1, r5, r10; // fraction of queries whose match ranks within 1, 5, 10
	double median_rank; // 1-based; the mean of the two middle ranks for even n
	double mean_rank;
} EvalRetrieval;

// Sparse relevance matrix (rows = queries, cols = candidates), CSR, values in (0, 1].
typedef struct {
	int64_t rows, cols;
	int64_t *row_ptr; // (rows + 1)
	int64_t *col;     // (nnz) ascending within a row
	float *val;       // (nnz)
} EvalRel;

// sim (na, nb) = a (na, d) . b (nb, d)^T, row-major. 0 or -EINVAL.
int eval_similarity(const float *a, int64_t na, const float *b, int64_t nb, int d, float *sim);

// Rank of each query's match: query i of sim (nq, nc) (transposed: of sim^T, i.e. column i of a
// (nc, nq) matrix) has its match at candidate gt[i] (gt NULL: i). rank[i] = 1 + candidates
// scored higher + candidates scored equal with a lower index (a stable descending sort).
// 0 or -EINVAL (a gt out of range).
int eval_ranks(const float *sim, int64_t nq, int64_t nc, int transposed, const int64_t *gt, int64_t *rank);
// The same when every candidate of the query's group is a match (e.g. samples with the same
// caption): rank[i] = place of the first candidate j with cgroup[j] == qgroup[i] in the stable
// descending ranking. -EINVAL when a query has no candidate of its group.
int eval_ranks_grouped(const float *sim, int64_t nq, int64_t nc, int transposed, const int64_t *qgroup,
		       const int64_t *cgroup, int64_t *rank);
// The same over the groups rather than their members, for candidates that are copies of one
// another (a caption that several clips share, embedded once per clip): each of the ngroups groups
// (ids 0..ngroups-1) places where its best candidate does (highest score, lowest index), and
// rank[i] = 1 + the groups placed before the query's. With singleton groups it is eval_ranks.
// -EINVAL for a group id out of range or a query whose group has no candidate; -ENOMEM.
int eval_ranks_distinct(const float *sim, int64_t nq, int64_t nc, int transposed, const int64_t *qgroup,
			const int64_t *cgroup, int64_t ngroups, int64_t *rank);
// R@1/5/10, median and mean rank of n ranks; -EINVAL when n is 0
int eval_retrieval(const int64_t *rank, int64_t n, EvalRetrieval *out);
// what a random ranking of n candidates scores in expectation: R@K = min(K, n)/n, ranks (n+1)/2
void eval_chance(int64_t n, EvalRetrieval *out);
// the same when query i has matches[i] matching candidates among n: R@K = mean over queries of
// 1 - C(n - g, K) / C(n, K); mean rank = mean of the expected first place (n + 1) / (g + 1);
// median rank = the median of those expected places
void eval_chance_grouped(int64_t n, const int64_t *matches, int64_t nq, EvalRetrieval *out);

// out = rel^T (allocated; free with eval_rel_free). 0 or -ENOMEM.
int eval_rel_transpose(const EvalRel *rel, EvalRel *out);
void eval_rel_free(EvalRel *rel);

// EPIC-KITCHENS-100 multi-instance retrieval mAP of sim (nq, nc) (transposed as in eval_ranks)
// against rel (nq, nc): per query, AP = mean over the candidates with relevance 1 of the precision
// at their place in the ranking (stable descending sort). Queries without a relevance-1 candidate
// are left out; *used gets how many counted. -EINVAL when shapes differ or none counts.
int eval_map(const float *sim, int64_t nq, int64_t nc, int transposed, const EvalRel *rel, double *map, int64_t *used);
// EPIC-KITCHENS-100 nDCG: per query with k candidates of relevance > 0, DCG of the first k ranked
// candidates (sum rel / log2(place + 1)) over the ideal DCG of the k most relevant; mean over
// queries with k > 0 (*used). -EINVAL when shapes differ or none counts.
int eval_ndcg(const float *sim, int64_t nq, int64_t nc, int transposed, const EvalRel *rel, double *ndcg,
	      int64_t *used);

// Zero-shot classification: scores (n, classes), label[i] in [0, classes) or -1 (not labelled).
// *acc gets the fraction of labelled rows whose label is among the k highest scores (ties to the
// lower class index), *used the labelled rows. -EINVAL when k < 1, a label is out of range or no
// row is labelled.
int eval_topk_accuracy(const float *scores, int64_t n, int classes, const int *label, int k, double *acc,
		       int64_t *used);

#endif
