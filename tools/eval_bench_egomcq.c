// EgoMCQ (egomcq.json, EgoVLP's Ego4D multiple choice): {"<q>": {"query": {"clip_text": ...},
// "answer": k, "choices": {"<k>": {"video_uid", "clip_start", "clip_end", ...}}, "types": 1|2}}
// with q = 0..N-1 and k = 0..K-1, as LaViLa's loader indexes them; other keys are skipped. The
// samples are the choices' clips, question by question (q * K + k).
#include "eval_bench_util.h" // defines: BenchText, bench_text_load, bench_add_clip, ...
#include "errbuf.h"          // defines: err_fmt
#include "json_lex.h"        // defines: JsonLex, json_lex_init, json_peek, json_expect, json_string_alloc, ...

#include <errno.h>  // defines: EINVAL, ENOMEM, EBADMSG
#include <math.h>   // defines: isfinite
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: calloc, free, strtol
#include <string.h> // defines: strcmp, strdup

#define MCQ_MAX_CHOICES 16

typedef struct {
	char *video, *text;
	double start, end;
	int line, seen;
} Choice;

typedef struct {
	char *query;
	int answer, type, line, seen, n_choices, have_answer, have_type;
	Choice ch[MCQ_MAX_CHOICES];
} Question;

typedef struct {
	JsonLex j;
	const char *path, *text;
	char *err;
	size_t errlen;
	char lexerr[256];
	Question *qs; // (cap) by key; nq: the largest key + 1
	long cap, nq;
	long seen_off; // line_at's place: offset seen_off is on line seen_line (the cursor only advances)
	int seen_line;
} Reader;

static int line_at(Reader *r, long off)
{
	if (off < r->seen_off)
		r->seen_off = 0, r->seen_line = 1;
	for (; r->seen_off < off; r->seen_off++)
		r->seen_line += r->text[r->seen_off] == '\n';
	return r->seen_line;
}

// a JSON syntax error at the cursor, with its line
static int syntax(Reader *r)
{
	return err_fmt(r->err, r->errlen, -EINVAL, "%s:%d: %s", r->path, line_at(r, json_at(&r->j)),
		       r->lexerr[0] ? r->lexerr : "malformed JSON");
}

static int fail(Reader *r, const char *what)
{
	return err_fmt(r->err, r->errlen, -EINVAL, "%s:%d: %s", r->path, line_at(r, json_at(&r->j)), what);
}

// "12" -> 12 (a decimal index below max); -1 otherwise
static long index_key(const char *s, long max)
{
	char *end;
	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1]))
		return -1;
	long v = strtol(s, &end, 10);
	return *end || v >= max ? -1 : v;
}

// a number, or a string holding a plain decimal (LaViLa reads float(option['clip_start']))
static int number_or_string(Reader *r, double *v)
{
	if (json_peek(&r->j) != '"')
		return json_number(&r->j, v) ? syntax(r) : 0;
	char *s = NULL;
	if (json_string_alloc(&r->j, &s, NULL, JSON_ASCII))
		return syntax(r);
	int bad = bench_decimal(s, v);
	free(s);
	return bad ? fail(r, "a time is not a number") : 0;
}

static int integer(Reader *r, int *v)
{
	double d;
	if (json_peek(&r->j) == '"' || json_number(&r->j, &d))
		return fail(r, "expected an integer");
	if (!(d >= -1e9 && d <= 1e9) || d != (int)d)
		return fail(r, "expected an integer");
	*v = (int)d;
	return 0;
}

// iterates the members of an object: body runs with key at each value and must consume it
#define MEMBERS(r, key, body)                                                                                          \
	do {                                                                                                           \
		if (json_expect(&(r)->j, '{'))                                                                         \
			return syntax(r);                                                                              \
		if (json_accept(&(r)->j, '}'))                                                                         \
			break;                                                                                         \
		for (;;) {                                                                                             \
			char *key = NULL;                                                                              \
			if (json_string_alloc(&(r)->j, &key, NULL, 0) || json_expect(&(r)->j, ':')) {                  \
				free(key);                                                                             \
				return syntax(r);                                                                      \
			}                                                                                              \
			int body_rc_ = (body);                                                                         \
			free(key);                                                                                     \
			if (body_rc_)                                                                                  \
				return body_rc_;                                                                       \
			if (json_accept(&(r)->j, '}'))                                                                 \
				break;                                                                                 \
			if (json_expect(&(r)->j, ','))                                                                 \
				return syntax(r);                                                                      \
		}                                                                                                      \
	} while (0)

static int string_into(Reader *r, char **out)
{
	if (*out)
		return fail(r, "a key repeats");
	return json_string_alloc(&r->j, out, NULL, 0) ? syntax(r) : 0;
}

static int choice_member(Reader *r, Choice *c, const char *key)
{
	if (!strcmp(key, "video_uid"))
		return string_into(r, &c->video);
	if (!strcmp(key, "clip_text"))
		return string_into(r, &c->text);
	if (!strcmp(key, "clip_start"))
		return number_or_string(r, &c->start);
	if (!strcmp(key, "clip_end"))
		return number_or_string(r, &c->end);
	return json_skip(&r->j) ? syntax(r) : 0;
}

static int choice(Reader *r, Question *q, const char *key)
{
	long k = index_key(key, MCQ_MAX_CHOICES);
	if (k < 0)
		return fail(r, "a choice key is not 0, 1, ... (at most 16 choices)");
	Choice *c = &q->ch[k];
	if (c->seen)
		return fail(r, "a choice repeats");
	c->seen = 1;
	c->line = line_at(r, json_at(&r->j));
	c->start = c->end = -1;
	MEMBERS(r, m, choice_member(r, c, m));
	if (!c->video || !*c->video)
		return err_fmt(r->err, r->errlen, -EINVAL, "%s:%d: choice %s has no video_uid", r->path, c->line, key);
	if (!(c->start >= 0 && c->end > c->start && isfinite(c->end)))
		return err_fmt(r->err, r->errlen, -EINVAL,
			       "%s:%d: choice %s: clip_start/clip_end missing or not 0 <= start < end", r->path,
			       c->line, key);
	if (k + 1 > q->n_choices)
		q->n_choices = (int)k + 1;
	return 0;
}

