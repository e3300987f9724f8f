// The egocentric benchmarks' metrics (eval/eval.h) on small hand-computed cases: mean-class
// accuracy with argmax ties, EK-100's marginalised verb and noun accuracy, Charades-Ego mAP with an empty class and a video without labels,
// EgoMCQ by type, and the MIR rescale's ties. With --dump FILE it prints the metrics of the cases
// in FILE for tests/test_eval_metrics_ref.sh, which checks them against tests/ref/eval_metrics_ref.py.
#include "eval.h" // defines: EvalRel, eval_map, eval_ndcg, eval_rel_transpose, eval_rel_free, eval_class_accuracy, eval_multilabel_map, eval_mcq_accuracy, ...
#include "testutil.h" // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>  // defines: EINVAL
#include <math.h>   // defines: fabs, isnan
#include <stdio.h>  // defines: fopen, fscanf, printf
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: strcmp

#define NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) < 1e-12)

static void test_class_accuracy(void)
{
	const float s[] = {0.9f, 0.1f, 0.0f,  // label 0: right
			   0.2f, 0.5f, 0.5f,  // label 0: predicted 1 (first of the tied 1 and 2)
			   0.3f, 0.3f, 0.3f,  // label 2: predicted 0 (all tied)
			   0.0f, 0.0f, 1.0f,  // label 2: right
			   0.0f, 9.0f, 0.0f}; // not labelled
	const int label[] = {0, 0, 2, 2, -1};
	EvalClassAcc a;
	CHECK_OK(eval_class_accuracy(s, 5, 3, label, &a));
	CHECK_EQ_INT(a.n, 4);
	NEAR(a.top1, 0.5);
	CHECK_EQ_INT(a.present, 2);
	NEAR(a.mean_class, 0.5); // (1/2 + 1/2) / 2
	CHECK_EQ_INT(a.present_union, 3);
	NEAR(a.mean_class_union, 1.0 / 3); // class 1 was predicted, never labelled: a recall of 0
	const int bad[] = {0, 3, 0, 0, 0}, none[] = {-1, -1, -1, -1, -1};
	CHECK_EQ_INT(eval_class_accuracy(s, 5, 3, bad, &a), -EINVAL);
	CHECK_EQ_INT(eval_class_accuracy(s, 5, 3, none, &a), -EINVAL);
	float nan_s[15];
	memcpy(nan_s, s, sizeof s);
	nan_s[4] = NAN;
	CHECK_EQ_INT(eval_class_accuracy(nan_s, 5, 3, label, &a), -EINVAL);
}

// EK-100: actions a0 (v0, n1), a1 (v0, n0), a2 (v2, n0); verb 1 is in no pair
static void test_ek100_cls(void)
{
	const float s[] = {0, 0, 0,  // label a2: a0 predicted (first of the tie), verb v0 (2/3), noun n0 (2/3)
			   0, 0, 5}; // label a2: right, v2, n0
	const int verb[] = {0, 0, 2}, noun[] = {1, 0, 0}, label[] = {2, 2};
	EvalEk100Cls r;
	CHECK_OK(eval_ek100_cls(s, 2, 3, verb, noun, label, &r));
	NEAR(r.action.top1, 0.5);
	NEAR(r.action_top5, 1);
	NEAR(r.action.mean_class_union, 0.25); // labels {a2}, predicted {a0, a2}: (1/2 + 0) / 2
	CHECK_EQ_INT(r.verbs, 3);
	CHECK_EQ_INT(r.nouns, 2);
	NEAR(r.verb.top1, 0.5);
	NEAR(r.verb_top5, 1);
	NEAR(r.verb.mean_class_union, 0.25);
	NEAR(r.noun.top1, 1);
	NEAR(r.noun.mean_class_union, 1);
	const int out[] = {2, 3};
	CHECK_EQ_INT(eval_ek100_cls(s, 2, 3, verb, noun, out, &r), -EINVAL);
	const int neg[] = {0, -1, 2};
	CHECK_EQ_INT(eval_ek100_cls(s, 2, 3, neg, noun, label, &r), -EINVAL);
}

