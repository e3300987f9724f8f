// Charades-Ego's first-person test list (CharadesEgo_v1_test_only1st.csv: id, ..., actions
// "c092 11.90 21.20;c147 0.00 12.60", length) and Charades_v1_classes.txt ("c000 Holding some
// clothes"). One clip per video, the whole of it (0 to length s), as LaViLa's charades_ego test set.
#include "eval_bench_util.h" // defines: BenchCsv, bench_csv_*, bench_decimal, bench_first_repeat, ...
#include "errbuf.h"          // defines: err_fmt

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: calloc, free, realloc
#include <string.h> // defines: strchr, strcspn, strdup, strlen

// "c092" -> 92; -1 when it is not 'c' and three digits
static int class_id(const char *s, size_t len)
{
	if (len != 4 || s[0] != 'c')
		return -1;
	int v = 0;
	for (int i = 1; i < 4; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + s[i] - '0';
	}
	return v;
}

// Charades_v1_classes.txt: line k is "c<k, 3 digits> <name>", k from 0
static int read_classes(BenchSet *b, const char *path, char *err, size_t errlen)
{
	BenchText t;
	TRY(bench_text_load(path, &t, err, errlen));
	int rc = 0, line = 0;
	for (char *p = t.t; !rc && *p;) {
		char *nl = p + strcspn(p, "\n");
		int more = *nl == '\n';
		*nl = 0;
		line++;
		size_t len = strlen(p);
		if (len && p[len - 1] == '\r')
			p[--len] = 0;
		if (len) {
			const size_t idlen = strcspn(p, " ");
			const int id = class_id(p, idlen);
			if (id < 0 || !p[idlen] || !p[idlen + 1])
				rc = err_fmt(err, errlen, -EINVAL, "%s:%d: expected 'cNNN class name'", path, line);
			else if (id != b->classes)
				rc = err_fmt(err, errlen, -EINVAL,
					     "%s:%d: class %.4s, expected c%03d (classes in order)", path, line, p,
					     b->classes);
			else {
				char **x = realloc(b->class_name, sizeof *x * (size_t)(b->classes + 1));
				if (x)
					b->class_name = x;
				if (!x || !(b->class_name[b->classes] = strdup(p + idlen + 1)))
					rc = -ENOMEM;
				else
					b->classes++;
			}
		}
		p = more ? nl + 1 : nl;
	}
	bench_text_free(&t);
	if (!rc && !b->classes)
		rc = err_fmt(err, errlen, -EINVAL, "%s: no classes", path);
	return rc;
}

