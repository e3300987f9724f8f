// Labelled annotation files on eval's strict CSV reader (eval_bench_util.h): any bad record stops
// prep naming file and line, since a wrong class id or name is a mistake in the whole file (a
// class list that does not match), never one row to drop. Class ids: EK-100's verb_class and
// noun_class are ids (--classes only names them); labels-csv's and kinetics' label fields are
// class names when --classes gives the list, else (labels-csv) integer ids.
#include "prep_labels.h"     // defines: PrepLabelOpts, prep_labels_load
#include "class_names.h"     // defines: ClassNames, class_names_read, class_names_push
#include "eval_bench_util.h" // defines: BenchText, BenchCsv, bench_csv_*, bench_ek100_clip, bench_decimal
#include "errbuf.h"          // defines: err_fmt, TRY

#include <errno.h>   // defines: EBADMSG, EINVAL, ENOMEM, E2BIG
#include <math.h>    // defines: INFINITY, llround
#include <stdio.h>   // defines: snprintf
#include <stdlib.h>  // defines: malloc, calloc, free, qsort, bsearch, strtol
#include <string.h>  // defines: strcmp, strdup, strchr, strcspn
#include <strings.h> // defines: strcasecmp
#include <sys/stat.h>

#define MAX_CLASSES (1 << 20) // MANIFEST_MAX_CLASSES

typedef struct {
	const char *name;
	int id;
} Named;

// one head's class names (its list, or kinetics' names found in the file) and a sorted index
typedef struct {
	char **names; // (n) class c's name
	Named *index; // (n) sorted by name
	int n;
} ClassList;

typedef struct {
	PrepAnnotList *l;
	const PrepLabelOpts *o;
	const char *path;
	ClassList cls[2];
	int fixed[2]; // the class count of each head from --num-classes or the format (0: max id + 1)
	int max_id[2];
	int ids; // label fields are class ids even with class names (ek100-train)
	char err[600];
} Ctx;

static int by_name(const void *a, const void *b)
{
	return strcmp(((const Named *)a)->name, ((const Named *)b)->name);
}

static int class_index(ClassList *c, const char *list, char *err, size_t errlen)
{
	if (!(c->index = malloc(sizeof *c->index * (size_t)(c->n ? c->n : 1))))
		return -ENOMEM;
	for (int i = 0; i < c->n; i++)
		c->index[i] = (Named){c->names[i], i};
	qsort(c->index, (size_t)c->n, sizeof *c->index, by_name);
	for (int i = 1; i < c->n; i++)
		if (!strcmp(c->index[i].name, c->index[i - 1].name))
			return err_fmt(err, errlen, -EINVAL, "%s:%d: class name '%.60s' repeats line %d", list,
				       c->index[i].id + 1, c->index[i].name, c->index[i - 1].id + 1);
	return 0;
}

static int class_push(ClassList *c, const char *name, size_t len)
{
	ClassNames cn = {.names = c->names, .n = c->n};
	const int rc = class_names_push(&cn, name, len);
	c->names = cn.names, c->n = cn.n;
	return rc == -E2BIG ? -EINVAL : rc;
}

// a --classes file (class_names.h, strict): one class name per line (class 0 first), or EPIC's class CSV
static int class_list_load(ClassList *c, const char *list, char *err, size_t errlen)
{
	ClassNames cn;
	TRY(class_names_read(&cn, list, 1, err, errlen));
	c->names = cn.names; // in blocks of 256, as class_names_push grows them
	c->n = cn.n;
	return class_index(c, list, err, errlen);
}

static void class_list_free(ClassList *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	free(c->index);
	memset(c, 0, sizeof *c);
}

// "A" or "A,B" into up to two fields (copied into buf); their count
static int split2(const char *s, char *buf, size_t cap, char *f[2])
{
	snprintf(buf, cap, "%s", s);
	f[0] = buf;
	char *comma = strchr(buf, ',');
	if (!comma)
		return 1;
	*comma = 0;
	f[1] = comma + 1;
	return 2;
}

