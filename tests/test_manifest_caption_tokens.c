// A caption not laid out as bpe_tokenize writes it (<|startoftext|> first, <|endoftext|> last of
// its n_tokens, zeros after), with checksums recomputed as anyone can, is refused by
// manifest_open_verified (what loaderd, eval and clipdump open with) naming the sample; the
// writer refuses such a caption too.
#include "manifest.h" // defines: manifest_open_verified, manifest_tokens, manifest_writer_new, manifest_add_*, manifest_write
#include "manifest_recrc.h" // defines: manifest_recrc
#include "testutil.h"       // defines: test_file_read, test_file_write

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SOT 998 // vocabulary of 1000: <|startoftext|> and <|endoftext|> are its last two ids
#define EOT 999

static char dir[] = "/tmp/test_manifest_caption_XXXXXX", path[256];

// one video of one chunk, 3 clip samples of 4 tokens (sot, two words, eot)
static int write_good(const char *p, int *fails)
{
	ManifestWriter *w;
	if (manifest_writer_new(&w, 77, 1000, 15000, 288))
		return -1;
	uint32_t kf[] = {0, 8};
	int rc = manifest_add_video(w, "v", 15000) < 0;
	rc |= manifest_add_chunk(w, 0, "v/0.mp4", 0, 16, 8, 1, 512, 288, kf, 2) < 0;
	for (int s = 0; s < 3; s++) {
		int32_t tok[77] = {SOT, 5 + s, 7, EOT};
		rc |= manifest_add_clip(w, 0, 0, 4 * (uint32_t)s, 0, 4 * (uint32_t)s + 4, tok) < 0;
	}
	int32_t no_sot[77] = {5, 7, EOT}, no_eot[77] = {SOT, 5, 7};
	if (manifest_add_clip(w, 0, 0, 0, 0, 4, no_sot) != -EINVAL ||
	    manifest_add_clip(w, 0, 0, 0, 0, 4, no_eot) != -EINVAL) {
		printf("FAIL the writer accepted a caption without its start or end token\n");
		(*fails)++;
	}
	rc |= manifest_write(w, p) != 0;
	manifest_writer_free(w);
	return rc ? -1 : 0;
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/manifest", dir);
	int fails = 0;
	size_t n;
	uint8_t *good;
	if (write_good(path, &fails) || !(good = test_file_read(path, &n))) {
		printf("FAIL cannot write the valid manifest\n");
		return 1;
	}
	Manifest *m;
	char err[256] = "";
	if (manifest_open_verified(&m, path, err, sizeof err)) {
		printf("FAIL the valid manifest is refused: %s\n", err);
		return 1;
	}
	manifest_close(m);
	uint64_t tokens_off = ((const ManifestHeader *)good)->tokens_off;
	struct {
		const char *what;
		int token;      // which token of sample 1's caption is changed
		uint16_t value; // to this id
	} cases[] = {
		{"caption not starting with <|startoftext|>", 0, 5},
		{"caption not ending with <|endoftext|>", 3, 6},
		{"ids after <|endoftext|>", 10, 7},
	};
	uint8_t *bad = malloc(n);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memcpy(bad, good, n);
		uint16_t *t = (uint16_t *)(bad + tokens_off) + 1 * 77;
		t[cases[i].token] = cases[i].value;
		manifest_recrc(bad, n);
		if (test_file_write(path, bad, n))
			return 1;
		m = NULL;
		err[0] = 0;
		int rc = manifest_open_verified(&m, path, err, sizeof err);
		if (rc == 0 || !strstr(err, "sample 1:")) {
			printf("FAIL %s: rc %d '%s', want refused naming sample 1\n", cases[i].what, rc, err);
			fails++;
		} else {
			printf("ok   %-42s %s\n", cases[i].what, err);
		}
		manifest_close(m);
	}
	free(bad);
	free(good);
	unlink(path);
	rmdir(dir);
	return fails ? 1 : 0;
}
