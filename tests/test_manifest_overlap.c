// A manifest whose sections lie on each other (the tokens on the samples table, the videos on
// the chunks, the string table run into the videos), with checksums recomputed as anyone can,
// is refused at open with both sections named: every caption would be read from other bytes.
#include "manifest.h"       // defines: manifest_open, manifest_writer_new, manifest_add_*, manifest_write
#include "manifest_recrc.h" // defines: manifest_recrc
#include "testutil.h"       // defines: test_file_read, test_file_write

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/test_manifest_overlap_XXXXXX", path[256];

// a small valid manifest: 2 videos of 2 chunks, 6 clip samples
static int write_good(const char *p)
{
	ManifestWriter *w;
	if (manifest_writer_new(&w, 77, 1000, 15000, 288))
		return -1;
	uint32_t kf[] = {0, 8};
	int rc = 0;
	for (uint32_t v = 0; v < 2 && !rc; v++) {
		char name[32], chunk[32];
		snprintf(name, sizeof name, "video-%u", v);
		rc |= manifest_add_video(w, name, 30000) < 0;
		for (uint32_t c = 0; c < 2; c++) {
			snprintf(chunk, sizeof chunk, "video-%u/%u.mp4", v, 15 * c);
			rc |= manifest_add_chunk(w, v, chunk, 15000 * c, 16, 8, 1, 512, 288, kf, 2) < 0;
		}
		for (uint32_t s = 0; s < 3; s++) {
			int32_t tok[77] = {998, (int32_t)(5 + s), (int32_t)(7 + v), 999};
			rc |= manifest_add_clip(w, v, 2 * v, 4 * s, 2 * v, 4 * s + 4, tok) < 0;
		}
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
	size_t n;
	uint8_t *good;
	if (write_good(path) || !(good = test_file_read(path, &n))) {
		printf("FAIL cannot write the valid manifest\n");
		return 1;
	}
	Manifest *m;
	char err[256] = "";
	if (manifest_open(&m, path, err, sizeof err)) {
		printf("FAIL the valid manifest is refused: %s\n", err);
		return 1;
	}
	manifest_close(m);
	const ManifestHeader *g = (const ManifestHeader *)good;
	struct {
		const char *what, *first, *second;
		size_t field;   // offset of the uint64_t header field changed
		uint64_t value; // its new value
	} cases[] = {
		{"tokens on the samples table", "samples", "tokens", offsetof(ManifestHeader, tokens_off),
		 g->samples_off},
		{"videos on the chunks", "videos", "chunks", offsetof(ManifestHeader, videos_off), g->chunks_off},
		{"string table run into the videos", "strings", "videos", offsetof(ManifestHeader, strings_size),
		 g->videos_off - g->strings_off + 8},
	};
	int fails = 0;
	uint8_t *bad = malloc(n);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memcpy(bad, good, n);
		memcpy(bad + cases[i].field, &cases[i].value, sizeof(uint64_t));
		manifest_recrc(bad, n);
		if (test_file_write(path, bad, n))
			return 1;
		m = NULL;
		err[0] = 0;
		int rc = manifest_open(&m, path, err, sizeof err);
		if (rc == 0 || !strstr(err, "overlaps") || !strstr(err, cases[i].first) ||
		    !strstr(err, cases[i].second)) {
			printf("FAIL %s: rc %d '%s', want refused naming the %s and %s sections\n", cases[i].what, rc,
			       err, cases[i].first, cases[i].second);
			fails++;
		} else {
			printf("ok   %-34s %s\n", cases[i].what, err);
		}
		manifest_close(m);
	}
	free(bad);
	free(good);
	unlink(path);
	rmdir(dir);
	return fails ? 1 : 0;
}