// one video's "cNNN start end;..." into its row of b->multi (NULL: checked only) and its caption
static int parse_actions(const BenchSet *b, const BenchCsv *c, const char *s, double length, uint8_t *row, char *cap,
			 size_t capn, char *err, size_t errlen)
{
	size_t o = 0;
	cap[0] = 0;
	while (*s) {
		char item[128];
		const size_t len = strcspn(s, ";");
		if (len >= sizeof item)
			return err_fmt(err, errlen, -EINVAL, "%s:%d: an action longer than %zu bytes", c->path, c->line,
				       sizeof item - 1);
		memcpy(item, s, len);
		item[len] = 0;
		s += len + (s[len] == ';');
		char *sp1 = strchr(item, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
		double t0, t1;
		if (!sp2 || strchr(sp2 + 1, ' '))
			return err_fmt(err, errlen, -EINVAL, "%s:%d: action '%s' is not 'cNNN START END'", c->path,
				       c->line, item);
		*sp1 = *sp2 = 0;
		const int id = class_id(item, strlen(item));
		if (id < 0 || (b->classes && id >= b->classes))
			return err_fmt(err, errlen, -EINVAL, "%s:%d: unknown class '%s'%s", c->path, c->line, item,
				       b->classes ? " (not in the classes file)" : "");
		if (bench_decimal(sp1 + 1, &t0) || bench_decimal(sp2 + 1, &t1) || t1 < t0)
			return err_fmt(err, errlen, -EINVAL, "%s:%d: action %s: times '%s' '%s' are not START <= END",
				       c->path, c->line, item, sp1 + 1, sp2 + 1);
		if (t1 > length)
			return err_fmt(err, errlen, -EINVAL,
				       "%s:%d: action %s at %.2f-%.2f s is outside the video (length %.2f s)", c->path,
				       c->line, item, t0, t1, length);
		if (row)
			row[id] = 1;
		const char *name = b->classes ? b->class_name[id] : item;
		o += (size_t)snprintf(cap + o, o < capn ? capn - o : 0, "%s%s", o ? "; " : "", name);
	}
	return o < capn ? 0 : err_fmt(err, errlen, -EINVAL, "%s:%d: the actions are too long", c->path, c->line);
}

static int read_videos(BenchSet *b, BenchCsv *c, char ***ids, char *err, size_t errlen)
{
	int rc = bench_csv_next(c, err, errlen), col[3];
	if (rc <= 0)
		return rc ? rc : err_fmt(err, errlen, -EINVAL, "%s: empty", c->path);
	if ((col[0] = bench_csv_col(c, "id", err, errlen)) < 0 ||
	    (col[1] = bench_csv_col(c, "actions", err, errlen)) < 0 ||
	    (col[2] = bench_csv_col(c, "length", err, errlen)) < 0)
		return -EINVAL;
	const int need =
		1 + (col[0] > col[1] ? (col[0] > col[2] ? col[0] : col[2]) : (col[1] > col[2] ? col[1] : col[2]));
	char caption[8192];
	while ((rc = bench_csv_next(c, err, errlen)) > 0) {
		if (c->nf < need)
			return err_fmt(err, errlen, -EINVAL, "%s:%d: %d fields, the header names %d", c->path, c->line,
				       c->nf, need);
		double length;
		if (bench_decimal(c->f[col[2]], &length) || length <= 0)
			return err_fmt(err, errlen, -EINVAL,
				       "%s:%d: length '%.40s' is not a positive number of seconds", c->path, c->line,
				       c->f[col[2]]);
		if (!c->f[col[0]][0])
			return err_fmt(err, errlen, -EINVAL, "%s:%d: an empty id", c->path, c->line);
		uint8_t *row = NULL;
		if (b->classes) {
			uint8_t *x = realloc(b->multi, (size_t)(b->n + 1) * (size_t)b->classes);
			if (!x)
				return -ENOMEM;
			b->multi = x;
			row = x + b->n * b->classes;
			memset(row, 0, (size_t)b->classes);
		}
		TRY(parse_actions(b, c, c->f[col[1]], length, row, caption, sizeof caption, err, errlen));
		char **x = realloc(*ids, sizeof *x * (size_t)(b->n + 1));
		if (!x)
			return -ENOMEM;
		*ids = x;
		if (!(x[b->n] = strdup(c->f[col[0]])))
			return -ENOMEM;
		if (bench_add_clip(b, c->f[col[0]], 0, length, caption, c->line)) {
			free(x[b->n]);
			return -ENOMEM;
		}
	}
	return rc;
}

int bench_read_charades(BenchSet *b, const char *main, const char *aux, char *err, size_t errlen)
{
	if (aux)
		TRY(read_classes(b, aux, err, errlen));
	BenchText t;
	BenchCsv c;
	TRY(bench_text_load(main, &t, err, errlen));
	char **ids = NULL;
	int rc = bench_csv_init(&c, &t, main, 64);
	if (!rc)
		rc = read_videos(b, &c, &ids, err, errlen);
	bench_csv_free(&c);
	bench_text_free(&t);
	int64_t earlier = 0, rep = rc ? -1 : bench_first_repeat(ids, b->n, &earlier);
	if (rep == -2)
		rc = -ENOMEM;
	else if (rep >= 0)
		rc = err_fmt(err, errlen, -EINVAL, "%s:%d: id '%.60s' repeats line %d", main, b->clip[rep].line,
			     ids[rep], b->clip[earlier].line);
	for (int64_t i = 0; ids && i < b->n; i++)
		free(ids[i]);
	free(ids);
	return rc;
}
