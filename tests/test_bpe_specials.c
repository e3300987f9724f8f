// The two special-token rules on OpenAI's merges (open_clip's gzipped copy): ids that open_clip
// 3.3's SimpleTokenizer (default rule) and tests/fixtures/bpe_reference.py openai gave, fixed here.
// With --print openclip|openai it tokenizes stdin's lines instead, one "ids<TAB>caption" line each,
// for tests/test_bpe_specials_ref.sh to compare with the live references.
#include "bpe.h" // defines: bpe_load, bpe_set_specials, bpe_tokenize

#include <stdio.h>
#include <string.h>

#define MERGES "tests/fixtures/bpe_simple_vocab_16e6.txt.gz"

static const struct {
	BpeSpecials rule;
	const char *text;
	int n;
	int32_t ids[20];
} cases[] = {
	{BPE_SPECIALS_OPENCLIP, "a <|endoftext|> b", 10, {49406, 320, 27, 347, 40786, 4160, 91, 285, 321, 49407}},
	{BPE_SPECIALS_OPENCLIP, "a <end_of_text> b", 5, {49406, 320, 49407, 321, 49407}},
	{BPE_SPECIALS_OPENCLIP, "<start_of_text>x<END_OF_TEXT>", 5, {49406, 49406, 343, 49407, 49407}},
	{BPE_SPECIALS_OPENAI, "a <|endoftext|> b", 5, {49406, 320, 49407, 321, 49407}},
	{BPE_SPECIALS_OPENAI, "a <end_of_text> b", 11, {49406, 320, 283, 806, 318, 539, 318, 4160, 285, 321, 49407}},
	{BPE_SPECIALS_OPENAI, "<|startoftext|>dog<|endoftext|>", 5, {49406, 49406, 1929, 49407, 49407}},
};

static int print_ids(BpeTokenizer *t, const char *rule)
{
	if (strcmp(rule, "openclip") && strcmp(rule, "openai")) {
		fprintf(stderr, "--print openclip|openai, not '%s'\n", rule);
		return 2;
	}
	bpe_set_specials(t, strcmp(rule, "openai") ? BPE_SPECIALS_OPENCLIP : BPE_SPECIALS_OPENAI);
	char line[4096];
	int32_t ids[BPE_CONTEXT];
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		int n = bpe_tokenize(t, line, ids, BPE_CONTEXT);
		if (n < 0)
			return 1;
		for (int i = 0; i < n; i++)
			printf("%s%d", i ? " " : "", ids[i]);
		printf("\t%s\n", line);
	}
	return 0;
}

int main(int argc, char **argv)
{
	BpeTokenizer *t;
	int line;
	if (bpe_load(&t, MERGES, &line)) {
		printf("FAIL cannot load %s\n", MERGES);
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "--print")) {
		int rc = print_ids(t, argv[2]);
		bpe_free(t);
		return rc;
	}
	int fails = 0;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		int32_t ids[BPE_CONTEXT];
		bpe_set_specials(t, cases[k].rule);
		int n = bpe_tokenize(t, cases[k].text, ids, BPE_CONTEXT);
		int ok = n == cases[k].n && !memcmp(ids, cases[k].ids, (size_t)n * sizeof ids[0]);
		if (!ok) {
			fails++;
			printf("FAIL %s rule, '%s': got", cases[k].rule ? "OpenAI's" : "open_clip's", cases[k].text);
			for (int i = 0; i < n; i++)
				printf(" %d", ids[i]);
			printf("\n");
		}
	}
	bpe_free(t);
	printf("%s\n", fails ? "FAILED" : "both special-token rules give the references' ids");
	return fails ? 1 : 0;
}