// --classes and --num-classes for a format of up to max_heads heads
static int load_options(Ctx *x, int max_heads)
{
	char buf[8192], *f[2];
	if (x->o->classes) {
		int n = split2(x->o->classes, buf, sizeof buf, f);
		if (n > max_heads)
			return err_fmt(x->err, sizeof x->err, -EINVAL, "--classes %s: %d lists for %d label heads",
				       x->o->classes, n, max_heads);
		for (int k = 0; k < n; k++)
			TRY(class_list_load(&x->cls[k], f[k], x->err, sizeof x->err));
	}
	if (x->o->num_classes) {
		int n = split2(x->o->num_classes, buf, sizeof buf, f);
		for (int k = 0; k < n; k++) {
			char *end;
			long v = strtol(f[k], &end, 10);
			if (k >= max_heads || *end || end == f[k] || v < 1 || v > MAX_CLASSES)
				return err_fmt(x->err, sizeof x->err, -EINVAL,
					       "--num-classes %s: want N or N,N2 (1..%d), one per label head (%d here)",
					       x->o->num_classes, MAX_CLASSES, max_heads);
			x->fixed[k] = (int)v;
		}
	}
	return 0;
}

// a label field: a class name of the head's list, else an integer id in range; "" is no label
static int parse_label(Ctx *x, const BenchCsv *c, int head, const char *field, int *out)
{
	ClassList *cl = &x->cls[head];
	*out = -1;
	if (!*field)
		return 0;
	if (cl->n && !x->ids) {
		Named key = {field, 0}, *hit = bsearch(&key, cl->index, (size_t)cl->n, sizeof key, by_name);
		if (!hit)
			return err_fmt(x->err, sizeof x->err, -EINVAL, "%s:%d: unknown class name '%.60s' (not in %s)",
				       c->path, c->line, field, x->o->classes);
		*out = hit->id;
		return 0;
	}
	char *end;
	long v = strtol(field, &end, 10);
	if (*end || (*field < '0' || *field > '9') || v >= MAX_CLASSES)
		return err_fmt(x->err, sizeof x->err, -EINVAL, "%s:%d: class id '%.40s' is not an integer from 0",
			       c->path, c->line, field);
	if (x->fixed[head] && v >= x->fixed[head])
		return err_fmt(x->err, sizeof x->err, -EINVAL,
			       "%s:%d: class id %ld of head %d is outside its %d classes (0..%d)", c->path, c->line, v,
			       head, x->fixed[head], x->fixed[head] - 1);
	*out = (int)v;
	x->max_id[head] = *out > x->max_id[head] ? *out : x->max_id[head];
	return 0;
}

// one clip with its labels, refused (as the whole file) for times or a video id prep cannot use
static int add_clip(Ctx *x, const BenchCsv *c, const char *video, double s, double e, const char *caption,
		    const int lab[2])
{
	if (!(e > s))
		return err_fmt(x->err, sizeof x->err, -EINVAL,
			       "%s:%d: the clip ends (%.3f s) before it starts (%.3f s)", c->path, c->line, e, s);
	size_t n = x->l->n;
	TRY(prep_annot_add(x->l, video, s, e, caption, c->line));
	if (x->l->n == n)
		return err_fmt(x->err, sizeof x->err, -EINVAL, "%s: %s", c->path, x->l->problems[x->l->n_problems - 1]);
	x->l->a[n].label[0] = lab[0], x->l->a[n].label[1] = lab[1];
	return 0;
}

// the header's columns names[0..n) into col (-1 for an optional one, i >= need, that is missing)
static int columns(const BenchCsv *c, const char *const *names, int n, int need, int *col, char *err, size_t errlen)
{
	for (int k = 0; k < n; k++) {
		col[k] = -1;
		for (int i = 0; i < c->nf; i++)
			if (!strcasecmp(c->f[i], names[k]))
				col[k] = i;
		if (col[k] < 0 && k < need)
			return bench_csv_col(c, names[k], err, errlen); // its "no column" message
	}
	return 0;
}

// every record has as many fields as the header (what: "the header", "the first record")
static int fields_check(Ctx *x, const BenchCsv *c, int want, const char *what)
{
	return c->nf == want ? 0
			     : err_fmt(x->err, sizeof x->err, -EINVAL, "%s:%d: %d fields, %s has %d", c->path, c->line,
				       c->nf, what, want);
}

