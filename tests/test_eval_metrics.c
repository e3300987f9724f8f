// tools/eval's metrics on hand-made matrices with known answers: ranks with ties, R@K, median
// rank, EPIC-style mAP and nDCG (both directions, and against a full-sort reference on random
// matrices with ties), top-k accuracy, and bad shapes refused.
#include "eval.h"     // defines: eval_ranks, eval_retrieval, eval_map, eval_ndcg, ...
#include "testutil.h" // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>  // defines: EINVAL
#include <math.h>   // defines: fabs, log2
#include <stdlib.h> // defines: rand, srand

#define NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) < 1e-6)

static void test_similarity(void)
{
	const float a[] = {1, 0, 0, 2}, b[] = {1, 1, 3, 0, 0, -1}; // (2, 2), (3, 2)
	float sim[6];
	CHECK_OK(eval_similarity(a, 2, b, 3, 2, sim));
	const float want[] = {1, 3, 0, 2, 0, -2};
	for (int i = 0; i < 6; i++)
		NEAR(sim[i], want[i]);
}

static void test_ranks(void)
{
	const float sim[] = {0.9f, 0.1f, 0.5f,  //
			     0.8f, 0.2f, 0.3f,  // match 0.2: 0.8 and 0.3 above -> 3
			     0.5f, 0.5f, 0.5f}; // match ties with lower indices 0, 1 -> 3
	int64_t rank[3];
	CHECK_OK(eval_ranks(sim, 3, 3, 0, NULL, rank));
	CHECK_EQ_INT(rank[0], 1);
	CHECK_EQ_INT(rank[1], 3);
	CHECK_EQ_INT(rank[2], 3);
	EvalRetrieval r;
	CHECK_OK(eval_retrieval(rank, 3, &r));
	NEAR(r.r1, 1.0 / 3);
	NEAR(r.r5, 1);
	NEAR(r.median_rank, 3);
	NEAR(r.mean_rank, 7.0 / 3);
	// the other direction reads columns: (0.9 .8 .5) -> 1, (.1 .2 .5) -> 2, (.5 .3 .5) -> 2 (tie, j=0 first)
	CHECK_OK(eval_ranks(sim, 3, 3, 1, NULL, rank));
	CHECK_EQ_INT(rank[0], 1);
	CHECK_EQ_INT(rank[1], 2);
	CHECK_EQ_INT(rank[2], 2);
	// explicit ground truth
	const int64_t gt[] = {2, 0, 1};
	CHECK_OK(eval_ranks(sim, 3, 3, 0, gt, rank));
	CHECK_EQ_INT(rank[0], 2);
	CHECK_EQ_INT(rank[1], 1);
	CHECK_EQ_INT(rank[2], 2);
	const int64_t bad[] = {0, 3, 0};
	CHECK_EQ_INT(eval_ranks(sim, 3, 3, 0, bad, rank), -EINVAL);
}

// every candidate of the query's group is a match: the best-placed one counts
static void test_grouped(void)
{
	const float sim[] = {0.1f, 0.9f, 0.5f, 0.5f, // group 0: j=0, j=2 (0.5, ahead of j=3 by index) -> 2
			     0.7f, 0.2f, 0.3f, 0.6f, // group 1: j=1, j=3 (0.6) -> 2
			     0.0f, 0.0f, 0.0f, 0.0f};
	const int64_t cg[] = {0, 1, 0, 1}, qg[] = {0, 1, 2};
	int64_t rank[3];
	CHECK_OK(eval_ranks_grouped(sim, 2, 4, 0, qg, cg, rank));
	CHECK_EQ_INT(rank[0], 2);
	CHECK_EQ_INT(rank[1], 2);
	CHECK_EQ_INT(eval_ranks_grouped(sim, 3, 4, 0, qg, cg, rank), -EINVAL); // group 2 has no candidate
	// singleton groups are the plain ranks
	const int64_t id[] = {0, 1, 2, 3};
	int64_t plain[3];
	CHECK_OK(eval_ranks_grouped(sim, 3, 4, 0, id, id, rank));
	CHECK_OK(eval_ranks(sim, 3, 4, 0, NULL, plain));
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(rank[i], plain[i]);
	// chance: 2 matches of 4 -> R@1 1/2, R@5 1, expected first place 5/3
	EvalRetrieval c, p;
	const int64_t two[] = {2, 2}, one[100] = {[0 ... 99] = 1};
	eval_chance_grouped(4, two, 2, &c);
	NEAR(c.r1, 0.5);
	NEAR(c.r5, 1);
	NEAR(c.mean_rank, 5.0 / 3);
	eval_chance_grouped(100, one, 100, &c);
	eval_chance(100, &p);
	NEAR(c.r1, p.r1);
	NEAR(c.r5, p.r5);
	NEAR(c.r10, p.r10);
	NEAR(c.median_rank, p.median_rank);
}