static void test_multilabel_map(void)
{
	const float s[] = {0.5f, 0.2f, 0.0f,  // v0
			   0.5f, 0.9f, 0.0f,  // v1
			   0.1f, 0.3f, 0.0f,  // v2
			   1.0f, 1.0f, 0.0f}; // v3: no label, left out (else first in every class)
	const uint8_t gt[] = {1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0};
	double map, ap[3];
	int used;
	CHECK_OK(eval_multilabel_map(s, 4, 3, gt, &map, ap, &used));
	// class 0: v0 (0.5, ahead of the tied v1) 1/1, v1, v2 2/3 -> 5/6; class 1: v1, v2 -> 1; class 2: empty
	NEAR(ap[0], 5.0 / 6);
	NEAR(ap[1], 1);
	CHECK(isnan(ap[2]));
	CHECK_EQ_INT(used, 2);
	NEAR(map, (5.0 / 6 + 1) / 2);
	uint8_t bad[12];
	memcpy(bad, gt, sizeof gt);
	bad[5] = 2;
	CHECK_EQ_INT(eval_multilabel_map(s, 4, 3, bad, &map, ap, &used), -EINVAL);
	const uint8_t empty[12] = {0};
	CHECK_EQ_INT(eval_multilabel_map(s, 4, 3, empty, &map, NULL, &used), -EINVAL);
	CHECK_EQ_INT(used, 0);
}

static void test_mcq(void)
{
	const float s[] = {0, 0, 1, 0, 0, 0.5f, 0.5f, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0};
	const int answer[] = {2, 1, 0}, type[] = {1, 2, 2};
	EvalMcq m;
	CHECK_OK(eval_mcq_accuracy(s, 3, 5, answer, type, &m));
	CHECK_EQ_INT(m.n_inter, 1);
	CHECK_EQ_INT(m.n_intra, 2);
	NEAR(m.inter, 1);
	NEAR(m.intra, 0.5); // question 1's answer ties with choice 0, which argmax takes
	const int intra_only[] = {2, 2, 2};
	CHECK_OK(eval_mcq_accuracy(s, 3, 5, answer, intra_only, &m));
	CHECK(isnan(m.inter));
	NEAR(m.intra, 2.0 / 3);
	const int bad_type[] = {1, 3, 2}, bad_answer[] = {2, 5, 0};
	CHECK_EQ_INT(eval_mcq_accuracy(s, 3, 5, answer, bad_type, &m), -EINVAL);
	CHECK_EQ_INT(eval_mcq_accuracy(s, 3, 5, bad_answer, type, &m), -EINVAL);
}

// (S+1)/2 keeps the order but float rounding can make ties, which change a ranking metric
static void test_mir_rescale(void)
{
	float sim[] = {1e-8f, 2e-8f}, ends[] = {-1, 0, 1};
	int64_t row_ptr[] = {0, 1}, col[] = {1};
	float val[] = {1};
	EvalRel rel = {.rows = 1, .cols = 2, .row_ptr = row_ptr, .col = col, .val = val};
	double map;
	CHECK_OK(eval_map(sim, 1, 2, 0, &rel, &map, NULL));
	NEAR(map, 1);
	eval_mir_rescale(sim, 2);
	CHECK(sim[0] == 0.5f && sim[1] == 0.5f);
	CHECK_OK(eval_map(sim, 1, 2, 0, &rel, &map, NULL)); // tied now: candidate 0 goes first
	NEAR(map, 0.5);
	eval_mir_rescale(ends, 3);
	CHECK(ends[0] == 0 && ends[1] == 0.5f && ends[2] == 1);
}

// ---- --dump: the cases of a file, for the numpy reference -----------------------------------------

