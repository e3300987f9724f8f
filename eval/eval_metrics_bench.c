// The egocentric benchmarks' metrics (eval.h, "the benchmarks' metrics"): mean-class and top-k accuracy, EK-100
// action recognition, Charades-Ego's multi-label mAP, EgoMCQ accuracy and EK-100 MIR's rescale. Rankings are stable
// descending sorts of the scores (ties to the lower index), as in eval_metrics.c.
#include "eval.h" // defines: EvalClassAcc, EvalMcq, EvalEk100Cls, eval_*, eval_topk_accuracy

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <math.h>   // defines: NAN, isnan, exp
#include <stdlib.h> // defines: calloc, malloc, free
#include <string.h> // defines: memset

int eval_argmax(const float *row, int m)
{
	int best = 0;
	for (int c = 1; c < m; c++)
		if (row[c] > row[best])
			best = c;
	return best;
}

static int any_nan(const float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (isnan(x[i]))
			return 1;
	return 0;
}

int eval_class_accuracy(const float *scores, int64_t n, int classes, const int *label, EvalClassAcc *out)
{
	if (n < 0 || classes < 1 || any_nan(scores, n * classes))
		return -EINVAL;
	int64_t *count = calloc((size_t)classes, sizeof *count), *right = calloc((size_t)classes, sizeof *right);
	uint8_t *predicted = calloc((size_t)classes, 1);
	if (!count || !right || !predicted) {
		free(count);
		free(right);
		free(predicted);
		return -ENOMEM;
	}
	memset(out, 0, sizeof *out);
	int rc = 0;
	for (int64_t i = 0; i < n && !rc; i++) {
		if (label[i] < 0)
			continue;
		if (label[i] >= classes) {
			rc = -EINVAL;
			break;
		}
		const int p = eval_argmax(scores + i * classes, classes);
		count[label[i]]++;
		right[label[i]] += p == label[i];
		predicted[p] = 1;
		out->n++;
	}
	if (!rc && !out->n)
		rc = -EINVAL;
	if (!rc) {
		double recall = 0;
		int64_t hits = 0;
		for (int c = 0; c < classes; c++) {
			hits += right[c];
			if (count[c]) {
				recall += (double)right[c] / (double)count[c];
				out->present++;
			}
			out->present_union += count[c] || predicted[c];
		}
		out->top1 = (double)hits / (double)out->n;
		out->mean_class = recall / out->present;
		out->mean_class_union = recall / out->present_union;
	}
	free(count);
	free(right);
	free(predicted);
	return rc;
}

// out (n, m): the softmax of each row of scores (n, actions) summed over the actions whose of[a] is
// the column; a column no action has gets action 0's probability (get_marginal_indexes)
static int marginalize(const float *scores, int64_t n, int actions, const int *of, int m, float *out)
{
	double *p = malloc(sizeof *p * (size_t)actions), *sum = malloc(sizeof *sum * (size_t)m);
	uint8_t *has = calloc((size_t)m, 1);
	if (!p || !sum || !has) {
		free(p);
		free(sum);
		free(has);
		return -ENOMEM;
	}
	for (int a = 0; a < actions; a++)
		has[of[a]] = 1;
	for (int64_t i = 0; i < n; i++) {
		const float *row = scores + i * actions;
		float mx = row[0];
		for (int a = 1; a < actions; a++)
			mx = row[a] > mx ? row[a] : mx;
		double z = 0;
		for (int a = 0; a < actions; a++)
			z += p[a] = exp((double)row[a] - mx);
		memset(sum, 0, sizeof *sum * (size_t)m);
		for (int a = 0; a < actions; a++)
			sum[of[a]] += p[a] / z;
		for (int c = 0; c < m; c++)
			out[i * m + c] = (float)(has[c] ? sum[c] : p[0] / z);
	}
	free(p);
	free(sum);
	free(has);
	return 0;
}

// the verb (or noun) part of eval_ek100_cls
static int marginal_accuracy(const float *scores, int64_t n, int actions, const int *of, const int *label,
			     EvalClassAcc *acc, double *top5, int *m)
{
	*m = 0;
	for (int a = 0; a < actions; a++) {
		if (of[a] < 0)
			return -EINVAL;
		*m = of[a] + 1 > *m ? of[a] + 1 : *m;
	}
	float *ms = malloc(sizeof *ms * (size_t)(n * *m));
	int *ml = malloc(sizeof *ml * (size_t)n);
	int rc = ms && ml ? 0 : -ENOMEM;
	if (!rc)
		rc = marginalize(scores, n, actions, of, *m, ms);
	if (!rc) {
		for (int64_t i = 0; i < n; i++)
			ml[i] = of[label[i]];
		rc = eval_class_accuracy(ms, n, *m, ml, acc);
	}
	if (!rc)
		rc = eval_topk_accuracy(ms, n, *m, ml, 5, top5, NULL);
	free(ms);
	free(ml);
	return rc;
}

