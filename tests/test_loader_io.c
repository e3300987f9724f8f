// The loader's reader: io_uring (when the kernel allows it) and pread give the same bytes for
// whole files and byte ranges (tar members, GOPs) with several reads in flight; missing,
// zero-length, past-the-end reads and files of another size than a packet index describes
// complete with their error codes.
#include "loader.h"           // defines: LD_ERR_*, ld_reader_new, ld_reader_submit, ld_reader_wait
#include "test_loader_util.h" // defines: tl_rmdir

#include <fcntl.h>

static void run(const char *dir, int force_pread, int *used_uring)
{
	LdReader *r;
	char why[160];
	CHECK(ld_reader_new(&r, 8, force_pread, why, sizeof(why)) == 0);
	*used_uring = !strcmp(ld_reader_kind(r), "io_uring");
	printf("reader: %s %s\n", ld_reader_kind(r), why);
	char paths[6][300];
	LdRead rd[6];
	memset(rd, 0, sizeof(rd));
	for (int i = 0; i < 6; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/f%d", dir, i < 3 ? i : i == 3 ? 9 : i == 4 ? 8 : 0);
		rd[i].path = paths[i];
		rd[i].user = &rd[i];
	}
	rd[5].offset = 1000; // a member range of f0
	rd[5].length = 5000;
	rd[4].length = 0; // f8: empty
	for (int i = 0; i < 6; i++)
		CHECK(ld_reader_submit(r, &rd[i]) == 0);
	int done = 0;
	LdRead *x;
	while (ld_reader_wait(r, &x) == 0) {
		CHECK(x->user == x);
		done++;
	}
	CHECK(done == 6);
	for (int i = 0; i < 3; i++) {
		CHECK(rd[i].error == 0 && rd[i].size == (size_t)(100000 * (i + 1)));
		for (size_t k = 0; k < rd[i].size; k++)
			CHECK(rd[i].buf[k] == (uint8_t)(k * 7 + i));
	}
	CHECK(rd[3].error == -LD_ERR_MISSING && strstr(rd[3].reason, "f9"));
	CHECK(rd[4].error == -LD_ERR_EMPTY);
	CHECK(rd[5].error == 0 && rd[5].size == 5000 && rd[5].buf[0] == (uint8_t)(1000 * 7));
	// a member past the end of its file
	rd[5].offset = 99000;
	rd[5].length = 5000;
	CHECK(ld_reader_submit(r, &rd[5]) == 0);
	CHECK(ld_reader_wait(r, &x) == 0 && x == &rd[5] && x->error == -LD_ERR_TRUNCATED);
	// a range of a file whose size is not the one its packet index describes: truncated or replaced
	rd[5].offset = 1000, rd[5].length = 100;
	for (int k = 0; k < 3; k++) {
		rd[5].expect_size = k == 0 ? 100000 : k == 1 ? 100001 : 99999;
		CHECK(ld_reader_submit(r, &rd[5]) == 0);
		CHECK(ld_reader_wait(r, &x) == 0 && x == &rd[5]);
		CHECK(x->error == (k == 0 ? 0 : k == 1 ? -LD_ERR_TRUNCATED : -LD_ERR_CORRUPT));
		CHECK(k == 0 ? x->size == 100 && x->buf[0] == (uint8_t)(1000 * 7)
			     : strstr(x->reason, "packet index") != NULL);
	}
	CHECK(ld_reader_wait(r, &x) == -EAGAIN);
	for (int i = 0; i < 6; i++)
		free(rd[i].buf);
	ld_reader_free(r);
}

int main(void)
{
	char dir[256];
	CHECK(ld_fixture_tmpdir(dir, sizeof(dir)) == 0);
	for (int i = 0; i < 3; i++) {
		char p[300];
		snprintf(p, sizeof(p), "%s/f%d", dir, i);
		FILE *f = fopen(p, "wb");
		for (size_t k = 0; k < (size_t)100000 * (i + 1); k++)
			fputc((uint8_t)(k * 7 + i), f);
		fclose(f);
	}
	char p8[300];
	snprintf(p8, sizeof(p8), "%s/f8", dir);
	close(open(p8, O_CREAT | O_WRONLY, 0644));
	int uring = 0, forced = 0;
	run(dir, 1, &forced);
	CHECK(!forced);
	run(dir, 0, &uring);
	tl_rmdir(dir);
	printf("pread path ok; io_uring path %s\n", uring ? "ok" : "not available here (pread fallback used)");
	return 0;
}
