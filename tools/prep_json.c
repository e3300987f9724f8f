// Ego4D narration importer: a small recursive-descent JSON reader that walks
// {uid: {"narration_pass_N": {"narrations": [{timestamp_sec, narration_text}]}}} and
// skips everything else, so the whole narration.json never becomes a tree in memory.
#include "prep_annot.h" // defines: prep_ego4d_load, prep_annot_add, prep_annot_problem
#include "bpe_text.h"   // defines: bpe_utf8_put

#include <errno.h>
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

// a string into out (malloc'ed when out is not NULL), escapes decoded to UTF-8
static int string(Json *j, char **out)
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
	return 0;
}

static int skip(Json *j);

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
		if (open == '{' && (string(j, NULL) || expect(j, ':')))
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

static int skip(Json *j)
{
	int c = peek(j);
	if (c == '{')
		return skip_container(j, '{', '}');
	if (c == '[')
		return skip_container(j, '[', ']');
	if (c == '"')
		return string(j, NULL);
	size_t s = j->p;
	while (j->p < j->n && strchr("+-0123456789.eEtruefalsn", j->t[j->p]))
		j->p++;
	return j->p > s ? 0 : -1;
}

static int number(Json *j, double *v)
{
	ws(j);
	char *end;
	*v = strtod(j->t + j->p, &end);
	if (end == j->t + j->p)
		return skip(j) ? -1 : 1; // null or another type: not a number
	j->p = (size_t)(end - j->t);
	return 0;
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
			if (string(j, &key) || expect(j, ':')) {                                  \
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

static int narration(Json *j, PrepAnnotList *l, const char *uid, double window, int *count)
{
	double ts = -1;
	char *text = NULL;
	int have_ts = 0;
	OBJECT_FOR_EACH(j, key, strcmp(key, "timestamp_sec") == 0 ? (have_ts = number(j, &ts) == 0, 0)
				: strcmp(key, "narration_text") == 0 && peek(j) == '"' ? (free(text), text = NULL, string(j, &text))
											   : skip(j));
	(*count)++;
	if (!have_ts || !text) {
		l->bad_record++;
		prep_annot_problem(l, "ego4d %s narration %d: no timestamp_sec or narration_text", uid, *count);
		free(text);
		return 0;
	}
	drop_tags(text);
	double s = ts - window < 0 ? 0 : ts - window;
	int rc = prep_annot_add(l, uid, s, ts + window, text, *count);
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

static int top(Json *j, PrepAnnotList *l, double window)
{
	OBJECT_FOR_EACH(j, uid, video(j, l, uid, window));
	return 0;
}

int prep_ego4d_load(PrepAnnotList *l, const char *text, size_t n, double window)
{
	Json j = {text, n, 0, 0};
	int rc = top(&j, l, window);
	if (rc == -1) {
		prep_annot_problem(l, "ego4d: malformed JSON near byte %zu", j.p);
		return -EINVAL;
	}
	return rc;
}
