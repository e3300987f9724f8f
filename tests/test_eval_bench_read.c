// The benchmark readers (tools/eval_bench.h) on small hand-written copies of each benchmark's files
// (tests/fixtures/bench) and on damaged variants of them: a missing column, a bad class id, a
// time outside the video, a repeated id, malformed JSON. Each refusal names the file and line.
#include "../tools/eval_bench.h" // defines: BenchSet, bench_read, bench_free, bench_match_sample, ...
#include "../tools/eval_input.h" // defines: eval_rel_read_shape
#include "testutil.h"            // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>  // defines: EINVAL, ENOENT
#include <math.h>   // defines: fabs, isinf
#include <stdio.h>  // defines: FILE, fopen, snprintf
#include <stdlib.h> // defines: malloc, free, mkdtemp
#include <string.h> // defines: strstr, strcmp

#define FIX "tests/fixtures/bench/"
#define NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) < 1e-9)

static char dir[64];

// a copy of fixture name with the first `from` replaced by `to`, as dir/bad-<name>
static const char *damaged(const char *name, const char *from, const char *to)
{
	static char path[4][300];
	static int k;
	char *p = path[k++ % 4], src[300];
	snprintf(src, sizeof src, FIX "%s", name);
	FILE *f = fopen(src, "rb");
	CHECK(f);
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	char *at = strstr(text, from);
	CHECK(at);
	snprintf(p, 300, "%s/bad-%d-%s", dir, k, name);
	f = fopen(p, "wb");
	CHECK(f);
	fwrite(text, 1, (size_t)(at - text), f);
	fputs(to, f);
	fputs(at + strlen(from), f);
	CHECK(!fclose(f));
	return p;
}

static void bad(BenchKind kind, const char *main, const char *aux, const char *needle)
{
	BenchSet b;
	char err[512] = "";
	int rc = bench_read(&b, kind, main, aux, err, sizeof err);
	if (rc >= 0 || !strstr(err, needle)) {
		fprintf(stderr, "%s %s: got %d '%s', expected a failure with '%s'\n", bench_kind_name(kind), main, rc,
			err, needle);
		exit(1);
	}
	printf("ok: %s\n", err);
}

