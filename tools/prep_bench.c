// tools/prep's importer of a zero-shot benchmark's test list (prep_annot.h: prep_bench_load) on
// tools/eval's strict readers, so prep and eval read the same file the same way; kept apart from
// prep_annot.c, whose CSV/JSON readers the fuzz harnesses build alone.
#include "prep_annot.h" // defines: PrepAnnotList, prep_bench_load, prep_annot_add, prep_annot_problem
#include "eval_bench.h" // defines: BenchSet, bench_kind_parse, bench_read, bench_free

#include <errno.h>  // defines: EBADMSG
#include <string.h> // defines: memset

int prep_bench_load(PrepAnnotList *l, const char *path, const char *format)
{
	BenchKind kind;
	if (!format || bench_kind_parse(format, &kind))
		return 1;
	memset(l, 0, sizeof(*l));
	BenchSet b;
	char err[512] = "";
	if (bench_read(&b, kind, path, NULL, err, sizeof err) < 0) {
		l->bad_record++;
		prep_annot_problem(l, "%s", err);
		return -EBADMSG;
	}
	int rc = 0;
	for (int64_t i = 0; !rc && i < b.n; i++)
		rc = prep_annot_add(l, b.clip[i].video, b.clip[i].start, b.clip[i].end, b.clip[i].caption,
				    b.clip[i].line);
	if (!rc && l->n != (size_t)b.n) { // prep_annot_add refused one (a video id, UTF-8): all or nothing
		l->bad_record++;
		prep_annot_problem(l, "%s: %s", path,
				   l->n_problems ? l->problems[l->n_problems - 1] : "a clip is refused");
		rc = -EBADMSG;
	}
	bench_free(&b);
	return rc;
}
