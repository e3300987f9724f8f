// Annotation importers of tools/prep: CSV/TSV (video,start,end,caption), the EPIC-KITCHENS-100
// train CSV and Ego4D narrations (narration.json as LaViLa reads it) into one list of clips.
#ifndef TOOLS_PREP_ANNOT_H
#define TOOLS_PREP_ANNOT_H
// defines: PrepAnnot, PrepHeads, PrepAnnotList, prep_annot_load, prep_bench_load, prep_annot_parse, prep_annot_free, prep_annot_problem, prep_parse_time, prep_ego4d_load

#include <stddef.h>

typedef struct {
	char *video;       // video id
	double start, end; // seconds
	char *caption;     // valid UTF-8
	int line;          // line (record) number in the file, for reports
	int label[2];      // class id per label head (prep_labels.h), -1: none
} PrepAnnot;

// The label heads of a labelled annotation file (prep_labels.h); n = 0 for captions only.
typedef struct {
	int n;
	char name[2][32];      // "verb", "noun", "label", ...
	int n_classes[2];      // labels are 0 .. n_classes - 1
	char **class_names[2]; // NULL, or n_classes names (malloc'ed, freed with the list)
} PrepHeads;

typedef struct {
	PrepAnnot *a;
	size_t n, cap;
	char **problems; // one line each, in file order
	size_t n_problems, cap_problems;
	size_t bad_utf8, bad_time, bad_record;
	PrepHeads heads;
} PrepAnnotList;

// format: "csv", "tsv", "epic", "ego4d" or "auto" (.json: ego4d; a header with narration_id:
// epic; .tsv: tsv; else csv). A benchmark's test list is prep_bench_load's. ego4d_window: seconds either side of a narration timestamp.
// Records that cannot be used are left out and described in problems. Returns 0, -errno
// for an unreadable file, -EINVAL for an unknown format or a file with no usable layout.
int prep_annot_load(PrepAnnotList *l, const char *path, const char *format, double ego4d_window);
// the same on n bytes of text (no NUL needed); path names the file in reports and gives the
// extension "auto" looks at. l must be zeroed (or freed) before.
int prep_annot_parse(PrepAnnotList *l, const char *text, size_t n, const char *path, const char *format,
		     double ego4d_window);
void prep_annot_free(PrepAnnotList *l);
void prep_annot_problem(PrepAnnotList *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// adds a clip (copies strings); checks UTF-8 and times, recording a problem instead; end may be
// INFINITY: the clip runs to the end of its video
int prep_annot_add(PrepAnnotList *l, const char *video, double start, double end, const char *caption, int line);
// A zero-shot benchmark's test list, format "ek100-mir", "charades-ego", "egtea" or "egomcq"
// (tools/eval_bench.h; in prep_bench.c): all its clips in file order, any bad record an error
// (-EBADMSG, the reason in problems); a whole-video clip ends at INFINITY. 1 (l untouched) when
// format names no benchmark.
int prep_bench_load(PrepAnnotList *l, const char *path, const char *format);
// "12.5", "00:01:02.50" or "1:02" -> seconds; -1 when malformed
double prep_parse_time(const char *s);
// Ego4D narration.json: {uid: {"narration_pass_N": {"narrations": [{"timestamp_sec": t,
// "narration_text": "#C C ..."}]}}}; '#' tags are dropped from the text
int prep_ego4d_load(PrepAnnotList *l, const char *text, size_t n, double window);

#endif
