// common/hash_fnv.h: FNV-1a 64 gives the published test vectors (the FNV authors' table: "",
// "a", "foobar"); continuing a hash equals hashing the concatenation; the vocabulary basis is the
// one bpe_vocab_hash has always used (its value, 1469598103934665603, is recorded in manifests).
#include "hash_fnv.h" // defines: fnv1a64, fnv1a64_more, fnv1a64_str, FNV1A64_BASIS, FNV1A64_BASIS_VOCAB

#include <stdio.h>
#include <string.h>

static int fails;

static void expect(const char *what, unsigned long long got, unsigned long long want)
{
	if (got != want) {
		printf("FAIL: %s = %016llx, want %016llx\n", what, got, want);
		fails++;
	}
}

int main(void)
{
	expect("fnv1a64(\"\")", fnv1a64("", 0), 0xcbf29ce484222325ull);
	expect("fnv1a64(\"a\")", fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
	expect("fnv1a64(\"foobar\")", fnv1a64("foobar", 6), 0x85944171f73967e8ull);
	expect("fnv1a64_str(\"foobar\")", fnv1a64_str("foobar"), 0x85944171f73967e8ull);
	expect("fnv1a64_more(foo, bar)", fnv1a64_more(fnv1a64("foo", 3), "bar", 3), 0x85944171f73967e8ull);
	expect("FNV1A64_BASIS_VOCAB", FNV1A64_BASIS_VOCAB, 1469598103934665603ull);
	expect("bytes >= 0x80 are unsigned", fnv1a64("\xff", 1), (0xcbf29ce484222325ull ^ 0xffull) * 0x100000001b3ull);
	if (fails)
		return 1;
	printf("ok: FNV-1a 64 test vectors\n");
	return 0;
}
