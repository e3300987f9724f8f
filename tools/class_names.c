// Class lists (class_names.h): one name per line (strict for prep, lenient for eval's prompts) or
// EPIC-KITCHENS-100's class CSVs, on the benchmark readers' RFC 4180 record reader.
#include "class_names.h"     // defines: ClassNames, class_names_parse, class_names_read, class_names_push, ...
#include "eval_bench_util.h" // defines: BenchText, BenchCsv, bench_text_load, bench_csv_*
#include "errbuf.h"          // defines: err_fmt, TRY

#include <errno.h>  // defines: EINVAL, ENOMEM, E2BIG
#include <stdlib.h> // defines: malloc, realloc, free, qsort, strtol
#include <string.h> // defines: memcmp, memset, strchr, strcmp, strndup, strcspn, strlen

void class_names_free(ClassNames *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	memset(c, 0, sizeof *c);
}

int class_names_push(ClassNames *c, const char *name, size_t len)
{
	if (c->n == CLASS_NAMES_MAX)
		return -E2BIG;
	if (c->n % 256 == 0) {
		char **x = realloc(c->names, sizeof *x * (size_t)(c->n + 256));
		if (!x)
			return -ENOMEM;
		c->names = x;
	}
	return (c->names[c->n] = strndup(name, len)) ? (c->n++, 0) : -ENOMEM;
}

static int push(ClassNames *c, const char *name, size_t len, const char *path, int line, char *err, size_t errlen)
{
	const int rc = class_names_push(c, name, len);
	return rc == -E2BIG ? err_fmt(err, errlen, -EINVAL, "%s:%d: more than %d classes", path, line, CLASS_NAMES_MAX)
			    : rc;
}

typedef struct {
	const char *name;
	int line, id;
} Named;

static int by_name(const void *a, const void *b)
{
	const Named *x = a, *y = b;
	int r = strcmp(x->name, y->name);
	return r ? r : (x->id > y->id) - (x->id < y->id);
}

// no name twice (line[i]: where name i was read)
static int unique(const ClassNames *c, const int *line, const char *path, char *err, size_t errlen)
{
	Named *ix = malloc(sizeof *ix * (size_t)(c->n ? c->n : 1));
	if (!ix)
		return -ENOMEM;
	for (int i = 0; i < c->n; i++)
		ix[i] = (Named){c->names[i], line[i], i};
	qsort(ix, (size_t)c->n, sizeof *ix, by_name);
	int rc = 0;
	for (int i = 1; i < c->n && !rc; i++)
		if (!strcmp(ix[i].name, ix[i - 1].name))
			rc = err_fmt(err, errlen, -EINVAL, "%s:%d: class name '%.60s' repeats line %d", path,
				     ix[i].line, ix[i].name, ix[i - 1].line);
	free(ix);
	return rc;
}

static int is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

// one name per line
static int read_lines(ClassNames *c, const char *t, size_t n, const char *path, int strict, int **line, char *err,
		      size_t errlen)
{
	int rc = 0, ln = 0, cap = 0;
	const size_t bom = n >= 3 && !memcmp(t, "\xef\xbb\xbf", 3) ? 3 : 0; // a UTF-8 byte order mark
	for (size_t p = bom; !rc && p < n; p += strcspn(t + p, "\n") + 1) {
		size_t len = strcspn(t + p, "\n"), a = p, b = p + len;
		ln++;
		if (b > a && t[b - 1] == '\r')
			b--;
		if (!strict) {
			while (a < b && is_blank(t[a]))
				a++;
			while (b > a && is_blank(t[b - 1]))
				b--;
			if (a == b || t[a] == '#')
				continue;
		} else if (a == b) {
			rc = err_fmt(err, errlen, -EINVAL, "%s:%d: an empty class name", path, ln);
			break;
		} else if (is_blank(t[a]) || is_blank(t[b - 1])) {
			rc = err_fmt(err, errlen, -EINVAL, "%s:%d: class name '%.*s' begins or ends with a blank", path,
				     ln, (int)(b - a < 60 ? b - a : 60), t + a);
			break;
		}
		if (c->n == cap) {
			int *x = realloc(*line, sizeof *x * (size_t)(cap = cap ? 2 * cap : 256));
			if (!x)
				return -ENOMEM;
			*line = x;
		}
		(*line)[c->n] = ln;
		rc = push(c, t + a, b - a, path, ln, err, errlen);
	}
	return rc;
}

