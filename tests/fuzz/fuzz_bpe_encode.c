// Fuzz harness: the BPE encoder on arbitrary captions (invalid UTF-8 included) with a small
// real vocabulary (tests/fixtures/bpe_tiny_merges.txt, or a built-in one), every context
// length from 2, and the ids decoded back.
#include "bpe.h"       // defines: bpe_load, bpe_load_mem, bpe_tokenize, bpe_decode
#include "fuzz_util.h" // defines: LLVMFuzzerTestOneInput

#include <stdio.h>

static BpeTokenizer *vocab(void)
{
	static BpeTokenizer *t;
	if (t)
		return t;
	int line;
	if (bpe_load(&t, "tests/fixtures/bpe_tiny_merges.txt", &line) == 0)
		return t;
	static const char merges[] = "#version: 0.2\nt h\nth e</w>\na n\nan d</w>\ni n\nin g</w>\no f</w>\n";
	if (bpe_load_mem(&t, merges, sizeof merges - 1, &line) != 0)
		abort();
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	BpeTokenizer *t = vocab();
	char *text = malloc(size + 1); // the encoder's contract is a C string: one NUL at the end
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	int32_t ids[BPE_CONTEXT];
	char out[4096];
	int ctx = 2 + (size ? data[0] % (BPE_CONTEXT - 1) : 0);
	int n = bpe_tokenize(t, text, ids, ctx);
	if (n > 0 && (n > ctx || ids[0] != bpe_sot(t) || ids[n - 1] != bpe_eot(t)))
		abort(); // the encoder's own promise: sot, tokens, eot within ctx
	if (n > 0)
		bpe_decode(t, ids, ctx, out, sizeof out);
	free(text);
	return 0;
}
