// Metrics of tools/eval. Every ranking is a stable descending sort of the scores (ties go to the
// lower candidate index), so results do not depend on the sort routine or the thread count.
#include "eval.h" // defines: EvalRetrieval, EvalRel, eval_*

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <math.h>   // defines: log2
#include <stdlib.h> // defines: calloc, malloc, free, qsort
#include <string.h> // defines: memset

#ifdef HAVE_BLAS
#include <cblas.h> // defines: cblas_sgemm
#endif

#ifdef _OPENMP
#define EOMP(x) _Pragma(x)
#else
#define EOMP(x)
#endif

int eval_similarity(const float *a, int64_t na, const float *b, int64_t nb, int d, float *sim)
{
	if (na < 0 || nb < 0 || d <= 0)
		return -EINVAL;
#ifdef HAVE_BLAS
	if (na && nb) {
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)na, (int)nb, d, 1.0f, a, d, b, d, 0.0f, sim,
			    (int)nb);
		return 0;
	}
#endif
	EOMP("omp parallel for schedule(static)")
	for (int64_t i = 0; i < na; i++)
		for (int64_t j = 0; j < nb; j++) {
			double s = 0;
			for (int k = 0; k < d; k++)
				s += (double)a[i * d + k] * b[j * d + k];
			sim[i * nb + j] = (float)s;
		}
	return 0;
}

// score of candidate j for query i
static inline float at(const float *sim, int64_t nq, int64_t nc, int transposed, int64_t i, int64_t j)
{
	return transposed ? sim[j * nq + i] : sim[i * nc + j];
}

int eval_ranks(const float *sim, int64_t nq, int64_t nc, int transposed, const int64_t *gt, int64_t *rank)
{
	if (nq < 0 || nc <= 0)
		return -EINVAL;
	for (int64_t i = 0; i < nq; i++)
		if ((gt ? gt[i] : i) < 0 || (gt ? gt[i] : i) >= nc)
			return -EINVAL;
	EOMP("omp parallel for schedule(static)")
	for (int64_t i = 0; i < nq; i++) {
		int64_t g = gt ? gt[i] : i, r = 1;
		float s = at(sim, nq, nc, transposed, i, g);
		for (int64_t j = 0; j < nc; j++) {
			float x = at(sim, nq, nc, transposed, i, j);
			r += x > s || (x == s && j < g);
		}
		rank[i] = r;
	}
	return 0;
}

int eval_ranks_grouped(const float *sim, int64_t nq, int64_t nc, int transposed, const int64_t *qgroup,
		       const int64_t *cgroup, int64_t *rank)
{
	if (nq < 0 || nc <= 0)
		return -EINVAL;
	int bad = 0;
	EOMP("omp parallel for schedule(static) reduction(| : bad)")
	for (int64_t i = 0; i < nq; i++) {
		int64_t g = -1; // the group's best candidate: highest score, lowest index
		float s = 0;
		for (int64_t j = 0; j < nc; j++) {
			float x = at(sim, nq, nc, transposed, i, j);
			if (cgroup[j] == qgroup[i] && (g < 0 || x > s)) {
				g = j;
				s = x;
			}
		}
		if (g < 0) {
			bad = 1;
			continue;
		}
		int64_t r = 1;
		for (int64_t j = 0; j < nc; j++) {
			float x = at(sim, nq, nc, transposed, i, j);
			r += x > s || (x == s && j < g);
		}
		rank[i] = r;
	}
	return bad ? -EINVAL : 0;
}

// the query's rank among the groups' best candidates (best_j < 0: a group without one)
static int64_t rank_of_group(const float *best_s, const int64_t *best_j, int64_t ngroups, int64_t g)
{
	int64_t r = 1;
	for (int64_t h = 0; h < ngroups; h++)
		r += h != g && best_j[h] >= 0 &&
		     (best_s[h] > best_s[g] || (best_s[h] == best_s[g] && best_j[h] < best_j[g]));
	return r;
}

