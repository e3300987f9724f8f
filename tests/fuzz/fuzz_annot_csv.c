// Fuzz harness: the CSV / TSV / EPIC-KITCHENS annotation readers (and the format guess) on a
// buffer ending at a guard page; every accepted clip has finite, ordered times and a UTF-8
// caption.
#include "fuzz_util.h"              // defines: FuzzBuf, fuzz_guarded
#include "../../tools/prep_annot.h" // defines: prep_annot_parse, prep_annot_free

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const char *const fmt[] = {"csv", "tsv", "epic", "auto"};
	static const char *const name[] = {"a.csv", "a.tsv", "a.csv", "a.tsv"};
	int k = data[0] & 3;
	FuzzBuf b;
	if (fuzz_guarded(&b, data + 1, size - 1, 1))
		return 0;
	PrepAnnotList l = {0};
	prep_annot_parse(&l, (const char *)b.data, size - 1, name[k], fmt[k], 1.0);
	for (size_t i = 0; i < l.n; i++)
		if (!isfinite(l.a[i].start) || !isfinite(l.a[i].end) || l.a[i].start < 0 || l.a[i].end <= l.a[i].start)
			abort(); // a time every later step would trust
	prep_annot_free(&l);
	fuzz_release(&b);
	return 0;
}
