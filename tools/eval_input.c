// Readers of the relevance and class files, and the synth caption grammar they can be derived
// from instead. Every error names the file and line.
#include "eval_input.h"  // defines: EvalClasses, eval_rel_read, ...
#include "fs_dir.h"      // defines: fs_fopen_read, fs_strerror
#include "class_names.h" // defines: ClassNames, class_names_read

#include <errno.h>  // defines: EINVAL, ENOMEM, ENOSPC, errno
#include <stdio.h>  // defines: FILE, fopen, getline, snprintf
#include <stdlib.h> // defines: calloc, malloc, realloc, free, qsort, strtod, strtoll
#include <string.h> // defines: strcmp, strdup, strerror, strlen, strncmp, strstr

typedef struct {
	int64_t r, c;
	float v;
} Triple;

static int by_rc(const void *a, const void *b)
{
	const Triple *x = a, *y = b;
	if (x->r != y->r)
		return x->r < y->r ? -1 : 1;
	return (x->c > y->c) - (x->c < y->c);
}

// sorted triples -> CSR; a repeated pair is an error (its 0-based index in *dup)
static int to_csr(Triple *t, int64_t nt, int64_t rows, int64_t cols, EvalRel *rel, int64_t *dup)
{
	qsort(t, (size_t)nt, sizeof *t, by_rc);
	for (int64_t k = 1; k < nt; k++)
		if (t[k].r == t[k - 1].r && t[k].c == t[k - 1].c) {
			*dup = k;
			return -EINVAL;
		}
	memset(rel, 0, sizeof *rel);
	rel->rows = rows;
	rel->cols = cols;
	rel->row_ptr = calloc((size_t)rows + 1, sizeof *rel->row_ptr);
	rel->col = malloc(sizeof *rel->col * (size_t)(nt ? nt : 1));
	rel->val = malloc(sizeof *rel->val * (size_t)(nt ? nt : 1));
	if (!rel->row_ptr || !rel->col || !rel->val) {
		eval_rel_free(rel);
		return -ENOMEM;
	}
	for (int64_t k = 0; k < nt; k++) {
		rel->row_ptr[t[k].r + 1]++;
		rel->col[k] = t[k].c;
		rel->val[k] = t[k].v;
	}
	for (int64_t r = 0; r < rows; r++)
		rel->row_ptr[r + 1] += rel->row_ptr[r];
	return 0;
}

static int blank(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	return !*s || *s == '#';
}

int eval_rel_read(const char *path, int64_t n, EvalRel *rel, char *err, size_t errlen)
{
	return eval_rel_read_shape(path, n, n, rel, err, errlen);
}

int eval_rel_read_shape(const char *path, int64_t rows, int64_t cols, EvalRel *rel, char *err, size_t errlen)
{
	FILE *f = fs_fopen_read(path, "r");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "relevance file %s: %s", path, fs_strerror(e));
		return -e;
	}
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	int rc = 0, header = 0;
	Triple *t = NULL;
	int64_t nt = 0, tcap = 0;
	while (!rc && getline(&line, &cap, f) > 0) {
		lineno++;
		if (blank(line))
			continue;
		if (!header) {
			long long r, c;
			int ver, used = 0;
			if (sscanf(line, "avclip-relevance %d %lld %lld %n", &ver, &r, &c, &used) != 3 || line[used]) {
				snprintf(err, errlen, "%s:%ld: expected the header 'avclip-relevance 1 ROWS COLS'",
					 path, lineno);
				rc = -EINVAL;
			} else if (ver != 1) {
				snprintf(err, errlen, "%s:%ld: relevance format version %d, this build reads 1", path,
					 lineno, ver);
				rc = -EINVAL;
			} else if ((r != rows || c != cols) && rows == cols) {
				snprintf(err, errlen,
					 "%s:%ld: the matrix is %lld x %lld, the manifest has %lld samples", path,
					 lineno, r, c, (long long)rows);
				rc = -EINVAL;
			} else if (r != rows || c != cols) {
				snprintf(err, errlen, "%s:%ld: the matrix is %lld x %lld, want %lld x %lld", path,
					 lineno, r, c, (long long)rows, (long long)cols);
				rc = -EINVAL;
			}
			header = 1;
			continue;
		}
		long long v, c;
		double r;
		int used = 0;
		if (sscanf(line, "%lld %lld %lf %n", &v, &c, &r, &used) != 3 || line[used]) {
			snprintf(err, errlen, "%s:%ld: expected 'VIDEO CAPTION RELEVANCE'", path, lineno);
			rc = -EINVAL;
		} else if (v < 0 || v >= rows || c < 0 || c >= cols) {
			snprintf(err, errlen, "%s:%ld: index (%lld, %lld) out of the %lld x %lld matrix", path, lineno,
				 v, c, (long long)rows, (long long)cols);
			rc = -EINVAL;
		} else if (!(r > 0 && r <= 1)) {
			snprintf(err, errlen, "%s:%ld: relevance %g is not in (0, 1]", path, lineno, r);
			rc = -EINVAL;
		} else {
			if (nt == tcap) {
				tcap = tcap ? 2 * tcap : 1024;
				Triple *nt_ = realloc(t, sizeof *t * (size_t)tcap);
				if (!nt_) {
					rc = -ENOMEM;
					snprintf(err, errlen, "%s: out of memory", path);
					break;
				}
				t = nt_;
			}
			t[nt++] = (Triple){v, c, (float)r};
		}
	}
	if (!rc && ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "%s: read error", path);
	}
	if (!rc && !header) {
		rc = -EINVAL;
		snprintf(err, errlen, "%s: empty (no 'avclip-relevance 1 ROWS COLS' header)", path);
	}
	if (!rc) {
		int64_t dup = 0;
		rc = to_csr(t, nt, rows, cols, rel, &dup);
		if (rc == -EINVAL)
			snprintf(err, errlen, "%s: the pair (%lld, %lld) is listed twice", path, (long long)t[dup].r,
				 (long long)t[dup].c);
		else if (rc)
			snprintf(err, errlen, "%s: out of memory", path);
	}
	free(t);
	free(line);
	fclose(f);
	return rc;
}

