// tools/prep's importers of labelled annotation files, for fine-tuning on action recognition
// (issue 28 §1): EPIC-KITCHENS-100's train/validation CSV, a generic video,start,end,label[,label2]
// CSV and a Kinetics-style label,youtube_id,time_start,time_end,split CSV, into clips with class
// labels and the label heads (docs/data.md: Labelled annotation files).
#ifndef TOOLS_PREP_LABELS_H
#define TOOLS_PREP_LABELS_H
// defines: PrepLabelOpts, prep_labels_load, prep_labels_parse

#include <stddef.h> // defines: size_t

#include "prep_annot.h" // defines: PrepAnnotList, PrepHeads

typedef struct {
	const char *classes;     // --classes FILE[,FILE2]: each head's class names (class_names.h) (NULL: none)
	const char *num_classes; // --num-classes N[,N2]: each head's class count (NULL: the format's)
	const char *split;       // --split NAME: kinetics rows of another split are skipped (NULL: all)
	const char *video_root;  // kinetics: where a trimmed clip file is looked for
} PrepLabelOpts;

// format "ek100-train", "labels-csv" or "kinetics": every clip with its labels and l->heads set, or
// -EBADMSG at the first bad record (a missing column, a wrong number of fields, a class id that is
// not an integer or outside its head, an unknown class name, a clip that ends before it starts),
// the reason, naming file and line, the last of l->problems; -ENOMEM. 1 (l untouched) when format
// names no labelled format.
int prep_labels_load(PrepAnnotList *l, const char *path, const char *format, const PrepLabelOpts *o);
// the same on text (n bytes and a NUL after them) read from path already (the fuzz harness)
int prep_labels_parse(PrepAnnotList *l, const char *text, size_t n, const char *path, const char *format,
		      const PrepLabelOpts *o);

#endif
