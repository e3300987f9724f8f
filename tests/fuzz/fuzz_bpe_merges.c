// Fuzz harness: the BPE merges loader on arbitrary text (by length), then a caption through
// whatever vocabulary loaded, and every id decoded back.
#include "bpe.h"       // defines: bpe_load_mem, bpe_tokenize, bpe_decode, bpe_free
#include "fuzz_util.h" // defines: FuzzBuf, fuzz_guarded

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzBuf b;
	if (fuzz_guarded(&b, data, size, 1))
		return 0;
	BpeTokenizer *t;
	int line;
	if (bpe_load_mem(&t, (const char *)b.data, size, &line) == 0) {
		int32_t ids[BPE_CONTEXT];
		char out[1024];
		if (bpe_tokenize(t, "a photo of a dog, running! 123 ünïcödé", ids, BPE_CONTEXT) > 0)
			bpe_decode(t, ids, BPE_CONTEXT, out, sizeof out);
		for (int id = 0; id < bpe_vocab_size(t); id += 1 + bpe_vocab_size(t) / 64)
			bpe_token_str(t, id);
		bpe_free(t);
	}
	fuzz_release(&b);
	return 0;
}