// copies of one caption are one candidate: the groups are ranked by their best member
static void test_distinct(void)
{
	// a query (video) against 6 captions: group 0 = {0, 3, 5} (copies: 0.4 each), group 1 = {1, 4}
	// (0.9), group 2 = {2} (0.1). By members the first copy of group 0 places 3rd (behind the two of
	// group 1); by groups, 2nd.
	const float sim[] = {0.4f, 0.9f, 0.1f, 0.4f, 0.9f, 0.4f,  // query of group 0
			     0.4f, 0.9f, 0.1f, 0.4f, 0.9f, 0.4f,  // query of group 2
			     0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}; // all tied: the lower best index first
	const int64_t cg[] = {0, 1, 2, 0, 1, 0}, qg[] = {0, 2, 1}, qbad[] = {3};
	int64_t rank[3], plain[3];
	CHECK_OK(eval_ranks_grouped(sim, 1, 6, 0, qg, cg, rank));
	CHECK_EQ_INT(rank[0], 3);
	CHECK_OK(eval_ranks_distinct(sim, 3, 6, 0, qg, cg, 3, rank));
	CHECK_EQ_INT(rank[0], 2);
	CHECK_EQ_INT(rank[1], 3);
	CHECK_EQ_INT(rank[2], 2); // group 1's best is j=1, behind group 0's j=0 on the tie
	CHECK_EQ_INT(eval_ranks_distinct(sim, 1, 6, 0, qbad, cg, 3, rank), -EINVAL); // no such group
	const int64_t cbad[] = {0, 1, 2, 0, 1, 7};
	CHECK_EQ_INT(eval_ranks_distinct(sim, 1, 6, 0, qg, cbad, 3, rank), -EINVAL);
	// singleton groups are the plain ranks, transposed too
	const int64_t id[] = {0, 1, 2, 3, 4, 5};
	CHECK_OK(eval_ranks_distinct(sim, 3, 6, 0, id, id, 6, rank));
	CHECK_OK(eval_ranks(sim, 3, 6, 0, NULL, plain));
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(rank[i], plain[i]);
	const float sq[] = {0.2f, 0.8f, 0.5f, 0.1f, 0.9f, 0.3f, 0.7f, 0.6f, 0.4f};
	CHECK_OK(eval_ranks_distinct(sq, 3, 3, 1, id, id, 3, rank));
	CHECK_OK(eval_ranks(sq, 3, 3, 1, NULL, plain));
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(rank[i], plain[i]);
}

static void test_recall_median(void)
{
	int64_t rank[12];
	for (int i = 0; i < 12; i++)
		rank[i] = 12 - i; // 12 .. 1
	EvalRetrieval r, c;
	CHECK_OK(eval_retrieval(rank, 12, &r));
	NEAR(r.r1, 1.0 / 12);
	NEAR(r.r5, 5.0 / 12);
	NEAR(r.r10, 10.0 / 12);
	NEAR(r.median_rank, 6.5);
	NEAR(r.mean_rank, 6.5);
	CHECK_OK(eval_retrieval(rank, 11, &r)); // 12 .. 2: median 7
	NEAR(r.median_rank, 7);
	NEAR(r.r1, 0);
	CHECK_EQ_INT(eval_retrieval(rank, 0, &r), -EINVAL);
	eval_chance(4, &c);
	NEAR(c.r1, 0.25);
	NEAR(c.r5, 1);
	NEAR(c.median_rank, 2.5);
	eval_chance(100, &c);
	NEAR(c.r5, 0.05);
	NEAR(c.r10, 0.1);
}

// rel (3, 5): row 0 {0: 0.5, 1: 1, 3: 1}, row 1 empty, row 2 {4: 1}
static void make_rel(EvalRel *rel)
{
	static int64_t row_ptr[] = {0, 3, 3, 4}, col[] = {0, 1, 3, 4};
	static float val[] = {0.5f, 1, 1, 1};
	*rel = (EvalRel){.rows = 3, .cols = 5, .row_ptr = row_ptr, .col = col, .val = val};
}

