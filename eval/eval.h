// The one public header of libeval, what tools/eval and the trainer's in-process evaluation
// share: the metrics, the benchmarks' metrics, the report of an evaluation from features, and the
// forward of one fixed block of samples.
#ifndef EVAL_EVAL_H
#define EVAL_EVAL_H
// defines: EvalRetrieval, EvalRel, eval_similarity, eval_ranks, eval_ranks_grouped, eval_ranks_distinct,
//          eval_retrieval, eval_chance, eval_chance_grouped, eval_rel_transpose, eval_rel_free, eval_map, eval_ndcg,
//          eval_topk_accuracy, EvalClassAcc, EvalMcq, EvalEk100Cls, eval_class_accuracy, eval_argmax, eval_ek100_cls,
//          eval_multilabel_map, eval_mcq_accuracy, eval_mir_rescale, EvalProbeOpts, EvalProbeFit, EVAL_PROBE_L2,
//          EVAL_PROBE_ITERS, EVAL_PROBE_TOL, eval_probe_fit, eval_linear_logits, EVAL_CLS_TOP, EvalConfusion,
//          EvalRecall, EvalHeadAcc, eval_head_accuracy, eval_views_mean, EvalPairAcc, eval_pair_accuracy, EvalReport,
//          eval_check_finite, eval_score_retrieval, eval_report_table, eval_report_dir, eval_report_json,
//          eval_json_str, eval_json_end, EVAL_EMBED_BLOCK, eval_block_forward, eval_block_forward_visual

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t
#include <stdio.h>  // defines: FILE

#include "manifest.h" // defines: Manifest, manifest_header, manifest_tokens
#include "model.h"    // defines: ClipModel, KTensor

// ---- metrics (eval_metrics) ----
// Retrieval and classification metrics on similarity matrices (tools/eval and the trainer): ranks, R@K,
// median rank, EPIC-KITCHENS-100 style mAP and nDCG over a relevance matrix, top-k accuracy.

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

// ---- the benchmarks' metrics (eval_metrics_bench) ----
// Metrics of the egocentric zero-shot benchmarks, each as its reference code defines it (LaViLa:
// evaluation_charades.py, evaluation.py get_mean_accuracy, evaluation_egomcq.py, eval_zeroshot.py).

// the first index of the highest of row's m scores, as numpy's and torch's argmax
int eval_argmax(const float *row, int m);

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

// ---- the linear probe (eval_probe) ----
// A multinomial logistic regression on frozen features (tools/eval --task probe): the features
// standardised (mean 0, standard deviation 1 over the labelled rows; a constant feature stays 0),
// the objective the mean cross-entropy plus (l2/2)|W|^2 on the standardised features' weights (the
// biases are not penalised; scikit-learn's LogisticRegression with C = 1 / (l2 * rows)), minimised
// from zero by full-batch L-BFGS (10 curvature pairs, a backtracking Armijo line search) in double.
// Every sum runs in a fixed order, so a fit is the same bits for any number of threads.

#define EVAL_PROBE_L2 1e-3    // the penalty's default
#define EVAL_PROBE_ITERS 1000 // L-BFGS iterations at most
#define EVAL_PROBE_TOL 1e-6   // done when every gradient component is at most this

typedef struct {
	double l2;    // penalty weight (>= 0)
	int max_iter; // iterations at most (0: the zero model)
	double tol;   // stop when max |gradient| <= tol
} EvalProbeOpts;

typedef struct {
	int64_t n;         // labelled rows fitted
	int classes;       // classes with a labelled row (the others are never predicted)
	int iters;         // L-BFGS iterations run
	int converged;     // 1: max |gradient| reached tol; 0: max_iter ran out or the line search stalled
	double loss;       // the objective at the end
	double grad_max;   // max |gradient| there
	double train_top1; // accuracy of the fit on its own rows
} EvalProbeFit;

// x (n, d) features, label (n) in [0, K) or -1 (left out): w (K, d) and b (K) such that the logits
// of a raw feature row are w x + b (the standardisation folded in). Only the classes with a
// labelled row are fitted (as scikit-learn knows only the classes it sees): a class without one
// has w = 0 and b = -FLT_MAX, so it is never predicted. -EINVAL for a label >= K, no
// labelled row or bad options, -EDOM for a non-finite feature, -ENOMEM.
int eval_probe_fit(const float *x, int64_t n, int d, const int *label, int K, const EvalProbeOpts *o, float *w,
		   float *b, EvalProbeFit *fit);
