// CSV/TSV and EPIC-KITCHENS-100 importers: an RFC 4180 record reader (quotes, doubled
// quotes, separators and newlines inside quotes), column lookup by header name, time parsing.
#define _GNU_SOURCE     // vasprintf
#include "prep_annot.h" // defines: prep_annot_load, prep_annot_add, prep_parse_time, ...
#include "fs_dir.h"     // defines: fs_fopen_read
#include "bpe.h"        // defines: bpe_utf8_valid

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void prep_annot_problem(PrepAnnotList *l, const char *fmt, ...)
{
	if (l->n_problems == l->cap_problems) {
		size_t cap = l->cap_problems ? 2 * l->cap_problems : 16;
		char **p = realloc(l->problems, cap * sizeof(char *));
		if (!p)
			return;
		l->problems = p;
		l->cap_problems = cap;
	}
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&l->problems[l->n_problems], fmt, ap) >= 0)
		l->n_problems++;
	va_end(ap);
}

void prep_annot_free(PrepAnnotList *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->a[i].video);
		free(l->a[i].caption);
	}
	for (size_t i = 0; i < l->n_problems; i++)
		free(l->problems[i]);
	for (int k = 0; k < 2; k++) {
		for (int c = 0; l->heads.class_names[k] && c < l->heads.n_classes[k]; c++)
			free(l->heads.class_names[k][c]);
		free(l->heads.class_names[k]);
	}
	free(l->a);
	free(l->problems);
	memset(l, 0, sizeof(*l));
}

// one plain decimal ("12", "12.5", ".5"): strtod alone would also take "nan", "inf", hex and
// exponents, and a NaN start or an infinite end passes every later range check
static int decimal(const char *p, const char **end, double *v)
{
	const char *q = p;
	int digits = 0;
	while (*q >= '0' && *q <= '9')
		q++, digits++;
	if (*q == '.')
		for (q++; *q >= '0' && *q <= '9'; q++)
			digits++;
	if (!digits || q - p > 40)
		return -1;
	char buf[48];
	memcpy(buf, p, (size_t)(q - p));
	buf[q - p] = 0;
	*v = strtod(buf, NULL);
	*end = q;
	return isfinite(*v) ? 0 : -1;
}

double prep_parse_time(const char *s)
{
	double parts[3] = {0};
	int n = 0;
	const char *p = s;
	while (*p == ' ')
		p++;
	if (!*p)
		return -1;
	for (;;) {
		const char *end;
		double v;
		if (n == 3 || decimal(p, &end, &v))
			return -1;
		parts[n++] = v;
		p = end;
		if (*p == ':') {
			p++;
			continue;
		}
		while (*p == ' ')
			p++;
		if (*p)
			return -1;
		break;
	}
	double t = 0;
	for (int i = 0; i < n; i++)
		t = t * 60 + parts[i];
	return isfinite(t) ? t : -1;
}

int prep_annot_add(PrepAnnotList *l, const char *video, double start, double end, const char *caption, int line)
{
	if (!bpe_utf8_valid(caption, strlen(caption)) || !bpe_utf8_valid(video, strlen(video))) {
		l->bad_utf8++;
		prep_annot_problem(l, "line %d: video '%s': caption is not valid UTF-8", line,
				   bpe_utf8_valid(video, strlen(video)) ? video : "?");
		return 0;
	}
	if (!*video || strstr(video, "..") || video[0] == '/' || video[0] == '.') {
		l->bad_record++;
		prep_annot_problem(l, "line %d: unusable video id '%s'", line, video);
		return 0;
	}
	if (!isfinite(start) || isnan(end) || end == -INFINITY || start < 0 || end <= start) { // +inf: to the end
		l->bad_time++;
		prep_annot_problem(l, "line %d: video %s: bad time range %.3f-%.3f s", line, video, start, end);
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		PrepAnnot *a = realloc(l->a, cap * sizeof(PrepAnnot));
		if (!a)
			return -ENOMEM;
		l->a = a;
		l->cap = cap;
	}
	PrepAnnot *a = &l->a[l->n];
	a->video = strdup(video);
	a->caption = strdup(caption);
	if (!a->video || !a->caption) {
		free(a->video);
		free(a->caption);
		return -ENOMEM;
	}
	a->start = start, a->end = end, a->line = line;
	a->label[0] = a->label[1] = -1;
	l->n++;
	return 0;
}

// One record starting at *pos: fields into out (NUL-separated, pointers in f). Returns the
// field count, 0 at the end of the text. *line advances by the newlines consumed.
static int next_record(const char *t, size_t n, size_t *pos, char sep, char *out, char **f, int max_f, int *line,
		       int *nul)
{
	size_t p = *pos, o = 0;
	if (p >= n)
		return 0;
	int nf = 0;
	f[nf++] = out;
	int quoted = 0;
	*nul = 0;
	while (p < n) {
		char c = t[p];
		*nul |= c == 0;
		if (quoted) {
			if (c == '"' && p + 1 < n && t[p + 1] == '"') {
				out[o++] = '"';
				p += 2;
				continue;
			}
			if (c == '"') {
				quoted = 0;
				p++;
				continue;
			}
			if (c == '\n')
				(*line)++;
			out[o++] = c;
			p++;
			continue;
		}
		if (c == '"') {
			quoted = 1;
			p++;
		} else if (c == sep) {
			out[o++] = 0;
			if (nf < max_f)
				f[nf++] = out + o;
			p++;
		} else if (c == '\n' || c == '\r') {
			p++;
			if (c == '\r' && p < n && t[p] == '\n')
				p++;
			(*line)++;
			break;
		} else {
			out[o++] = c;
			p++;
		}
	}
	out[o] = 0;
	*pos = p;
	return nf;
}