static void test_map_ndcg(void)
{
	const float sim[] = {0.9f, 0.8f, 0.7f, 0.6f, 0.5f, //
			     0.3f, 0.2f, 0.1f, 0.0f, 0.4f, //
			     0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
	EvalRel rel;
	make_rel(&rel);
	double v;
	int64_t used;
	// row 0: relevance-1 items at places 2 and 4 -> (1/2 + 2/4) / 2; row 2: place 1 -> 1; row 1 left out
	CHECK_OK(eval_map(sim, 3, 5, 0, &rel, &v, &used));
	CHECK_EQ_INT(used, 2);
	NEAR(v, (0.5 + 1.0) / 2);
	// row 0: k = 3 places: rel 0.5, 1, 0 against the ideal 1, 1, 0.5
	double dcg = 0.5 / log2(2) + 1 / log2(3), idcg = 1 / log2(2) + 1 / log2(3) + 0.5 / log2(4);
	CHECK_OK(eval_ndcg(sim, 3, 5, 0, &rel, &v, &used));
	CHECK_EQ_INT(used, 2);
	NEAR(v, (dcg / idcg + 1.0) / 2);
	// the same through the transposed layout: simT (5, 3), relT (5, 3) transposed back
	float simt[15];
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 5; j++)
			simt[j * 3 + i] = sim[i * 5 + j];
	double w;
	CHECK_OK(eval_map(simt, 3, 5, 1, &rel, &w, &used));
	CHECK_OK(eval_map(sim, 3, 5, 0, &rel, &v, NULL));
	NEAR(w, v);
	// a perfect ranking scores 1 on both
	EvalRel relt;
	CHECK_OK(eval_rel_transpose(&rel, &relt));
	CHECK_EQ_INT(relt.rows, 5);
	CHECK_EQ_INT(relt.cols, 3);
	CHECK_EQ_INT(relt.row_ptr[5], 4);
	CHECK_EQ_INT(relt.row_ptr[1] - relt.row_ptr[0], 1); // column 0 has row 0
	CHECK_EQ_INT(relt.row_ptr[3] - relt.row_ptr[2], 0); // column 2 has none
	float perfect[15];
	for (int j = 0; j < 5; j++)
		for (int i = 0; i < 3; i++)
			perfect[j * 3 + i] = 0;
	for (int64_t j = 0; j < relt.rows; j++)
		for (int64_t p = relt.row_ptr[j]; p < relt.row_ptr[j + 1]; p++)
			perfect[j * 3 + relt.col[p]] = relt.val[p];
	// relt rows 0, 1, 3, 4 have one relevant query each; row 0's has relevance 0.5 (not 1): mAP skips it
	CHECK_OK(eval_map(perfect, 5, 3, 0, &relt, &v, &used));
	CHECK_EQ_INT(used, 3);
	NEAR(v, 1);
	CHECK_OK(eval_ndcg(perfect, 5, 3, 0, &relt, &v, &used));
	CHECK_EQ_INT(used, 4);
	NEAR(v, 1);
	// the worst ranking for relt row 4 (query 2 relevant, scored lowest) has AP 1/3
	perfect[4 * 3 + 2] = -1;
	CHECK_OK(eval_map(perfect, 5, 3, 0, &relt, &v, &used));
	NEAR(v, (1 + 1 + 1.0 / 3) / 3);
	eval_rel_free(&relt);
	// shapes must agree
	CHECK_EQ_INT(eval_map(sim, 5, 3, 0, &rel, &v, &used), -EINVAL);
	CHECK_EQ_INT(eval_ndcg(sim, 3, 4, 0, &rel, &v, &used), -EINVAL);
}

// The EPIC definitions done the slow way: sort every row (stable, descending) and walk it.
static void reference(const float *sim, int nq, int nc, int transposed, const EvalRel *rel, double *map, double *ndcg)
{
	double sm = 0, sn = 0;
	int um = 0, un = 0;
	int order[64];
	float relv[64];
	for (int i = 0; i < nq; i++) {
		float row[64];
		for (int j = 0; j < nc; j++) {
			row[j] = transposed ? sim[j * nq + i] : sim[i * nc + j];
			relv[j] = 0;
			order[j] = j;
		}
		for (int64_t p = rel->row_ptr[i]; p < rel->row_ptr[i + 1]; p++)
			relv[rel->col[p]] = rel->val[p];
		for (int a = 1; a < nc; a++) // insertion sort: stable
			for (int b = a; b > 0 && row[order[b]] > row[order[b - 1]]; b--) {
				int t = order[b];
				order[b] = order[b - 1];
				order[b - 1] = t;
			}
		int ones = 0, pos = 0, found = 0;
		double ap = 0, dcg = 0, idcg = 0;
		float sorted[64];
		for (int j = 0; j < nc; j++) {
			ones += relv[j] >= 1;
			if (relv[j] > 0)
				sorted[pos++] = relv[j];
		}
		for (int p = 0; p < nc; p++)
			if (relv[order[p]] >= 1)
				ap += (double)++found / (p + 1);
		for (int a = 1; a < pos; a++)
			for (int b = a; b > 0 && sorted[b] > sorted[b - 1]; b--) {
				float t = sorted[b];
				sorted[b] = sorted[b - 1];
				sorted[b - 1] = t;
			}
		for (int p = 0; p < pos; p++) {
			dcg += relv[order[p]] / log2(p + 2.0);
			idcg += sorted[p] / log2(p + 2.0);
		}
		if (ones) {
			sm += ap / ones;
			um++;
		}
		if (pos) {
			sn += dcg / idcg;
			un++;
		}
	}
	*map = sm / um;
	*ndcg = sn / un;
}