// EPIC_100_train.csv / EPIC_100_validation.csv: heads verb (97) and noun (300), the narration the caption
static int read_ek100(Ctx *x, BenchCsv *c)
{
	static const char *const names[] = {"narration_id", "video_id",   "start_timestamp", "stop_timestamp",
					    "narration",    "verb_class", "noun_class"};
	int col[7], rc = bench_csv_next(c, x->err, sizeof x->err);
	if (rc <= 0)
		return rc ? rc : err_fmt(x->err, sizeof x->err, -EINVAL, "%s: empty", c->path);
	TRY(columns(c, names, 7, 7, col, x->err, sizeof x->err));
	const int nf = c->nf;
	while ((rc = bench_csv_next(c, x->err, sizeof x->err)) > 0) {
		double s, e;
		int lab[2];
		TRY(fields_check(x, c, nf, "the header"));
		TRY(bench_ek100_clip(c, col, &s, &e, x->err, sizeof x->err));
		TRY(parse_label(x, c, 0, c->f[col[5]], &lab[0]));
		TRY(parse_label(x, c, 1, c->f[col[6]], &lab[1]));
		TRY(add_clip(x, c, c->f[col[1]], s, e, c->f[col[4]], lab));
	}
	return rc;
}

// a caption from the clip's class names ("" when the classes have none)
static void names_caption(const Ctx *x, const int lab[2], int heads, char *buf, size_t cap)
{
	buf[0] = 0;
	for (int k = 0; k < heads; k++)
		if (x->cls[k].n && lab[k] >= 0)
			snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", buf[0] ? " " : "",
				 x->cls[k].names[lab[k]]);
}