static void test_ek100(void)
{
	BenchSet b;
	char err[512] = "";
	CHECK_OK(bench_read(&b, BENCH_EK100_MIR, FIX "EPIC_100_retrieval_test.csv",
			    FIX "EPIC_100_retrieval_test_sentence.csv", err, sizeof err));
	CHECK_EQ_INT(b.n, 3);
	CHECK(!strcmp(b.clip[1].video, "P01_11") && !strcmp(b.clip[1].caption, "open fridge, quickly"));
	NEAR(b.clip[2].start, 61.5);
	NEAR(b.clip[2].end, 63.25);
	CHECK_EQ_INT(b.n_sentences, 2); // the text side: not the clips
	CHECK_EQ_INT(b.sentence_clip[0], 2);
	CHECK_EQ_INT(b.sentence_clip[1], 1);
	CHECK(!strcmp(b.sentence[0], "take plate"));
	// sample i of the manifest against clip i
	CHECK_OK(bench_match_sample(&b, 2, "P02_01", 61.5 + 0.01, 63.25, 100, 1.0 / 30, err, sizeof err));
	CHECK_EQ_INT(bench_match_sample(&b, 2, "P02_01", 61.6, 63.25, 100, 1.0 / 30, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "line 4"));
	CHECK_EQ_INT(bench_match_sample(&b, 1, "P02_01", 4, 5.5, 100, 1.0 / 30, err, sizeof err), -EINVAL);
	CHECK_EQ_INT(bench_match_sample(&b, 3, "P02_01", 4, 5.5, 100, 1.0 / 30, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "only 3 clips"));
	bench_free(&b);
	// the clips alone (what prep imports)
	CHECK_OK(bench_read(&b, BENCH_EK100_MIR, FIX "EPIC_100_retrieval_test.csv", NULL, err, sizeof err));
	CHECK_EQ_INT(b.n, 3);
	CHECK_EQ_INT(b.n_sentences, 0);
	bench_free(&b);

	const char *csv = "EPIC_100_retrieval_test.csv", *sent = FIX "EPIC_100_retrieval_test_sentence.csv";
	bad(BENCH_EK100_MIR, damaged(csv, "stop_timestamp", "stop_time"), sent, ":1: no column 'stop_timestamp'");
	bad(BENCH_EK100_MIR, damaged(csv, "00:00:05.50", "00:00:03.50"), sent, ":3: the clip ends (3.500 s) before");
	bad(BENCH_EK100_MIR, damaged(csv, "00:01:03.25", "00:01:63.25"), sent, ":4: times");
	bad(BENCH_EK100_MIR, damaged(csv, "P02_01_0,", "P01_11_0,"), sent,
	    ":4: narration_id 'P01_11_0' repeats line 2");
	bad(BENCH_EK100_MIR, damaged(csv, ",7,168,take plate,take,0,plate,2,['plate'],[2]\n", "\n"), sent,
	    ":2: 6 fields, the header names 9");
	bad(BENCH_EK100_MIR, damaged(csv, "quickly\"", "quickly"), sent, ":3: a quoted field is not closed");
	const char *s = "EPIC_100_retrieval_test_sentence.csv";
	bad(BENCH_EK100_MIR, FIX "EPIC_100_retrieval_test.csv", damaged(s, "P01_11_1", "P09_99_9"),
	    ":3: narration_id 'P09_99_9' is no clip of");
	bad(BENCH_EK100_MIR, FIX "EPIC_100_retrieval_test.csv", damaged(s, "P01_11_1", "P02_01_0"),
	    ":3: narration_id 'P02_01_0' repeats line 2");
	bad(BENCH_EK100_MIR, FIX "EPIC_100_retrieval_test.csv", damaged(s, "narration_id,", "id,"),
	    ":1: no column 'narration_id'");
	bad(BENCH_EK100_MIR, FIX "nonexistent.csv", NULL, "nonexistent.csv");
}

// LaViLa's label space: the pairs of validation and train in "verb:noun" string order ("0:10"
// before "0:2"), each with its distinct narrations
static void test_ek100_cls(void)
{
	BenchSet b;
	char err[512] = "";
	const char *val = FIX "EPIC_100_validation.csv", *train = FIX "EPIC_100_train.csv";
	CHECK_OK(bench_read(&b, BENCH_EK100_CLS, val, train, err, sizeof err));
	CHECK_EQ_INT(b.n, 3);
	CHECK(!strcmp(b.clip[1].video, "P01_11") && !strcmp(b.clip[1].caption, "open fridge, quickly"));
	NEAR(b.clip[2].start, 61.5);
	CHECK_EQ_INT(b.classes, 4);
	const char *key[] = {"0:10", "0:2", "3:12", "3:4"};
	const int verb[] = {0, 0, 3, 3}, noun[] = {10, 2, 12, 4}, off[] = {0, 1, 3, 4, 5};
	for (int c = 0; c < 4; c++) {
		CHECK(!strcmp(b.class_name[c], key[c]));
		CHECK_EQ_INT(b.act_verb[c], verb[c]);
		CHECK_EQ_INT(b.act_noun[c], noun[c]);
	}
	for (int c = 0; c <= 4; c++)
		CHECK_EQ_INT(b.class_text_off[c], off[c]);
	CHECK_EQ_INT(b.n_class_text, 5); // "take plate" of both files once
	CHECK(!strcmp(b.class_text[1], "pick up plate") && !strcmp(b.class_text[2], "take plate"));
	CHECK(!strcmp(b.class_text[3], "open fridge, quickly") && !strcmp(b.class_text[4], "open door"));
	CHECK_EQ_INT(b.label[0], 1);
	CHECK_EQ_INT(b.label[1], 2);
	CHECK_EQ_INT(b.label[2], 1);
	bench_free(&b);
	// the clips alone (what prep imports): no label space
	CHECK_OK(bench_read(&b, BENCH_EK100_CLS, val, NULL, err, sizeof err));
	CHECK_EQ_INT(b.n, 3);
	CHECK_EQ_INT(b.classes, 0);
	bench_free(&b);

	const char *v = "EPIC_100_validation.csv", *t = "EPIC_100_train.csv";
	bad(BENCH_EK100_CLS, damaged(v, ",verb_class,", ",verb_cls,"), train, ":1: no column 'verb_class'");
	bad(BENCH_EK100_CLS, damaged(v, "open,3,fridge", "open,x3,fridge"), train,
	    ":3: verb_class 'x3', noun_class '12': not class ids");
	bad(BENCH_EK100_CLS, damaged(v, "fridge,12,", "fridge,-12,"), NULL, ":3: verb_class '3', noun_class '-12'");
	bad(BENCH_EK100_CLS, damaged(v, "P02_01_0,", "P01_11_0,"), train, ":4: narration_id 'P01_11_0' repeats line 2");
	bad(BENCH_EK100_CLS, damaged(v, "00:00:05.50", "00:00:03.50"), train, ":3: the clip ends (3.500 s) before");
	bad(BENCH_EK100_CLS, val, damaged(t, ",noun_class,", ",noun,"), ":1: no column 'noun_class'");
	bad(BENCH_EK100_CLS, val, damaged(t, "door,4,", "door,four,"), ":4: verb_class '3', noun_class 'four'");
	bad(BENCH_EK100_CLS, val, damaged(t, ",10,['knife'],[10]\n", "\n"), ":5: 12 fields, the header names 13");
}

