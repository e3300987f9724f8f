// Accuracy of classification heads (eval.h, "classification heads"): a head's top-1/top-5 and
// mean-class accuracy next to chance with a confusion summary, the views' mean, two heads' pair
// accuracy; rankings are stable descending sorts (ties to the lower index).
#include "eval.h" // defines: EvalHeadAcc, eval_head_accuracy, eval_views_mean, EvalPairAcc, eval_pair_accuracy, ...

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <math.h>   // defines: isnan
#include <stdlib.h> // defines: calloc, malloc, free, qsort
#include <string.h> // defines: memset

static int by_pair(const void *a, const void *b)
{
	const EvalConfusion *x = a, *y = b;
	return x->truth != y->truth ? (x->truth > y->truth) - (x->truth < y->truth)
				    : (x->pred > y->pred) - (x->pred < y->pred);
}

// count descending, then (truth, prediction) ascending
static int by_count(const void *a, const void *b)
{
	const EvalConfusion *x = a, *y = b;
	return x->count != y->count ? (x->count < y->count) - (x->count > y->count) : by_pair(a, b);
}

// recall right/n ascending (compared exactly as products), then the class ascending
static int by_recall_up(const void *a, const void *b)
{
	const EvalRecall *x = a, *y = b;
	const int64_t l = x->right * y->n, r = y->right * x->n;
	return l != r ? (l > r) - (l < r) : (x->cls > y->cls) - (x->cls < y->cls);
}

static int by_recall_down(const void *a, const void *b)
{
	const EvalRecall *x = a, *y = b;
	const int64_t l = x->right * y->n, r = y->right * x->n;
	return l != r ? (l < r) - (l > r) : (x->cls > y->cls) - (x->cls < y->cls);
}

// the most frequent mistakes (truth != prediction) of the labelled rows
static int confusions(const int *truth, const int *pred, int64_t n, EvalHeadAcc *out)
{
	EvalConfusion *p = malloc(sizeof *p * (size_t)(n ? n : 1));
	if (!p)
		return -ENOMEM;
	int64_t m = 0, k = 0;
	for (int64_t i = 0; i < n; i++)
		if (truth[i] >= 0 && pred[i] != truth[i])
			p[m++] = (EvalConfusion){truth[i], pred[i], 1};
	qsort(p, (size_t)m, sizeof *p, by_pair);
	for (int64_t i = 0; i < m; i++) { // runs of one pair into one entry with its count
		if (k && !by_pair(&p[k - 1], &p[i]))
			p[k - 1].count++;
		else
			p[k++] = p[i];
	}
	qsort(p, (size_t)k, sizeof *p, by_count);
	out->n_confused = (int)(k < EVAL_CLS_TOP ? k : EVAL_CLS_TOP);
	memcpy(out->confused, p, sizeof *p * (size_t)out->n_confused);
	free(p);
	return 0;
}

// per-class recall extremes over the classes with a labelled row
static int recalls(const int *truth, const int *pred, int64_t n, int K, EvalHeadAcc *out)
{
	EvalRecall *r = calloc((size_t)K, sizeof *r);
	if (!r)
		return -ENOMEM;
	for (int c = 0; c < K; c++)
		r[c].cls = c;
	for (int64_t i = 0; i < n; i++)
		if (truth[i] >= 0) {
			r[truth[i]].n++;
			r[truth[i]].right += pred[i] == truth[i];
		}
	int m = 0, maj = 0;
	int64_t maj_n = 0;
	for (int c = 0; c < K; c++) { // r[m] is written only after r[c] (m <= c) was read
		if (r[c].n > maj_n)
			maj = c, maj_n = r[c].n;
		if (r[c].n)
			r[m++] = r[c];
	}
	out->majority = maj;
	out->majority_top1 = (double)maj_n / (double)out->n;
	out->zero_recall = 0;
	for (int c = 0; c < m; c++)
		out->zero_recall += !r[c].right;
	const int t = m < EVAL_CLS_TOP ? m : EVAL_CLS_TOP;
	qsort(r, (size_t)m, sizeof *r, by_recall_up);
	memcpy(out->worst, r, sizeof *r * (size_t)t);
	qsort(r, (size_t)m, sizeof *r, by_recall_down);
	memcpy(out->best, r, sizeof *r * (size_t)t);
	out->n_worst = out->n_best = t;
	free(r);
	return 0;
}

