// Tokenizes captions with the hand-written 11-merge fixture and compares with ids worked
// out by hand (see the comments), plus padding, truncation and invalid UTF-8.
#include "bpe.h" // defines: bpe_load, bpe_tokenize, bpe_decode, ...

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int fails;

// ids of the byte tokens: '!'..'~' are 0..93 in byte order, +256 for the "</w>" form
#define B(c) ((c) - '!')
#define BW(c) ((c) - '!' + 256)
// merges 512.. in file order: th the</w> re ed</w> red</w> ov mov es</w> moves</w> sq ar
enum { TH = 512, THE_W, RE, ED_W, RED_W, OV, MOV, ES_W, MOVES_W, SQ, AR, SOT, EOT };

static void expect(const BpeTokenizer *t, const char *text, const int32_t *want, int n)
{
	int32_t ids[BPE_CONTEXT];
	int got = bpe_tokenize(t, text, ids, BPE_CONTEXT);
	int ok = got == n;
	for (int i = 0; ok && i < BPE_CONTEXT; i++)
		ok = ids[i] == (i < n ? want[i] : 0);
	if (!ok) {
		fails++;
		printf("FAIL %-30s got %d:", text, got);
		for (int i = 0; i < (got > 0 ? got : 0); i++)
			printf(" %d", ids[i]);
		printf("\n     want %d:", n);
		for (int i = 0; i < n; i++)
			printf(" %d", want[i]);
		printf("\n");
	}
}

int main(void)
{
	BpeTokenizer *t;
	int line, rc = bpe_load(&t, "tests/fixtures/bpe_tiny_merges.txt", &line);
	if (rc) {
		printf("load: %s (line %d)\n", strerror(-rc), line);
		return 1;
	}
	if (bpe_vocab_size(t) != 512 + 11 + 2 || bpe_sot(t) != SOT || bpe_eot(t) != EOT) {
		printf("vocab %d sot %d eot %d\n", bpe_vocab_size(t), bpe_sot(t), bpe_eot(t));
		return 1;
	}
	// "the": t h e</w> -> (t,h) rank 0 -> th e</w> -> (th,e</w>) rank 1 -> the</w>
	// "red": (r,e) rank 2 beats (e,d</w>) rank 3 -> re d</w> -> red</w>
	// "square": (r,e</w>) is not (r,e): sq u ar e</w>; "!" alone: !</w>
	expect(t, "The RED square moves!",
	       (int32_t[]){SOT, THE_W, RED_W, SQ, B('u'), AR, BW('e'), MOVES_W, BW('!'), EOT}, 10);
	// white space collapsed, case folded, "'s" split off, no merges apply to dog/ball
	expect(t, "  A\tdog's   BALL \n",
	       (int32_t[]){SOT, BW('a'), B('d'), B('o'), BW('g'), B('\''), BW('s'), B('b'), B('a'), B('l'), BW('l'),
			   EOT},
	       12);
	// digits one at a time; "apples": a p p l es</w>
	expect(t, "42 apples", (int32_t[]){SOT, BW('4'), BW('2'), B('a'), B('p'), B('p'), B('l'), ES_W, EOT}, 9);
	// "reed": re e d</w> -> re ed</w>; (re,ed</w>) is no merge
	expect(t, "reed", (int32_t[]){SOT, RE, ED_W, EOT}, 4);
	// html entities unescaped twice: "&amp;amp;" -> "&"
	expect(t, "fish &amp;amp; chips",
	       (int32_t[]){SOT, B('f'), B('i'), B('s'), BW('h'), BW('&'), B('c'), B('h'), B('i'), B('p'), BW('s'), EOT},
	       12);
	// U+00E9 = bytes c3 a9; c3 is the 128th printable byte (rank 127), a9 rank 102
	expect(t, "\xc3\x89", (int32_t[]){SOT, 127, 102 + 256, EOT}, 4);
	// open_clip's rule (the default): its <end_of_text> in text is the end token, in any case;
	// OpenAI's <|endoftext|> is ordinary text: "<|" "endoftext" "|>" (no merge applies)
	expect(t, "x<END_of_text> <start_of_text>", (int32_t[]){SOT, BW('x'), EOT, SOT, EOT}, 5);
#define ENDOFTEXT B('e'), B('n'), B('d'), B('o'), B('f'), B('t'), B('e'), B('x'), BW('t')
	expect(t, "x<|endoftext|>", (int32_t[]){SOT, BW('x'), B('<'), BW('|'), ENDOFTEXT, B('|'), BW('>'), EOT}, 16);
	if (strcmp(bpe_token_str(t, SOT), "<start_of_text>") || strcmp(bpe_token_str(t, EOT), "<end_of_text>")) {
		printf("FAIL open_clip's rule names the specials %s %s\n", bpe_token_str(t, SOT),
		       bpe_token_str(t, EOT));
		fails++;
	}
	// OpenAI's rule: the other way round ("end" "_" "of" "_" "text": '_' is not a letter)
	bpe_set_specials(t, BPE_SPECIALS_OPENAI);
	expect(t, "x<|endoftext|>", (int32_t[]){SOT, BW('x'), EOT, EOT}, 4);
	expect(t, "x<end_of_text>",
	       (int32_t[]){SOT, BW('x'), BW('<'), B('e'), B('n'), BW('d'), BW('_'), B('o'), BW('f'), BW('_'), B('t'),
			   B('e'), B('x'), BW('t'), BW('>'), EOT},
	       16);
	if (strcmp(bpe_token_str(t, SOT), "<|startoftext|>") || strcmp(bpe_token_str(t, EOT), "<|endoftext|>")) {
		printf("FAIL OpenAI's rule names the specials %s %s\n", bpe_token_str(t, SOT), bpe_token_str(t, EOT));
		fails++;
	}
	bpe_set_specials(t, BPE_SPECIALS_OPENCLIP);
	// empty caption: just the two specials
	expect(t, "   ", (int32_t[]){SOT, EOT}, 2);

	// 100 words: cut to 77 with the end token kept in the last place
	char longtext[1000] = "";
	for (int i = 0; i < 100; i++)
		strcat(longtext, "red ");
	int32_t want[BPE_CONTEXT];
	want[0] = SOT;
	for (int i = 1; i < BPE_CONTEXT - 1; i++)
		want[i] = RED_W;
	want[BPE_CONTEXT - 1] = EOT;
	expect(t, longtext, want, BPE_CONTEXT);

	int32_t ids[BPE_CONTEXT];
	if ((rc = bpe_tokenize(t, "bad \xff byte", ids, BPE_CONTEXT)) != -EILSEQ) {
		printf("FAIL invalid UTF-8: got %d, want -EILSEQ\n", rc);
		fails++;
	}
	if ((rc = bpe_tokenize(t, "overlong \xc0\xaf", ids, BPE_CONTEXT)) != -EILSEQ) {
		printf("FAIL overlong UTF-8: got %d, want -EILSEQ\n", rc);
		fails++;
	}
	if (bpe_tokenize(t, "x", ids, 1) != -EINVAL) {
		printf("FAIL ctx 1 accepted\n");
		fails++;
	}
	char buf[200];
	int n = bpe_tokenize(t, "The red square moves left, &amp; café!", ids, BPE_CONTEXT);
	long l = bpe_decode(t, ids, n, buf, sizeof(buf));
	if (l < 0 || strcmp(buf, "the red square moves left , & café !") != 0) {
		printf("FAIL decode: '%s'\n", buf);
		fails++;
	}
	bpe_free(t);
	printf("%s\n", fails ? "FAILED" : "all tokenizations match the hand-checked ids");
	return fails ? 1 : 0;
}
