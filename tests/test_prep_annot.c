// Annotation importers: EPIC-KITCHENS-100's train CSV (quoted list fields, HH:MM:SS times),
// Ego4D narration JSON (both passes, escapes, '#' tags, records without a time), generic
// CSV/TSV with and without a header, BOM, quoted commas and newlines, and each bad record.
#include "../tools/prep_annot.h" // defines: prep_annot_load, prep_parse_time, ...

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails;
#define CHECK(c)                                                                                                       \
	do {                                                                                                           \
		if (!(c)) {                                                                                            \
			printf("FAIL line %d: %s\n", __LINE__, #c);                                                    \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

static int clip_is(const PrepAnnot *a, const char *video, double s, double e, const char *cap)
{
	int ok = strcmp(a->video, video) == 0 && fabs(a->start - s) < 1e-6 && fabs(a->end - e) < 1e-6 &&
		 strcmp(a->caption, cap) == 0;
	if (!ok)
		printf("  got %s %.3f-%.3f '%s'\n", a->video, a->start, a->end, a->caption);
	return ok;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	fputs(text, f);
	fclose(f);
}

int main(void)
{
	CHECK(prep_parse_time("12.5") == 12.5);
	CHECK(prep_parse_time("00:01:02.50") == 62.5);
	CHECK(prep_parse_time("1:02") == 62);
	CHECK(prep_parse_time("abc") < 0 && prep_parse_time("") < 0 && prep_parse_time("1:2:3:4") < 0 &&
	      prep_parse_time("-3") < 0);

	PrepAnnotList l;
	CHECK(prep_annot_load(&l, "tests/fixtures/prep_epic_train.csv", "auto", 1.0) == 0);
	CHECK(l.n == 4 && l.n_problems == 0);
	if (l.n == 4) {
		CHECK(clip_is(&l.a[0], "P01_01", 0.14, 3.37, "open door"));
		CHECK(clip_is(&l.a[3], "P01_01", 62.5, 63.0, "put down plate, cup and bowl"));
		CHECK(l.a[3].line == 5);
	}
	prep_annot_free(&l);

	CHECK(prep_bench_load(&l, "tests/fixtures/prep_epic_train.csv", "epic") == 1); // not a benchmark
	// a benchmark's test list: every clip in order (an EGTEA clip is its whole file, end +inf)
	CHECK(prep_bench_load(&l, "tests/fixtures/bench/egtea_test_split1.txt", "egtea") == 0);
	CHECK(l.n == 3 && l.n_problems == 0);
	if (l.n == 3)
		CHECK(!strcmp(l.a[2].video, "OP02-R02-TurkeySandwich-86230-88710-F002069-F002128") &&
		      l.a[2].start == 0 && isinf(l.a[2].end) && l.a[2].line == 3);
	prep_annot_free(&l);
	CHECK(prep_bench_load(&l, "tests/fixtures/bench/CharadesEgo_v1_test_only1st.csv", "charades-ego") == 0);
	CHECK(l.n == 3 && l.a[0].end == 10.5 && !strcmp(l.a[0].caption, "c000; c002"));
	prep_annot_free(&l);

	CHECK(prep_annot_load(&l, "tests/fixtures/prep_ego4d_narration.json", "auto", 1.0) == 0);
	CHECK(l.n == 3 && l.bad_record == 1 && l.n_problems == 1);
	if (l.n == 3) {
		const char *uid = "0a02a1ed-a327-4753-b270-e95298984b96";
		CHECK(clip_is(&l.a[0], uid, 2.5, 4.5, "C opens the fridge"));
		CHECK(clip_is(&l.a[1], uid, 0.0, 1.4, "C picks up a \"red\" cup\xc3\xa9"));
		CHECK(clip_is(&l.a[2], uid, 9.0, 11.0, "man X walks \xf0\x9f\x98\x80 in"));
	}
	prep_annot_free(&l);

	char dir[] = "/tmp/test_prep_annot_XXXXXX", p[256];
	if (!mkdtemp(dir))
		return 1;
	// one bad record stops the import: the manifest must hold all the benchmark's clips
	snprintf(p, sizeof(p), "%s/split.txt", dir);
	write_file(p, "OP01-R01-PastaSalad-1002316-1004005-F024051-F024101 3 2 1\nP20-R03 x 1 1\n");
	CHECK(prep_bench_load(&l, p, "egtea") == -EBADMSG);
	CHECK(l.n_problems == 1 && strstr(l.problems[0], ":2: expected '<clip> <action> <verb> <noun>'"));
	prep_annot_free(&l);
	// header in another order, BOM, quoted comma and newline, CRLF
	snprintf(p, sizeof(p), "%s/a.csv", dir);
	write_file(p, "\xef\xbb\xbf"
		      "caption,video,end,start\r\n\"a, b\",v1,2,1\r\n\"two\nlines\",v2,4.5,3\r\n\r\n");
	CHECK(prep_annot_load(&l, p, "auto", 1) == 0 && l.n == 2);
	if (l.n == 2) {
		CHECK(clip_is(&l.a[0], "v1", 1, 2, "a, b"));
		CHECK(clip_is(&l.a[1], "v2", 3, 4.5, "two\nlines"));
		CHECK(l.a[1].line == 3);
	}
	prep_annot_free(&l);
	// no header, TSV
	snprintf(p, sizeof(p), "%s/b.tsv", dir);
	write_file(p, "v1\t0\t1.5\tthe first, with comma\nv1\t2\t3\tsecond\n");
	CHECK(prep_annot_load(&l, p, "auto", 1) == 0 && l.n == 2);
	if (l.n == 2)
		CHECK(clip_is(&l.a[0], "v1", 0, 1.5, "the first, with comma"));
	prep_annot_free(&l);
	// every kind of bad record, one problem line each
	snprintf(p, sizeof(p), "%s/c.csv", dir);
	write_file(p, "video,start,end,caption\n"
		      "v,1,2,good\n"
		      "v,1,2,bad \xc3\x28 utf8\n"
		      "v,x,2,bad time\n"
		      "v,5,4,reversed\n"
		      "v,1\n"
		      "../etc,1,2,escaping id\n");
	CHECK(prep_annot_load(&l, p, "csv", 1) == 0);
	CHECK(l.n == 1 && l.bad_utf8 == 1 && l.bad_time == 2 && l.bad_record == 2 && l.n_problems == 5);
	for (size_t i = 0; i < l.n_problems; i++)
		printf("  problem: %s\n", l.problems[i]);
	prep_annot_free(&l);
	// non-finite times: one report line per record, the good record kept (strtod took "nan",
	// "inf", "infinity", hex and 1e999)
	snprintf(p, sizeof(p), "%s/nan.csv", dir);
	write_file(p, "video,start,end,caption\n"
		      "v,nan,2,nan start\n"
		      "v,1,inf,inf end\n"
		      "v,1,INFINITY,infinity end\n"
		      "v,0x1p1,3,hex start\n"
		      "v,1,1e999,overflow end\n"
		      "v,1,2,good\n");
	CHECK(prep_annot_load(&l, p, "csv", 1) == 0);
	CHECK(l.n == 1 && l.bad_time == 5 && l.n_problems == 5);
	for (size_t i = 0; i < l.n_problems; i++)
		printf("  problem: %s\n", l.problems[i]);
	prep_annot_free(&l);
	CHECK(prep_parse_time("nan") < 0 && prep_parse_time("inf") < 0 && prep_parse_time("1e3") < 0 &&
	      prep_parse_time("1:nan") < 0 && prep_parse_time(".5") == 0.5);
	snprintf(p, sizeof(p), "%s/nan.json", dir);
	write_file(
		p,
		"{\"v\": {\"narration_pass_1\": {\"narrations\": [{\"timestamp_sec\": NaN, \"narration_text\": \"#C C a\"},"
		"{\"timestamp_sec\": Infinity, \"narration_text\": \"#C C b\"}, {\"timestamp_sec\": 1e999, \"narration_text\": \"c\"},"
		"{\"timestamp_sec\": -Infinity, \"narration_text\": \"d\"}, {\"timestamp_sec\": 3, \"narration_text\": \"#C C e\"}]}}}");
	CHECK(prep_annot_load(&l, p, "auto", 1) == 0);
	CHECK(l.n == 1 && l.bad_time == 4 && l.n_problems == 4);
	for (size_t i = 0; i < l.n_problems; i++)
		printf("  problem: %s\n", l.problems[i]);
	prep_annot_free(&l);
	// malformed JSON is an error for the whole file that says where (no leak of the text read
	// so far: the sanitizer build checks); unknown formats too
	snprintf(p, sizeof(p), "%s/d.json", dir);
	write_file(
		p,
		"{\"v\": {\"narration_pass_1\": {\"narrations\": [{\"narration_text\": \"a b\", \"timestamp_sec\": 1,");
	CHECK(prep_annot_load(&l, p, "auto", 1) == -EBADMSG);
	CHECK(l.n_problems == 1 &&
	      strstr(l.problems[0], "malformed JSON at byte 88 (line 1, column 89): the file ends inside a value"));
	if (l.n_problems)
		printf("  problem: %s\n", l.problems[0]);
	prep_annot_free(&l);
	write_file(
		p,
		"{\"v\": {\"narration_pass_1\": {\"narrations\": [{\"narration_text\": \"a b\",\n \"timestamp_sec\": ttt}]}}}");
	CHECK(prep_annot_load(&l, p, "auto", 1) == -EBADMSG);
	CHECK(l.n_problems == 1 && strstr(l.problems[0], "byte 87 (line 2, column 19)"));
	if (l.n_problems)
		printf("  problem: %s\n", l.problems[0]);
	prep_annot_free(&l);
	write_file(p, "{} trailing");
	CHECK(prep_annot_load(&l, p, "auto", 1) == -EBADMSG);
	prep_annot_free(&l);
	// an empty file: one report line
	snprintf(p, sizeof(p), "%s/empty.csv", dir);
	write_file(p, "");
	CHECK(prep_annot_load(&l, p, "auto", 1) == 0 && l.n == 0 && l.n_problems == 1 && l.bad_record == 1);
	prep_annot_free(&l);
	// a NUL byte inside a CSV record: the record is refused, not cut
	snprintf(p, sizeof(p), "%s/nul.csv", dir);
	FILE *nf = fopen(p, "wb");
	static const char nul_csv[] = "v,1,2,cap\0tion\nv,1,2,ok\n";
	fwrite(nul_csv, 1, sizeof nul_csv - 1, nf);
	fclose(nf);
	CHECK(prep_annot_load(&l, p, "csv", 1) == 0 && l.n == 1 && l.bad_record == 1);
	prep_annot_free(&l);
	snprintf(p, sizeof(p), "%s/d.json", dir);
	CHECK(prep_annot_load(&l, p, "yaml", 1) == -EINVAL);
	prep_annot_free(&l);
	CHECK(prep_annot_load(&l, "/nonexistent/x.csv", "auto", 1) == -ENOENT);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("note: could not remove %s\n", dir);
	printf("%s\n", fails ? "FAILED" : "EPIC, Ego4D, CSV and TSV import as expected; bad records reported");
	return fails ? 1 : 0;
}
