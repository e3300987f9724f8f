// JSON tokens by length over mapped or read bytes: whitespace, punctuation, strings with every
// JSON escape, integers, numbers and skipped values, with the byte offset of the first failure.
#include "json_lex.h" // defines: JsonLex, json_*

#include <errno.h>  // defines: EBADMSG, ENOMEM
#include <math.h>   // defines: NAN, INFINITY
#include <stdarg.h> // defines: va_list
#include <stdio.h>  // defines: vsnprintf
#include <stdlib.h> // defines: malloc, free, strtod
#include <string.h> // defines: memcmp, memcpy

#define JSON_MAX_DEPTH 256

void json_lex_init(JsonLex *j, const void *buf, size_t n, long base, const char *what, char *err, size_t errlen)
{
	*j = (JsonLex){.p = buf,
		       .start = buf,
		       .end = (const char *)buf + n,
		       .base = base,
		       .what = what,
		       .err = err,
		       .errlen = errlen};
	if (err && errlen)
		err[0] = 0;
}

int json_fail(JsonLex *j, const char *fmt, ...)
{
	if (j->err && j->errlen && !j->err[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(j->err, j->errlen, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

long json_at(const JsonLex *j)
{
	return (long)(j->p - j->start) + j->base;
}

// bytes left to read (0, never negative, when a caller stepped past the end)
static size_t left(const JsonLex *j)
{
	return j->p < j->end ? (size_t)(j->end - j->p) : 0;
}

static void ws(JsonLex *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

int json_peek(JsonLex *j)
{
	ws(j);
	return j->p < j->end ? (unsigned char)*j->p : -1;
}

int json_accept(JsonLex *j, char ch)
{
	if (json_peek(j) != (unsigned char)ch)
		return 0;
	j->p++;
	return 1;
}

int json_expect(JsonLex *j, char ch)
{
	return json_accept(j, ch) ? 0
				  : json_fail(j, "malformed %s at byte %ld: expected '%c'", j->what, json_at(j), ch);
}

static int hex4(JsonLex *j, unsigned *v)
{
	*v = 0;
	for (int k = 0; k < 4; k++, j->p++) {
		char c = j->p < j->end ? *j->p : 0;
		int d = c >= '0' && c <= '9'                     ? c - '0'
			: (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
								 : -1;
		if (d < 0)
			return json_fail(j, "malformed \\u escape at byte %ld", json_at(j));
		*v = *v * 16 + (unsigned)d;
	}
	return 0;
}

// UTF-8 of code point cp (< 0x110000) into o; returns its length
static size_t utf8_put(unsigned cp, char *o)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 0x3f)),
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f)), o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

// the code point of the escape after a backslash; a lone surrogate is U+FFFD
static int escape(JsonLex *j, unsigned *cp, int flags)
{
	if (j->p >= j->end)
		return json_fail(j, "unterminated string at the end of the %s", j->what);
	char c = *j->p++;
	switch (c) {
	case 'n': *cp = '\n'; return 0;
	case 't': *cp = '\t'; return 0;
	case 'r': *cp = '\r'; return 0;
	case 'b': *cp = '\b'; return 0;
	case 'f': *cp = '\f'; return 0;
	case '"':
	case '\\':
	case '/': *cp = (unsigned char)c; return 0;
	case 'u': break;
	default: return json_fail(j, "unknown escape \\%c at byte %ld", c, json_at(j) - 1);
	}
	if (hex4(j, cp))
		return -EBADMSG;
	if ((flags & JSON_ASCII) && (*cp == 0 || *cp > 0x7f))
		return json_fail(j, "\\u%04x at byte %ld: only ASCII names and metadata are read", *cp, json_at(j));
	if (*cp >= 0xd800 && *cp <= 0xdbff && left(j) >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
		unsigned lo;
		j->p += 2;
		if (hex4(j, &lo))
			return -EBADMSG;
		if (lo < 0xdc00 || lo > 0xdfff)
			return json_fail(j, "\\u%04x at byte %ld does not complete a surrogate pair", lo, json_at(j));
		*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	} else if (*cp >= 0xd800 && *cp <= 0xdfff) {
		*cp = 0xfffd;
	}
	return 0;
}

int json_string(JsonLex *j, char *out, size_t cap, size_t *len, int flags)
{
	int rc = json_expect(j, '"');
	if (rc)
		return rc;
	size_t n = 0;
	while (j->p < j->end && *j->p != '"') {
		char c = *j->p++, enc[4];
		size_t k = 1;
		enc[0] = c;
		if (c == '\\') {
			unsigned cp;
			if ((rc = escape(j, &cp, flags)))
				return rc;
			k = utf8_put(cp, enc);
		} else if (c == 0 && (flags & JSON_ASCII)) {
			return json_fail(j, "NUL byte inside a string at byte %ld", json_at(j) - 1);
		}
		if (out) {
			if (n + k >= cap)
				return json_fail(j, "string at byte %ld longer than %zu bytes", json_at(j), cap - 1);
			memcpy(out + n, enc, k);
		}
		n += k;
	}
	if (j->p >= j->end)
		return json_fail(j, "unterminated string at the end of the %s", j->what);
	j->p++;
	if (out)
		out[n] = 0;
	if (len)
		*len = n;
	return 0;
}

int json_string_alloc(JsonLex *j, char **out, size_t *len, int flags)
{
	*out = NULL;
	JsonLex probe = *j; // a first pass measures, so the buffer is exactly as long as needed
	probe.err = NULL;
	size_t n;
	int rc = json_string(&probe, NULL, 0, &n, flags);
	if (rc)
		return json_string(j, NULL, 0, NULL, flags); // the same failure, with its message
	char *o = malloc(n + 1);
	if (!o)
		return -ENOMEM;
	if ((rc = json_string(j, o, n + 1, len, flags))) {
		free(o);
		return rc;
	}
	*out = o;
	return 0;
}

int json_uint(JsonLex *j, int64_t *v)
{
	int c = json_peek(j);
	if (c < '0' || c > '9')
		return json_fail(j, "expected a non-negative integer at byte %ld", json_at(j));
	int64_t x = 0;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
		if (x > (INT64_MAX - 9) / 10)
			return json_fail(j, "integer too large at byte %ld", json_at(j));
		x = x * 10 + (*j->p++ - '0');
	}
	*v = x;
	return 0;
}

static size_t digits(const JsonLex *j, const char *p)
{
	const char *q = p;
	while (q < j->end && *q >= '0' && *q <= '9')
		q++;
	return (size_t)(q - p);
}

int json_number(JsonLex *j, double *v)
{
	ws(j);
	static const struct {
		const char *lit;
		size_t n;
		double v;
	} special[] = {{"NaN", 3, NAN}, {"Infinity", 8, INFINITY}, {"-Infinity", 9, -INFINITY}};
	for (int k = 0; k < 3; k++)
		if (left(j) >= special[k].n && !memcmp(j->p, special[k].lit, special[k].n)) {
			j->p += special[k].n;
			*v = special[k].v;
			return 0;
		}
	const char *p = j->p;
	size_t d;
	if (p < j->end && *p == '-')
		p++;
	if (!(d = digits(j, p)))
		return json_fail(j, "expected a number at byte %ld", json_at(j));
	p += d;
	if (p < j->end && *p == '.') {
		if (!(d = digits(j, ++p)))
			return json_fail(j, "malformed number at byte %ld", json_at(j));
		p += d;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			p++;
		if (!(d = digits(j, p)))
			return json_fail(j, "malformed number at byte %ld", json_at(j));
		p += d;
	}
	char buf[64]; // strtod needs a NUL: the token is copied out of the unterminated text
	if ((size_t)(p - j->p) >= sizeof buf)
		return json_fail(j, "number at byte %ld longer than %zu characters", json_at(j), sizeof buf - 1);
	memcpy(buf, j->p, (size_t)(p - j->p));
	buf[p - j->p] = 0;
	*v = strtod(buf, NULL);
	j->p = p;
	return 0;
}

static int skip_container(JsonLex *j, char open, char close)
{
	int rc = json_expect(j, open);
	if (rc)
		return rc;
	if (++j->depth > JSON_MAX_DEPTH)
		return json_fail(j, "%s nested more than %d deep at byte %ld", j->what, JSON_MAX_DEPTH, json_at(j));
	if (!json_accept(j, close)) {
		do {
			if (open == '{' && ((rc = json_string(j, NULL, 0, NULL, 0)) || (rc = json_expect(j, ':'))))
				return rc;
			if ((rc = json_skip(j)))
				return rc;
		} while (json_accept(j, ','));
		if ((rc = json_expect(j, close)))
			return rc;
	}
	j->depth--;
	return 0;
}

int json_skip(JsonLex *j)
{
	int c = json_peek(j);
	if (c == '{')
		return skip_container(j, '{', '}');
	if (c == '[')
		return skip_container(j, '[', ']');
	if (c == '"')
		return json_string(j, NULL, 0, NULL, 0);
	static const struct {
		const char *lit;
		size_t n;
	} lit[] = {{"true", 4}, {"false", 5}, {"null", 4}};
	for (int k = 0; k < 3; k++)
		if (left(j) >= lit[k].n && !memcmp(j->p, lit[k].lit, lit[k].n)) {
			j->p += lit[k].n;
			return 0;
		}
	double v;
	return json_number(j, &v);
}
