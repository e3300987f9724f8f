// Metrics of the egocentric zero-shot benchmarks, each as its reference code defines it (LaViLa:
// evaluation_charades.py, evaluation.py get_mean_accuracy, evaluation_egomcq.py, eval_zeroshot.py).
#ifndef EVAL_EVAL_METRICS_BENCH_H
#define EVAL_EVAL_METRICS_BENCH_H
// defines: EvalClassAcc, EvalMcq, EvalEk100Cls, eval_class_accuracy, eval_ek100_cls,
//          eval_multilabel_map, eval_mcq_accuracy, eval_mir_rescale

#include <stdint.h> // defines: int64_t, uint8_t

// Single-label classification (EGTEA): the prediction of a row is its highest score, the first
// (lowest class) of equal ones, as numpy's and torch's argmax.
typedef struct {
	int64_t n;               // labelled rows
	double top1;             // fraction of them predicted right
	double mean_class;       // mean over the classes present in the labels of their recall
	double mean_class_union; // LaViLa's figure: the same sum over |labels present U predicted|
	int present;             // classes present in the labels
	int present_union;       // classes present in the labels or the predictions
} EvalClassAcc;

// scores (n, classes); label[i] in [0, classes) or -1 (not labelled, left out). mean_class_union
// is what LaViLa prints: sklearn's confusion_matrix has a row for every class seen in the labels
// or the predictions, and a row without labels counts as recall 0 in the mean. On a test set
// where every class has a label (EGTEA's splits) both means agree. -EINVAL for a label out of
// range, a NaN score, no labelled row.
int eval_class_accuracy(const float *scores, int64_t n, int classes, const int *label, EvalClassAcc *out);

// EK-100 zero-shot action recognition; top-5 is eval_topk_accuracy's (eval_metrics.h: ties to the
// lower class index, which torch.topk leaves unspecified). The action classes are (verb, noun) pairs (LaViLa's label
// space); verb and noun scores are AVION's and LaViLa's marginalisation (rulstm's
// get_marginal_indexes/marginalize): the softmax of a row's action scores summed over the actions
// with that verb (noun), for every verb 0..max verb of the pairs; a verb no pair has gets the
// probability of action 0, as get_marginal_indexes does. The softmax and sums are in double,
// stored as float for the ranking.
typedef struct {
	EvalClassAcc action, verb, noun; // top-1 and mean-class accuracy (mean_class_union: get_mean_accuracy's)
	double action_top5, verb_top5, noun_top5;
	int verbs, nouns; // marginal classes: the largest id + 1
} EvalEk100Cls;

// scores (n, actions); act_verb/act_noun (actions): each action's pair; label (n): the action of
// each row, in [0, actions) (every row is labelled). -EINVAL for a NaN score, a label or a pair
// out of range, n < 1; -ENOMEM.
int eval_ek100_cls(const float *scores, int64_t n, int actions, const int *act_verb, const int *act_noun,
		   const int *label, EvalEk100Cls *out);

// Multi-label mAP over classes (Charades-Ego, charades_map): scores (n, classes), gt (n, classes)
// 0/1. Videos without any positive are left out (upstream scores them -inf, which puts them after
// every positive, where they cannot change an AP). Per class, AP = mean over its positives of the
// precision at their place in the ranking of the videos (score descending, ties to the lower
// video index; upstream's argsort leaves the order of ties unspecified). A class without a
// positive has no AP: ap[c] (NULL: not written) gets NAN and it is left out of the mean, *used
// counting the classes that are in it; upstream's np.mean would return NaN for the whole set
// then. -EINVAL for a gt value other than 0/1, a NaN score or no class with a positive.
int eval_multilabel_map(const float *scores, int64_t n, int classes, const uint8_t *gt, double *map, double *ap,
			int *used);

// EgoMCQ accuracy by question type. egomcq.json's "types": 1 = inter-video (the choices come from
// different videos), 2 = intra-video (from the same video), as EgoVLP's dataset defines them.
// (LaViLa's and EgoVLP's egomcq_accuracy_metrics print the two names swapped: they zip the sorted
// types with ["Intra-video", "Inter-video"]; EgoVLP issue #19, EgoVLPv2 PR #14.)
typedef struct {
	int64_t n_inter, n_intra;
	double inter, intra; // NAN where no question has the type
} EvalMcq;

// scores (n, choices) of each question's choices against its query; the answer is right when it
// is the highest score, the first of equal ones (torch.argmax). -EINVAL for an answer out of
// range, a type other than 1 or 2, a NaN score, n < 1.
int eval_mcq_accuracy(const float *scores, int64_t n, int choices, const int *answer, const int *type, EvalMcq *out);

// EK-100 MIR's rescale of the cosine similarities, sim = (sim + 1) / 2 in float, as LaViLa does
// before calculate_mAP / calculate_nDCG. A monotone map cannot reorder scores, but float rounding
// can merge two nearly equal ones into a tie (|a - b| below an ulp of 1), so it is applied to keep
// the same ties as upstream.
void eval_mir_rescale(float *sim, int64_t n);

#endif