// random matrices with many ties (scores on a coarse grid) and graded relevance, both layouts
static void test_against_reference(void)
{
	enum { NQ = 37, NC = 53 };
	static float sim[NQ * NC];
	static int64_t row_ptr[NQ + 1], col[NQ * NC];
	static float val[NQ * NC];
	srand(3);
	for (int round = 0; round < 20; round++) {
		for (int k = 0; k < NQ * NC; k++)
			sim[k] = (float)(rand() % 9) / 8;
		int64_t nnz = 0;
		for (int i = 0; i < NQ; i++) {
			row_ptr[i] = nnz;
			for (int j = 0; j < NC; j++)
				if (rand() % 6 == 0 || j == i) {
					col[nnz] = j;
					val[nnz++] = (rand() % 3 == 0) ? 1.0f : (float)(1 + rand() % 3) / 4;
				}
		}
		row_ptr[NQ] = nnz;
		EvalRel rel = {.rows = NQ, .cols = NC, .row_ptr = row_ptr, .col = col, .val = val}, relt;
		double m, g, rm, rg;
		CHECK_OK(eval_map(sim, NQ, NC, 0, &rel, &m, NULL));
		CHECK_OK(eval_ndcg(sim, NQ, NC, 0, &rel, &g, NULL));
		reference(sim, NQ, NC, 0, &rel, &rm, &rg);
		NEAR(m, rm);
		NEAR(g, rg);
		// the other direction: queries are the columns of sim
		CHECK_OK(eval_rel_transpose(&rel, &relt));
		CHECK_OK(eval_map(sim, NC, NQ, 1, &relt, &m, NULL));
		CHECK_OK(eval_ndcg(sim, NC, NQ, 1, &relt, &g, NULL));
		reference(sim, NC, NQ, 1, &relt, &rm, &rg);
		NEAR(m, rm);
		NEAR(g, rg);
		eval_rel_free(&relt);
	}
}

static void test_topk(void)
{
	const float s[] = {0.1f, 0.2f, 0.9f, 0.0f,  // label 2: first
			   0.5f, 0.5f, 0.7f, 0.1f,  // label 0: after 2, tied with 1 but lower index -> second
			   1,    1,    1,    1,     // unlabelled
			   0.3f, 0.3f, 0.3f, 0.3f}; // label 3: all tied -> fourth
	const int label[] = {2, 0, -1, 3};
	double acc;
	int64_t used;
	CHECK_OK(eval_topk_accuracy(s, 4, 4, label, 1, &acc, &used));
	CHECK_EQ_INT(used, 3);
	NEAR(acc, 1.0 / 3);
	CHECK_OK(eval_topk_accuracy(s, 4, 4, label, 2, &acc, &used));
	NEAR(acc, 2.0 / 3);
	CHECK_OK(eval_topk_accuracy(s, 4, 4, label, 4, &acc, &used));
	NEAR(acc, 1);
	const int bad[] = {2, 4, 0, 0};
	CHECK_EQ_INT(eval_topk_accuracy(s, 4, 4, bad, 1, &acc, &used), -EINVAL);
	const int none[] = {-1, -1, -1, -1};
	CHECK_EQ_INT(eval_topk_accuracy(s, 4, 4, none, 1, &acc, &used), -EINVAL);
}

int main(void)
{
	test_similarity();
	test_ranks();
	test_grouped();
	test_distinct();
	test_recall_median();
	test_map_ndcg();
	test_against_reference();
	test_topk();
	printf("eval metrics: ranks, R@K, median rank, mAP, nDCG, top-k all as computed by hand\n");
	return 0;
}