int eval_caption_split(const char *caption, char *object, size_t ocap, char *action, size_t acap)
{
	char w1[64], w2[64];
	int used = 0;
	if (sscanf(caption, "a %63s %63s %n", w1, w2, &used) != 2 || !caption[used])
		return -EINVAL;
	if ((size_t)snprintf(object, ocap, "%s %s", w1, w2) >= ocap)
		return -ENOSPC;
	if ((size_t)snprintf(action, acap, "%s", caption + used) >= acap)
		return -ENOSPC;
	size_t l = strlen(action);
	while (l && (action[l - 1] == ' ' || action[l - 1] == '\n'))
		action[--l] = 0;
	return 0;
}

int eval_rel_from_captions(const char *const *captions, int64_t n, EvalRel *rel, char *err, size_t errlen)
{
	char(*obj)[128] = malloc(sizeof *obj * (size_t)n), (*act)[128] = malloc(sizeof *act * (size_t)n);
	Triple *t = NULL;
	int rc = obj && act ? 0 : -ENOMEM;
	for (int64_t i = 0; i < n && !rc; i++)
		if (eval_caption_split(captions[i], obj[i], sizeof obj[i], act[i], sizeof act[i])) {
			snprintf(err, errlen, "caption of sample %lld '%s' is not 'a <colour> <shape> <action>'",
				 (long long)i, captions[i]);
			rc = -EINVAL;
		}
	int64_t nt = 0, tcap = 0;
	for (int64_t i = 0; i < n && !rc; i++)
		for (int64_t j = 0; j < n && !rc; j++) {
			float v = 0.5f * !strcmp(obj[i], obj[j]) + 0.5f * !strcmp(act[i], act[j]);
			if (v == 0)
				continue;
			if (nt == tcap) {
				tcap = tcap ? 2 * tcap : 1024;
				Triple *x = realloc(t, sizeof *t * (size_t)tcap);
				if (!x) {
					rc = -ENOMEM;
					break;
				}
				t = x;
			}
			t[nt++] = (Triple){i, j, v};
		}
	int64_t dup;
	if (!rc)
		rc = to_csr(t, nt, n, n, rel, &dup);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory for the relevance of %lld captions", (long long)n);
	free(t);
	free(obj);
	free(act);
	return rc;
}

void eval_classes_free(EvalClasses *c)
{
	for (int i = 0; i < c->n && c->names; i++)
		free(c->names[i]);
	free(c->names);
	free(c->label);
	memset(c, 0, sizeof *c);
}

static int find_class(const EvalClasses *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], name))
			return i;
	return -1;
}

static int add_class(EvalClasses *c, const char *name)
{
	char **x = realloc(c->names, sizeof *x * (size_t)(c->n + 1));
	if (!x)
		return -ENOMEM;
	c->names = x;
	if (!(c->names[c->n] = strdup(name)))
		return -ENOMEM;
	return c->n++;
}

static void chomp(char *s)
{
	size_t l = strlen(s);
	while (l && (s[l - 1] == '\n' || s[l - 1] == '\r' || s[l - 1] == ' ' || s[l - 1] == '\t'))
		s[--l] = 0;
}