int eval_ranks_distinct(const float *sim, int64_t nq, int64_t nc, int transposed, const int64_t *qgroup,
			const int64_t *cgroup, int64_t ngroups, int64_t *rank)
{
	if (nq < 0 || nc <= 0 || ngroups <= 0)
		return -EINVAL;
	for (int64_t j = 0; j < nc; j++)
		if (cgroup[j] < 0 || cgroup[j] >= ngroups)
			return -EINVAL;
	int bad = 0;
	// each thread's table of the groups' best candidates, as rel_metric keeps its buffers
	EOMP("omp parallel reduction(| : bad)")
	{
		float *best_s = malloc(sizeof(float) * (size_t)ngroups);
		int64_t *best_j = malloc(sizeof(int64_t) * (size_t)ngroups);
		if (!best_s || !best_j)
			bad |= 2;
		// every thread reaches the worksharing loop, even one without buffers
		EOMP("omp for schedule(static)")
		for (int64_t i = 0; i < nq; i++) {
			const int64_t g = qgroup[i];
			if (!best_s || !best_j || g < 0 || g >= ngroups) {
				bad |= best_s && best_j ? 1 : 2;
				continue;
			}
			for (int64_t h = 0; h < ngroups; h++)
				best_j[h] = -1;
			for (int64_t j = 0; j < nc; j++) {
				float x = at(sim, nq, nc, transposed, i, j);
				int64_t h = cgroup[j];
				if (best_j[h] < 0 || x > best_s[h])
					best_s[h] = x, best_j[h] = j;
			}
			if (best_j[g] < 0)
				bad |= 1;
			else
				rank[i] = rank_of_group(best_s, best_j, ngroups, g);
		}
		free(best_s);
		free(best_j);
	}
	return bad & 2 ? -ENOMEM : bad ? -EINVAL : 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int eval_retrieval(const int64_t *rank, int64_t n, EvalRetrieval *out)
{
	if (n <= 0)
		return -EINVAL;
	int64_t *s = malloc(sizeof *s * (size_t)n);
	if (!s)
		return -ENOMEM;
	memset(out, 0, sizeof *out);
	out->n = n;
	double sum = 0;
	for (int64_t i = 0; i < n; i++) {
		s[i] = rank[i];
		out->r1 += rank[i] <= 1;
		out->r5 += rank[i] <= 5;
		out->r10 += rank[i] <= 10;
		sum += (double)rank[i];
	}
	qsort(s, (size_t)n, sizeof *s, cmp_i64);
	out->median_rank = n % 2 ? (double)s[n / 2] : 0.5 * (double)(s[n / 2 - 1] + s[n / 2]);
	out->mean_rank = sum / (double)n;
	out->r1 /= (double)n;
	out->r5 /= (double)n;
	out->r10 /= (double)n;
	free(s);
	return 0;
}

void eval_chance(int64_t n, EvalRetrieval *out)
{
	memset(out, 0, sizeof *out);
	out->n = n;
	if (n <= 0)
		return;
	out->r1 = 1.0 / (double)n;
	out->r5 = (double)(n < 5 ? n : 5) / (double)n;
	out->r10 = (double)(n < 10 ? n : 10) / (double)n;
	out->median_rank = out->mean_rank = (double)(n + 1) / 2;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void eval_chance_grouped(int64_t n, const int64_t *matches, int64_t nq, EvalRetrieval *out)
{
	memset(out, 0, sizeof *out);
	out->n = nq;
	double *place = malloc(sizeof *place * (size_t)(nq ? nq : 1));
	if (n <= 0 || nq <= 0 || !place) {
		free(place);
		return;
	}
	const int ks[3] = {1, 5, 10};
	double *rk[3] = {&out->r1, &out->r5, &out->r10};
	for (int64_t i = 0; i < nq; i++) {
		const int64_t g = matches[i];
		for (int k = 0; k < 3; k++) {
			double miss = 1; // none of the g matches in the first K of a random order
			for (int t = 0; t < ks[k] && miss > 0; t++)
				miss *= n - g - t > 0 ? (double)(n - g - t) / (double)(n - t) : 0;
			*rk[k] += 1 - miss;
		}
		place[i] = (double)(n + 1) / (double)(g + 1);
		out->mean_rank += place[i];
	}
	for (int k = 0; k < 3; k++)
		*rk[k] /= (double)nq;
	out->mean_rank /= (double)nq;
	qsort(place, (size_t)nq, sizeof *place, cmp_double);
	out->median_rank = nq % 2 ? place[nq / 2] : 0.5 * (place[nq / 2 - 1] + place[nq / 2]);
	free(place);
}

int eval_rel_transpose(const EvalRel *rel, EvalRel *out)
{
	int64_t nnz = rel->row_ptr[rel->rows];
	memset(out, 0, sizeof *out);
	out->rows = rel->cols;
	out->cols = rel->rows;
	out->row_ptr = calloc((size_t)out->rows + 1, sizeof *out->row_ptr);
	out->col = malloc(sizeof *out->col * (size_t)(nnz ? nnz : 1));
	out->val = malloc(sizeof *out->val * (size_t)(nnz ? nnz : 1));
	int64_t *fill = calloc((size_t)out->rows + 1, sizeof *fill);
	if (!out->row_ptr || !out->col || !out->val || !fill) {
		free(fill);
		eval_rel_free(out);
		return -ENOMEM;
	}
	for (int64_t k = 0; k < nnz; k++)
		out->row_ptr[rel->col[k] + 1]++;
	for (int64_t r = 0; r < out->rows; r++)
		out->row_ptr[r + 1] += out->row_ptr[r];
	// rows of rel in order: each transposed row's columns come out ascending
	for (int64_t i = 0; i < rel->rows; i++)
		for (int64_t k = rel->row_ptr[i]; k < rel->row_ptr[i + 1]; k++) {
			int64_t c = rel->col[k], at_ = out->row_ptr[c] + fill[c]++;
			out->col[at_] = i;
			out->val[at_] = rel->val[k];
		}
	free(fill);
	return 0;
}

void eval_rel_free(EvalRel *rel)
{
	free(rel->row_ptr);
	free(rel->col);
	free(rel->val);
	memset(rel, 0, sizeof *rel);
}

// A query's relevant candidates in ranking order (score descending, ties by ascending index).
// Both metrics need only the places of these candidates: every other candidate scores 0, so
// one pass over the row with a binary search among them replaces sorting the whole row.
typedef struct {
	float s, rel;
	int64_t j;
} RelItem;

static int by_rank(const void *a, const void *b)
{
	const RelItem *x = a, *y = b;
	if (x->s != y->s)
		return x->s > y->s ? -1 : 1;
	return (x->j > y->j) - (x->j < y->j);
}

static int by_rel_desc(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x < y) - (x > y);
}

typedef enum { METRIC_MAP, METRIC_NDCG } Metric;

typedef struct {
	float *row;        // (nc) the query's scores
	RelItem *it;       // (max row nnz)
	int64_t *ahead;    // (max row nnz + 1)
	float *sorted_rel; // (max row nnz)
} QueryBufs;

// per query: the metric's value, or NAN when the query has no relevant candidate
static double query_metric(Metric what, int64_t nc, const EvalRel *rel, int64_t i, QueryBufs *q)
{
	const int64_t lo = rel->row_ptr[i], m = rel->row_ptr[i + 1] - lo;
	int64_t k = 0;
	for (int64_t p = 0; p < m; p++) {
		const float v = rel->val[lo + p];
		k += what == METRIC_MAP ? v >= 1.0f : v > 0.0f;
		q->it[p] = (RelItem){.s = q->row[rel->col[lo + p]], .rel = v, .j = rel->col[lo + p]};
	}
	if (!k)
		return NAN;
	qsort(q->it, (size_t)m, sizeof *q->it, by_rank);
	// ahead[p]: candidates whose first relevant candidate ranked after them is it[p]
	memset(q->ahead, 0, sizeof *q->ahead * (size_t)(m + 1));
	for (int64_t j = 0; j < nc; j++) {
		const float s = q->row[j];
		int64_t a = 0, b = m; // first p that j ranks before
		while (a < b) {
			int64_t mid = (a + b) / 2;
			if (s > q->it[mid].s || (s == q->it[mid].s && j < q->it[mid].j))
				b = mid;
			else
				a = mid + 1;
		}
		q->ahead[a]++;
	}
	double sum = 0, ideal = 0;
	int64_t before = 0, found = 0;
	for (int64_t p = 0; p < m; p++) {
		before += q->ahead[p];
		const double place = (double)before + 1; // 1-based place of it[p] in the ranking
		if (what == METRIC_MAP && q->it[p].rel >= 1.0f)
			sum += (double)++found / place;
		else if (what == METRIC_NDCG && place <= (double)k) // only the first k places count
			sum += q->it[p].rel / log2(place + 1);
	}
	if (what == METRIC_MAP)
		return sum / (double)k;
	for (int64_t p = 0; p < m; p++)
		q->sorted_rel[p] = rel->val[lo + p];
	qsort(q->sorted_rel, (size_t)m, sizeof *q->sorted_rel, by_rel_desc);
	for (int64_t p = 0; p < k; p++)
		ideal += q->sorted_rel[p] / log2((double)p + 2);
	return sum / ideal;
}

static int rel_metric(Metric what, const float *sim, int64_t nq, int64_t nc, int transposed, const EvalRel *rel,
		      double *out, int64_t *used)
{
	if (!rel || rel->rows != nq || rel->cols != nc || nq <= 0 || nc <= 0)
		return -EINVAL;
	int64_t most = 0;
	for (int64_t i = 0; i < nq; i++)
		most = rel->row_ptr[i + 1] - rel->row_ptr[i] > most ? rel->row_ptr[i + 1] - rel->row_ptr[i] : most;
	double sum = 0;
	int64_t n = 0;
	int oom = 0;
	EOMP("omp parallel reduction(+ : sum, n)")
	{
		QueryBufs q = {.row = malloc(sizeof(float) * (size_t)nc),
			       .it = malloc(sizeof(RelItem) * (size_t)(most + 1)),
			       .ahead = malloc(sizeof(int64_t) * (size_t)(most + 1)),
			       .sorted_rel = malloc(sizeof(float) * (size_t)(most + 1))};
		int ok = q.row && q.it && q.ahead && q.sorted_rel;
		if (!ok) {
			EOMP("omp atomic write")
			oom = 1;
		}
		// every thread reaches the worksharing loop, even one without buffers
		EOMP("omp for schedule(dynamic, 16)")
		for (int64_t i = 0; i < nq; i++) {
			if (ok) {
				for (int64_t j = 0; j < nc; j++)
					q.row[j] = at(sim, nq, nc, transposed, i, j);
				double v = query_metric(what, nc, rel, i, &q);
				if (!isnan(v)) {
					sum += v;
					n++;
				}
			}
		}
		free(q.row);
		free(q.it);
		free(q.ahead);
		free(q.sorted_rel);
	}
	if (oom)
		return -ENOMEM;
	if (used)
		*used = n;
	if (!n)
		return -EINVAL;
	*out = sum / (double)n;
	return 0;
}

int eval_map(const float *sim, int64_t nq, int64_t nc, int transposed, const EvalRel *rel, double *map, int64_t *used)
{
	return rel_metric(METRIC_MAP, sim, nq, nc, transposed, rel, map, used);
}

int eval_ndcg(const float *sim, int64_t nq, int64_t nc, int transposed, const EvalRel *rel, double *ndcg, int64_t *used)
{
	return rel_metric(METRIC_NDCG, sim, nq, nc, transposed, rel, ndcg, used);
}

int eval_topk_accuracy(const float *scores, int64_t n, int classes, const int *label, int k, double *acc, int64_t *used)
{
	if (k < 1 || classes < 1 || n < 0)
		return -EINVAL;
	int64_t hit = 0, m = 0;
	for (int64_t i = 0; i < n; i++) {
		int l = label[i];
		if (l < 0)
			continue;
		if (l >= classes)
			return -EINVAL;
		const float *row = scores + i * classes;
		int above = 0; // classes ranked before the label (stable descending)
		for (int c = 0; c < classes; c++)
			above += row[c] > row[l] || (row[c] == row[l] && c < l);
		hit += above < k;
		m++;
	}
	if (used)
		*used = m;
	if (!m)
		return -EINVAL;
	*acc = (double)hit / (double)m;
	return 0;
}
