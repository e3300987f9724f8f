// EGTEA Gaze+ action recognition: a split file (test_split1.txt: "<clip> <action> <verb> <noun>",
// ids from 1) and action_idx.txt ("<Name_with_underscores> <id>" per line). One clip per line,
// the whole clip file; class names as LaViLa reads them (underscores to spaces, lower case).
#include "eval_bench_util.h" // defines: BenchText, bench_text_load, bench_first_repeat, bench_add_clip, ...
#include "errbuf.h"          // defines: err_fmt

#include <ctype.h>  // defines: tolower
#include <errno.h>  // defines: EINVAL, ENOMEM
#include <math.h>   // defines: INFINITY
#include <stdlib.h> // defines: calloc, free, realloc, strtol
#include <string.h> // defines: strcspn, strdup, strlen, strrchr

// the next line of t from *p (NUL-terminated in place, a trailing \r dropped); NULL at the end
static char *next_line(char **p, int *line)
{
	if (!**p)
		return NULL;
	char *s = *p, *nl = s + strcspn(s, "\n");
	*p = *nl ? nl + 1 : nl;
	*nl = 0;
	size_t len = strlen(s);
	if (len && s[len - 1] == '\r')
		s[len - 1] = 0;
	(*line)++;
	return s;
}

// a positive decimal integer, the whole of s: 0 or -1
static int positive_int(const char *s, long max, int *v)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	long x = strtol(s, &end, 10);
	if (*end || x < 1 || x > max)
		return -1;
	*v = (int)x;
	return 0;
}

static int read_actions(BenchSet *b, const char *path, char *err, size_t errlen)
{
	BenchText t;
	TRY(bench_text_load(path, &t, err, errlen));
	int rc = 0, line = 0, *at_line = NULL;
	char *p = t.t, *s;
	while (!rc && (s = next_line(&p, &line))) {
		if (!*s)
			continue;
		char *sp = strrchr(s, ' ');
		int id;
		if (!sp || sp == s || positive_int(sp + 1, 100000, &id)) {
			rc = err_fmt(err, errlen, -EINVAL, "%s:%d: expected '<action name> <id>'", path, line);
			break;
		}
		*sp = 0;
		if (id > b->classes) { // grow to id classes, the new ones unnamed
			char **x = realloc(b->class_name, sizeof *x * (size_t)id);
			int *y = realloc(at_line, sizeof *y * (size_t)id);
			b->class_name = x ? x : b->class_name;
			at_line = y ? y : at_line;
			if (!x || !y) {
				rc = -ENOMEM;
				break;
			}
			for (int k = b->classes; k < id; k++)
				x[k] = NULL, y[k] = 0;
			b->classes = id;
		}
		if (b->class_name[id - 1]) {
			rc = err_fmt(err, errlen, -EINVAL, "%s:%d: action id %d repeats line %d", path, line, id,
				     at_line[id - 1]);
			break;
		}
		for (char *q = s; *q; q++)
			*q = *q == '_' ? ' ' : (char)tolower((unsigned char)*q);
		at_line[id - 1] = line;
		if (!(b->class_name[id - 1] = strdup(s)))
			rc = -ENOMEM;
	}
	for (int k = 0; !rc && k < b->classes; k++)
		if (!b->class_name[k])
			rc = err_fmt(err, errlen, -EINVAL, "%s: no action %d (ids must run from 1 to %d)", path, k + 1,
				     b->classes);
	if (!rc && !b->classes)
		rc = err_fmt(err, errlen, -EINVAL, "%s: no actions", path);
	for (int k = 0; rc && k < b->classes; k++) // the names so far: bench_free expects all or none
		if (!b->class_name[k])
			b->class_name[k] = strdup("");
	free(at_line);
	bench_text_free(&t);
	return rc;
}

static int read_split(BenchSet *b, const char *path, char ***ids, char *err, size_t errlen)
{
	BenchText t;
	TRY(bench_text_load(path, &t, err, errlen));
	int rc = 0, line = 0;
	char *p = t.t, *s;
	while (!rc && (s = next_line(&p, &line))) {
		if (!*s)
			continue;
		char *f[5];
		int nf = 0;
		for (char *q = s; nf < 5;) {
			f[nf++] = q;
			q += strcspn(q, " ");
			if (!*q)
				break;
			*q++ = 0;
		}
		int act, verb, noun;
		if (nf != 4 || !*f[0] || positive_int(f[1], 100000, &act) || positive_int(f[2], 100000, &verb) ||
		    positive_int(f[3], 100000, &noun)) {
			rc = err_fmt(err, errlen, -EINVAL,
				     "%s:%d: expected '<clip> <action> <verb> <noun>' (ids from 1)", path, line);
			break;
		}
		if (b->classes && act > b->classes) {
			rc = err_fmt(err, errlen, -EINVAL, "%s:%d: action %d is not in the actions file (1-%d)", path,
				     line, act, b->classes);
			break;
		}
		char **x = realloc(*ids, sizeof *x * (size_t)(b->n + 1));
		int *y = realloc(b->label, sizeof *y * (size_t)(b->n + 1));
		*ids = x ? x : *ids;
		b->label = y ? y : b->label;
		if (!x || !y || !(x[b->n] = strdup(f[0]))) {
			rc = -ENOMEM;
			break;
		}
		y[b->n] = act - 1;
		const char *cap = b->classes ? b->class_name[act - 1] : f[1];
		if ((rc = bench_add_clip(b, f[0], 0, INFINITY, cap, line)))
			free(x[b->n]);
	}
	bench_text_free(&t);
	return rc;
}

int bench_read_egtea(BenchSet *b, const char *main, const char *aux, char *err, size_t errlen)
{
	if (aux)
		TRY(read_actions(b, aux, err, errlen));
	char **ids = NULL;
	int rc = read_split(b, main, &ids, err, errlen);
	int64_t earlier = 0, rep = rc ? -1 : bench_first_repeat(ids, b->n, &earlier);
	if (rep == -2)
		rc = -ENOMEM;
	else if (rep >= 0)
		rc = err_fmt(err, errlen, -EINVAL, "%s:%d: clip '%.80s' repeats line %d", main, b->clip[rep].line,
			     ids[rep], b->clip[earlier].line);
	for (int64_t i = 0; ids && i < b->n; i++)
		free(ids[i]);
	free(ids);
	return rc;
}
