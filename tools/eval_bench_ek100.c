// EPIC-KITCHENS-100 multi-instance retrieval: EPIC_100_retrieval_test.csv (one clip per record,
// the video side) and EPIC_100_retrieval_test_sentence.csv (the text side). As LaViLa's
// eval_zeroshot.py, sentence j is embedded as the narration of the clip with its narration_id.
#include "eval_bench_util.h" // defines: BenchCsv, bench_csv_*, bench_clock_time, bench_first_repeat, ...
#include "errbuf.h"          // defines: err_fmt

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdlib.h> // defines: malloc, free, bsearch, qsort
#include <string.h> // defines: strcmp, strdup

// column indexes of the header, or -EINVAL with the missing one
static int columns(BenchCsv *c, const char *const *names, int *col, int n, char *err, size_t errlen)
{
	for (int k = 0; k < n; k++)
		if ((col[k] = bench_csv_col(c, names[k], err, errlen)) < 0)
			return col[k];
	return 0;
}

static int field_count(const BenchCsv *c, const int *col, int n, char *err, size_t errlen)
{
	int need = 0;
	for (int k = 0; k < n; k++)
		need = col[k] + 1 > need ? col[k] + 1 : need;
	if (c->nf < need)
		return err_fmt(err, errlen, -EINVAL, "%s:%d: %d fields, the header names %d", c->path, c->line, c->nf,
			       need);
	return 0;
}

static int read_clips(BenchSet *b, BenchCsv *c, char ***ids, char *err, size_t errlen)
{
	static const char *const names[] = {"narration_id", "video_id", "start_timestamp", "stop_timestamp",
					    "narration"};
	int col[5], rc = bench_csv_next(c, err, errlen);
	if (rc <= 0)
		return rc ? rc : err_fmt(err, errlen, -EINVAL, "%s: empty", c->path);
	TRY(columns(c, names, col, 5, err, errlen));
	int64_t cap = 0;
	while ((rc = bench_csv_next(c, err, errlen)) > 0) {
		TRY(field_count(c, col, 5, err, errlen));
		double s, e;
		TRY(bench_ek100_clip(c, col, &s, &e, err, errlen));
		if (b->n == cap) {
			cap = cap ? 2 * cap : 1024;
			char **x = realloc(*ids, sizeof *x * (size_t)cap);
			if (!x)
				return -ENOMEM;
			*ids = x;
		}
		if (!((*ids)[b->n] = strdup(c->f[col[0]])))
			return -ENOMEM;
		if (bench_add_clip(b, c->f[col[1]], s, e, c->f[col[4]], c->line)) {
			free((*ids)[b->n]);
			return -ENOMEM;
		}
	}
	return rc;
}

typedef struct {
	const char *id;
	int64_t clip;
} IdIndex;

static int by_id(const void *x, const void *y)
{
	return strcmp(((const IdIndex *)x)->id, ((const IdIndex *)y)->id);
}

static int grow_sentences(BenchSet *b, int64_t *cap)
{
	if (b->n_sentences < *cap)
		return 0;
	*cap = *cap ? 2 * *cap : 1024;
	char **x = realloc(b->sentence, sizeof *x * (size_t)*cap);
	if (x)
		b->sentence = x;
	int64_t *y = realloc(b->sentence_clip, sizeof *y * (size_t)*cap);
	if (y)
		b->sentence_clip = y;
	return x && y ? 0 : -ENOMEM;
}

// seen[clip]: the line of the sentence naming that clip, 0 while none has
static int read_sentences(BenchSet *b, BenchCsv *c, const IdIndex *sorted, int *seen, char *err, size_t errlen)
{
	static const char *const names[] = {"narration_id", "narration"};
	int col[2], rc = bench_csv_next(c, err, errlen);
	if (rc <= 0)
		return rc ? rc : err_fmt(err, errlen, -EINVAL, "%s: empty", c->path);
	TRY(columns(c, names, col, 2, err, errlen));
	int64_t cap = 0;
	while ((rc = bench_csv_next(c, err, errlen)) > 0) {
		TRY(field_count(c, col, 2, err, errlen));
		IdIndex key = {.id = c->f[col[0]]}, *hit = bsearch(&key, sorted, (size_t)b->n, sizeof key, by_id);
		if (!hit)
			return err_fmt(err, errlen, -EINVAL, "%s:%d: narration_id '%.60s' is no clip of %s", c->path,
				       c->line, c->f[col[0]], b->path);
		if (seen[hit->clip])
			return err_fmt(err, errlen, -EINVAL, "%s:%d: narration_id '%.60s' repeats line %d", c->path,
				       c->line, c->f[col[0]], seen[hit->clip]);
		seen[hit->clip] = c->line;
		TRY(grow_sentences(b, &cap));
		b->sentence_clip[b->n_sentences] = hit->clip;
		if (!(b->sentence[b->n_sentences] = strdup(b->clip[hit->clip].caption)))
			return -ENOMEM;
		b->n_sentences++;
	}
	if (!rc && !b->n_sentences)
		rc = err_fmt(err, errlen, -EINVAL, "%s: no sentences", c->path);
	return rc;
}

// the clips' narration ids sorted (for the sentences' look-up); a repeated id is an error
static int index_ids(const BenchSet *b, char **ids, IdIndex **out, char *err, size_t errlen)
{
	int64_t earlier = 0, rep = bench_first_repeat(ids, b->n, &earlier);
	if (rep == -2)
		return -ENOMEM;
	if (rep >= 0)
		return err_fmt(err, errlen, -EINVAL, "%s:%d: narration_id '%.60s' repeats line %d", b->path,
			       b->clip[rep].line, ids[rep], b->clip[earlier].line);
	IdIndex *s = malloc(sizeof *s * (size_t)b->n);
	if (!s)
		return -ENOMEM;
	for (int64_t i = 0; i < b->n; i++)
		s[i] = (IdIndex){ids[i], i};
	qsort(s, (size_t)b->n, sizeof *s, by_id);
	*out = s;
	return 0;
}

static int read_csv(const char *path, BenchText *t, BenchCsv *c, char *err, size_t errlen)
{
	TRY(bench_text_load(path, t, err, errlen));
	if (bench_csv_init(c, t, path, 64)) {
		bench_csv_free(c);
		bench_text_free(t);
		return -ENOMEM;
	}
	return 0;
}

int bench_read_ek100(BenchSet *b, const char *main, const char *aux, char *err, size_t errlen)
{
	BenchText t;
	BenchCsv c;
	char **ids = NULL;
	TRY(read_csv(main, &t, &c, err, errlen));
	int rc = read_clips(b, &c, &ids, err, errlen);
	bench_csv_free(&c);
	bench_text_free(&t);
	IdIndex *sorted = NULL;
	if (!rc && b->n)
		rc = index_ids(b, ids, &sorted, err, errlen);
	if (!rc && aux && b->n) {
		int *seen = calloc((size_t)b->n, sizeof *seen);
		rc = seen ? read_csv(aux, &t, &c, err, errlen) : -ENOMEM;
		if (!rc) {
			rc = read_sentences(b, &c, sorted, seen, err, errlen);
			bench_csv_free(&c);
			bench_text_free(&t);
		}
		free(seen);
	}
	free(sorted);
	for (int64_t i = 0; ids && i < b->n; i++)
		free(ids[i]);
	free(ids);
	return rc;
}
