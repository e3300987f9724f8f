// EPIC-KITCHENS-100 zero-shot action recognition as LaViLa's eval_zeroshot.py (generate_label_map):
// the clips of EPIC_100_validation.csv, and the label space of the (verb_class, noun_class) pairs of
// it and EPIC_100_train.csv, each pair a class prompted with its distinct narrations.
#include "eval_bench_util.h" // defines: BenchCsv, bench_csv_*, bench_clock_time, bench_first_repeat, ...
#include "errbuf.h"          // defines: err_fmt, TRY

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: malloc, realloc, free, qsort, strtol
#include <string.h> // defines: strcmp, strdup

// one record's pair and narration (both files)
typedef struct {
	int verb, noun, cls;
	char *text;
	char key[24]; // "verb:noun", LaViLa's sort key
} Pair;

typedef struct {
	Pair *p;
	int64_t n, cap;
} Pairs;

static int class_int(const char *s, int *v)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	long x = strtol(s, &end, 10);
	if (*end || x > 100000)
		return -1;
	*v = (int)x;
	return 0;
}

// the columns names[0..n) of the header, and the fields a record needs
static int columns(BenchCsv *c, const char *const *names, int *col, int n, int *need, char *err, size_t errlen)
{
	*need = 0;
	for (int k = 0; k < n; k++) {
		if ((col[k] = bench_csv_col(c, names[k], err, errlen)) < 0)
			return col[k];
		*need = col[k] + 1 > *need ? col[k] + 1 : *need;
	}
	return 0;
}

// one record's verb_class, noun_class and narration into ps
static int add_pair(Pairs *ps, const BenchCsv *c, const char *verb, const char *noun, const char *text, char *err,
		    size_t errlen)
{
	Pair x = {0};
	if (class_int(verb, &x.verb) || class_int(noun, &x.noun))
		return err_fmt(err, errlen, -EINVAL,
			       "%s:%d: verb_class '%.20s', noun_class '%.20s': not class ids (integers from 0)",
			       c->path, c->line, verb, noun);
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 1024;
		Pair *y = realloc(ps->p, sizeof *y * (size_t)ps->cap);
		if (!y)
			return -ENOMEM;
		ps->p = y;
	}
	snprintf(x.key, sizeof x.key, "%d:%d", x.verb, x.noun);
	if (!(x.text = strdup(text)))
		return -ENOMEM;
	ps->p[ps->n++] = x;
	return 0;
}

// EPIC_100_validation.csv: the clips (their narration as caption) and their pairs
static int read_clips(BenchSet *b, BenchCsv *c, Pairs *ps, char ***ids, char *err, size_t errlen)
{
	static const char *const names[] = {"narration_id", "video_id",   "start_timestamp", "stop_timestamp",
					    "narration",    "verb_class", "noun_class"};
	int col[7], need, rc = bench_csv_next(c, err, errlen);
	if (rc <= 0)
		return rc ? rc : err_fmt(err, errlen, -EINVAL, "%s: empty", c->path);
	TRY(columns(c, names, col, 7, &need, err, errlen));
	while ((rc = bench_csv_next(c, err, errlen)) > 0) {
		if (c->nf < need)
			return err_fmt(err, errlen, -EINVAL, "%s:%d: %d fields, the header names %d", c->path, c->line,
				       c->nf, need);
		double s, e;
		TRY(bench_ek100_clip(c, col, &s, &e, err, errlen));
		TRY(add_pair(ps, c, c->f[col[5]], c->f[col[6]], c->f[col[4]], err, errlen));
		char **x = realloc(*ids, sizeof *x * (size_t)(b->n + 1));
		if (!x)
			return -ENOMEM;
		*ids = x;
		if (!(x[b->n] = strdup(c->f[col[0]])))
			return -ENOMEM;
		if (bench_add_clip(b, c->f[col[1]], s, e, c->f[col[4]], c->line)) {
			free(x[b->n]);
			return -ENOMEM;
		}
	}
	return rc;
}

// EPIC_100_train.csv: its pairs and narrations only
static int read_train(BenchCsv *c, Pairs *ps, char *err, size_t errlen)
{
	static const char *const names[] = {"narration", "verb_class", "noun_class"};
	int col[3], need, rc = bench_csv_next(c, err, errlen);
	if (rc <= 0)
		return rc ? rc : err_fmt(err, errlen, -EINVAL, "%s: empty", c->path);
	TRY(columns(c, names, col, 3, &need, err, errlen));
	while ((rc = bench_csv_next(c, err, errlen)) > 0) {
		if (c->nf < need)
			return err_fmt(err, errlen, -EINVAL, "%s:%d: %d fields, the header names %d", c->path, c->line,
				       c->nf, need);
		TRY(add_pair(ps, c, c->f[col[1]], c->f[col[2]], c->f[col[0]], err, errlen));
	}
	return rc;
}