static float *read_floats(FILE *f, int64_t n)
{
	float *x = malloc(sizeof *x * (size_t)(n ? n : 1));
	CHECK(x);
	for (int64_t i = 0; i < n; i++)
		CHECK(fscanf(f, "%f", &x[i]) == 1);
	return x;
}

static int *read_ints(FILE *f, int64_t n)
{
	int *x = malloc(sizeof *x * (size_t)(n ? n : 1));
	CHECK(x);
	for (int64_t i = 0; i < n; i++)
		CHECK(fscanf(f, "%d", &x[i]) == 1);
	return x;
}

static void print_value(const char *name, int rc, double v)
{
	if (rc)
		printf(" %s=err", name);
	else if (isnan(v))
		printf(" %s=nan", name);
	else
		printf(" %s=%.17g", name, v);
}

// dense relevance to CSR (its non-zeros)
static void dense_rel(const float *d, int64_t r, int64_t c, EvalRel *rel)
{
	int64_t nnz = 0;
	for (int64_t k = 0; k < r * c; k++)
		nnz += d[k] != 0;
	rel->rows = r;
	rel->cols = c;
	rel->row_ptr = calloc((size_t)r + 1, sizeof *rel->row_ptr);
	rel->col = malloc(sizeof *rel->col * (size_t)(nnz ? nnz : 1));
	rel->val = malloc(sizeof *rel->val * (size_t)(nnz ? nnz : 1));
	CHECK(rel->row_ptr && rel->col && rel->val);
	nnz = 0;
	for (int64_t i = 0; i < r; i++) {
		for (int64_t j = 0; j < c; j++)
			if (d[i * c + j] != 0) {
				rel->col[nnz] = j;
				rel->val[nnz++] = d[i * c + j];
			}
		rel->row_ptr[i + 1] = nnz;
	}
}

static void dump_mir(FILE *f, int64_t nq, int64_t nc, int rescale)
{
	float *sim = read_floats(f, nq * nc), *d = read_floats(f, nq * nc);
	if (rescale)
		eval_mir_rescale(sim, nq * nc);
	EvalRel rel, relt;
	dense_rel(d, nq, nc, &rel);
	CHECK_OK(eval_rel_transpose(&rel, &relt));
	double v[4] = {0};
	int64_t used[4] = {0};
	int rc[4];
	rc[0] = eval_map(sim, nq, nc, 0, &rel, &v[0], &used[0]);
	rc[1] = eval_map(sim, nc, nq, 1, &relt, &v[1], &used[1]);
	rc[2] = eval_ndcg(sim, nq, nc, 0, &rel, &v[2], &used[2]);
	rc[3] = eval_ndcg(sim, nc, nq, 1, &relt, &v[3], &used[3]);
	printf("%s", rescale ? "mir_rescaled" : "mir");
	const char *names[] = {"map_vt", "map_tv", "ndcg_vt", "ndcg_tv"};
	for (int k = 0; k < 4; k++) {
		print_value(names[k], rc[k], v[k]);
		printf(" %s_used=%lld", names[k], (long long)used[k]);
	}
	printf("\n");
	eval_rel_free(&rel);
	eval_rel_free(&relt);
	free(sim);
	free(d);
}

static void dump_mlmap(FILE *f, int64_t n, int c)
{
	float *s = read_floats(f, n * c);
	int *g = read_ints(f, n * c);
	uint8_t *gt = malloc((size_t)(n * c) + 1);
	double *ap = malloc(sizeof *ap * (size_t)c), map = 0;
	CHECK(gt && ap);
	for (int64_t k = 0; k < n * c; k++)
		gt[k] = (uint8_t)g[k];
	int used = 0, rc = eval_multilabel_map(s, n, c, gt, &map, ap, &used);
	printf("mlmap");
	print_value("map", rc, map);
	printf(" used=%d", used);
	for (int k = 0; k < c; k++) {
		char name[32];
		snprintf(name, sizeof name, "ap%d", k);
		print_value(name, 0, ap[k]);
	}
	printf("\n");
	free(s);
	free(g);
	free(gt);
	free(ap);
}

