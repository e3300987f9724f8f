// JSON-lines reader of tools/plot: numbers by key from the objects the trainer, tools/eval and
// tools/ringstat write (through the common JSON tokenizer), tolerant of a half-written last line.
#include "plot_data.h" // defines: PlotTable, plot_json_number, plot_table_read, ...
#include "fs_dir.h"    // defines: fs_fopen_read, fs_strerror
#include "json_lex.h" // defines: JsonLex, json_lex_init, json_expect, json_accept, json_string, json_peek, json_number, json_skip

#include <errno.h>  // defines: ENOMEM, errno
#include <math.h>   // defines: NAN, isfinite
#include <stdio.h>  // defines: FILE, fopen, getline, snprintf
#include <stdlib.h> // defines: realloc, free, strtod
#include <string.h> // defines: strstr, strlen, strerror, memset

// the object at j: 1/0 as plot_json_number when key is in it or in an object nested in it (the
// first one in the text wins), -1 when it is not, -2 when the text is not JSON
static int find_number(JsonLex *j, const char *key, size_t klen, double *v)
{
	if (json_expect(j, '{'))
		return -2;
	if (json_accept(j, '}'))
		return -1;
	do {
		char k[80];
		size_t n;
		JsonLex at_key = *j;
		if (json_string(j, k, sizeof k, &n, 0)) { // longer than any key asked for, or malformed
			*j = at_key;
			if (json_string(j, NULL, 0, NULL, 0))
				return -2;
			n = sizeof k;
		}
		if (json_expect(j, ':'))
			return -2;
		int c = json_peek(j);
		if (n == klen && !memcmp(k, key, n)) {
			if (c == '-' || (c >= '0' && c <= '9'))
				return json_number(j, v) ? -2 : 1;
			return 0;
		}
		int rc = c == '{' ? find_number(j, key, klen, v) : json_skip(j) ? -2 : -1;
		if (rc != -1)
			return rc;
	} while (json_accept(j, ','));
	return json_expect(j, '}') ? -2 : -1;
}

int plot_json_number(const char *line, const char *key, double *v)
{
	JsonLex j;
	json_lex_init(&j, line, strlen(line), 0, "JSON", NULL, 0);
	*v = NAN;
	int rc = find_number(&j, key, strlen(key), v);
	if (rc != 1)
		*v = NAN;
	return rc == -2 ? -1 : rc;
}

static int one_object(const char *s)
{
	size_t l = strlen(s);
	while (l && (s[l - 1] == '\n' || s[l - 1] == '\r' || s[l - 1] == ' '))
		l--;
	while (*s == ' ')
		s++, l--;
	return l >= 2 && s[0] == '{' && s[l - 1] == '}';
}

int plot_table_read(const char *path, const char *const *keys, int nk, PlotTable *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	t->nk = nk;
	FILE *f = fs_fopen_read(path, "r");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, fs_strerror(e));
		return -e;
	}
	char *line = NULL;
	size_t cap = 0;
	int rows_cap = 0, rc = 0;
	while (getline(&line, &cap, f) > 0) {
		if (!one_object(line)) {
			t->bad_lines++;
			continue;
		}
		double x;
		if (plot_json_number(line, keys[0], &x) != 1)
			continue;
		if (t->n == rows_cap) {
			rows_cap = rows_cap ? 2 * rows_cap : 256;
			for (int k = 0; k < nk; k++) {
				double *c = realloc(t->col[k], sizeof *c * (size_t)rows_cap);
				if (!c) {
					rc = -ENOMEM;
					break;
				}
				t->col[k] = c;
			}
			if (rc)
				break;
		}
		for (int k = 0; k < nk; k++)
			plot_json_number(line, keys[k], &t->col[k][t->n]);
		t->n++;
	}
	free(line);
	fclose(f);
	if (rc) {
		snprintf(err, errlen, "%s: out of memory", path);
		plot_table_free(t);
	}
	return rc;
}

void plot_table_free(PlotTable *t)
{
	for (int k = 0; k < PLOT_MAX_KEYS; k++)
		free(t->col[k]);
	memset(t, 0, sizeof *t);
}

int plot_table_has(const PlotTable *t, int k)
{
	for (int i = 0; i < t->n; i++)
		if (isfinite(t->col[k][i]))
			return 1;
	return 0;
}

void plot_table_keep_finite(PlotTable *t, int first, int last)
{
	int o = 0;
	for (int i = 0; i < t->n; i++) {
		int keep = 0;
		for (int k = first; k <= last; k++)
			keep |= isfinite(t->col[k][i]);
		if (!keep)
			continue;
		for (int c = 0; c < t->nk; c++)
			t->col[c][o] = t->col[c][i];
		o++;
	}
	t->n = o;
}

void plot_table_latest(PlotTable *t)
{
	int o = 0;
	for (int i = 0; i < t->n; i++) {
		while (o > 0 && t->col[0][o - 1] >= t->col[0][i])
			o--;
		for (int c = 0; c < t->nk; c++)
			t->col[c][o] = t->col[c][i];
		o++;
	}
	t->n = o;
}
