// The benchmark readers' shared pieces (eval_bench_util.h) and the entry points of eval_bench.h:
// bench_read dispatches by kind, bench_match_sample ties a manifest sample to its record.
#include "eval_bench_util.h" // defines: BenchText, BenchCsv, bench_*
#include "errbuf.h"          // defines: err_fmt
#include "fs_dir.h"          // defines: fs_fopen_read, fs_strerror

#include <errno.h>  // defines: EINVAL, ENOMEM, EIO, errno
#include <math.h>   // defines: fabs, isfinite
#include <stdio.h>  // defines: FILE, fread, fclose
#include <stdlib.h> // defines: malloc, realloc, free, qsort, strtod
#include <string.h> // defines: memchr, memset, strcmp, strdup, strlen

int bench_text_load(const char *path, BenchText *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	FILE *f = fs_fopen_read(path, "rb");
	if (!f) {
		int e = errno;
		return err_fmt(err, errlen, -e, "%s: %s", path, fs_strerror(e));
	}
	size_t cap = 1 << 16;
	t->t = malloc(cap + 1);
	int rc = t->t ? 0 : -ENOMEM;
	while (!rc) {
		if (t->n == cap) {
			char *x = cap < ((size_t)1 << 32) ? realloc(t->t, 2 * cap + 1) : NULL;
			if (!x) {
				rc = -ENOMEM;
				break;
			}
			t->t = x;
			cap *= 2;
		}
		size_t got = fread(t->t + t->n, 1, cap - t->n, f);
		t->n += got;
		if (!got)
			break;
	}
	if (!rc && ferror(f))
		rc = -EIO;
	fclose(f);
	if (rc) {
		bench_text_free(t);
		return err_fmt(err, errlen, rc, "%s: %s", path, rc == -EIO ? "read error" : "out of memory");
	}
	t->t[t->n] = 0;
	const char *nul = memchr(t->t, 0, t->n);
	if (nul) {
		int line = 1;
		for (const char *p = t->t; p < nul; p++)
			line += *p == '\n';
		bench_text_free(t);
		return err_fmt(err, errlen, -EINVAL, "%s:%d: a NUL byte: not a text file", path, line);
	}
	return 0;
}

void bench_text_free(BenchText *t)
{
	free(t->t);
	memset(t, 0, sizeof *t);
}

int bench_csv_init(BenchCsv *c, const BenchText *t, const char *path, int max_fields)
{
	memset(c, 0, sizeof *c);
	c->t = t->t;
	c->n = t->n;
	c->path = path;
	c->next_line = 1;
	c->max = max_fields;
	c->buf = malloc(t->n + 1);
	c->f = malloc(sizeof *c->f * (size_t)max_fields);
	if (c->n >= 3 && !memcmp(c->t, "\xef\xbb\xbf", 3)) // a UTF-8 byte order mark
		c->pos = 3;
	return c->buf && c->f ? 0 : -ENOMEM;
}

void bench_csv_free(BenchCsv *c)
{
	free(c->buf);
	free(c->f);
	memset(c, 0, sizeof *c);
}

int bench_csv_next(BenchCsv *c, char *err, size_t errlen)
{
	for (;;) {
		if (c->pos >= c->n)
			return 0;
		c->line = c->next_line;
		size_t o = 0;
		int quoted = 0;
		c->nf = 1;
		c->f[0] = c->buf;
		while (c->pos < c->n) {
			const char ch = c->t[c->pos++];
			if (quoted) {
				if (ch == '"' && c->pos < c->n && c->t[c->pos] == '"') {
					c->buf[o++] = '"';
					c->pos++;
				} else if (ch == '"') {
					quoted = 0;
				} else {
					c->next_line += ch == '\n';
					c->buf[o++] = ch;
				}
			} else if (ch == '"') {
				quoted = 1;
			} else if (ch == ',') {
				c->buf[o++] = 0;
				if (c->nf == c->max)
					return err_fmt(err, errlen, -EINVAL, "%s:%d: more than %d fields", c->path,
						       c->line, c->max);
				c->f[c->nf++] = c->buf + o;
			} else if (ch == '\n' || ch == '\r') {
				if (ch == '\r' && c->pos < c->n && c->t[c->pos] == '\n')
					c->pos++;
				c->next_line++;
				break;
			} else {
				c->buf[o++] = ch;
			}
		}
		if (quoted)
			return err_fmt(err, errlen, -EINVAL, "%s:%d: a quoted field is not closed", c->path, c->line);
		c->buf[o] = 0;
		if (c->nf > 1 || c->buf[0])
			return 1;
	}
}