static void dump_cls(FILE *f, int64_t n, int c)
{
	float *s = read_floats(f, n * c);
	int *label = read_ints(f, n);
	EvalClassAcc a = {0};
	int rc = eval_class_accuracy(s, n, c, label, &a);
	printf("cls");
	print_value("top1", rc, a.top1);
	print_value("mean_class", rc, a.mean_class);
	print_value("mean_class_union", rc, a.mean_class_union);
	printf(" present=%d present_union=%d\n", a.present, a.present_union);
	free(s);
	free(label);
}

static void dump_mcq(FILE *f, int64_t n, int c)
{
	float *s = read_floats(f, n * c);
	int *answer = read_ints(f, n), *type = read_ints(f, n);
	EvalMcq m = {0};
	int rc = eval_mcq_accuracy(s, n, c, answer, type, &m);
	printf("mcq");
	print_value("inter", rc, m.inter);
	print_value("intra", rc, m.intra);
	printf(" n_inter=%lld n_intra=%lld\n", (long long)m.n_inter, (long long)m.n_intra);
	free(s);
	free(answer);
	free(type);
}

static void dump_ekcls(FILE *f, int64_t n, int a)
{
	float *s = read_floats(f, n * a);
	int *verb = read_ints(f, a), *noun = read_ints(f, a), *label = read_ints(f, n);
	EvalEk100Cls r = {0};
	int rc = eval_ek100_cls(s, n, a, verb, noun, label, &r);
	printf("ekcls");
	const EvalClassAcc *acc[] = {&r.action, &r.verb, &r.noun};
	const double top5[] = {r.action_top5, r.verb_top5, r.noun_top5};
	const char *name[] = {"action", "verb", "noun"};
	for (int k = 0; k < 3; k++) {
		char key[32];
		snprintf(key, sizeof key, "%s_top1", name[k]);
		print_value(key, rc, acc[k]->top1);
		snprintf(key, sizeof key, "%s_top5", name[k]);
		print_value(key, rc, top5[k]);
		snprintf(key, sizeof key, "%s_mean_class", name[k]);
		print_value(key, rc, acc[k]->mean_class_union);
	}
	printf(" verbs=%d nouns=%d\n", r.verbs, r.nouns);
	free(s);
	free(verb);
	free(noun);
	free(label);
}

// a list of the confusion summary as "a:b:c,..." ("-" when empty)
static void print_list(const char *key, const int (*rows)[3], int n)
{
	printf(" %s=", key);
	for (int i = 0; i < n; i++)
		printf("%s%d:%d:%d", i ? "," : "", rows[i][0], rows[i][1], rows[i][2]);
	if (!n)
		printf("-");
}

static void print_head(const char *kind, int rc, const EvalHeadAcc *a)
{
	printf("%s", kind);
	print_value("top1", rc, a->top1);
	print_value("top5", rc, a->top5);
	print_value("mean_class", rc, a->mean_class);
	print_value("mean_class_union", rc, a->mean_class_union);
	print_value("majority_top1", rc, a->majority_top1);
	printf(" present=%d present_union=%d majority=%d zero_recall=%d", rc ? 0 : a->present,
	       rc ? 0 : a->present_union, rc ? 0 : a->majority, rc ? 0 : a->zero_recall);
	int rows[EVAL_CLS_TOP][3];
	for (int i = 0; i < a->n_confused; i++)
		rows[i][0] = a->confused[i].truth, rows[i][1] = a->confused[i].pred,
		rows[i][2] = (int)a->confused[i].count;
	print_list("confused", (const int(*)[3])rows, rc ? 0 : a->n_confused);
	for (int i = 0; i < a->n_worst; i++)
		rows[i][0] = a->worst[i].cls, rows[i][1] = (int)a->worst[i].right, rows[i][2] = (int)a->worst[i].n;
	print_list("worst", (const int(*)[3])rows, rc ? 0 : a->n_worst);
	for (int i = 0; i < a->n_best; i++)
		rows[i][0] = a->best[i].cls, rows[i][1] = (int)a->best[i].right, rows[i][2] = (int)a->best[i].n;
	print_list("best", (const int(*)[3])rows, rc ? 0 : a->n_best);
	printf("\n");
}

