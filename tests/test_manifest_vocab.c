// A manifest names its captions' vocabulary: the writer records the merges' hash, the reader
// returns it; a manifest written before the field (0) falls back to the bpe_merges.txt next to
// it; manifest_vocab_check passes the same or an unknown vocabulary and refuses another one with
// the tools/prep --bpe command that fixes it.
#include "bpe.h"      // defines: bpe_load_mem, bpe_vocab_hash, bpe_free
#include "manifest.h" // defines: manifest_open, manifest_vocab, manifest_vocab_check, manifest_writer_new, manifest_writer_set_vocab, manifest_write

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails;
#define CHECK(cond)                                                                                                    \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			printf("FAIL line %d: %s\n", __LINE__, #cond);                                                 \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

// a one-image manifest at path, recording vocab (0: nothing recorded, as before the field)
static int write_one(const char *path, uint64_t vocab)
{
	ManifestWriter *w;
	int32_t tok[77] = {513, 300, 514};
	int rc = manifest_writer_new(&w, 77, 515, 0, 0);
	if (rc)
		return rc;
	if (vocab)
		manifest_writer_set_vocab(w, vocab);
	if (manifest_add_shard(w, "s.tar", 4096) < 0 || manifest_add_image(w, 0, 512, 100, tok) < 0)
		rc = -EINVAL;
	if (!rc)
		rc = manifest_write(w, path);
	manifest_writer_free(w);
	return rc;
}

int main(void)
{
	static const char merges[] = "#version: 0.2\nd o", other[] = "#version: 0.2\nc a";
	BpeTokenizer *t;
	int line;
	uint64_t h1 = 0, h2 = 0, got;
	if (!bpe_load_mem(&t, merges, sizeof merges - 1, &line))
		h1 = bpe_vocab_hash(t), bpe_free(t);
	if (!bpe_load_mem(&t, other, sizeof other - 1, &line))
		h2 = bpe_vocab_hash(t), bpe_free(t);
	CHECK(h1 && h2 && h1 != h2);
	char dir[] = "/tmp/test_manifest_vocab_XXXXXX", path[256], near[256], err[1024], file[4200];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/m", dir);
	snprintf(near, sizeof near, "%s/bpe_merges.txt", dir);
	Manifest *m;

	// recorded
	CHECK(write_one(path, h1) == 0);
	CHECK(manifest_open(&m, path, err, sizeof err) == 0);
	if (!m)
		return 1;
	CHECK(manifest_header(m)->vocab_hash == h1);
	CHECK(manifest_vocab(m, &got, file, sizeof file) == MANIFEST_VOCAB_RECORDED && got == h1 && !file[0]);
	CHECK(manifest_vocab_check(m, "--eval-manifest M", h1, "the training manifest", "", err, sizeof err) == 0);
	CHECK(manifest_vocab_check(m, "--eval-manifest M", 0, "weights without a record", "", err, sizeof err) == 0);
	CHECK(manifest_vocab_check(m, "--eval-manifest M", h2, "the training manifest T", "/data/train/bpe_merges.txt",
				   err, sizeof err) == -EINVAL);
	CHECK(strstr(err, "--eval-manifest M: ") == err && strstr(err, "another vocabulary") &&
	      strstr(err, "the training manifest T") && strstr(err, "--bpe /data/train/bpe_merges.txt"));
	printf("refusal: %s\n", err);
	manifest_close(m);

	// not recorded (a manifest of before the field): the merges next to it, else unknown
	CHECK(write_one(path, 0) == 0);
	CHECK(manifest_open(&m, path, err, sizeof err) == 0);
	if (!m)
		return 1;
	CHECK(manifest_vocab(m, &got, file, sizeof file) == MANIFEST_VOCAB_UNKNOWN && got == 0);
	CHECK(manifest_vocab_check(m, "M", h2, "X", "", err, sizeof err) == 0);
	FILE *f = fopen(near, "w");
	CHECK(f && fwrite(merges, 1, sizeof merges - 1, f) == sizeof merges - 1 && fclose(f) == 0);
	CHECK(manifest_vocab(m, &got, file, sizeof file) == MANIFEST_VOCAB_NEARBY && got == h1 && !strcmp(file, near));
	CHECK(manifest_vocab_check(m, "M", h2, "X", "", err, sizeof err) == -EINVAL);
	CHECK(manifest_vocab_check(m, "M", h1, "X", "", err, sizeof err) == 0);
	manifest_close(m);
	// recorded and a copy of the same merges next to it: that file is the one to pass to --bpe
	CHECK(write_one(path, h1) == 0);
	CHECK(manifest_open(&m, path, err, sizeof err) == 0);
	if (m) {
		CHECK(manifest_vocab(m, &got, file, sizeof file) == MANIFEST_VOCAB_RECORDED && !strcmp(file, near));
		manifest_close(m);
	}
	unlink(near);
	unlink(path);
	rmdir(dir);
	printf("%s\n", fails ? "FAILED" : "a manifest names its vocabulary; another one is refused with the fix");
	return fails ? 1 : 0;
}