static int query_member(Reader *r, Question *q, const char *key)
{
	return !strcmp(key, "clip_text") ? string_into(r, &q->query) : json_skip(&r->j) ? syntax(r) : 0;
}

static int question_member(Reader *r, Question *q, const char *key)
{
	if (!strcmp(key, "query")) {
		MEMBERS(r, m, query_member(r, q, m));
		return 0;
	}
	if (!strcmp(key, "choices")) {
		MEMBERS(r, m, choice(r, q, m));
		return 0;
	}
	if (!strcmp(key, "answer"))
		return q->have_answer++ ? fail(r, "a key repeats") : integer(r, &q->answer);
	if (!strcmp(key, "types"))
		return q->have_type++ ? fail(r, "a key repeats") : integer(r, &q->type);
	return json_skip(&r->j) ? syntax(r) : 0;
}

// room for question i (zeroed)
static int grow(Reader *r, long i)
{
	if (i < r->cap)
		return 0;
	long cap = r->cap ? r->cap : 1024;
	while (cap <= i)
		cap *= 2;
	Question *x = realloc(r->qs, sizeof *x * (size_t)cap);
	if (!x)
		return -ENOMEM;
	memset(x + r->cap, 0, sizeof *x * (size_t)(cap - r->cap));
	r->qs = x;
	r->cap = cap;
	return 0;
}

// question "<key>" into qs[key], checked whole
static int question(Reader *r, const char *key)
{
	long i = index_key(key, 100000000);
	if (i < 0)
		return fail(r, "a question key is not 0, 1, ..., N-1");
	TRY(grow(r, i));
	Question *q = &r->qs[i];
	if (q->seen)
		return fail(r, "a question key repeats");
	q->seen = 1;
	q->line = line_at(r, json_at(&r->j));
	r->nq = i + 1 > r->nq ? i + 1 : r->nq;
	MEMBERS(r, m, question_member(r, q, m));
	const char *why = !q->query                      ? "no query.clip_text"
			  : !q->have_answer              ? "no answer"
			  : !q->have_type                ? "no types"
			  : q->type != 1 && q->type != 2 ? "types is not 1 (inter-video) or 2 (intra-video)"
			  : q->answer < 0 || q->answer >= q->n_choices ? "the answer is not one of the choices"
								       : NULL;
	for (int k = 0; !why && k < q->n_choices; k++)
		if (!q->ch[k].seen)
			why = "the choices are not 0..K-1";
	if (why)
		return err_fmt(r->err, r->errlen, -EINVAL, "%s:%d: question %s: %s", r->path, q->line, key, why);
	for (long o = 0; o < r->nq; o++) // every question has as many choices as the first one read
		if (o != i && r->qs[o].seen) {
			if (r->qs[o].n_choices != q->n_choices)
				return err_fmt(r->err, r->errlen, -EINVAL,
					       "%s:%d: question %s has %d choices, question %ld has %d", r->path,
					       q->line, key, q->n_choices, o, r->qs[o].n_choices);
			break;
		}
	return 0;
}

static int parse(Reader *r)
{
	MEMBERS(r, key, question(r, key));
	if (json_peek(&r->j) != -1)
		return fail(r, "text after the JSON object");
	for (long i = 0; i < r->nq; i++)
		if (!r->qs[i].seen)
			return err_fmt(r->err, r->errlen, -EINVAL, "%s: no question %ld (keys must run 0..%ld)",
				       r->path, i, r->nq - 1);
	return 0;
}

static int to_set(BenchSet *b, Question *qs, long nq)
{
	b->choices = nq ? qs[0].n_choices : 0;
	b->query = calloc((size_t)(nq ? nq : 1), sizeof *b->query);
	b->answer = calloc((size_t)(nq ? nq : 1), sizeof *b->answer);
	b->type = calloc((size_t)(nq ? nq : 1), sizeof *b->type);
	if (!b->query || !b->answer || !b->type)
		return -ENOMEM;
	for (long i = 0; i < nq; i++) {
		b->query[i] = qs[i].query;
		qs[i].query = NULL;
		b->n_questions++;
		b->answer[i] = qs[i].answer;
		b->type[i] = qs[i].type;
		for (int k = 0; k < qs[i].n_choices; k++) {
			const Choice *c = &qs[i].ch[k];
			TRY(bench_add_clip(b, c->video, c->start, c->end, c->text ? c->text : "", c->line));
		}
	}
	return 0;
}

int bench_read_egomcq(BenchSet *b, const char *main, char *err, size_t errlen)
{
	BenchText t;
	TRY(bench_text_load(main, &t, err, errlen));
	Reader r = {.path = main, .text = t.t, .err = err, .errlen = errlen, .seen_line = 1};
	json_lex_init(&r.j, t.t, t.n, 0, "JSON", r.lexerr, sizeof r.lexerr);
	int rc = parse(&r);
	if (!rc)
		rc = to_set(b, r.qs, r.nq);
	for (long i = 0; i < r.cap; i++) {
		free(r.qs[i].query);
		for (int k = 0; k < MCQ_MAX_CHOICES; k++) {
			free(r.qs[i].ch[k].video);
			free(r.qs[i].ch[k].text);
		}
	}
	free(r.qs);
	bench_text_free(&t);
	return rc;
}
