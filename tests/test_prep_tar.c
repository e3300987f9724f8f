// Webdataset shard indexing: keys with an image and a caption are indexed at the image's
// exact byte offset; keys missing either, captions that are not UTF-8, a corrupt header
// and a truncated shard are reported and counted.
#include "../tools/prep_tar.h" // defines: prep_tar_index, prep_tar_free
#include "tar.h"               // defines: TarWriter, tar_open, tar_add, tar_header, tar_header_sum, tar_close

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails;
#define CHECK(c)                                                                                                       \
	do {                                                                                                           \
		if (!(c)) {                                                                                            \
			printf("FAIL line %d: %s\n", __LINE__, #c);                                                    \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

static int bytes_at(const char *path, uint64_t off, const char *want, size_t n)
{
	char buf[256];
	FILE *f = fopen(path, "rb");
	int ok = f && fseek(f, (long)off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n && memcmp(buf, want, n) == 0;
	if (f)
		fclose(f);
	return ok;
}

int main(void)
{
	char dir[] = "/tmp/test_prep_tar_XXXXXX", p[256], q[256];
	if (!mkdtemp(dir))
		return 1;
	snprintf(p, sizeof(p), "%s/a.tar", dir);
	TarWriter t;
	const char img1[] = "\x89PNG first image bytes", img5[] = "\xff\xd8\xff jpeg in a folder";
	CHECK(tar_open(&t, p) == 0);
	uint64_t off1 = 0, off5 = 0;
	CHECK(tar_add(&t, "0001.png", img1, sizeof(img1), &off1) == 0);
	CHECK(tar_add(&t, "0001.txt", "a red square", 12, NULL) == 0);
	CHECK(tar_add(&t, "0002.jpg", "no caption", 10, NULL) == 0);
	CHECK(tar_add(&t, "0003.txt", "no image", 8, NULL) == 0);
	CHECK(tar_add(&t, "0004.webp", "img", 3, NULL) == 0);
	CHECK(tar_add(&t, "0004.txt", "bad \xff utf8", 10, NULL) == 0);
	CHECK(tar_add(&t, "sub/0005.jpeg", img5, sizeof(img5), &off5) == 0);
	CHECK(tar_add(&t, "sub/0005.txt", "a blue circle", 13, NULL) == 0);
	CHECK(tar_add(&t, "sub/0005.json", "{}", 2, NULL) == 0);
	CHECK(tar_close(&t) == 0);
	// the writer's archive is a standard one: Python's tarfile reads the same members back
	char cmd[512];
	snprintf(cmd, sizeof cmd,
		 "python3 -c 'import sys, tarfile; t = tarfile.open(sys.argv[1]); "
		 "assert [m.name for m in t][6] == \"sub/0005.jpeg\"; "
		 "assert t.extractfile(\"0001.txt\").read() == b\"a red square\"' %s",
		 p);
	if (system("python3 -c 'import tarfile' 2>/dev/null") == 0)
		CHECK(system(cmd) == 0);
	{
		unsigned char h[512];
		char long_name[101];
		memset(long_name, 'n', 100);
		long_name[100] = 0;
		CHECK(tar_header(h, long_name, 1, '0') == -ENAMETOOLONG);
		CHECK(tar_header(h, "big", 1ull << 33, '0') == -EFBIG);
		CHECK(tar_header(h, "ok", (1ull << 33) - 1, '0') == 0 &&
		      tar_header_sum(h) == strtoul((char *)h + 148, NULL, 8));
	}

	PrepAnnotList rep = {0};
	PrepTarIndex ix;
	CHECK(prep_tar_index(p, &ix, &rep) == 0);
	CHECK(ix.n == 2);
	if (ix.n == 2) {
		CHECK(strcmp(ix.img[0].key, "0001") == 0 && strcmp(ix.img[0].caption, "a red square") == 0);
		CHECK(ix.img[0].offset == 512 && off1 == 512 && ix.img[0].length == sizeof(img1));
		CHECK(bytes_at(p, ix.img[0].offset, img1, sizeof(img1)));
		CHECK(strcmp(ix.img[1].key, "sub/0005") == 0 && strcmp(ix.img[1].caption, "a blue circle") == 0);
		CHECK(ix.img[1].offset == off5 && bytes_at(p, ix.img[1].offset, img5, sizeof(img5)));
	}
	CHECK(rep.n_problems == 3 && rep.bad_record == 2 && rep.bad_utf8 == 1);
	for (size_t i = 0; i < rep.n_problems; i++)
		printf("  problem: %s\n", rep.problems[i]);
	prep_tar_free(&ix);
	prep_annot_free(&rep);

	// truncated in the middle of a member: what comes before is kept, the rest reported
	FILE *f = fopen(p, "rb");
	char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	snprintf(q, sizeof(q), "%s/cut.tar", dir);
	f = fopen(q, "wb");
	fwrite(buf, 1, 2048 + 512 + 5, f); // first key complete, the third member's data cut
	fclose(f);
	CHECK(prep_tar_index(q, &ix, &rep) == 0 && ix.n == 1 && rep.n_problems >= 1 &&
	      strstr(rep.problems[rep.n_problems - 1], "truncated"));
	prep_tar_free(&ix);
	prep_annot_free(&rep);
	f = fopen(q, "wb");
	fwrite(buf, 1, 2048 + 100, f); // cut inside the third header
	fclose(f);
	CHECK(prep_tar_index(q, &ix, &rep) == 0 && ix.n == 1 && rep.n_problems >= 1 &&
	      strstr(rep.problems[rep.n_problems - 1], "truncated"));
	prep_tar_free(&ix);
	prep_annot_free(&rep);
	// a corrupt header checksum stops the scan with a report
	buf[2048 + 148] ^= 1;
	f = fopen(q, "wb");
	fwrite(buf, 1, n, f);
	fclose(f);
	CHECK(prep_tar_index(q, &ix, &rep) == 0 && ix.n == 1 && rep.n_problems >= 1 &&
	      strstr(rep.problems[rep.n_problems - 1], "checksum"));
	prep_tar_free(&ix);
	prep_annot_free(&rep);
	// a pax header of 2 MiB (names are short): refused before anything is allocated for it
	{
		unsigned char h[512];
		CHECK(tar_header(h, "PaxHeaders/big", 2u << 20, 'x') == 0);
		f = fopen(q, "wb");
		fwrite(h, 1, 512, f);
		fclose(f);
		CHECK(truncate(q, 512 + (2 << 20) + 1024) == 0);
		CHECK(prep_tar_index(q, &ix, &rep) == 0 && ix.n == 0 && rep.n_problems >= 1 &&
		      strstr(rep.problems[rep.n_problems - 1], "pax header of 2097152 bytes"));
		prep_tar_free(&ix);
		prep_annot_free(&rep);
	}
	CHECK(prep_tar_index("/nonexistent.tar", &ix, &rep) < 0);
	unlink(p);
	unlink(q);
	rmdir(dir);
	printf("%s\n", fails ? "FAILED" : "shard members indexed at exact offsets; bad keys reported");
	return fails ? 1 : 0;
}