int eval_classes_read(const char *classes_path, const char *labels_path, int64_t n, EvalClasses *c, char *err,
		      size_t errlen)
{
	memset(c, 0, sizeof *c);
	c->samples = n;
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	ClassNames cn; // lenient: blanks around names, blank lines and '#' comments are dropped
	int rc = class_names_read(&cn, classes_path, 0, err, errlen);
	if (rc)
		return rc;
	c->names = cn.names;
	c->n = cn.n;
	FILE *f = NULL;
	if (!rc && c->n < 2) {
		snprintf(err, errlen, "%s: %d class%s; classification needs at least 2", classes_path, c->n,
			 c->n == 1 ? "" : "es");
		rc = -EINVAL;
	}
	if (!rc && !(c->label = malloc(sizeof *c->label * (size_t)(n ? n : 1))))
		rc = -ENOMEM;
	if (!rc && !(f = fs_fopen_read(labels_path, "r"))) {
		rc = -errno;
		snprintf(err, errlen, "labels file %s: %s", labels_path, fs_strerror(-rc));
	}
	int64_t k = 0;
	if (!rc) {
		lineno = 0;
		while (!rc && getline(&line, &cap, f) > 0) {
			lineno++;
			chomp(line);
			if (k >= n) {
				snprintf(err, errlen, "%s:%ld: more labels than the manifest's %lld samples",
					 labels_path, lineno, (long long)n);
				rc = -EINVAL;
			} else if (!strcmp(line, "-")) {
				c->label[k++] = -1;
			} else if ((c->label[k++] = find_class(c, line)) < 0) {
				snprintf(err, errlen, "%s:%ld: '%s' is not a class of %s", labels_path, lineno, line,
					 classes_path);
				rc = -EINVAL;
			}
		}
		fclose(f);
		if (!rc && k != n) {
			snprintf(err, errlen, "%s: %lld labels, the manifest has %lld samples", labels_path,
				 (long long)k, (long long)n);
			rc = -EINVAL;
		}
	}
	free(line);
	if (rc)
		eval_classes_free(c);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int eval_classes_from_captions(const char *const *captions, int64_t n, const char *what, EvalClasses *c, char *err,
			       size_t errlen)
{
	memset(c, 0, sizeof *c);
	c->samples = n;
	int part = !strcmp(what, "object") ? 1 : !strcmp(what, "action") ? 2 : !strcmp(what, "caption") ? 0 : -1;
	if (part < 0) {
		snprintf(err, errlen, "classes from captions: '%s' is none of action, object, caption", what);
		return -EINVAL;
	}
	char(*name)[128] = malloc(sizeof *name * (size_t)(n ? n : 1));
	c->label = malloc(sizeof *c->label * (size_t)(n ? n : 1));
	int rc = name && c->label ? 0 : -ENOMEM;
	for (int64_t i = 0; i < n && !rc; i++) {
		char obj[128], act[128];
		if (part == 0) {
			snprintf(name[i], sizeof name[i], "%s", captions[i]);
		} else if (eval_caption_split(captions[i], obj, sizeof obj, act, sizeof act)) {
			snprintf(err, errlen, "caption of sample %lld '%s' is not 'a <colour> <shape> <action>'",
				 (long long)i, captions[i]);
			rc = -EINVAL;
		} else {
			snprintf(name[i], sizeof name[i], "%s", part == 1 ? obj : act);
		}
		if (!rc && find_class(c, name[i]) < 0 && add_class(c, name[i]) < 0)
			rc = -ENOMEM;
	}
	if (!rc) {
		qsort(c->names, (size_t)c->n, sizeof *c->names, by_name);
		for (int64_t i = 0; i < n; i++)
			c->label[i] = find_class(c, name[i]);
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (!rc && c->n < 2) {
		snprintf(err, errlen, "the captions give %d %s class; classification needs at least 2", c->n, what);
		rc = -EINVAL;
	}
	free(name);
	if (rc)
		eval_classes_free(c);
	return rc;
}

int eval_prompt(const char *tmpl, const char *name, char *buf, size_t cap)
{
	size_t o = 0, nl = strlen(name);
	for (const char *s = tmpl; *s;) {
		if (!strncmp(s, "{}", 2)) {
			if (o + nl >= cap)
				return -ENOSPC;
			memcpy(buf + o, name, nl);
			o += nl;
			s += 2;
		} else {
			if (o + 1 >= cap)
				return -ENOSPC;
			buf[o++] = *s++;
		}
	}
	if (o >= cap)
		return -ENOSPC;
	buf[o] = 0;
	return 0;
}