static int by_key_text(const void *x, const void *y)
{
	const Pair *a = *(Pair *const *)x, *b = *(Pair *const *)y;
	int k = strcmp(a->key, b->key);
	return k ? k : strcmp(a->text, b->text);
}

// classes = the distinct keys in string order (LaViLa's sorted(vn_list)), each with its distinct
// narrations (LaViLa's list(set(...)); here in string order); label[i] = clip i's class
static int label_space(BenchSet *b, Pairs *ps)
{
	Pair **o = malloc(sizeof *o * (size_t)ps->n);
	if (!o)
		return -ENOMEM;
	for (int64_t i = 0; i < ps->n; i++)
		o[i] = &ps->p[i];
	qsort(o, (size_t)ps->n, sizeof *o, by_key_text);
	int64_t nc = 0, nt = 0;
	for (int64_t i = 0; i < ps->n; i++) {
		const int new_key = !i || strcmp(o[i]->key, o[i - 1]->key);
		nc += new_key;
		nt += new_key || strcmp(o[i]->text, o[i - 1]->text);
	}
	b->classes = (int)nc;
	b->act_verb = malloc(sizeof *b->act_verb * (size_t)nc);
	b->act_noun = malloc(sizeof *b->act_noun * (size_t)nc);
	b->class_name = calloc((size_t)nc, sizeof *b->class_name);
	b->class_text = calloc((size_t)nt, sizeof *b->class_text);
	b->class_text_off = malloc(sizeof *b->class_text_off * (size_t)(nc + 1));
	b->label = malloc(sizeof *b->label * (size_t)b->n);
	int rc = b->act_verb && b->act_noun && b->class_name && b->class_text && b->class_text_off && b->label
			 ? 0
			 : -ENOMEM;
	int64_t c = -1;
	for (int64_t i = 0; !rc && i < ps->n; i++) {
		const int new_key = !i || strcmp(o[i]->key, o[i - 1]->key);
		if (new_key) {
			c++;
			b->act_verb[c] = o[i]->verb;
			b->act_noun[c] = o[i]->noun;
			b->class_text_off[c] = b->n_class_text;
			if (!(b->class_name[c] = strdup(o[i]->key)))
				rc = -ENOMEM;
		}
		o[i]->cls = (int)c;
		if (!rc && (new_key || strcmp(o[i]->text, o[i - 1]->text))) {
			if (!(b->class_text[b->n_class_text] = strdup(o[i]->text)))
				rc = -ENOMEM;
			b->n_class_text++;
		}
	}
	if (b->class_text_off)
		b->class_text_off[nc] = b->n_class_text;
	for (int64_t i = 0; !rc && i < b->n; i++) // the validation records come first in ps
		b->label[i] = ps->p[i].cls;
	for (int k = 0; rc && b->class_name && k < b->classes; k++) // bench_free expects all names or none
		if (!b->class_name[k])
			b->class_name[k] = strdup("");
	free(o);
	return rc;
}

static int read_file(const char *path, BenchSet *b, Pairs *ps, char ***ids, char *err, size_t errlen)
{
	BenchText t;
	BenchCsv c;
	TRY(bench_text_load(path, &t, err, errlen));
	int rc = bench_csv_init(&c, &t, path, 64);
	if (!rc)
		rc = ids ? read_clips(b, &c, ps, ids, err, errlen) : read_train(&c, ps, err, errlen);
	bench_csv_free(&c);
	bench_text_free(&t);
	return rc;
}

int bench_read_ek100_cls(BenchSet *b, const char *main, const char *aux, char *err, size_t errlen)
{
	Pairs ps = {0};
	char **ids = NULL;
	int rc = read_file(main, b, &ps, &ids, err, errlen);
	int64_t earlier = 0, rep = rc ? -1 : bench_first_repeat(ids, b->n, &earlier);
	if (rep == -2)
		rc = -ENOMEM;
	else if (rep >= 0)
		rc = err_fmt(err, errlen, -EINVAL, "%s:%d: narration_id '%.60s' repeats line %d", main,
			     b->clip[rep].line, ids[rep], b->clip[earlier].line);
	if (!rc && aux)
		rc = read_file(aux, b, &ps, NULL, err, errlen);
	if (!rc && aux && b->n)
		rc = label_space(b, &ps);
	for (int64_t i = 0; i < ps.n; i++)
		free(ps.p[i].text);
	free(ps.p);
	for (int64_t i = 0; ids && i < b->n; i++)
		free(ids[i]);
	free(ids);
	return rc;
}
