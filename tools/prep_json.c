// Ego4D narration importer: a small recursive-descent JSON reader that walks
// {uid: {"narration_pass_N": {"narrations": [{timestamp_sec, narration_text}]}}} and
// skips everything else, so the whole narration.json never becomes a tree in memory.
#include "prep_annot.h" // defines: prep_ego4d_load, prep_annot_add, prep_annot_problem
#include "bpe_text.h"   // defines: bpe_utf8_put

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	const char *t;
	size_t n, p;
	int depth;
} Json;

static void ws(Json *j)
{
	while (j->p < j->n && (j->t[j->p] == ' ' || j->t[j->p] == '\n' || j->t[j->p] == '\r' || j->t[j->p] == '\t'))
		j->p++;
}

static int peek(Json *j)
{
	ws(j);
	return j->p < j->n ? (unsigned char)j->t[j->p] : -1;
}

static int expect(Json *j, char c)
{
	if (peek(j) != c)
		return -1;
	j->p++;
	return 0;
}

static int hex4(Json *j, unsigned *v)
{
	if (j->p + 4 > j->n)
		return -1;
	*v = 0;
	for (int k = 0; k < 4; k++) {
		char c = j->t[j->p++];
		int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		*v = *v * 16 + (unsigned)d;
	}
	return 0;
}

// a string into out (malloc'ed when out is not NULL), escapes decoded to UTF-8; *len (may be
// NULL) gets the decoded length, which differs from strlen(*out) when it holds a NUL
static int string(Json *j, char **out, size_t *len)
{
	if (expect(j, '"'))
		return -1;
	size_t start = j->p;
	char *o = NULL;
	size_t on = 0;
	if (out) {
		size_t e = start; // an escaped string never grows when decoded
		while (e < j->n && j->t[e] != '"')
			e += j->t[e] == '\\' ? 2 : 1;
		o = malloc(e - start + 1);
		if (!o)
			return -1;
	}
	while (j->p < j->n && j->t[j->p] != '"') {
		char c = j->t[j->p++];
		if (c != '\\') {
			if (o)
				o[on++] = c;
			continue;
		}
		if (j->p >= j->n)
			break;
		c = j->t[j->p++];
		unsigned cp;
		switch (c) {
		case 'n': cp = '\n'; break;
		case 't': cp = '\t'; break;
		case 'r': cp = '\r'; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'u':
			if (hex4(j, &cp)) {
				free(o);
				return -1;
			}
			if (cp >= 0xd800 && cp <= 0xdbff && j->p + 6 <= j->n && j->t[j->p] == '\\' && j->t[j->p + 1] == 'u') {
				unsigned lo;
				j->p += 2;
				if (hex4(j, &lo) || lo < 0xdc00 || lo > 0xdfff) {
					free(o);
					return -1;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xd800 && cp <= 0xdfff) {
				cp = 0xfffd;
			}
			break;
		default: cp = (unsigned char)c; break; // \" \\ \/
		}
		if (o)
			on += (size_t)bpe_utf8_put(cp, o + on);
	}
	if (expect(j, '"')) {
		free(o);
		return -1;
	}
	if (o) {
		o[on] = 0;
		*out = o;
	}
	if (len)
		*len = on;
	return 0;
}

static int skip(Json *j);
static int number_token(Json *j, double *v);

static int skip_container(Json *j, char open, char close)
{
	if (expect(j, open) || ++j->depth > 256)
		return -1;
	if (peek(j) == close) {
		j->p++;
		j->depth--;
		return 0;
	}
	for (;;) {
		if (open == '{' && (string(j, NULL, NULL) || expect(j, ':')))
			return -1;
		if (skip(j))
			return -1;
		int c = peek(j);
		j->p++;
		if (c == close)
			break;
		if (c != ',')
			return -1;
	}
	j->depth--;
	return 0;
}

// a JSON literal or number (validated by its grammar, so "ttt" is not a value)
static int scalar(Json *j)
{
	static const char *const lit[] = {"true", "false", "null"};
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(lit[k]);
		if (j->n - j->p >= n && memcmp(j->t + j->p, lit[k], n) == 0) {
			j->p += n;
			return 0;
		}
	}
	double v;
	return number_token(j, &v);
}

