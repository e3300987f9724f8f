// What the benchmark readers (tools/eval_bench_*.c) share: the whole file in memory, an RFC 4180
// CSV record reader that counts lines, columns by header name, strict numbers and repeated ids.
#ifndef TOOLS_EVAL_BENCH_UTIL_H
#define TOOLS_EVAL_BENCH_UTIL_H
// defines: BenchText, BenchCsv, bench_text_load, bench_text_free, bench_csv_init, bench_csv_next, bench_csv_col,
//          bench_decimal, bench_clock_time, bench_ek100_clip, bench_first_repeat, bench_add_clip, bench_read_ek100,
//          bench_read_ek100_cls, bench_read_charades, bench_read_egtea, bench_read_egomcq

#include <stddef.h> // defines: size_t

#include "eval_bench.h" // defines: BenchSet

typedef struct {
	char *t; // the bytes and a NUL after them
	size_t n;
} BenchText;

// the file's bytes; a NUL byte inside is an error (the readers work on C strings)
int bench_text_load(const char *path, BenchText *t, char *err, size_t errlen);
void bench_text_free(BenchText *t);

typedef struct {
	const char *t, *path;
	size_t n, pos;
	int line, next_line; // line: where the record read last starts
	char *buf;           // its fields, NUL-separated
	char **f;            // (max fields)
	int nf, max;
} BenchCsv;

int bench_csv_init(BenchCsv *c, const BenchText *t, const char *path, int max_fields);
void bench_csv_free(BenchCsv *c);
// the next record into c->f/c->nf: 1, 0 at the end (blank lines skipped), -EINVAL for an
// unterminated quote or more than max fields (err names the line)
int bench_csv_next(BenchCsv *c, char *err, size_t errlen);
// the header column called name (the record read last), or -EINVAL "file:line: no column 'name'"
int bench_csv_col(const BenchCsv *c, const char *name, char *err, size_t errlen);

// a plain non-negative decimal ("12", "12.50"), nothing else: 0 or -1
int bench_decimal(const char *s, double *v);
// EPIC's "HH:MM:SS.ss" (or a plain decimal): 0 or -1
int bench_clock_time(const char *s, double *v);
// an EK-100 clip row's narration_id, video_id, start_timestamp and stop_timestamp (fields col[0..3]):
// both ids non-empty, both times EPIC's clock, the end after the start; 0 or -EINVAL naming file:line
int bench_ek100_clip(const BenchCsv *c, const int col[4], double *start, double *end, char *err, size_t errlen);
// the index of the first string equal to an earlier one, -1 when all differ (n strings)
int64_t bench_first_repeat(char *const *s, int64_t n, int64_t *earlier);
// appends a clip (copies the strings); -ENOMEM
int bench_add_clip(BenchSet *b, const char *video, double start, double end, const char *caption, int line);

int bench_read_ek100(BenchSet *b, const char *main, const char *aux, char *err, size_t errlen);
int bench_read_ek100_cls(BenchSet *b, const char *main, const char *aux, char *err, size_t errlen);
int bench_read_charades(BenchSet *b, const char *main, const char *aux, char *err, size_t errlen);
int bench_read_egtea(BenchSet *b, const char *main, const char *aux, char *err, size_t errlen);
int bench_read_egomcq(BenchSet *b, const char *main, char *err, size_t errlen);

#endif
