// tools/eval's side inputs: a relevance matrix file (EPIC-KITCHENS-style mAP/nDCG), class names
// with per-sample labels (zero-shot classification), or both derived from synth-style captions.
#ifndef TOOLS_EVAL_INPUT_H
#define TOOLS_EVAL_INPUT_H
// defines: EvalClasses, eval_rel_read, eval_rel_read_shape, eval_rel_from_captions, eval_classes_read, eval_classes_from_captions,
//          eval_classes_free, eval_prompt, eval_caption_split

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t

#include "eval.h" // defines: EvalRel

typedef struct {
	int n;        // classes
	char **names; // (n)
	int *label;   // (samples) class index, -1 when the sample has none
	int64_t samples;
} EvalClasses;

// Relevance file (text):
//   # comment lines and blank lines anywhere
//   avclip-relevance 1 ROWS COLS      ROWS = COLS = the manifest's samples
//   V T R                             one line per pair with relevance R in (0, 1]: video of sample
//                                     V (0-based manifest index) against the caption of sample T
// Pairs not listed have relevance 0. mAP counts R = 1 as relevant; nDCG uses R as the gain.
// 0, or -EINVAL/-errno with the file, line and reason in err.
int eval_rel_read(const char *path, int64_t n, EvalRel *rel, char *err, size_t errlen);
// the same for a ROWS x COLS matrix (EK-100 MIR: clips x sentences, V a clip, T a sentence)
int eval_rel_read_shape(const char *path, int64_t rows, int64_t cols, EvalRel *rel, char *err, size_t errlen);
// EPIC-style relevance of synth captions "a <colour> <shape> <action...>": 1/2 for the same
// object (colour + shape) plus 1/2 for the same action. -EINVAL when a caption has another form.
int eval_rel_from_captions(const char *const *captions, int64_t n, EvalRel *rel, char *err, size_t errlen);

// classes: one class name per line; labels: one line per manifest sample, a class name or "-"
// (no label). Blank lines and '#' comments are skipped in the classes file only.
int eval_classes_read(const char *classes_path, const char *labels_path, int64_t n, EvalClasses *c, char *err,
		      size_t errlen);
// classes from synth captions: what = "action" (words 4..: "moves left"), "object" (words 2-3:
// "green circle") or "caption" (the whole caption); classes sorted by name
int eval_classes_from_captions(const char *const *captions, int64_t n, const char *what, EvalClasses *c, char *err,
			       size_t errlen);
void eval_classes_free(EvalClasses *c);

// buf = tmpl with each "{}" replaced by name; -ENOSPC when it does not fit
int eval_prompt(const char *tmpl, const char *name, char *buf, size_t cap);
// object and action of a synth caption; -EINVAL when it is not "a <colour> <shape> <action...>"
int eval_caption_split(const char *caption, char *object, size_t ocap, char *action, size_t acap);

#endif
