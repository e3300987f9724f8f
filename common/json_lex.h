// The one JSON tokenizer under the project's three JSON readers (the safetensors header, Ego4D
// narrations, tools/plot's JSON lines): bytes [start, end) read by length only, never as a C string.
#ifndef COMMON_JSON_LEX_H
#define COMMON_JSON_LEX_H
// defines: JsonLex, JSON_ASCII, json_lex_init, json_fail, json_at, json_peek, json_accept, json_expect,
//          json_string, json_string_alloc, json_uint, json_number, json_skip

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t

typedef struct {
	const char *p, *start, *end; // cursor and bounds; nothing at or after end is read
	long base;                   // added to offsets in messages (a file offset of start)
	const char *what;            // named in messages: "JSON header", "JSON"
	char *err;                   // the first failure's message (NULL: none kept)
	size_t errlen;
	int depth; // nesting json_skip is inside (bounded, so deep input cannot exhaust the stack)
} JsonLex;

// json_string: refuse \u escapes outside ASCII, \u0000 and raw NUL bytes
#define JSON_ASCII 1

void json_lex_init(JsonLex *j, const void *buf, size_t n, long base, const char *what, char *err, size_t errlen);
// records the message when none is recorded yet (the first reason wins); returns -EBADMSG
int json_fail(JsonLex *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
long json_at(const JsonLex *j); // offset of the cursor plus base
// after whitespace: the next byte, -1 at the end
int json_peek(JsonLex *j);
// after whitespace: 1 and consumed when the next byte is ch, else 0
int json_accept(JsonLex *j, char ch);
// after whitespace: ch, or -EBADMSG ("malformed <what> at byte N: expected 'ch'")
int json_expect(JsonLex *j, char ch);
// a string, escapes (\uXXXX with surrogate pairs) decoded to UTF-8 into out (cap bytes with its
// NUL; out NULL: checked and skipped); *len (may be NULL) gets the decoded length. -EBADMSG
int json_string(JsonLex *j, char *out, size_t cap, size_t *len, int flags);
// the same into a malloc'd buffer (*out); -EBADMSG or -ENOMEM
int json_string_alloc(JsonLex *j, char **out, size_t *len, int flags);
// a non-negative integer that fits int64_t; -EBADMSG
int json_uint(JsonLex *j, int64_t *v);
// a number by the JSON grammar (also NaN, Infinity, -Infinity as Python writes them; 1e999 is
// inf: callers check); -EBADMSG when there is none
int json_number(JsonLex *j, double *v);
// any value (objects and arrays at most 256 deep); -EBADMSG
int json_skip(JsonLex *j);

#endif
