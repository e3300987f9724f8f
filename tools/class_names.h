// Class lists for tools/prep and tools/eval (--classes): one name per line, or EPIC-KITCHENS-100's
// EPIC_100_verb_classes.csv / EPIC_100_noun_classes.csv (id,key,instances,category: the key names class id).
#ifndef TOOLS_CLASS_NAMES_H
#define TOOLS_CLASS_NAMES_H
// defines: ClassNames, CLASS_NAMES_MAX, class_names_parse, class_names_read, class_names_free, class_names_push

#include <stddef.h> // defines: size_t

#define CLASS_NAMES_MAX (1 << 20) // MANIFEST_MAX_CLASSES

typedef struct {
	char **names; // (n) class c's name
	int n;
	int epic; // 1: read from EPIC's id,key,instances,category CSV
} ClassNames;

// text (n bytes and a NUL after them) of the file at path (for messages). A first record of
// exactly id,key,instances,category (quoted or not) makes it EPIC's class CSV: RFC 4180 records
// of those four fields, ids 0, 1, 2, ... in order, the key a name, the instances a Python list
// ('[...]'), a category. Else one name per line; strict (prep's labels, where a wrong list mislabels
// a dataset): every line is a name, without blanks around it (a trailing CR is dropped); lenient
// (eval's zero-shot prompts, a file typed by hand): blanks around a name are dropped, blank lines
// and '#' comment lines skipped. Both: no name twice, at least one. 0, -EINVAL with "path:line:
// reason" in err, -ENOMEM.
int class_names_parse(ClassNames *c, const char *text, size_t n, const char *path, int strict, char *err,
		      size_t errlen);
// the same from the file at path (a NUL byte in it is an error)
int class_names_read(ClassNames *c, const char *path, int strict, char *err, size_t errlen);
void class_names_free(ClassNames *c);
// appends a copy of name[0..len) (the names grow in blocks of 256): 0, -ENOMEM, or -E2BIG past
// CLASS_NAMES_MAX
int class_names_push(ClassNames *c, const char *name, size_t len);

#endif
