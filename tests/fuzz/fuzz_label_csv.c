// Fuzz harness: the labelled annotation readers (prep --format ek100-train, labels-csv, kinetics) and
// the class lists (one a line, strict and lenient, and EPIC's class CSVs) on a buffer whose NUL
// terminator is the last byte before a guard page; every accepted clip's labels lie in its heads.
#include "fuzz_util.h"               // defines: FuzzBuf, fuzz_guarded
#include "../../tools/prep_labels.h" // defines: prep_labels_parse, prep_annot_free
#include "../../tools/class_names.h" // defines: class_names_parse, class_names_free

#include <math.h>

// an accepted list: names that are non-empty, one line each, all different
static void check_names(const ClassNames *c)
{
	if (c->n < 1)
		abort();
	for (int i = 0; i < c->n; i++) {
		if (!c->names[i][0] || strchr(c->names[i], '\n'))
			abort();
		for (int j = 0; j < i && c->n < 64; j++)
			if (!strcmp(c->names[i], c->names[j]))
				abort();
	}
}

static void check_clips(const PrepAnnotList *l)
{
	if (l->heads.n < 1 || l->heads.n > 2)
		abort();
	for (size_t i = 0; i < l->n; i++) {
		const PrepAnnot *a = &l->a[i];
		if (!isfinite(a->start) || a->start < 0 || !(a->end > a->start))
			abort(); // a time every later step would trust
		for (int k = 0; k < 2; k++)
			if (a->label[k] < -1 || (k < l->heads.n && a->label[k] >= l->heads.n_classes[k]) ||
			    (k >= l->heads.n && a->label[k] != -1))
				abort(); // a label outside its head: the manifest writer would refuse it, the trainer misread it
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const char *const fmt[] = {"ek100-train", "labels-csv", "kinetics"};
	const int mode = data[0] % 5;
	FuzzBuf b;
	if (fuzz_guarded(&b, data, size, 1)) // the copy's first byte becomes the NUL after the text
		return 0;
	char *text = (char *)b.data + 1;
	const size_t n = size - 1;
	memmove(b.data, text, n);
	text = (char *)b.data;
	text[n] = 0;
	if (memchr(text, 0, n)) // the readers take text files (bench_text_load refuses a NUL)
		return 0;
	if (mode < 3) {
		PrepAnnotList l;
		if (prep_labels_parse(&l, text, n, "fuzz.csv", fmt[mode], NULL) == 0)
			check_clips(&l);
		prep_annot_free(&l);
	} else {
		ClassNames c;
		char err[256];
		if (class_names_parse(&c, text, n, "fuzz.txt", mode == 3, err, sizeof err) == 0)
			check_names(&c);
		class_names_free(&c);
	}
	fuzz_release(&b);
	return 0;
}
