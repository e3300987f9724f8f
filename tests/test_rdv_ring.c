// The ring method on one machine: ranks waiting in the control block get rank 0's id; the id of a
// rank 0 that has exited (an earlier attempt) or of another job is never taken; a recreated ring
// ends the wait at once; every timeout names the rank and what it found.
#include <errno.h>

#include "ring_testutil.h" // defines: test_ring_create
#include "proc_time.h"     // defines: time_mono_s
#include "test_rdv_util.h" // defines: tr_info, tr_join, tr_expect_error

#define W(...) ((const char *const[]){__VA_ARGS__, NULL})

static RdvInfo ring_rank(int rank, int world, const char *job, int timeout_ms)
{
	return tr_info(rank, world, 1, NULL, job, RDV_RING, NULL, timeout_ms);
}

// rank 0: publishes, then stays alive until `wait_for` results are done (as a trainer would,
// going on to initialise NCCL) or 10 s have passed
static pid_t spawn_rank0(Ring *ring, const char *job, int world, uint64_t seed, RdvResult *wait_for, int n)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid)
		return pid;
	RdvInfo i = ring_rank(0, world, job, 5000);
	uint8_t b[RDV_BLOB_MAX];
	char err[512];
	tr_blob(b, sizeof b, seed);
	if (rdv_exchange(&i, ring, b, sizeof b, err, sizeof err)) {
		fprintf(stderr, "rank 0: %s\n", err);
		_exit(1);
	}
	double t0 = time_mono_s();
	for (int k = 0; k < n && time_mono_s() - t0 < 10; k += __atomic_load_n(&wait_for[k].done, __ATOMIC_SEQ_CST))
		tr_sleep_ms(2);
	_exit(0);
}

static void exchange(Ring *ring)
{
	RdvResult *res = tr_results(4);
	pid_t pids[4];
	for (int r = 1; r < 4; r++) {
		RdvInfo i = ring_rank(r, 4, "ring-job", 10000);
		pids[r] = tr_spawn(&i, ring, 0, &res[r]);
	}
	tr_sleep_ms(300); // the ranks wait for rank 0
	pids[0] = spawn_rank0(ring, "ring-job", 4, 5, res + 1, 3);
	tr_join(pids, 4, 30);
	uint8_t want[RDV_BLOB_MAX];
	tr_blob(want, sizeof want, 5);
	for (int r = 1; r < 4; r++) {
		if (res[r].rc)
			fprintf(stderr, "rank %d: %s\n", r, res[r].err);
		CHECK(res[r].rc == 0 && memcmp(res[r].blob, want, sizeof want) == 0 && res[r].secs >= 0.25);
	}
	printf("ring: 3 ranks got the id after waiting %.2f s for rank 0\n", res[1].secs);
}

static RdvResult wait_one(Ring *ring, const char *job, int timeout_ms)
{
	RdvResult *res = tr_results(1);
	RdvInfo i = ring_rank(1, 4, job, timeout_ms);
	pid_t pid = tr_spawn(&i, ring, 0, res);
	tr_join(&pid, 1, 30);
	return *res;
}

int main(void)
{
	const char *name = test_ring_name("rdv");
	Ring *ring = test_ring_create(name, 4, 1);
	exchange(ring);

	// rank 0 of that run has exited: its id is stale, the wait times out on time and says so
	RdvResult r = wait_one(ring, "ring-job", 1000);
	tr_expect_error(&r, -ETIMEDOUT, W("rank 1", "stale id of this job", "exited"), "dead rank 0");
	CHECK(r.secs >= 1.0 - 0.005 && r.secs < 2.0); // the library reads its clock in ms

	// a live rank 0 of another job
	RdvResult none[1] = {{0}};
	pid_t other = spawn_rank0(ring, "other-job", 4, 6, none, 1);
	tr_sleep_ms(200);
	r = wait_one(ring, "ring-job", 600);
	tr_expect_error(&r, -ETIMEDOUT, W("rank 1", "another job"), "other job");
	kill(other, SIGKILL); // it would hold on for 10 s
	tr_join(&other, 1, 30);

	// the ring is recreated while a rank waits: it stops at once (re-open the ring, then retry)
	RdvResult *res = tr_results(1);
	RdvInfo i = ring_rank(2, 4, "ring-job", 8000);
	pid_t w = tr_spawn(&i, ring, 0, res);
	tr_sleep_ms(300);
	Ring *fresh = test_ring_recreate(ring, name);
	tr_join(&w, 1, 30);
	tr_expect_error(res, -ESTALE, W("rank 2", "recreated"), "recreated ring");
	CHECK(res->secs < 3.0);

	// a job that spans machines cannot use the ring
	RdvInfo two = tr_info(1, 4, 2, "h", "x", RDV_TCP, NULL, 1000);
	two.method = RDV_RING;
	RdvResult out = {0};
	uint8_t b[RDV_BLOB_MAX];
	out.rc = rdv_exchange(&two, fresh, b, sizeof b, out.err, sizeof out.err);
	tr_expect_error(&out, -EINVAL, W("rank 1", "one machine"), "two machines");
	ring_close(fresh);
	ring_close(ring);
	printf("ok\n");
	return 0;
}