int bench_csv_col(const BenchCsv *c, const char *name, char *err, size_t errlen)
{
	for (int i = 0; i < c->nf; i++)
		if (!strcmp(c->f[i], name))
			return i;
	return err_fmt(err, errlen, -EINVAL, "%s:%d: no column '%s' in the header", c->path, c->line, name);
}

int bench_decimal(const char *s, double *v)
{
	const char *p = s;
	int digits = 0;
	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (!digits || *p || p - s > 40)
		return -1;
	*v = strtod(s, NULL);
	return isfinite(*v) ? 0 : -1;
}

int bench_clock_time(const char *s, double *v)
{
	double part[3];
	int n = 0;
	char buf[48];
	while (n < 3) {
		size_t len = strcspn(s, ":");
		if (len >= sizeof buf)
			return -1;
		memcpy(buf, s, len);
		buf[len] = 0;
		if (bench_decimal(buf, &part[n++]))
			return -1;
		if (!s[len])
			break;
		s += len + 1;
		if (n == 3)
			return -1;
	}
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (i < n - 1 && (part[i] != floor(part[i]) || (i > 0 && part[i] >= 60)))
			return -1;
		*v = *v * 60 + part[i];
	}
	return n > 1 && part[n - 1] >= 60 ? -1 : 0;
}

int bench_ek100_clip(const BenchCsv *c, const int col[4], double *start, double *end, char *err, size_t errlen)
{
	if (bench_clock_time(c->f[col[2]], start) || bench_clock_time(c->f[col[3]], end))
		return err_fmt(err, errlen, -EINVAL, "%s:%d: times '%.40s', '%.40s' are not HH:MM:SS.ss", c->path,
			       c->line, c->f[col[2]], c->f[col[3]]);
	if (*end <= *start)
		return err_fmt(err, errlen, -EINVAL, "%s:%d: the clip ends (%.3f s) before it starts (%.3f s)", c->path,
			       c->line, *end, *start);
	if (!c->f[col[0]][0] || !c->f[col[1]][0])
		return err_fmt(err, errlen, -EINVAL, "%s:%d: an empty narration_id or video_id", c->path, c->line);
	return 0;
}

typedef struct {
	const char *s;
	int64_t i;
} Keyed;