static int skip(Json *j)
{
	int c = peek(j);
	if (c == '{')
		return skip_container(j, '{', '}');
	if (c == '[')
		return skip_container(j, '[', ']');
	if (c == '"')
		return string(j, NULL, NULL);
	return scalar(j);
}

// A number by the JSON grammar, read by length (the text is not NUL-terminated where a caller
// maps it); -1 when there is none. The value may be infinite (1e999): callers check.
static int number_token(Json *j, double *v)
{
	ws(j);
	size_t s = j->p, p = s;
	const char *t = j->t;
	// Python's json module writes these non-standard literals; they are numbers to be refused
	// per record (not a malformed file)
	static const struct {
		const char *lit;
		double v;
	} special[] = {{"NaN", NAN}, {"Infinity", INFINITY}, {"-Infinity", -INFINITY}};
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(special[k].lit);
		if (j->n - p >= n && memcmp(t + p, special[k].lit, n) == 0) {
			j->p = p + n;
			*v = special[k].v;
			return 0;
		}
	}
	if (p < j->n && t[p] == '-')
		p++;
	size_t d0 = p;
	while (p < j->n && t[p] >= '0' && t[p] <= '9')
		p++;
	if (p == d0)
		return -1;
	if (p < j->n && t[p] == '.') {
		size_t f0 = ++p;
		while (p < j->n && t[p] >= '0' && t[p] <= '9')
			p++;
		if (p == f0)
			return -1;
	}
	if (p < j->n && (t[p] == 'e' || t[p] == 'E')) {
		p++;
		if (p < j->n && (t[p] == '+' || t[p] == '-'))
			p++;
		size_t e0 = p;
		while (p < j->n && t[p] >= '0' && t[p] <= '9')
			p++;
		if (p == e0)
			return -1;
	}
	char buf[64];
	if (p - s >= sizeof buf)
		return -1;
	memcpy(buf, t + s, p - s);
	buf[p - s] = 0;
	*v = strtod(buf, NULL);
	j->p = p;
	return 0;
}

