// Ego4D narration importer: a recursive-descent walk on the common JSON tokenizer over
// {uid: {"narration_pass_N": {"narrations": [{timestamp_sec, narration_text}]}}} that skips
// everything else, so the whole narration.json never becomes a tree in memory.
#include "prep_annot.h" // defines: prep_ego4d_load, prep_annot_add, prep_annot_problem
#include "json_lex.h" // defines: JsonLex, json_lex_init, json_peek, json_expect, json_string_alloc, json_number, json_skip

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// 0 with a number in *v; 1 when the value is another type (skipped); -EBADMSG when malformed
static int number(JsonLex *j, double *v)
{
	int c = json_peek(j);
	if (c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I')
		return json_number(j, v);
	int rc = json_skip(j);
	return rc ? rc : 1;
}

// iterates an object: calls fn(key) positioned at each value, which must consume it
#define OBJECT_FOR_EACH(j, key, body)                                                                                  \
	do {                                                                                                           \
		if (json_expect(j, '{'))                                                                               \
			return -EBADMSG;                                                                               \
		if (json_peek(j) == '}') {                                                                             \
			(j)->p++;                                                                                      \
			break;                                                                                         \
		}                                                                                                      \
		for (;;) {                                                                                             \
			char *key = NULL;                                                                              \
			if (json_string_alloc(j, &key, NULL, 0) || json_expect(j, ':')) {                              \
				free(key);                                                                             \
				return -EBADMSG;                                                                       \
			}                                                                                              \
			int body_rc_ = (body);                                                                         \
			free(key);                                                                                     \
			if (body_rc_)                                                                                  \
				return body_rc_;                                                                       \
			int c_ = json_peek(j);                                                                         \
			(j)->p++;                                                                                      \
			if (c_ == '}')                                                                                 \
				break;                                                                                 \
			if (c_ != ',')                                                                                 \
				return -EBADMSG;                                                                       \
		}                                                                                                      \
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
static int narration(JsonLex *j, PrepAnnotList *l, const char *uid, double window, int *count)
{
	double ts = 0;
	char *text = NULL;
	size_t text_len = 0;
	int have_ts = 0, rc = 0;
	if (json_expect(j, '{'))
		return -EBADMSG;
	for (int first = 1; !rc; first = 0) {
		if (first && json_peek(j) == '}')
			break;
		char *key = NULL;
		if (json_string_alloc(j, &key, NULL, 0) || json_expect(j, ':'))
			rc = -EBADMSG;
		else if (strcmp(key, "timestamp_sec") == 0) {
			int r = number(j, &ts);
			rc = r < 0 ? r : 0;
			have_ts = r == 0;
		} else if (strcmp(key, "narration_text") == 0 && json_peek(j) == '"') {
			free(text);
			text = NULL;
			rc = json_string_alloc(j, &text, &text_len, 0);
		} else
			rc = json_skip(j);
		free(key);
		if (rc)
			break;
		int c = json_peek(j);
		j->p++;
		if (c == '}')
			break;
		if (c != ',')
			rc = -EBADMSG;
	}
	if (!rc) { // the record is complete
		(*count)++;
		if (!have_ts || !text) {
			l->bad_record++;
			prep_annot_problem(l, "ego4d %s narration %d: no timestamp_sec or narration_text", uid, *count);
		} else if (!isfinite(ts) || ts < 0) {
			l->bad_time++;
			prep_annot_problem(l, "ego4d %s narration %d: timestamp_sec %g is not a finite time", uid,
					   *count, ts);
		} else if (strlen(text) != text_len) {
			l->bad_record++;
			prep_annot_problem(l, "ego4d %s narration %d: a NUL character inside narration_text", uid,
					   *count);
		} else {
			drop_tags(text);
			double s0 = ts - window < 0 ? 0 : ts - window;
			rc = prep_annot_add(l, uid, s0, ts + window, text, *count);
		}
	}
	free(text);
	return rc;
}

static int narrations(JsonLex *j, PrepAnnotList *l, const char *uid, double window, int *count)
{
	if (json_expect(j, '['))
		return -EBADMSG;
	if (json_peek(j) == ']') {
		j->p++;
		return 0;
	}
	for (;;) {
		int rc = json_peek(j) == '{' ? narration(j, l, uid, window, count) : json_skip(j);
		if (rc)
			return rc;
		int c = json_peek(j);
		j->p++;
		if (c == ']')
			return 0;
		if (c != ',')
			return -EBADMSG;
	}
}

static int pass(JsonLex *j, PrepAnnotList *l, const char *uid, double window, int *count)
{
	if (json_peek(j) != '{')
		return json_skip(j);
	OBJECT_FOR_EACH(j, key,
			strcmp(key, "narrations") == 0 && json_peek(j) == '[' ? narrations(j, l, uid, window, count)
									      : json_skip(j));
	return 0;
}

static int video(JsonLex *j, PrepAnnotList *l, const char *uid, double window)
{
	if (json_peek(j) != '{')
		return json_skip(j);
	int count = 0;
	OBJECT_FOR_EACH(j, key,
			strncmp(key, "narration_pass", 14) == 0 ? pass(j, l, uid, window, &count) : json_skip(j));
	return 0;
}

// {uid: video, ...}; a uid holding a NUL cannot name a video: reported, its value skipped
static int top(JsonLex *j, PrepAnnotList *l, double window)
{
	if (json_expect(j, '{'))
		return -EBADMSG;
	if (json_peek(j) == '}') {
		j->p++;
		return 0;
	}
	for (;;) {
		char *uid = NULL;
		size_t len;
		if (json_string_alloc(j, &uid, &len, 0) || json_expect(j, ':')) {
			free(uid);
			return -EBADMSG;
		}
		int rc;
		if (strlen(uid) != len) {
			l->bad_record++;
			prep_annot_problem(l,
					   "ego4d: a video uid with a NUL character (byte %zu): its narrations skipped",
					   (size_t)(j->p - j->start));
			rc = json_skip(j);
		} else
			rc = video(j, l, uid, window);
		free(uid);
		if (rc)
			return rc;
		int c = json_peek(j);
		j->p++;
		if (c == '}')
			return 0;
		if (c != ',')
			return -EBADMSG;
	}
}

int prep_ego4d_load(PrepAnnotList *l, const char *text, size_t n, double window)
{
	JsonLex j;
	json_lex_init(&j, text, n, 0, "JSON", NULL, 0);
	int rc = top(&j, l, window);
	if (!rc && json_peek(&j) != -1) // nothing but white space may follow the top-level object
		rc = -EBADMSG;
	if (rc == -EBADMSG) {
		size_t at = j.p < j.end ? (size_t)(j.p - j.start) : n, line = 1, col = 1;
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