static int epic_header(const BenchCsv *c)
{
	static const char *const want[4] = {"id", "key", "instances", "category"};
	if (c->nf != 4)
		return 0;
	for (int i = 0; i < 4; i++)
		if (strcmp(c->f[i], want[i]))
			return 0;
	return 1;
}

// EPIC_100_{verb,noun}_classes.csv after its header: the key of ids 0, 1, ... in order
static int read_epic(ClassNames *c, BenchCsv *csv, int **line, char *err, size_t errlen)
{
	int rc, cap = 0;
	while ((rc = bench_csv_next(csv, err, errlen)) > 0) {
		const char *path = csv->path;
		const int ln = csv->line;
		char **f = csv->f, *end;
		if (csv->nf != 4)
			return err_fmt(err, errlen, -EINVAL,
				       "%s:%d: %d fields, EPIC's class CSV has 4 (id,key,instances,category)", path, ln,
				       csv->nf);
		long id = strtol(f[0], &end, 10);
		if (*end || end == f[0] || f[0][0] < '0' || f[0][0] > '9' || id != c->n)
			return err_fmt(err, errlen, -EINVAL,
				       "%s:%d: id '%.20s', expected %d (ids count from 0 in order)", path, ln, f[0],
				       c->n);
		const size_t kl = strlen(f[1]), il = strlen(f[2]);
		if (!kl || is_blank(f[1][0]) || is_blank(f[1][kl - 1]) || strchr(f[1], '\n'))
			return err_fmt(err, errlen, -EINVAL,
				       "%s:%d: key '%.60s' is empty, has a line break or blanks around it", path, ln,
				       f[1]);
		if (il < 2 || f[2][0] != '[' || f[2][il - 1] != ']')
			return err_fmt(err, errlen, -EINVAL, "%s:%d: instances '%.40s' are not a list '[...]'", path,
				       ln, f[2]);
		if (!f[3][0])
			return err_fmt(err, errlen, -EINVAL, "%s:%d: no category", path, ln);
		if (c->n == cap) {
			int *x = realloc(*line, sizeof *x * (size_t)(cap = cap ? 2 * cap : 256));
			if (!x)
				return -ENOMEM;
			*line = x;
		}
		(*line)[c->n] = ln;
		TRY(push(c, f[1], kl, path, ln, err, errlen));
	}
	return rc;
}

int class_names_parse(ClassNames *c, const char *text, size_t n, const char *path, int strict, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	BenchText t = {(char *)text, n};
	BenchCsv csv;
	int *line = NULL, rc = bench_csv_init(&csv, &t, path, 8);
	// the first record decides the format; one that is no CSV record (a stray quote) is a line
	char e2[8];
	if (!rc && bench_csv_next(&csv, e2, sizeof e2) > 0 && epic_header(&csv)) {
		c->epic = 1;
		rc = read_epic(c, &csv, &line, err, errlen);
	} else if (!rc) {
		rc = read_lines(c, text, n, path, strict, &line, err, errlen);
	}
	bench_csv_free(&csv);
	if (!rc && !c->n)
		rc = err_fmt(err, errlen, -EINVAL, "%s: no class names", path);
	if (!rc)
		rc = unique(c, line, path, err, errlen);
	if (rc == -ENOMEM)
		err_fmt(err, errlen, rc, "%s: out of memory", path);
	free(line);
	if (rc)
		class_names_free(c);
	return rc;
}

int class_names_read(ClassNames *c, const char *path, int strict, char *err, size_t errlen)
{
	BenchText t;
	memset(c, 0, sizeof *c);
	TRY(bench_text_load(path, &t, err, errlen));
	int rc = class_names_parse(c, t.t, t.n, path, strict, err, errlen);
	bench_text_free(&t);
	return rc;
}
