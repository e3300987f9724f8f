// Fuzz harness: the safetensors header parser on a buffer ending at a guard page (a mapped
// file with no NUL after its header), then every entry, metadata and lookup.
#include "fuzz_util.h" // defines: FuzzBuf, fuzz_guarded
#include "model.h"     // defines: st_parse, st_entry, st_find, st_meta

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzBuf b;
	if (fuzz_guarded(&b, data, size, 1))
		return 0;
	StFile *f;
	char err[256];
	if (st_parse(&f, b.data, size, err, sizeof err) == 0) {
		for (int i = 0; i < st_count(f); i++) {
			const StTensor *t = st_entry(f, i);
			if (t->nbytes) { // the bytes a loader would copy
				volatile uint8_t x =
					((const uint8_t *)t->data)[0] ^ ((const uint8_t *)t->data)[t->nbytes - 1];
				(void)x;
			}
			st_find(f, t->name);
		}
		st_meta(f, "avclip.ckpt");
		st_close(f);
	}
	fuzz_release(&b);
	return 0;
}