static void test_charades(void)
{
	BenchSet b;
	char err[512] = "";
	CHECK_OK(bench_read(&b, BENCH_CHARADES_EGO, FIX "CharadesEgo_v1_test_only1st.csv",
			    FIX "Charades_v1_classes.txt", err, sizeof err));
	CHECK_EQ_INT(b.classes, 3);
	CHECK(!strcmp(b.class_name[2], "Taking some clothes from somewhere"));
	CHECK_EQ_INT(b.n, 3);
	CHECK(!strcmp(b.clip[0].video, "005BUEGO"));
	NEAR(b.clip[0].start, 0);
	NEAR(b.clip[0].end, 10.5); // the whole video
	NEAR(b.clip[2].end, 30);
	const uint8_t want[] = {1, 0, 1, 0, 0, 0, 0, 1, 0}; // the second video has no action
	for (int k = 0; k < 9; k++)
		CHECK_EQ_INT(b.multi[k], want[k]);
	CHECK(!strcmp(b.clip[0].caption, "Holding some clothes; Taking some clothes from somewhere"));
	bench_free(&b);

	const char *csv = "CharadesEgo_v1_test_only1st.csv", *cls = FIX "Charades_v1_classes.txt";
	bad(BENCH_CHARADES_EGO, damaged(csv, "c001 1.00", "c157 1.00"), cls,
	    ":4: unknown class 'c157' (not in the classes file)");
	bad(BENCH_CHARADES_EGO, damaged(csv, "c001 1.00", "x001 1.00"), NULL, ":4: unknown class 'x001'");
	bad(BENCH_CHARADES_EGO, damaged(csv, "c002 3.20 9.90", "c002 3.20 19.90"), cls,
	    ":2: action c002 at 3.20-19.90 s is outside the video (length 10.50 s)");
	bad(BENCH_CHARADES_EGO, damaged(csv, "c002 3.20 9.90", "c002 9.90 3.20"), cls, "are not START <= END");
	bad(BENCH_CHARADES_EGO, damaged(csv, "c002 3.20 9.90", "c002 3.20"), cls, "is not 'cNNN START END'");
	bad(BENCH_CHARADES_EGO, damaged(csv, ",actions,length,", ",actions,len,"), cls, ":1: no column 'length'");
	bad(BENCH_CHARADES_EGO, damaged(csv, ",12.00,", ",-12,"), cls, ":3: length '-12' is not a positive");
	bad(BENCH_CHARADES_EGO, damaged(csv, "0BNDREGO", "005BUEGO"), cls, ":4: id '005BUEGO' repeats line 2");
	const char *c = "Charades_v1_classes.txt", *main = FIX "CharadesEgo_v1_test_only1st.csv";
	bad(BENCH_CHARADES_EGO, main, damaged(c, "c001", "c002"), ":2: class c002, expected c001");
	bad(BENCH_CHARADES_EGO, main, damaged(c, "c001 Putting clothes somewhere", "c001"),
	    ":2: expected 'cNNN class name'");
}