// out (n, K) = x (n, d) w^T + b (b NULL: none), each sum in double in a fixed order
void eval_linear_logits(const float *x, int64_t n, int d, const float *w, const float *b, int K, float *out);

// ---- classification heads (eval_cls) ----
// Accuracy of one classification head (tools/eval --task classify and probe) with a confusion
// summary. The prediction of a row is its first highest score; top-5 is eval_topk_accuracy's.

#define EVAL_CLS_TOP 5 // entries of each list of the confusion summary

typedef struct {
	int truth, pred; // a true class and the class predicted for it
	int64_t count;   // labelled rows with that mistake
} EvalConfusion;

typedef struct {
	int cls;
	int64_t n, right; // labelled rows of the class, and those predicted right: recall right / n
} EvalRecall;

typedef struct {
	int64_t n; // labelled rows
	int classes;
	double top1, top5;                    // top-5: top-min(5, classes)
	double mean_class;                    // recall averaged over the classes with a labelled row
	double mean_class_union;              // AVION's get_mean_accuracy: the same sum over |labelled U predicted|
	int present, present_union;           // those class counts
	double chance_top1, chance_top5;      // a uniformly random ranking: 1 / K and min(5, K) / K
	int majority;                         // the most frequent labelled class (the lowest of equal ones)
	double majority_top1;                 // accuracy of predicting it for every row (the best constant guess)
	int n_confused;                       // entries of confused
	EvalConfusion confused[EVAL_CLS_TOP]; // most frequent mistakes: count descending, then truth, pred
	int n_worst, n_best;                  // entries of worst and best
	EvalRecall worst[EVAL_CLS_TOP];       // classes with labelled rows, lowest recall first (lower class on ties)
	EvalRecall best[EVAL_CLS_TOP];        // the same, highest recall first
	int zero_recall;                      // classes with labelled rows of which none is predicted right
} EvalHeadAcc;

// scores (n, K), label (n) in [0, K) or -1 (left out). -EINVAL for a NaN score, a label >= K, no
// labelled row; -ENOMEM.
int eval_head_accuracy(const float *scores, int64_t n, int K, const int *label, EvalHeadAcc *out);

// out (n, K) = the mean of each row's V view scores sv (n, V, K), class by class (sums in double,
// in view order): AVION's multi-view test, which averages the views' logits
// (main_lavila_finetune_cls.py:582, all_logits.mean(axis=1)) before its softmax
void eval_views_mean(const float *sv, int64_t n, int V, int K, float *out);

// Action accuracy from two heads (EPIC-KITCHENS-100's verb and noun): the (head 0, head 1) pairs of
// a row ranked by p0(v) * p1(c), the product of the heads' softmaxes, as the EK-100 challenge's
// evaluate.py (utils/scoring.py compute_action_scores). That product is exp(s0[v] + s1[c]) over a
// per-row constant, so the pairs are ranked by s0[v] + s1[c] in double, which ranks them the same
// and is exact for float scores (equal sums are ties, to the lower pair index v * K1 + c). The
// predicted pair is the first highest: the two heads' own first highest classes.
typedef struct {
	int64_t n;                       // rows with both labels
	double top1, top5;               // top-5: top-min(5, K0 * K1)
	double mean_class;               // recall averaged over the pairs some row is labelled with
	double mean_class_union;         // the same sum over the pairs labelled or predicted
	int present, present_union;      // those pair counts
	double chance_top1, chance_top5; // 1 / (K0 K1), min(5, K0 K1) / (K0 K1)
} EvalPairAcc;

// s0 (n, K0), s1 (n, K1); l0, l1 (n): labels or -1 (a row without both is left out). -EINVAL for a
// NaN score, a label out of range, no row with both labels; -ENOMEM.
int eval_pair_accuracy(const float *s0, int K0, const float *s1, int K1, int64_t n, const int *l0, const int *l1,
		       EvalPairAcc *out);

// ---- the report (eval_report) ----
// An evaluation's report and its retrieval half from features, shared by tools/eval and the
// trainer's in-process evaluation: ranks both ways next to chance, as a table or one JSON line.