static int find_col(char **f, int nf, const char *const *names)
{
	for (int i = 0; i < nf; i++)
		for (int k = 0; names[k]; k++)
			if (strcasecmp(f[i], names[k]) == 0)
				return i;
	return -1;
}

static int load_table(PrepAnnotList *l, const char *t, size_t n, char sep, int epic)
{
	char *buf = malloc(n + 2);
	char *f[64];
	if (!buf)
		return -ENOMEM;
	size_t pos = 0;
	int line = 1, rc = 0;
	// UTF-8 byte order mark
	if (n >= 3 && memcmp(t, "\xef\xbb\xbf", 3) == 0)
		pos = 3;
	int nul;
	int nf = next_record(t, n, &pos, sep, buf, f, 64, &line, &nul);
	static const char *const c_video[] = {"video", "video_id", "videoid", "video_uid", "vid", NULL};
	static const char *const c_start[] = {"start", "start_sec", "start_time", "start_timestamp", NULL};
	static const char *const c_end[] = {"end", "end_sec", "end_time", "stop", "stop_timestamp", NULL};
	static const char *const c_cap[] = {"caption", "text", "narration", "sentence", NULL};
	int cv = find_col(f, nf, c_video), cs = find_col(f, nf, c_start), ce = find_col(f, nf, c_end),
	    cc = find_col(f, nf, c_cap);
	int header = cv >= 0 && cs >= 0 && ce >= 0 && cc >= 0;
	if (epic && !header) {
		free(buf);
		return -EINVAL; // EPIC's CSV always has its header
	}
	if (!header) { // no header: the first record is data in the order video,start,end,caption
		cv = 0, cs = 1, ce = 2, cc = 3;
		pos = n >= 3 && memcmp(t, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
		line = 1;
	}
	int need = cv > cs ? cv : cs;
	need = need > ce ? need : ce;
	need = need > cc ? need : cc;
	for (;;) {
		int rec_line = line;
		nf = next_record(t, n, &pos, sep, buf, f, 64, &line, &nul);
		if (nf == 0)
			break;
		if (nul) { // a NUL byte would end the field's C string early: the record is not text
			l->bad_record++;
			prep_annot_problem(l, "line %d: a NUL byte inside the record", rec_line);
			continue;
		}
		if (nf == 1 && f[0][0] == 0)
			continue; // blank line
		if (nf <= need) {
			l->bad_record++;
			prep_annot_problem(l, "line %d: %d fields, want at least %d", rec_line, nf, need + 1);
			continue;
		}
		double s = prep_parse_time(f[cs]), e = prep_parse_time(f[ce]);
		if (s < 0 || e < 0) {
			l->bad_time++;
			prep_annot_problem(
				l, "line %d: timestamps '%.40s', '%.40s' are not finite times (seconds or HH:MM:SS)",
				rec_line, f[cs], f[ce]);
			continue;
		}
		if ((rc = prep_annot_add(l, f[cv], s, e, f[cc], rec_line)) < 0)
			break;
	}
	free(buf);
	return rc;
}

int prep_annot_load(PrepAnnotList *l, const char *path, const char *format, double ego4d_window)
{
	memset(l, 0, sizeof(*l));
	FILE *fp = fs_fopen_read(path, "rb");
	if (!fp)
		return -errno;
	if (fseek(fp, 0, SEEK_END) < 0) {
		int e = -errno;
		fclose(fp);
		return e;
	}
	long sz = ftell(fp);
	rewind(fp);
	char *t = malloc((size_t)(sz > 0 ? sz : 0) + 1);
	if (!t) {
		fclose(fp);
		return -ENOMEM;
	}
	size_t n = fread(t, 1, (size_t)(sz > 0 ? sz : 0), fp);
	fclose(fp);
	t[n] = 0;
	int rc = prep_annot_parse(l, t, n, path, format, ego4d_window);
	free(t);
	return rc;
}

int prep_annot_parse(PrepAnnotList *l, const char *t, size_t n, const char *path, const char *format,
		     double ego4d_window)
{
	if (n == 0) { // nothing to import is a reported problem, not a silent empty dataset
		l->bad_record++;
		prep_annot_problem(l, "%s: the annotation file is empty", path);
		return 0;
	}
	const char *ext = strrchr(path, '.');
	char fmt[16];
	snprintf(fmt, sizeof(fmt), "%s", format ? format : "auto");
	if (strcmp(fmt, "auto") == 0) {
		if (ext && strcasecmp(ext, ".json") == 0)
			strcpy(fmt, "ego4d");
		else if (memchr(t, '\n', n) && memmem(t, (size_t)((char *)memchr(t, '\n', n) - t), "narration_id", 12))
			strcpy(fmt, "epic");
		else if (ext && strcasecmp(ext, ".tsv") == 0)
			strcpy(fmt, "tsv");
		else
			strcpy(fmt, "csv");
	}
	int rc;
	if (strcmp(fmt, "csv") == 0)
		rc = load_table(l, t, n, ',', 0);
	else if (strcmp(fmt, "tsv") == 0)
		rc = load_table(l, t, n, '\t', 0);
	else if (strcmp(fmt, "epic") == 0)
		rc = load_table(l, t, n, ',', 1);
	else if (strcmp(fmt, "ego4d") == 0)
		rc = prep_ego4d_load(l, t, n, ego4d_window);
	else
		rc = -EINVAL;
	return rc;
}