static void test_egtea(void)
{
	BenchSet b;
	char err[512] = "";
	CHECK_OK(bench_read(&b, BENCH_EGTEA, FIX "egtea_test_split1.txt", FIX "egtea_action_idx.txt", err, sizeof err));
	CHECK_EQ_INT(b.classes, 3);
	CHECK(!strcmp(b.class_name[1], "open fridge")); // LaViLa: underscores to spaces, lower case
	CHECK_EQ_INT(b.n, 3);
	CHECK_EQ_INT(b.label[0], 2);
	CHECK_EQ_INT(b.label[1], 0);
	CHECK(!strcmp(b.clip[0].video, "OP01-R01-PastaSalad-1002316-1004005-F024051-F024101"));
	CHECK(b.clip[0].start == 0 && isinf(b.clip[0].end)); // the whole clip file
	CHECK(!strcmp(b.clip[0].caption, "take bowl"));
	// a whole-video clip matches the sample that covers its video
	CHECK_OK(bench_match_sample(&b, 0, b.clip[0].video, 0, 2.1, 2.1, 0.05, err, sizeof err));
	CHECK_EQ_INT(bench_match_sample(&b, 0, b.clip[0].video, 0, 1.5, 2.1, 0.05, err, sizeof err), -EINVAL);
	bench_free(&b);

	const char *split = "egtea_test_split1.txt", *act = FIX "egtea_action_idx.txt";
	bad(BENCH_EGTEA, damaged(split, "F024101 3 2 1", "F024101 4 2 1"), act,
	    ":1: action 4 is not in the actions file (1-3)");
	bad(BENCH_EGTEA, damaged(split, "F024101 3 2 1", "F024101 0 2 1"), act, ":1: expected '<clip> <action> <verb>");
	bad(BENCH_EGTEA, damaged(split, "F024101 3 2 1", "F024101 3 2"), act, ":1: expected");
	bad(BENCH_EGTEA,
	    damaged(split, "OP02-R02-TurkeySandwich-86230-88710-F002069-F002128",
		    "P20-R03-BaconAndEggs-421610-423410-F010109-F010151"),
	    act, ":3: clip 'P20-R03-BaconAndEggs-421610-423410-F010109-F010151' repeats line 2");
	const char *a = "egtea_action_idx.txt", *main = FIX "egtea_test_split1.txt";
	bad(BENCH_EGTEA, main, damaged(a, "Open_Fridge 2", "Open_Fridge 1"), ":2: action id 1 repeats line 1");
	bad(BENCH_EGTEA, main, damaged(a, "Open_Fridge 2", "Open_Fridge 4"), "no action 2 (ids must run from 1 to 4)");
	bad(BENCH_EGTEA, main, damaged(a, "Open_Fridge 2", "Open_Fridge"), ":2: expected '<action name> <id>'");
}