// a head's accuracy and confusion summary (eval_head_accuracy)
static void dump_head(FILE *f, int64_t n, int c)
{
	float *s = read_floats(f, n * c);
	int *label = read_ints(f, n);
	EvalHeadAcc a = {0};
	print_head("head", eval_head_accuracy(s, n, c, label, &a), &a);
	free(s);
	free(label);
}

// views (n, V, c) averaged, then the head's accuracy: "views N C" then V, then the scores
static void dump_views(FILE *f, int64_t n, int c)
{
	int V = 0;
	CHECK(fscanf(f, "%d", &V) == 1 && V >= 1);
	float *sv = read_floats(f, n * V * c), *s = malloc(sizeof *s * (size_t)(n * c));
	int *label = read_ints(f, n);
	CHECK(s);
	eval_views_mean(sv, n, V, c, s);
	EvalHeadAcc a = {0};
	print_head("views", eval_head_accuracy(s, n, c, label, &a), &a);
	free(sv);
	free(s);
	free(label);
}

// the (head 0, head 1) pair accuracy: "pair N K0" then K1, scores of both heads, both labels
static void dump_pair(FILE *f, int64_t n, int k0)
{
	int k1 = 0;
	CHECK(fscanf(f, "%d", &k1) == 1 && k1 >= 1);
	float *s0 = read_floats(f, n * k0), *s1 = read_floats(f, n * k1);
	int *l0 = read_ints(f, n), *l1 = read_ints(f, n);
	EvalPairAcc a = {0};
	int rc = eval_pair_accuracy(s0, k0, s1, k1, n, l0, l1, &a);
	printf("pair");
	print_value("top1", rc, a.top1);
	print_value("top5", rc, a.top5);
	print_value("mean_class", rc, a.mean_class);
	print_value("mean_class_union", rc, a.mean_class_union);
	printf(" n=%lld present=%d present_union=%d\n", rc ? 0LL : (long long)a.n, rc ? 0 : a.present,
	       rc ? 0 : a.present_union);
	free(s0);
	free(s1);
	free(l0);
	free(l1);
}

static int dump(const char *path)
{
	FILE *f = fopen(path, "r");
	CHECK(f);
	char kind[16];
	long long a, b;
	while (fscanf(f, "%15s %lld %lld", kind, &a, &b) == 3) {
		if (!strcmp(kind, "mir") || !strcmp(kind, "mir_rescaled"))
			dump_mir(f, a, b, !strcmp(kind, "mir_rescaled"));
		else if (!strcmp(kind, "mlmap"))
			dump_mlmap(f, a, (int)b);
		else if (!strcmp(kind, "cls"))
			dump_cls(f, a, (int)b);
		else if (!strcmp(kind, "mcq"))
			dump_mcq(f, a, (int)b);
		else if (!strcmp(kind, "ekcls"))
			dump_ekcls(f, a, (int)b);
		else if (!strcmp(kind, "head"))
			dump_head(f, a, (int)b);
		else if (!strcmp(kind, "views"))
			dump_views(f, a, (int)b);
		else if (!strcmp(kind, "pair"))
			dump_pair(f, a, (int)b);
		else
			CHECK(!"unknown case kind");
	}
	CHECK(feof(f));
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--dump"))
		return dump(argv[2]);
	test_class_accuracy();
	test_ek100_cls();
	test_multilabel_map();
	test_mcq();
	test_mir_rescale();
	printf("benchmark metrics: mean-class accuracy, EK-100 verb/noun/action, multi-label mAP, EgoMCQ, MIR rescale as computed by hand\n");
	return 0;
}
