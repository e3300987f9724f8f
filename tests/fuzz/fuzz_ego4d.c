// Fuzz harness: the Ego4D narration JSON reader on a buffer ending at a guard page; accepted
// narrations have finite, ordered times. Leaks on error paths show under LeakSanitizer.
#include "fuzz_util.h"              // defines: FuzzBuf, fuzz_guarded
#include "../../tools/prep_annot.h" // defines: prep_ego4d_load, prep_annot_free

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzBuf b;
	if (fuzz_guarded(&b, data, size, 1))
		return 0;
	PrepAnnotList l = {0};
	prep_ego4d_load(&l, (const char *)b.data, size, 1.0);
	for (size_t i = 0; i < l.n; i++)
		if (!isfinite(l.a[i].start) || !isfinite(l.a[i].end) || l.a[i].start < 0 || l.a[i].end <= l.a[i].start)
			abort();
	prep_annot_free(&l);
	fuzz_release(&b);
	return 0;
}
