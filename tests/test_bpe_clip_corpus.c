// CLIP's tokenizer to the id: on tests/fixtures/bpe_clip_corpus.txt.gz (5,600 strings: captions,
// EPIC-style narrations, HTML entities, control characters, every major script, mojibake,
// ligatures and full-width forms, random code points), with OpenAI's merges as open_clip ships
// them (gzipped), bpe_tokenize must give open_clip's SimpleTokenizer ids for >= 99.9% of the
// strings. Every mismatch is printed; the fixture comes from tools/ref/tokenizer_corpus.py.
// All 5,600 agree since the letter and number classes come from the regex module's own data
// (data/bpe_uclass.c, Unicode 18.0: the Egyptian hieroglyphs of Unicode 16 split as open_clip
// splits them); the margin is for a system utf8proc whose case mapping or NFC differ.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bpe_clean.h" // defines: bpe_u32_put_utf8
#include "bpe.h"       // defines: bpe_load, bpe_tokenize

// the fixture's escapes (\\ \t \n \r \xHH \uHHHH) back to UTF-8, in place; the length
static size_t unescape(char *s)
{
	size_t o = 0;
	for (size_t i = 0; s[i];) {
		if (s[i] != '\\') {
			s[o++] = s[i++];
			continue;
		}
		char c = s[i + 1];
		if (c == 'x' || c == 'u') {
			int w = c == 'x' ? 2 : 4;
			char hex[5] = {0};
			memcpy(hex, s + i + 2, (size_t)w);
			o += (size_t)bpe_u32_put_utf8((uint32_t)strtoul(hex, NULL, 16), s + o);
			i += 2 + (size_t)w;
			continue;
		}
		s[o++] = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c;
		i += 2;
	}
	s[o] = 0;
	return o;
}

int main(void)
{
	BpeTokenizer *t;
	int line, rc = bpe_load(&t, "tests/fixtures/bpe_simple_vocab_16e6.txt.gz", &line);
	if (rc) {
		printf("FAIL cannot load the gzipped OpenAI merges: %d (line %d)\n", rc, line);
		return 1;
	}
	if (bpe_vocab_size(t) != 49408) {
		printf("FAIL vocabulary %d, want 49408\n", bpe_vocab_size(t));
		return 1;
	}
	if (bpe_vocab_hash(t) != BPE_OPENAI_VOCAB_HASH) { // what --init-from assumes of open_clip's weights
		printf("FAIL OpenAI's merges hash to %016llx, BPE_OPENAI_VOCAB_HASH is %016llx\n",
		       (unsigned long long)bpe_vocab_hash(t), BPE_OPENAI_VOCAB_HASH);
		return 1;
	}
	gzFile f = gzopen("tests/fixtures/bpe_clip_corpus.txt.gz", "rb");
	if (!f) {
		printf("FAIL no corpus fixture\n");
		return 1;
	}
	static char buf[1 << 16];
	int total = 0, same = 0;
	while (gzgets(f, buf, sizeof buf)) {
		char *tab = strrchr(buf, '\t');
		if (!tab)
			continue;
		*tab = 0;
		int32_t want[77], got[77];
		int nw = 0;
		for (char *p = tab + 1, *e; nw < 77; p = e) {
			long v = strtol(p, &e, 10);
			if (e == p)
				break;
			want[nw++] = (int32_t)v;
		}
		char text[sizeof buf];
		snprintf(text, sizeof text, "%s", buf);
		size_t len = unescape(buf);
		int ng = bpe_tokenize_len(t, buf, len, got, 77);
		total++;
		if (ng == nw && !memcmp(got, want, sizeof(int32_t) * (size_t)nw)) {
			same++;
			continue;
		}
		printf("mismatch %d: \"%s\"\n  open_clip:", total, text);
		for (int i = 0; i < nw; i++)
			printf(" %d", want[i]);
		printf("\n  ours:     ");
		for (int i = 0; i < ng; i++)
			printf(" %d", got[i]);
		printf("%s\n", ng < 0 ? " (error)" : "");
	}
	gzclose(f);
	bpe_free(t);
	double share = total ? (double)same / total : 0;
	int bad = total < 5000 || share < 0.999;
	printf("%s %d of %d strings give open_clip's ids (%.3f%%; needed: 99.9%% of >= 5000)\n", bad ? "FAIL" : "PASS",
	       same, total, 100 * share);
	return bad;
}
