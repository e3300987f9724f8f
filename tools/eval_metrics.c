// Metrics of tools/eval. Every ranking is a stable descending sort of the scores (ties go to the
// lower candidate index), so results do not depend on the sort routine or the thread count.
#define _GNU_SOURCE          // qsort_r
#include "eval_metrics.h" // defines: EvalRetrieval, EvalRel, eval_*

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <math.h>   // defines: log2
#include <stdlib.h> // defines: calloc, malloc, free, qsort, qsort_r
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

// candidate indices by descending score, ties by ascending index
static int by_score(const void *a, const void *b, void *arg)
{
	const float *row = arg;
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	if (row[x] != row[y])
		return row[x] > row[y] ? -1 : 1;
	return (x > y) - (x < y);
}

typedef enum { METRIC_MAP, METRIC_NDCG } Metric;

// per query: the metric's value, or NAN when the query has no relevant candidate
static double query_metric(Metric what, const float *row, int64_t nc, const float *relv, const EvalRel *rel,
			   int64_t i, int64_t *order, float *sorted_rel)
{
	int64_t lo = rel->row_ptr[i], hi = rel->row_ptr[i + 1], k = 0;
	for (int64_t p = lo; p < hi; p++)
		k += what == METRIC_MAP ? rel->val[p] >= 1.0f : rel->val[p] > 0.0f;
	if (!k)
		return NAN;
	for (int64_t j = 0; j < nc; j++)
		order[j] = j;
	qsort_r(order, (size_t)nc, sizeof *order, by_score, (void *)row);
	if (what == METRIC_MAP) {
		double ap = 0;
		int64_t found = 0;
		for (int64_t p = 0; p < nc && found < k; p++)
			if (relv[order[p]] >= 1.0f)
				ap += (double)++found / (double)(p + 1);
		return ap / (double)k;
	}
	// nDCG: only the first k places count (as many as there are relevant candidates)
	int64_t m = hi - lo;
	for (int64_t p = 0; p < m; p++)
		sorted_rel[p] = rel->val[lo + p];
	for (int64_t a = 1; a < m; a++) // insertion sort, descending: rows are short
		for (int64_t b = a; b > 0 && sorted_rel[b] > sorted_rel[b - 1]; b--) {
			float t = sorted_rel[b];
			sorted_rel[b] = sorted_rel[b - 1];
			sorted_rel[b - 1] = t;
		}
	double dcg = 0, idcg = 0;
	for (int64_t p = 0; p < k; p++) {
		dcg += relv[order[p]] / log2((double)p + 2);
		idcg += sorted_rel[p] / log2((double)p + 2);
	}
	return dcg / idcg;
}

static int rel_metric(Metric what, const float *sim, int64_t nq, int64_t nc, int transposed, const EvalRel *rel,
		      double *out, int64_t *used)
{
	if (!rel || rel->rows != nq || rel->cols != nc || nq <= 0 || nc <= 0)
		return -EINVAL;
	double sum = 0;
	int64_t n = 0;
	int oom = 0;
	EOMP("omp parallel reduction(+ : sum, n)")
	{
		float *row = malloc(sizeof *row * (size_t)nc), *relv = calloc((size_t)nc, sizeof *relv);
		float *sorted_rel = malloc(sizeof *sorted_rel * (size_t)nc);
		int64_t *order = malloc(sizeof *order * (size_t)nc);
		int ok = row && relv && sorted_rel && order;
		if (!ok) {
			EOMP("omp atomic write")
			oom = 1;
		}
		// every thread reaches the worksharing loop, even one without buffers
		EOMP("omp for schedule(dynamic, 16)")
		for (int64_t i = 0; i < nq; i++) {
			if (ok) {
				for (int64_t j = 0; j < nc; j++)
					row[j] = at(sim, nq, nc, transposed, i, j);
				for (int64_t p = rel->row_ptr[i]; p < rel->row_ptr[i + 1]; p++)
					relv[rel->col[p]] = rel->val[p];
				double v = query_metric(what, row, nc, relv, rel, i, order, sorted_rel);
				for (int64_t p = rel->row_ptr[i]; p < rel->row_ptr[i + 1]; p++)
					relv[rel->col[p]] = 0;
				if (!isnan(v)) {
					sum += v;
					n++;
				}
			}
		}
		free(row);
		free(relv);
		free(sorted_rel);
		free(order);
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

int eval_map(const float *sim, int64_t nq, int64_t nc, int transposed, const EvalRel *rel, double *map,
	     int64_t *used)
{
	return rel_metric(METRIC_MAP, sim, nq, nc, transposed, rel, map, used);
}

int eval_ndcg(const float *sim, int64_t nq, int64_t nc, int transposed, const EvalRel *rel, double *ndcg,
	      int64_t *used)
{
	return rel_metric(METRIC_NDCG, sim, nq, nc, transposed, rel, ndcg, used);
}

int eval_topk_accuracy(const float *scores, int64_t n, int classes, const int *label, int k, double *acc,
		       int64_t *used)
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
