// Cross-check with OpenAI CLIP's tokenizer: tests/fixtures/bpe_*_expected.txt hold the ids that
// tests/fixtures/bpe_reference.py (ftfy + regex + CLIP's BPE) gave for each caption, for a
// hand-written 11-merge file and a 2000-merge file trained on Debian copyright notices; the
// hand-written one under both special-token rules (open_clip's, the default, and OpenAI's).
#include "bpe.h" // defines: bpe_load, bpe_tokenize, bpe_set_specials

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(const char *merges, const char *expected, BpeSpecials rule, int min_lines)
{
	BpeTokenizer *t;
	int line;
	if (bpe_load(&t, merges, &line)) {
		printf("cannot load %s\n", merges);
		return 1;
	}
	bpe_set_specials(t, rule);
	FILE *f = fopen(expected, "r");
	if (!f) {
		printf("cannot open %s\n", expected);
		return 1;
	}
	char buf[8192];
	int n_lines = 0, fails = 0;
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		char *tab = strchr(buf, '\t');
		if (!tab)
			continue;
		*tab = 0;
		const char *caption = tab + 1;
		int32_t want[BPE_CONTEXT] = {0}, got[BPE_CONTEXT];
		int nw = 0;
		for (char *p = strtok(buf, " "); p && nw < BPE_CONTEXT; p = strtok(NULL, " "))
			want[nw++] = (int32_t)atoi(p);
		int ng = bpe_tokenize(t, caption, got, BPE_CONTEXT);
		int ok = ng == nw && memcmp(want, got, sizeof(got)) == 0;
		n_lines++;
		if (!ok) {
			fails++;
			printf("FAIL '%s'\n  got ", caption);
			for (int i = 0; i < ng; i++)
				printf(" %d", got[i]);
			printf("\n  want");
			for (int i = 0; i < nw; i++)
				printf(" %d", want[i]);
			printf("\n");
		}
	}
	fclose(f);
	bpe_free(t);
	if (n_lines < min_lines) {
		printf("%s has only %d captions\n", expected, n_lines);
		return 1;
	}
	printf("%s: %d/%d captions tokenize as CLIP's reference does\n", expected, n_lines - fails, n_lines);
	return fails ? 1 : 0;
}

int main(void)
{
	int rc = check("tests/fixtures/bpe_tiny_merges.txt", "tests/fixtures/bpe_tiny_expected.txt",
		       BPE_SPECIALS_OPENCLIP, 18);
	rc |= check("tests/fixtures/bpe_tiny_merges.txt", "tests/fixtures/bpe_tiny_expected_openai.txt",
		    BPE_SPECIALS_OPENAI, 18);
	rc |= check("tests/fixtures/bpe_corpus_merges.txt", "tests/fixtures/bpe_corpus_expected.txt",
		    BPE_SPECIALS_OPENCLIP, 300);
	return rc;
}