// video,start,end,label[,label2]: a header (a field "video") names the columns (and may add
// caption), else the first record's 4 or 5 fields are the layout
static int read_labels_csv(Ctx *x, BenchCsv *c, int *heads)
{
	static const char *const names[] = {"video", "start", "end", "label", "label2", "caption"};
	int col[6] = {0, 1, 2, 3, 4, -1}, rc = bench_csv_next(c, x->err, sizeof x->err);
	if (rc <= 0)
		return rc ? rc : err_fmt(x->err, sizeof x->err, -EINVAL, "%s: empty", c->path);
	int header = 0;
	const int nf = c->nf;
	for (int i = 0; i < nf; i++)
		header |= !strcasecmp(c->f[i], "video");
	if (header)
		TRY(columns(c, names, 6, 4, col, x->err, sizeof x->err));
	else if (nf != 4 && nf != 5)
		return err_fmt(x->err, sizeof x->err, -EINVAL, "%s:%d: %d fields, want video,start,end,label[,label2]",
			       c->path, c->line, nf);
	*heads = header ? 1 + (col[4] >= 0) : nf - 3;
	const int lists = (x->cls[0].n > 0) + (x->cls[1].n > 0);
	if (x->o->classes && lists != *heads)
		return err_fmt(x->err, sizeof x->err, -EINVAL, "--classes %s: %d lists for the file's %d label heads",
			       x->o->classes, lists, *heads);
	for (int first = !header; first || (rc = bench_csv_next(c, x->err, sizeof x->err)) > 0; first = 0) {
		double s = prep_parse_time(c->f[col[1]]), e;
		int lab[2] = {-1, -1};
		char cap[1024];
		TRY(fields_check(x, c, nf, header ? "the header" : "the first record"));
		if (s < 0 || (e = prep_parse_time(c->f[col[2]])) < 0)
			return err_fmt(x->err, sizeof x->err, -EINVAL, "%s:%d: times '%.40s', '%.40s' are not times",
				       c->path, c->line, c->f[col[1]], c->f[col[2]]);
		for (int k = 0; k < *heads; k++)
			TRY(parse_label(x, c, k, c->f[col[3 + k]], &lab[k]));
		names_caption(x, lab, *heads, cap, sizeof cap);
		TRY(add_clip(x, c, c->f[col[0]], s, e, col[5] >= 0 ? c->f[col[5]] : cap, lab));
	}
	return rc;
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

// every distinct label name of the file, sorted: the kinetics classes without --classes
static int kinetics_names(Ctx *x, const BenchText *t)
{
	BenchCsv c;
	ClassList *cl = &x->cls[0];
	int rc = bench_csv_init(&c, t, x->path, 64), col = 0;
	if (!rc && (rc = bench_csv_next(&c, x->err, sizeof x->err)) > 0)
		rc = col = bench_csv_col(&c, "label", x->err, sizeof x->err);
	while (rc >= 0 && (rc = bench_csv_next(&c, x->err, sizeof x->err)) > 0)
		if (col < c.nf && c.f[col][0])
			rc = class_push(cl, c.f[col], strlen(c.f[col]));
	bench_csv_free(&c);
	if (rc < 0)
		return rc;
	Named *ix = malloc(sizeof *ix * (size_t)(cl->n ? cl->n : 1));
	if (!ix)
		return -ENOMEM;
	for (int i = 0; i < cl->n; i++)
		ix[i] = (Named){cl->names[i], i};
	qsort(ix, (size_t)cl->n, sizeof *ix, by_name);
	char **sorted = malloc(sizeof *sorted * (size_t)(cl->n ? cl->n : 1));
	int n = 0;
	for (int i = 0; sorted && i < cl->n; i++)
		if (!n || strcmp(ix[i].name, sorted[n - 1]))
			sorted[n++] = cl->names[ix[i].id];
		else
			free(cl->names[ix[i].id]);
	free(ix);
	if (!sorted)
		return -ENOMEM;
	free(cl->names);
	cl->names = sorted, cl->n = n;
	return n ? class_index(cl, x->path, x->err, sizeof x->err)
		 : err_fmt(x->err, sizeof x->err, -EINVAL, "%s: no class names in its label column", x->path);
}

// label,youtube_id,time_start,time_end,split: <id>_<start:06d>_<end:06d>.mp4 under --video-root is
// the trimmed clip (the whole file), else <id>'s video from time_start to time_end
static int read_kinetics(Ctx *x, BenchCsv *c)
{
	static const char *const names[] = {"label", "youtube_id", "time_start", "time_end", "split"};
	int col[5], rc = bench_csv_next(c, x->err, sizeof x->err);
	if (rc <= 0)
		return rc ? rc : err_fmt(x->err, sizeof x->err, -EINVAL, "%s: empty", c->path);
	TRY(columns(c, names, 5, 5, col, x->err, sizeof x->err));
	const int nf = c->nf;
	while ((rc = bench_csv_next(c, x->err, sizeof x->err)) > 0) {
		double s, e;
		int lab[2] = {-1, -1};
		TRY(fields_check(x, c, nf, "the header"));
		if (x->o->split && strcmp(c->f[col[4]], x->o->split))
			continue;
		if (bench_decimal(c->f[col[2]], &s) || bench_decimal(c->f[col[3]], &e))
			return err_fmt(x->err, sizeof x->err, -EINVAL, "%s:%d: times '%.40s', '%.40s' are not seconds",
				       c->path, c->line, c->f[col[2]], c->f[col[3]]);
		if (!c->f[col[0]][0])
			return err_fmt(x->err, sizeof x->err, -EINVAL, "%s:%d: no label", c->path, c->line);
		TRY(parse_label(x, c, 0, c->f[col[0]], &lab[0]));
		char trimmed[512], file[4600];
		snprintf(trimmed, sizeof trimmed, "%.400s_%06lld_%06lld", c->f[col[1]], (long long)llround(s),
			 (long long)llround(e));
		snprintf(file, sizeof file, "%s/%s.mp4", x->o->video_root ? x->o->video_root : ".", trimmed);
		const int whole = e > s && is_file(file);
		TRY(add_clip(x, c, whole ? trimmed : c->f[col[1]], whole ? 0 : s, whole ? INFINITY : e,
			     x->cls[0].names[lab[0]], lab));
	}
	return rc;
}

// the heads into l: names, class counts (fixed, the list's, or max id + 1) and class names
static int set_heads(Ctx *x, int n, const char *const *head_names)
{
	PrepHeads *h = &x->l->heads;
	h->n = n;
	for (int k = 0; k < n; k++) {
		snprintf(h->name[k], sizeof h->name[k], "%s", head_names[k]);
		h->n_classes[k] = x->cls[k].n ? x->cls[k].n : x->fixed[k] ? x->fixed[k] : x->max_id[k] + 1;
		if (x->fixed[k] && x->cls[k].n && x->fixed[k] != x->cls[k].n)
			return err_fmt(x->err, sizeof x->err, -EINVAL,
				       "--num-classes %d for head %d, but its --classes list has %d", x->fixed[k], k,
				       x->cls[k].n);
		if (h->n_classes[k] < 1)
			return err_fmt(x->err, sizeof x->err, -EINVAL, "%s: no labels of head %d (%s)", x->path, k,
				       head_names[k]);
		if (x->cls[k].n) { // the names go to the list; the index goes with the context
			h->class_names[k] = x->cls[k].names;
			x->cls[k].names = NULL, x->cls[k].n = 0;
		}
	}
	return 0;
}

static int read_format(Ctx *x, const char *format, const BenchText *t)
{
	BenchCsv c;
	int rc = bench_csv_init(&c, t, x->path, 64), heads = 0;
	if (!strcmp(format, "ek100-train")) {
		static const int ek100[2] = {97, 300}; // EPIC-KITCHENS-100's verb and noun classes
		for (int k = 0; k < 2; k++)
			x->fixed[k] = x->fixed[k] ? x->fixed[k] : x->cls[k].n ? x->cls[k].n : ek100[k];
		x->ids = 1;
		static const char *const hn[] = {"verb", "noun"};
		if (!rc && (rc = read_ek100(x, &c)) >= 0)
			rc = set_heads(x, 2, hn);
	} else if (!strcmp(format, "labels-csv")) {
		static const char *const hn[] = {"label", "label2"};
		if (!rc && (rc = read_labels_csv(x, &c, &heads)) >= 0)
			rc = set_heads(x, heads, hn);
	} else {
		static const char *const hn[] = {"label"};
		if (!rc && !x->cls[0].n)
			rc = kinetics_names(x, t);
		x->fixed[0] = x->cls[0].n;
		if (rc >= 0 && (rc = read_kinetics(x, &c)) >= 0)
			rc = set_heads(x, 1, hn);
	}
	bench_csv_free(&c);
	return rc;
}

// text (n bytes and a NUL after them; NULL: read path) in format into l
static int load(PrepAnnotList *l, const char *text, size_t n, const char *path, const char *format,
		const PrepLabelOpts *o)
{
	if (!format || (strcmp(format, "ek100-train") && strcmp(format, "labels-csv") && strcmp(format, "kinetics")))
		return 1;
	memset(l, 0, sizeof *l);
	static const PrepLabelOpts none;
	Ctx x = {.l = l, .o = o ? o : &none, .path = path, .max_id = {-1, -1}};
	BenchText t = {(char *)text, n};
	int rc = load_options(&x, !strcmp(format, "kinetics") ? 1 : 2);
	if (!rc && (text || (rc = bench_text_load(path, &t, x.err, sizeof x.err)) == 0)) {
		rc = read_format(&x, format, &t);
		if (!text)
			bench_text_free(&t);
	}
	for (int k = 0; k < 2; k++)
		class_list_free(&x.cls[k]);
	if (rc == -ENOMEM || rc >= 0)
		return rc < 0 ? rc : 0;
	l->bad_record++;
	prep_annot_problem(l, "%s", x.err[0] ? x.err : strerror(-rc));
	return -EBADMSG;
}

int prep_labels_load(PrepAnnotList *l, const char *path, const char *format, const PrepLabelOpts *o)
{
	return load(l, NULL, 0, path, format, o);
}

int prep_labels_parse(PrepAnnotList *l, const char *text, size_t n, const char *path, const char *format,
		      const PrepLabelOpts *o)
{
	return load(l, text, n, path, format, o);
}
