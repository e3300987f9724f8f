// Accuracy of classification heads (eval.h, "classification heads"): top-1/top-5 and mean-class
// accuracy of one head next to chance, with a confusion summary (the most frequent mistakes, the
// classes recalled worst and best); rankings are stable descending sorts (ties to the lower index).
#include "eval.h" // defines: EvalHeadAcc, eval_head_accuracy, eval_class_accuracy, eval_topk_accuracy

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

// the first index of a row's highest score
static int row_argmax(const float *row, int m)
{
	int best = 0;
	for (int c = 1; c < m; c++)
		if (row[c] > row[best])
			best = c;
	return best;
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
		pred[i] = row_argmax(scores + i * K, K);
	rc = confusions(label, pred, n, out);
	if (!rc)
		rc = recalls(label, pred, n, K, out);
	free(pred);
	return rc;
}
