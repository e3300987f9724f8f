// Trains a vocabulary from captions: the requested size is met, frequent words become one
// token, the result loads as a merges file, training is deterministic, bad sizes are refused.
#include "bpe.h" // defines: bpe_load_mem, bpe_tokenize, bpe_decode, bpe_trainer_new, bpe_trainer_add, bpe_trainer_train

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const colours[] = {"red", "green", "blue", "yellow"};
static const char *const shapes[] = {"square", "circle", "triangle"};
static const char *const actions[] = {"moves left", "moves right", "grows", "shrinks", "rotates"};

static int train(int vocab, char **text, size_t *len, int *n_merges)
{
	BpeTrainer *tr;
	if (bpe_trainer_new(&tr))
		return -ENOMEM;
	char cap[128];
	for (int rep = 0; rep < 3; rep++)
		for (int c = 0; c < 4; c++)
			for (int s = 0; s < 3; s++)
				for (int a = 0; a < 5; a++) {
					snprintf(cap, sizeof(cap), "A %s %s %s.", colours[c], shapes[s], actions[a]);
					if (bpe_trainer_add(tr, cap))
						return -EIO;
				}
	if (bpe_trainer_add(tr, "bad \xff") != -EILSEQ)
		return -EPROTO;
	int rc = bpe_trainer_train(tr, vocab, text, len, n_merges);
	bpe_trainer_free(tr);
	return rc;
}

int main(void)
{
	char *text, *text2;
	size_t len, len2;
	int n_merges, n2, fails = 0;
	int rc = train(540, &text, &len, &n_merges);
	if (rc) {
		printf("train: %s\n", strerror(-rc));
		return 1;
	}
	if (n_merges != 540 - 514) {
		printf("FAIL %d merges, want %d\n", n_merges, 540 - 514);
		fails++;
	}
	if (train(540, &text2, &len2, &n2) || len2 != len || memcmp(text, text2, len) != 0) {
		printf("FAIL two trainings on the same captions differ\n");
		fails++;
	}
	free(text2);
	// open_clip splits on '\n': a trailing newline would be one more (empty) merge
	int lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (len == 0 || text[len - 1] == '\n' || lines != 1 + n_merges) {
		printf("FAIL the merges text has %d lines for %d merges%s\n", lines, n_merges,
		       len && text[len - 1] == '\n' ? " and ends in a newline" : "");
		fails++;
	}
	BpeTokenizer *t;
	int line;
	if ((rc = bpe_load_mem(&t, text, len, &line))) {
		printf("FAIL trained merges do not load: %s line %d\n%s", strerror(-rc), line, text);
		return 1;
	}
	if (bpe_vocab_size(t) != 540) {
		printf("FAIL vocab %d\n", bpe_vocab_size(t));
		fails++;
	}
	// every caption word occurs 60 times or more: the most frequent ("a", "moves") must be
	// whole tokens after 26 merges
	int32_t ids[BPE_CONTEXT];
	int n = bpe_tokenize(t, "a moves", ids, BPE_CONTEXT);
	if (n != 4) {
		printf("FAIL 'a moves' is %d tokens, want sot a</w> moves</w> eot\n%s", n, text);
		fails++;
	}
	char back[256];
	n = bpe_tokenize(t, "A yellow triangle shrinks.", ids, BPE_CONTEXT);
	if (bpe_decode(t, ids, n, back, sizeof(back)) < 0 || strcmp(back, "a yellow triangle shrinks .")) {
		printf("FAIL round trip: '%s'\n", back);
		fails++;
	}
	bpe_free(t);
	free(text);
	// a large request stops when no pair occurs twice
	if (train(100000, &text, &len, &n_merges) || n_merges >= 100000 - 514 || n_merges < 26) {
		printf("FAIL large vocabulary: %d merges\n", n_merges);
		fails++;
	}
	free(text);
	if (train(514, &text, &len, &n_merges) != -EINVAL) {
		printf("FAIL vocab 514 accepted\n");
		fails++;
	}
	printf("%s\n", fails ? "FAILED" : "trained vocabulary loads, is deterministic and has the size asked");
	return fails ? 1 : 0;
}
