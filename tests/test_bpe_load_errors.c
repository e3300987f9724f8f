// Bad merges files give a clear error code (and the offending line), never a crash:
// missing file, directory, truncated gzip, empty file, malformed line, bad UTF-8; a header without
// merges is the byte vocabulary.
#include "bpe.h" // defines: bpe_load, bpe_load_mem

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails;

static void expect_mem(const char *what, const char *text, size_t len, int want_rc, int want_line)
{
	BpeTokenizer *t = (BpeTokenizer *)1;
	int line = -1, rc = bpe_load_mem(&t, text, len, &line);
	if (rc != want_rc || (want_rc && (line != want_line || t != NULL))) {
		printf("FAIL %s: rc %d (%s) line %d, want rc %d line %d\n", what, rc, strerror(-rc), line, want_rc,
		       want_line);
		fails++;
	}
	if (rc == 0)
		bpe_free(t);
}

int main(void)
{
	BpeTokenizer *t;
	int line, rc;
	if ((rc = bpe_load(&t, "tests/fixtures/no_such_merges.txt", &line)) != -ENOENT) {
		printf("FAIL missing file: %d\n", rc);
		fails++;
	}
	if ((rc = bpe_load(&t, "tests/fixtures", &line)) != -EISDIR) {
		printf("FAIL directory: %d\n", rc);
		fails++;
	}
	// a gzip stream cut short: a clear -EBADMSG, not a silently short vocabulary
	char tmp[] = "/tmp/test_bpe_gz_XXXXXX";
	int fd = mkstemp(tmp);
	FILE *src = fopen("tests/fixtures/bpe_simple_vocab_16e6.txt.gz", "rb");
	static char gzbuf[4096];
	size_t got = src ? fread(gzbuf, 1, sizeof gzbuf, src) : 0;
	if (fd < 0 || got != sizeof gzbuf || write(fd, gzbuf, got) != (ssize_t)got ||
	    (rc = bpe_load(&t, tmp, &line)) != -EBADMSG) {
		printf("FAIL truncated gzip merges: %d\n", rc);
		fails++;
	}
	if (src)
		fclose(src);
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	expect_mem("empty", "", 0, -EINVAL, 1);
	// a header and no merges: the byte vocabulary (what captions without a repeated pair train)
	expect_mem("header only, no newline", "#version: 0.2", 13, 0, 0);
	expect_mem("header only", "#version: 0.2\n", 14, 0, 0);
	const char ok[] = "#version: 0.2\nt h\nth e</w>\n\n\n";
	expect_mem("trailing blank lines", ok, sizeof(ok) - 1, 0, 0);
	const char crlf[] = "#version: 0.2\r\nt h\r\nth e</w>\r\n";
	expect_mem("CRLF line ends", crlf, sizeof(crlf) - 1, 0, 0);
	const char nospace[] = "#version: 0.2\nt h\nthe\n";
	expect_mem("line without a space", nospace, sizeof(nospace) - 1, -EINVAL, 3);
	const char three[] = "#version: 0.2\nt h e\n";
	expect_mem("three parts", three, sizeof(three) - 1, -EINVAL, 2);
	const char lead[] = "#version: 0.2\nt h\n h\n";
	expect_mem("empty left part", lead, sizeof(lead) - 1, -EINVAL, 3);
	const char blank_mid[] = "#version: 0.2\nt h\n\nr e\n";
	expect_mem("blank line between merges", blank_mid, sizeof(blank_mid) - 1, -EINVAL, 3);
	const char bad_utf8[] = "#version: 0.2\nt h\n\xc3 h\n";
	expect_mem("invalid UTF-8", bad_utf8, sizeof(bad_utf8) - 1, -EILSEQ, 3);
	// a merge of unknown parts is kept as a vocabulary slot but never applies
	const char unknown[] = "#version: 0.2\nzz q\nt h\n";
	if (bpe_load_mem(&t, unknown, sizeof(unknown) - 1, &line) == 0) {
		int32_t ids[BPE_CONTEXT];
		// "tha": t h a</w> -> the second merge (id 513) applies, the first is inert
		int n = bpe_tokenize(t, "tha", ids, BPE_CONTEXT);
		if (bpe_vocab_size(t) != 516 || n != 4 || ids[1] != 513 || ids[2] != 'a' - '!' + 256) {
			printf("FAIL unknown-part merge: vocab %d n %d id %d\n", bpe_vocab_size(t), n, ids[1]);
			fails++;
		}
		bpe_free(t);
	} else {
		printf("FAIL unknown-part merge rejected\n");
		fails++;
	}
	printf("%s\n", fails ? "FAILED" : "every bad merges file is rejected with its line");
	return fails ? 1 : 0;
}
