// The file method: ranks polling a shared path take rank 0's id once it is renamed into place,
// never a stale file of an earlier job or a torn one, and give up at their deadline naming
// themselves and what they found.
#include <errno.h>
#include <fcntl.h>

#include "test_rdv_util.h" // defines: tr_info, tr_spawn, tr_join, tr_expect_error

#define W(...) ((const char *const[]){__VA_ARGS__, NULL})

static char path[256];

static RdvInfo at(int rank, int world, const char *job, int timeout_ms)
{
	return tr_info(rank, world, 1, NULL, job, RDV_FILE, path, timeout_ms);
}

static void write_rank0(const char *job, int world, uint64_t seed)
{
	RdvInfo i = at(0, world, job, 1000);
	uint8_t b[RDV_BLOB_MAX];
	char err[512];
	tr_blob(b, sizeof b, seed);
	if (rdv_exchange_file(&i, b, sizeof b, err, sizeof err)) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
}

// a stale file of job "old" is there; the ranks of "new" wait for their own rank 0
static void stale_then_fresh(void)
{
	RdvResult *res = tr_results(4);
	pid_t pids[4];
	write_rank0("old", 4, 1);
	for (int r = 1; r < 4; r++) {
		RdvInfo i = at(r, 4, "new", 10000);
		pids[r] = tr_spawn(&i, NULL, 0, &res[r]);
	}
	tr_sleep_ms(500);
	for (int r = 1; r < 4; r++)
		CHECK(!__atomic_load_n(&res[r].done, __ATOMIC_SEQ_CST)); // the stale id was not taken
	RdvInfo i0 = at(0, 4, "new", 10000);
	pids[0] = tr_spawn(&i0, NULL, 2, &res[0]);
	tr_join(pids, 4, 30);
	uint8_t want[RDV_BLOB_MAX];
	tr_blob(want, sizeof want, 2);
	for (int r = 0; r < 4; r++) {
		if (res[r].rc)
			fprintf(stderr, "rank %d: %s\n", r, res[r].err);
		CHECK(res[r].rc == 0 && memcmp(res[r].blob, want, sizeof want) == 0);
	}
	printf("stale then fresh: ranks waited %.2f s and took the new id\n", res[1].secs);
}

static RdvResult wait_one(const char *job, int world, int timeout_ms)
{
	RdvResult *res = tr_results(1);
	RdvInfo i = at(1, world, job, timeout_ms);
	pid_t pid = tr_spawn(&i, NULL, 0, res);
	tr_join(&pid, 1, 30);
	return *res;
}

int main(void)
{
	char dir[] = "/tmp/rdv-file-XXXXXX";
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/nccl.id", dir);
	stale_then_fresh();

	// only a stale file: the deadline fires on time and says so
	RdvResult r = wait_one("newer", 4, 1000);
	tr_expect_error(&r, -ETIMEDOUT, W("rank 1", "stale", "another job", path), "stale only");
	CHECK(r.secs >= 1.0 - 0.005 && r.secs < 2.0); // the library reads its clock in ms

	// a torn or foreign file is never taken
	int fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, "AVRZ but not really a record", 28) == 28);
	close(fd);
	r = wait_one("newer", 4, 600);
	tr_expect_error(&r, -ETIMEDOUT, W("rank 1", "torn"), "torn file");

	unlink(path);
	r = wait_one("newer", 4, 600);
	tr_expect_error(&r, -ETIMEDOUT, W("rank 1", "no file appeared"), "no file");

	// one job, two world sizes: an error at once, not a wait
	write_rank0("W", 2, 3);
	r = wait_one("W", 3, 5000);
	tr_expect_error(&r, -EPROTO, W("rank 1", "for 2 ranks", "expects 128 bytes for 3 ranks"), "world mismatch");
	CHECK(r.secs < 2.0);

	// rank 0 cannot write: the error names the file and the reason
	char saved[256];
	snprintf(saved, sizeof saved, "%s", path);
	snprintf(path, sizeof path, "%s/missing-dir/nccl.id", dir);
	RdvInfo i0 = at(0, 2, "X", 1000);
	RdvResult out = {0};
	uint8_t b[RDV_BLOB_MAX] = {1};
	out.rc = rdv_exchange(&i0, NULL, b, sizeof b, out.err, sizeof out.err);
	tr_expect_error(&out, -ENOENT, W("rank 0", "missing-dir", "No such file"), "unwritable");

	unlink(saved);
	CHECK(rmdir(dir) == 0); // rank 0 left no temporary file behind
	printf("ok\n");
	return 0;
}