int eval_ek100_cls(const float *scores, int64_t n, int actions, const int *act_verb, const int *act_noun,
		   const int *label, EvalEk100Cls *out)
{
	memset(out, 0, sizeof *out);
	if (n < 1 || actions < 1 || any_nan(scores, n * actions))
		return -EINVAL;
	for (int64_t i = 0; i < n; i++)
		if (label[i] < 0 || label[i] >= actions)
			return -EINVAL;
	int rc = eval_class_accuracy(scores, n, actions, label, &out->action);
	if (!rc)
		rc = eval_topk_accuracy(scores, n, actions, label, 5, &out->action_top5, NULL);
	if (!rc)
		rc = marginal_accuracy(scores, n, actions, act_verb, label, &out->verb, &out->verb_top5, &out->verbs);
	if (!rc)
		rc = marginal_accuracy(scores, n, actions, act_noun, label, &out->noun, &out->noun_top5, &out->nouns);
	return rc;
}

// AP of class c over the videos keep[0..nk): positives at their places in the stable ranking
static double class_ap(const float *scores, int classes, const uint8_t *gt, const int64_t *keep, int64_t nk, int c)
{
	double sum = 0;
	int64_t pos = 0;
	for (int64_t a = 0; a < nk; a++) {
		const int64_t i = keep[a];
		if (!gt[i * classes + c])
			continue;
		pos++;
		const float s = scores[i * classes + c];
		int64_t place = 1, hits = 1; // i itself
		for (int64_t b = 0; b < nk; b++) {
			const int64_t j = keep[b];
			const float x = scores[j * classes + c];
			if (x > s || (x == s && j < i)) {
				place++;
				hits += gt[j * classes + c];
			}
		}
		sum += (double)hits / (double)place;
	}
	return pos ? sum / (double)pos : NAN;
}

int eval_multilabel_map(const float *scores, int64_t n, int classes, const uint8_t *gt, double *map, double *ap,
			int *used)
{
	if (n < 0 || classes < 1 || any_nan(scores, n * classes))
		return -EINVAL;
	for (int64_t k = 0; k < n * classes; k++)
		if (gt[k] > 1)
			return -EINVAL;
	int64_t *keep = malloc(sizeof *keep * (size_t)(n ? n : 1)), nk = 0;
	if (!keep)
		return -ENOMEM;
	for (int64_t i = 0; i < n; i++) {
		int any = 0;
		for (int c = 0; c < classes; c++)
			any |= gt[i * classes + c];
		if (any)
			keep[nk++] = i;
	}
	double sum = 0;
	int m = 0;
	for (int c = 0; c < classes; c++) {
		const double v = class_ap(scores, classes, gt, keep, nk, c);
		if (ap)
			ap[c] = v;
		if (!isnan(v)) {
			sum += v;
			m++;
		}
	}
	free(keep);
	if (used)
		*used = m;
	if (!m)
		return -EINVAL;
	*map = sum / m;
	return 0;
}

int eval_mcq_accuracy(const float *scores, int64_t n, int choices, const int *answer, const int *type, EvalMcq *out)
{
	if (n < 1 || choices < 1 || any_nan(scores, n * choices))
		return -EINVAL;
	int64_t right[2] = {0, 0}, count[2] = {0, 0}; // [0] inter (type 1), [1] intra (type 2)
	for (int64_t i = 0; i < n; i++) {
		if (answer[i] < 0 || answer[i] >= choices || (type[i] != 1 && type[i] != 2))
			return -EINVAL;
		const int t = type[i] - 1;
		count[t]++;
		right[t] += eval_argmax(scores + i * choices, choices) == answer[i];
	}
	out->n_inter = count[0];
	out->n_intra = count[1];
	out->inter = count[0] ? (double)right[0] / (double)count[0] : NAN;
	out->intra = count[1] ? (double)right[1] / (double)count[1] : NAN;
	return 0;
}

void eval_mir_rescale(float *sim, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		sim[i] = (sim[i] + 1.0f) / 2.0f;
}