int eval_head_accuracy(const float *scores, int64_t n, int K, const int *label, EvalHeadAcc *out)
{
	memset(out, 0, sizeof *out);
	if (n < 1 || K < 1)
		return -EINVAL;
	for (int64_t i = 0; i < n * K; i++)
		if (isnan(scores[i]))
			return -EINVAL;
	EvalClassAcc acc;
	int rc = eval_class_accuracy(scores, n, K, label, &acc); // -EINVAL: a label >= K or none labelled
	if (rc)
		return rc;
	out->classes = K;
	out->n = acc.n;
	out->top1 = acc.top1;
	out->mean_class = acc.mean_class;
	out->mean_class_union = acc.mean_class_union;
	out->present = acc.present;
	out->present_union = acc.present_union;
	out->chance_top1 = 1.0 / K;
	out->chance_top5 = (K < 5 ? K : 5) / (double)K;
	if ((rc = eval_topk_accuracy(scores, n, K, label, 5, &out->top5, NULL)))
		return rc;
	int *pred = malloc(sizeof *pred * (size_t)n);
	if (!pred)
		return -ENOMEM;
	for (int64_t i = 0; i < n; i++)
		pred[i] = eval_argmax(scores + i * K, K);
	rc = confusions(label, pred, n, out);
	if (!rc)
		rc = recalls(label, pred, n, K, out);
	free(pred);
	return rc;
}

void eval_views_mean(const float *sv, int64_t n, int V, int K, float *out)
{
	for (int64_t i = 0; i < n; i++)
		for (int k = 0; k < K; k++) {
			double s = 0;
			for (int v = 0; v < V; v++)
				s += sv[(size_t)(i * V + v) * K + k];
			out[(size_t)i * K + k] = (float)(s / V);
		}
}

static int by_int64(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

// the mean over the pairs of code (pair * 2 + right) entries of their recall; *present the pairs,
// *predicted_only the predicted pairs no row is labelled with (for the union's denominator)
static double pair_recall(int64_t *code, int64_t m, const int64_t *pred, int *present, int64_t *predicted_only)
{
	qsort(code, (size_t)m, sizeof *code, by_int64);
	double sum = 0;
	int np = 0;
	for (int64_t a = 0, b; a < m; a = b) {
		int64_t right = 0;
		for (b = a; b < m && code[b] / 2 == code[a] / 2; b++)
			right += code[b] % 2;
		sum += (double)right / (double)(b - a);
		np++;
	}
	*present = np;
	*predicted_only = 0; // predicted pairs (sorted, distinct) that are no row's label
	for (int64_t i = 0, j = 0; i < m; i++) {
		if (i && pred[i] == pred[i - 1])
			continue;
		while (j < m && code[j] / 2 < pred[i])
			j++;
		*predicted_only += j == m || code[j] / 2 != pred[i];
	}
	return sum;
}

int eval_pair_accuracy(const float *s0, int K0, const float *s1, int K1, int64_t n, const int *l0, const int *l1,
		       EvalPairAcc *out)
{
	memset(out, 0, sizeof *out);
	if (n < 1 || K0 < 1 || K1 < 1)
		return -EINVAL;
	for (int64_t i = 0; i < n; i++) {
		if (l0[i] >= K0 || l1[i] >= K1)
			return -EINVAL;
		for (int k = 0; k < K0; k++)
			if (isnan(s0[i * K0 + k]))
				return -EINVAL;
		for (int k = 0; k < K1; k++)
			if (isnan(s1[i * K1 + k]))
				return -EINVAL;
	}
	int64_t *code = malloc(sizeof *code * (size_t)n), *pred = malloc(sizeof *pred * (size_t)n), m = 0, hit1 = 0,
		hit5 = 0;
	if (!code || !pred) {
		free(code);
		free(pred);
		return -ENOMEM;
	}
	for (int64_t i = 0; i < n; i++) {
		if (l0[i] < 0 || l1[i] < 0)
			continue;
		const float *a = s0 + i * K0, *b = s1 + i * K1;
		const int64_t truth = (int64_t)l0[i] * K1 + l1[i];
		const double t = (double)a[l0[i]] + (double)b[l1[i]];
		int64_t above = 0, best = 0;
		double top = (double)a[0] + (double)b[0];
		for (int v = 0; v < K0; v++)
			for (int c = 0; c < K1; c++) {
				const double s = (double)a[v] + (double)b[c];
				const int64_t p = (int64_t)v * K1 + c;
				above += s > t || (s == t && p < truth);
				if (s > top)
					top = s, best = p;
			}
		hit1 += above < 1;
		hit5 += above < 5;
		pred[m] = best;
		code[m++] = truth * 2 + (best == truth);
	}
	int rc = m ? 0 : -EINVAL;
	if (!rc) {
		int64_t extra = 0;
		qsort(pred, (size_t)m, sizeof *pred, by_int64);
		const double sum = pair_recall(code, m, pred, &out->present, &extra);
		out->n = m;
		out->top1 = (double)hit1 / (double)m;
		out->top5 = (double)hit5 / (double)m;
		out->mean_class = sum / out->present;
		out->present_union = (int)(out->present + extra);
		out->mean_class_union = sum / out->present_union;
		const double pairs = (double)K0 * K1;
		out->chance_top1 = 1 / pairs;
		out->chance_top5 = (pairs < 5 ? pairs : 5) / pairs;
	}
	free(code);
	free(pred);
	return rc;
}