static int by_key(const void *a, const void *b)
{
	const Keyed *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

int64_t bench_first_repeat(char *const *s, int64_t n, int64_t *earlier)
{
	Keyed *k = malloc(sizeof *k * (size_t)(n ? n : 1));
	if (!k)
		return -2;
	for (int64_t i = 0; i < n; i++)
		k[i] = (Keyed){s[i], i};
	qsort(k, (size_t)n, sizeof *k, by_key);
	int64_t first = -1;
	for (int64_t i = 1; i < n; i++)
		if (!strcmp(k[i].s, k[i - 1].s) && (first < 0 || k[i].i < first)) {
			first = k[i].i;
			*earlier = k[i - 1].i;
		}
	free(k);
	return first;
}

int bench_add_clip(BenchSet *b, const char *video, double start, double end, const char *caption, int line)
{
	if ((b->n & (b->n - 1)) == 0) { // grows at powers of two
		BenchClip *x = realloc(b->clip, sizeof *x * (size_t)(b->n ? 2 * b->n : 1));
		if (!x)
			return -ENOMEM;
		b->clip = x;
	}
	BenchClip *c = &b->clip[b->n];
	*c = (BenchClip){.video = strdup(video), .start = start, .end = end, .caption = strdup(caption), .line = line};
	if (!c->video || !c->caption) {
		free(c->video);
		free(c->caption);
		return -ENOMEM;
	}
	b->n++;
	return 0;
}

static const char *const kind_names[] = {"ek100-mir", "charades-ego", "egtea", "egomcq", "ek100-cls"};
enum { N_KINDS = sizeof kind_names / sizeof kind_names[0] };

int bench_kind_parse(const char *name, BenchKind *kind)
{
	for (int k = 0; k < N_KINDS; k++)
		if (!strcmp(name, kind_names[k])) {
			*kind = (BenchKind)k;
			return 0;
		}
	return -EINVAL;
}

const char *bench_kind_name(BenchKind kind)
{
	return (unsigned)kind < N_KINDS ? kind_names[kind] : "?";
}

int bench_read(BenchSet *b, BenchKind kind, const char *main, const char *aux, char *err, size_t errlen)
{
	memset(b, 0, sizeof *b);
	b->kind = kind;
	b->path = strdup(main);
	if (!b->path)
		return -ENOMEM;
	int rc;
	switch (kind) {
	case BENCH_EK100_MIR: rc = bench_read_ek100(b, main, aux, err, errlen); break;
	case BENCH_EK100_CLS: rc = bench_read_ek100_cls(b, main, aux, err, errlen); break;
	case BENCH_CHARADES_EGO: rc = bench_read_charades(b, main, aux, err, errlen); break;
	case BENCH_EGTEA: rc = bench_read_egtea(b, main, aux, err, errlen); break;
	case BENCH_EGOMCQ:
		rc = aux ? err_fmt(err, errlen, -EINVAL, "%s: EgoMCQ has no second file", aux)
			 : bench_read_egomcq(b, main, err, errlen);
		break;
	default: rc = -EINVAL;
	}
	if (!rc && b->n == 0)
		rc = err_fmt(err, errlen, -EINVAL, "%s: no clips", main);
	if (rc)
		bench_free(b);
	return rc;
}

static void free_strings(char **s, int64_t n)
{
	for (int64_t i = 0; s && i < n; i++)
		free(s[i]);
	free(s);
}

void bench_free(BenchSet *b)
{
	for (int64_t i = 0; i < b->n; i++) {
		free(b->clip[i].video);
		free(b->clip[i].caption);
	}
	free(b->clip);
	free(b->path);
	free_strings(b->sentence, b->n_sentences);
	free(b->sentence_clip);
	free_strings(b->class_name, b->classes);
	free(b->multi);
	free(b->label);
	free(b->act_verb);
	free(b->act_noun);
	free_strings(b->class_text, b->n_class_text);
	free(b->class_text_off);
	free_strings(b->query, b->n_questions);
	free(b->answer);
	free(b->type);
	memset(b, 0, sizeof *b);
}

int bench_match_sample(const BenchSet *b, int64_t i, const char *video, double start, double end, double duration,
		       double tol, char *err, size_t errlen)
{
	if (i >= b->n)
		return err_fmt(err, errlen, -EINVAL, "manifest sample %lld (%s %.3f-%.3f s): %s has only %lld clips",
			       (long long)i, video, start, end, b->path, (long long)b->n);
	const BenchClip *c = &b->clip[i];
	const double want_end = isinf(c->end) ? duration : c->end;
	if (strcmp(c->video, video) || fabs(c->start - start) > tol || fabs(want_end - end) > tol)
		return err_fmt(
			err, errlen, -EINVAL,
			"manifest sample %lld is %s %.3f-%.3f s, but clip %lld of %s (line %d) is %s %.3f-%.3f s: "
			"the manifest must be prep's import of this file, every clip kept and in order",
			(long long)i, video, start, end, (long long)i, b->path, c->line, c->video, c->start, want_end);
	return 0;
}