static void test_egomcq(void)
{
	BenchSet b;
	char err[512] = "";
	CHECK_OK(bench_read(&b, BENCH_EGOMCQ, FIX "egomcq.json", NULL, err, sizeof err));
	CHECK_EQ_INT(b.n_questions, 2);
	CHECK_EQ_INT(b.choices, 5);
	CHECK_EQ_INT(b.n, 10);
	CHECK(!strcmp(b.query[0], "#C C cuts an onion")); // by key, not by file order
	CHECK_EQ_INT(b.answer[0], 3);
	CHECK_EQ_INT(b.type[0], 1);
	CHECK_EQ_INT(b.answer[1], 0);
	CHECK_EQ_INT(b.type[1], 2);
	CHECK(!strcmp(b.clip[3].video, "v3"));
	NEAR(b.clip[3].start, 4.5);
	NEAR(b.clip[3].end, 6.5);
	NEAR(b.clip[6].start, 12.25); // a time written as a string
	CHECK(!strcmp(b.clip[5].caption, "#C C opens the drawer"));
	CHECK_EQ_INT(b.clip[5].line, 2);
	bench_free(&b);

	const char *j = "egomcq.json";
	bad(BENCH_EGOMCQ, damaged(j, "\"types\": 2", "\"types\": 3"), NULL,
	    ":1: question 1: types is not 1 (inter-video) or 2");
	bad(BENCH_EGOMCQ, damaged(j, "\"answer\": 3", "\"answer\": 5"), NULL,
	    ":7: question 0: the answer is not one of the choices");
	bad(BENCH_EGOMCQ, damaged(j, "\"clip_end\": 6.5", "\"clip_end\": 4"), NULL,
	    ":11: choice 3: clip_start/clip_end missing or not 0 <= start < end");
	bad(BENCH_EGOMCQ, damaged(j, "\"video_uid\": \"v4\", ", ""), NULL, ":12: choice 4 has no video_uid");
	bad(BENCH_EGOMCQ, damaged(j, "{\"1\":", "{\"2\":"), NULL, "no question 1 (keys must run 0..2)");
	bad(BENCH_EGOMCQ, damaged(j, "\"0\": {\"query\"", "\"1\": {\"query\""), NULL, ":7: a question key repeats");
	bad(BENCH_EGOMCQ, damaged(j, "\"4\": {\"video_uid\": \"v2\"", "\"5\": {\"video_uid\": \"v2\""), NULL,
	    "question 1: the choices are not 0..K-1");
	bad(BENCH_EGOMCQ, damaged(j, "\"4\": {\"video_uid\": \"v4\"", "\"5\": {\"video_uid\": \"v4\""), NULL,
	    "question 0: the choices are not 0..K-1");
	bad(BENCH_EGOMCQ, damaged(j, "\"clip_start\": \"12.25\"", "\"clip_start\": \"soon\""), NULL,
	    ":3: a time is not a number");
	bad(BENCH_EGOMCQ, damaged(j, "\"types\": 1,", "\"types\": 1"), NULL, ":8: malformed JSON at byte");
	bad(BENCH_EGOMCQ, damaged(j, "\"answer\": 0, ", ""), NULL, "question 1: no answer");
	bad(BENCH_EGOMCQ, FIX "egomcq.json", FIX "egomcq.json", "EgoMCQ has no second file");
}

// the MIR relevance is clips x sentences: eval_rel_read_shape reads a rectangular matrix
static void test_rel_shape(void)
{
	char path[128], err[512] = "";
	snprintf(path, sizeof path, "%s/mir.rel", dir);
	FILE *f = fopen(path, "w");
	CHECK(f && fputs("avclip-relevance 1 3 2\n0 0 1\n2 0 1\n1 1 0.5\n", f) >= 0 && !fclose(f));
	EvalRel rel;
	CHECK_OK(eval_rel_read_shape(path, 3, 2, &rel, err, sizeof err));
	CHECK_EQ_INT(rel.rows, 3);
	CHECK_EQ_INT(rel.cols, 2);
	CHECK_EQ_INT(rel.row_ptr[3], 3);
	eval_rel_free(&rel);
	CHECK_EQ_INT(eval_rel_read_shape(path, 4, 2, &rel, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "the matrix is 3 x 2, want 4 x 2"));
	f = fopen(path, "w");
	CHECK(f && fputs("avclip-relevance 1 3 2\n0 2 1\n", f) >= 0 && !fclose(f));
	CHECK_EQ_INT(eval_rel_read_shape(path, 3, 2, &rel, err, sizeof err), -EINVAL);
	CHECK(strstr(err, ":2: index (0, 2) out of the 3 x 2 matrix"));
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_eval_bench_read.XXXXXX");
	CHECK(mkdtemp(dir));
	test_ek100();
	test_ek100_cls();
	test_charades();
	test_egtea();
	test_egomcq();
	test_rel_shape();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	printf("benchmark readers: EK-100 MIR and CLS, Charades-Ego, EGTEA, EgoMCQ files read, damaged ones refused\n");
	return 0;
}