typedef struct {
	int64_t n;                      // samples evaluated
	int64_t captions;               // distinct captions among them
	int match_caption;              // hits: the sample itself (0) or any sample with its caption (1)
	int image;                      // every sample an image (image–text): rows say image, not video
	EvalRetrieval t2v, v2t, chance; // chance: a random ranking of n candidates (of t2v's)
	EvalRetrieval chance_v2t;       // v2t's: the same, or with match_caption of the distinct captions
	int has_rel;                    // mAP / nDCG computed
	double map_v2t, map_t2v, ndcg_v2t, ndcg_t2v;
	int64_t rel_queries_v2t, rel_queries_t2v; // queries with a relevance-1 candidate (mAP)
	int has_zs;                               // zero-shot classification computed
	int zs_classes;
	int64_t zs_n;            // labelled samples
	double zs_top1, zs_top5; // top-5: top-min(5, classes)
	char zs_what[32];        // "action", "object", "caption" or "file"
	double embed_s, total_s; // seconds embedding, and all of it
	int64_t skipped;         // damaged samples left out of every figure (tools/eval without --strict)
	char skipped_first[256]; // the first one and why ("sample 3: ... (corrupt)")
} EvalReport;

// Retrieval of n samples' videos against their captions from L2-normalized features vfeat,
// tfeat (n, E) in manifest order: r->n, captions, match_caption, t2v, v2t and chance. With
// match_caption any sample whose caption (token row) equals the query's is a hit, and v2t ranks
// the distinct captions (copies of one caption are one candidate: eval_ranks_distinct). sim (n, n)
// receives the (videos x captions) similarities. 0, or -ENOMEM / -EINVAL with a sentence in err.
// A NaN similarity ranks like a hit (every comparison with it is false), so it would pass as a
// perfect score: 0 when x (rows, cols) is finite, else -EDOM with err naming the row and element
// ("<what> R, element C is nan: ... refusing to score").
int eval_check_finite(const float *x, int64_t rows, int64_t cols, const char *what, char *err, size_t errlen);
// features and similarities must be finite (-EDOM, eval_check_finite)
int eval_score_retrieval(const Manifest *man, const float *vfeat, const float *tfeat, int64_t n, int E,
			 int match_caption, float *sim, EvalReport *r, char *err, size_t errlen);
// the same for n rows that are the manifest's samples idx[0..n) (idx NULL: 0..n-1), e.g. all
// but the damaged ones
int eval_score_retrieval_of(const Manifest *man, const int64_t *idx, const float *vfeat, const float *tfeat, int64_t n,
			    int E, int match_caption, float *sim, EvalReport *r, char *err, size_t errlen);

// human table; JSON: one object on one line with flat keys (n, captions, match, t2v_r1 ... v2t_medr, chance_r1 ...,
// chance_v2t_r1 ...,
// map_v2t ..., zs_top1 ...), plus step and source when given (step < 0 and NULL leave them out)
void eval_report_table(FILE *f, const EvalReport *r);
// a direction's name: "text->video" / "video->text", or text->image / image->text for image–text
const char *eval_report_dir(const EvalReport *r, int text_to_visual);
void eval_report_json(FILE *f, const EvalReport *r, int64_t step, const char *source);
// s as a JSON string: quoted, '"' and '\\' escaped, control bytes as \u00XX (the reports' JSON lines)
void eval_json_str(FILE *f, const char *s);
// a report line's end: embed_s, total_s, then step (when >= 0) and source (when not NULL), "}\n"
void eval_json_end(FILE *f, double embed_s, double total_s, int64_t step, const char *source);

// ---- the block forward (eval_block) ----
// The evaluation's forward of one block of samples, the one both tools/eval and the trainer's
// in-process evaluation call, so their features agree bit for bit.

// Rows of every evaluation forward (tools/eval and the trainer's). BLAS results depend on the row
// count (and a row's place in the tiles), so features are computed in blocks of this many samples
// at fixed places, the last block padded: a sample's features depend only on its index, never on
// the batch a user asks for or the training batch.
#define EVAL_EMBED_BLOCK 8

// clips (B, T, S, S, 3) u8 and text (B, ctx) i32 on m's device, B = m's batch (EVAL_EMBED_BLOCK for
// an evaluation model), through both towers into m->vfeat and m->tfeat: the clips normalized as
// the trainer does (kern_augment_tubelet, the model's tubelet), never flipped (pos (B) i64 is read but
// its flip bit unused).
// 0 or the op's -errno (kern_error_message(m->ctx) says which op).
int eval_block_forward(ClipModel *m, const KTensor *clips, const KTensor *pos, const KTensor *text);
// the same through the video tower alone into m->vln (B, vis_width): the pre-projection feature
// (ln_post of the class token) that classification fine-tuning trains its heads on (trainer
// --objective classify) and the linear probe is fitted to
int eval_block_forward_visual(ClipModel *m, const KTensor *clips, const KTensor *pos);

#endif
