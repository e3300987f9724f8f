// tools/eval's side inputs: the relevance file (good, and every kind of bad line named by line
// number), class and label files, classes and relevance derived from synth captions, prompts.
#include "../tools/eval_input.h" // defines: eval_rel_read, eval_classes_read, eval_classes_from_captions, ...
#include "testutil.h"            // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>  // defines: EINVAL, ENOENT, ...
#include <stdlib.h> // defines: malloc, free, system, mkdtemp
#include <string.h> // defines: memcmp, strstr, strcmp

static char dir[] = "/tmp/test_eval_input_XXXXXX";

static const char *put(const char *name, const char *text)
{
	static char path[8][300];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 300, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	CHECK(f && fputs(text, f) >= 0 && !fclose(f));
	return p;
}

static void rel_bad(const char *text, const char *needle)
{
	EvalRel rel;
	char err[512] = "";
	int rc = eval_rel_read(put("bad.rel", text), 3, &rel, err, sizeof err);
	if (rc != -EINVAL || !strstr(err, needle)) {
		fprintf(stderr, "relevance '%s': got %d '%s', expected -EINVAL with '%s'\n", text, rc, err, needle);
		exit(1);
	}
	printf("ok: %s\n", err);
}

static void cls_bad(const char *classes, const char *labels, const char *needle)
{
	EvalClasses c;
	char err[512] = "";
	int rc = eval_classes_read(put("c.txt", classes), put("l.txt", labels), 3, &c, err, sizeof err);
	if (rc != -EINVAL || !strstr(err, needle)) {
		fprintf(stderr, "classes: got %d '%s', expected -EINVAL with '%s'\n", rc, err, needle);
		exit(1);
	}
	printf("ok: %s\n", err);
}

int main(void)
{
	CHECK(mkdtemp(dir));
	char err[512];
	EvalRel rel;
	CHECK_OK(eval_rel_read(
		put("ok.rel", "# video caption relevance\navclip-relevance 1 3 3\n2 0 0.5\n0 0 1\n\n0 2 1\n"), 3, &rel,
		err, sizeof err));
	CHECK_EQ_INT(rel.rows, 3);
	CHECK_EQ_INT(rel.row_ptr[1], 2); // row 0: columns 0 and 2, sorted
	CHECK_EQ_INT(rel.col[0], 0);
	CHECK_EQ_INT(rel.col[1], 2);
	CHECK_EQ_INT(rel.row_ptr[2], 2);
	CHECK_EQ_INT(rel.row_ptr[3], 3);
	CHECK(rel.val[2] == 0.5f);
	eval_rel_free(&rel);
	rel_bad("", "empty");
	rel_bad("0 0 1\n", ":1: expected the header");
	rel_bad("avclip-relevance 2 3 3\n", "version 2");
	rel_bad("avclip-relevance 1 4 3\n", "4 x 3, the manifest has 3 samples");
	rel_bad("avclip-relevance 1 3 3\n0 3 1\n", ":2: index (0, 3) out of the 3 x 3 matrix");
	rel_bad("avclip-relevance 1 3 3\n0 1 1.5\n", ":2: relevance 1.5 is not in (0, 1]");
	rel_bad("avclip-relevance 1 3 3\n0 1 0\n", "relevance 0 is not in (0, 1]");
	rel_bad("avclip-relevance 1 3 3\n0 1\n", ":2: expected 'VIDEO CAPTION RELEVANCE'");
	rel_bad("avclip-relevance 1 3 3\n1 1 1\n1 1 0.5\n", "(1, 1) is listed twice");
	CHECK_EQ_INT(eval_rel_read("/nonexistent/x.rel", 3, &rel, err, sizeof err), -ENOENT);

	EvalClasses c;
	CHECK_OK(eval_classes_read(put("c.txt", "# verbs\ncut\n\nwash\nopen\n"), put("l.txt", "wash\n-\ncut\n"), 3, &c,
				   err, sizeof err));
	CHECK_EQ_INT(c.n, 3);
	CHECK(!strcmp(c.names[2], "open"));
	CHECK_EQ_INT(c.label[0], 1);
	CHECK_EQ_INT(c.label[1], -1);
	CHECK_EQ_INT(c.label[2], 0);
	eval_classes_free(&c);
	cls_bad("cut\nwash\n", "wash\nstir\ncut\n", "l.txt:2: 'stir' is not a class");
	cls_bad("cut\nwash\n", "wash\ncut\n", "2 labels, the manifest has 3 samples");
	cls_bad("cut\nwash\n", "wash\ncut\ncut\ncut\n", ":4: more labels than");
	cls_bad("cut\ncut\n", "cut\ncut\ncut\n", "c.txt:2: class name 'cut' repeats line 1");
	cls_bad("cut\n", "cut\ncut\ncut\n", "1 class; classification needs at least 2");

	const char *caps[] = {"a red square moves left", "a blue circle grows", "a red square grows"};
	CHECK_OK(eval_classes_from_captions(caps, 3, "action", &c, err, sizeof err));
	CHECK_EQ_INT(c.n, 2);
	CHECK(!strcmp(c.names[0], "grows") && !strcmp(c.names[1], "moves left"));
	CHECK_EQ_INT(c.label[0], 1);
	CHECK_EQ_INT(c.label[1], 0);
	CHECK_EQ_INT(c.label[2], 0);
	eval_classes_free(&c);
	CHECK_OK(eval_classes_from_captions(caps, 3, "object", &c, err, sizeof err));
	CHECK_EQ_INT(c.n, 2);
	CHECK(!strcmp(c.names[0], "blue circle") && c.label[2] == 1);
	eval_classes_free(&c);
	CHECK_OK(eval_classes_from_captions(caps, 3, "caption", &c, err, sizeof err));
	CHECK_EQ_INT(c.n, 3);
	eval_classes_free(&c);
	CHECK_EQ_INT(eval_classes_from_captions(caps, 3, "colour", &c, err, sizeof err), -EINVAL);
	const char *odd[] = {"a red square moves left", "the cat sat"};
	CHECK_EQ_INT(eval_classes_from_captions(odd, 2, "action", &c, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "sample 1 'the cat sat'"));

	// EPIC-style relevance: same object 1/2 + same action 1/2
	CHECK_OK(eval_rel_from_captions(caps, 3, &rel, err, sizeof err));
	CHECK_EQ_INT(rel.row_ptr[1] - rel.row_ptr[0], 2); // 0: itself (1), 2 (same object: 0.5)
	CHECK(rel.val[0] == 1.0f && rel.col[1] == 2 && rel.val[1] == 0.5f);
	CHECK_EQ_INT(rel.row_ptr[2] - rel.row_ptr[1], 2); // 1: itself, 2 (same action)
	CHECK_EQ_INT(rel.row_ptr[3] - rel.row_ptr[2], 3);
	eval_rel_free(&rel);

	char p[64];
	CHECK_OK(eval_prompt("a video of {}", "moves left", p, sizeof p));
	CHECK(!strcmp(p, "a video of moves left"));
	CHECK_OK(eval_prompt("{} and {}", "x", p, sizeof p));
	CHECK(!strcmp(p, "x and x"));
	CHECK_EQ_INT(eval_prompt("a video of {}", "moves left", p, 10), -ENOSPC);

	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(!system(cmd));
	printf("eval inputs: relevance, classes, labels, caption-derived classes and relevance, prompts\n");
	return 0;
}
