// Property: a vocabulary trained from any caption set loads as a merges file and tokenizes
// every caption it was trained on. Small, odd and repetitive sets (one caption, two identical,
// one character, punctuation only, unicode, a very long repeated word, empty lines, specials)
// and random sets over a small alphabet, each at the smallest, a middle and the default size.
#include "bpe.h" // defines: bpe_normalize, bpe_load_mem, bpe_tokenize, bpe_decode, bpe_vocab_size, bpe_vocab_hash, bpe_trainer_new, bpe_trainer_add, bpe_trainer_train

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;

// one caption set at one vocabulary size: trained, loaded, every caption tokenized and decoded
static void check(const char *what, const char *const *caps, int n, int vocab)
{
	BpeTrainer *tr;
	if (bpe_trainer_new(&tr)) {
		printf("FAIL %s: out of memory\n", what);
		fails++;
		return;
	}
	for (int i = 0; i < n; i++)
		bpe_trainer_add(tr, caps[i]);
	char *text = NULL;
	size_t len = 0;
	int n_merges = -1, line = 0;
	int rc = bpe_trainer_train(tr, vocab, &text, &len, &n_merges);
	bpe_trainer_free(tr);
	BpeTokenizer *t = NULL;
	if (rc) {
		printf("FAIL %s (vocab %d): training: %s\n", what, vocab, strerror(-rc));
		fails++;
		return;
	}
	if ((rc = bpe_load_mem(&t, text, len, &line))) {
		printf("FAIL %s (vocab %d): the trained merges do not load: %s at line %d\n%.300s\n", what, vocab,
		       strerror(-rc), line, text);
		fails++;
		free(text);
		return;
	}
	if (bpe_vocab_size(t) != 514 + n_merges || bpe_vocab_size(t) > vocab || !bpe_vocab_hash(t)) {
		printf("FAIL %s (vocab %d): %d tokens for %d merges, hash %llx\n", what, vocab, bpe_vocab_size(t),
		       n_merges, (unsigned long long)bpe_vocab_hash(t));
		fails++;
	}
	for (int i = 0; i < n; i++) {
		int32_t ids[BPE_CONTEXT];
		char back[4096];
		int k = bpe_tokenize(t, caps[i], ids, BPE_CONTEXT);
		if (k < 0 && k != -EILSEQ) {
			printf("FAIL %s (vocab %d): caption %d does not tokenize: %s\n", what, vocab, i, strerror(-k));
			fails++;
			continue;
		}
		if (k < 0)
			continue; // not UTF-8: refused by the trainer and the tokenizer alike
		for (int j = 0; j < k; j++)
			if (ids[j] < 0 || ids[j] >= bpe_vocab_size(t)) {
				printf("FAIL %s (vocab %d): caption %d: id %d outside the vocabulary\n", what, vocab, i,
				       ids[j]);
				fails++;
			}
		if (bpe_decode(t, ids, k, back, sizeof back) < 0) {
			printf("FAIL %s (vocab %d): caption %d does not decode\n", what, vocab, i);
			fails++;
		}
	}
	bpe_free(t);
	free(text);
}

static void check_sizes(const char *what, const char *const *caps, int n)
{
	static const int sizes[] = {515, 600, 49408};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		check(what, caps, n, sizes[s]);
}

#define SET(name, ...)                                                                                                 \
	do {                                                                                                           \
		static const char *const c_[] = {__VA_ARGS__};                                                         \
		check_sizes(name, c_, (int)(sizeof c_ / sizeof c_[0]));                                                \
	} while (0)

int main(void)
{
	static char longword[6001], aaa[5001], many[3000];
	for (int i = 0; i < 6000; i++)
		longword[i] = "abc"[i % 3];
	memset(aaa, 'a', 5000);
	for (int i = 0; i < 2999; i++)
		many[i] = i % 2 ? ' ' : 'z';
	SET("one caption", "a dog runs");
	SET("one word", "dog");
	SET("two identical", "a dog", "a dog");
	SET("one character", "x");
	SET("one character twice", "x", "x");
	SET("punctuation only", "!!! ... ??? ,,, ;;", "--");
	SET("unicode", "café über naïve", "日本語のキャプション", "🙂🙂 🙃", "Ünïcödé ÀÉÎ ß");
	SET("a very long repeated word", longword);
	SET("a very long run of one letter", aaa);
	SET("one letter word repeated", many);
	SET("empty lines", "", "", "a cat", "");
	SET("only empty", "");
	SET("white space only", "   ", "\t\t", " \r ");
	SET("special tokens", "<|startoftext|>", "<|endoftext|> a <|endoftext|>");
	SET("digits", "1234567890 1234567890", "0");
	SET("html entities and controls", "&amp;&lt;b&gt; tom &amp; jerry", "a\x01b\x7f c");
	SET("not UTF-8 next to good captions", "bad \xff\xfe", "good words good words");
	// random sets over a small alphabet (ASCII, a two-byte and a four-byte letter, space)
	static const char *const alpha[] = {"a", "b", "c", " ", " ", "é", "𝔸", ".", "1"};
	uint64_t x = 88172645463325252ull;
	for (int trial = 0; trial < 60; trial++) {
		static char buf[6][64];
		const char *caps[6];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int n = 1 + (int)(x % 6);
		for (int i = 0; i < n; i++) {
			size_t o = 0;
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			int len = (int)(x % 14);
			for (int k = 0; k < len; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				const char *s = alpha[x % (sizeof alpha / sizeof alpha[0])];
				memcpy(buf[i] + o, s, strlen(s));
				o += strlen(s);
			}
			buf[i][o] = 0;
			caps[i] = buf[i];
		}
		char name[32];
		snprintf(name, sizeof name, "random set %d", trial);
		check_sizes(name, caps, n);
	}
	printf("%s\n",
	       fails ? "FAILED" : "every caption set trains a vocabulary that loads and tokenizes its captions");
	return fails ? 1 : 0;
}