// 0 with a number in *v; 1 when the value is another type (skipped); -1 when malformed
static int number(Json *j, double *v)
{
	int c = peek(j);
	if (c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I')
		return number_token(j, v);
	return skip(j) ? -1 : 1;
}

// iterates an object: calls fn(key) positioned at each value, which must consume it
#define OBJECT_FOR_EACH(j, key, body)                                                             \
	do {                                                                                      \
		if (expect(j, '{'))                                                               \
			return -1;                                                                \
		if (peek(j) == '}') {                                                             \
			(j)->p++;                                                                 \
			break;                                                                    \
		}                                                                                 \
		for (;;) {                                                                        \
			char *key = NULL;                                                         \
			if (string(j, &key, NULL) || expect(j, ':')) {                            \
				free(key);                                                        \
				return -1;                                                        \
			}                                                                         \
			int body_rc_ = (body);                                                    \
			free(key);                                                                \
			if (body_rc_)                                                             \
				return body_rc_;                                                  \
			int c_ = peek(j);                                                         \
			(j)->p++;                                                                 \
			if (c_ == '}')                                                            \
				break;                                                            \
			if (c_ != ',')                                                            \
				return -1;                                                        \
		}                                                                                 \
	} while (0)

// "#C C picks a cup #unsure" -> "C picks a cup"
static void drop_tags(char *s)
{
	char *o = s, *p = s;
	while (*p) {
		if (*p == '#' && (p == s || p[-1] == ' ')) {
			while (*p && *p != ' ')
				p++;
			while (*p == ' ')
				p++;
			continue;
		}
		*o++ = *p++;
	}
	while (o > s && o[-1] == ' ')
		o--;
	*o = 0;
}

// one {"timestamp_sec": t, "narration_text": "..."} record; other keys are skipped
static int narration(Json *j, PrepAnnotList *l, const char *uid, double window, int *count)
{
	double ts = 0;
	char *text = NULL;
	size_t text_len = 0;
	int have_ts = 0, rc = 0;
	if (expect(j, '{'))
		return -1;
	for (int first = 1; !rc; first = 0) {
		if (first && peek(j) == '}')
			break;
		char *key = NULL;
		if (string(j, &key, NULL) || expect(j, ':'))
			rc = -1;
		else if (strcmp(key, "timestamp_sec") == 0) {
			int r = number(j, &ts);
			rc = r < 0 ? -1 : 0;
			have_ts = r == 0;
		} else if (strcmp(key, "narration_text") == 0 && peek(j) == '"') {
			free(text);
			text = NULL;
			rc = string(j, &text, &text_len);
		} else
			rc = skip(j);
		free(key);
		if (rc)
			break;
		int c = peek(j);
		j->p++;
		if (c == '}')
			break;
		if (c != ',')
			rc = -1;
	}
	if (!rc) { // the record is complete
		(*count)++;
		if (!have_ts || !text) {
			l->bad_record++;
			prep_annot_problem(l, "ego4d %s narration %d: no timestamp_sec or narration_text", uid, *count);
		} else if (!isfinite(ts) || ts < 0) {
			l->bad_time++;
			prep_annot_problem(l, "ego4d %s narration %d: timestamp_sec %g is not a finite time", uid, *count, ts);
		} else if (strlen(text) != text_len) {
			l->bad_record++;
			prep_annot_problem(l, "ego4d %s narration %d: a NUL character inside narration_text", uid, *count);
		} else {
			drop_tags(text);
			double s0 = ts - window < 0 ? 0 : ts - window;
			rc = prep_annot_add(l, uid, s0, ts + window, text, *count);
		}
	}
	free(text);
	return rc;
}

static int narrations(Json *j, PrepAnnotList *l, const char *uid, double window, int *count)
{
	if (expect(j, '['))
		return -1;
	if (peek(j) == ']') {
		j->p++;
		return 0;
	}
	for (;;) {
		int rc = peek(j) == '{' ? narration(j, l, uid, window, count) : skip(j);
		if (rc)
			return rc;
		int c = peek(j);
		j->p++;
		if (c == ']')
			return 0;
		if (c != ',')
			return -1;
	}
}

static int pass(Json *j, PrepAnnotList *l, const char *uid, double window, int *count)
{
	if (peek(j) != '{')
		return skip(j);
	OBJECT_FOR_EACH(j, key, strcmp(key, "narrations") == 0 && peek(j) == '[' ? narrations(j, l, uid, window, count)
										 : skip(j));
	return 0;
}

static int video(Json *j, PrepAnnotList *l, const char *uid, double window)
{
	if (peek(j) != '{')
		return skip(j);
	int count = 0;
	OBJECT_FOR_EACH(j, key, strncmp(key, "narration_pass", 14) == 0 ? pass(j, l, uid, window, &count) : skip(j));
	return 0;
}

// {uid: video, ...}; a uid holding a NUL cannot name a video: reported, its value skipped
static int top(Json *j, PrepAnnotList *l, double window)
{
	if (expect(j, '{'))
		return -1;
	if (peek(j) == '}') {
		j->p++;
		return 0;
	}
	for (;;) {
		char *uid = NULL;
		size_t len;
		if (string(j, &uid, &len) || expect(j, ':')) {
			free(uid);
			return -1;
		}
		int rc;
		if (strlen(uid) != len) {
			l->bad_record++;
			prep_annot_problem(l, "ego4d: a video uid with a NUL character (byte %zu): its narrations skipped", j->p);
			rc = skip(j);
		} else
			rc = video(j, l, uid, window);
		free(uid);
		if (rc)
			return rc;
		int c = peek(j);
		j->p++;
		if (c == '}')
			return 0;
		if (c != ',')
			return -1;
	}
}

int prep_ego4d_load(PrepAnnotList *l, const char *text, size_t n, double window)
{
	Json j = {text, n, 0, 0};
	int rc = top(&j, l, window);
	if (!rc) { // nothing but white space may follow the top-level object
		ws(&j);
		rc = j.p < j.n ? -1 : 0;
	}
	if (rc == -1) {
		size_t at = j.p < n ? j.p : n, line = 1, col = 1;
		for (size_t i = 0; i < at; i++, col++)
			if (text[i] == '\n')
				line++, col = 0;
		l->bad_record++;
		prep_annot_problem(l, "ego4d: malformed JSON at byte %zu (line %zu, column %zu)%s", at, line, col,
				   at >= n ? ": the file ends inside a value" : "");
		return -EBADMSG;
	}
	return rc;
}
