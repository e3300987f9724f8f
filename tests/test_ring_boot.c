// The ring's bootstrap record: a reader gets rank 0's blob only from a live publisher of its own
// job in this incarnation of the ring; a writer killed mid-write is taken over; a recreated ring
// says ESTALE; and concurrent reads never see a torn blob.
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <time.h>

#include "ring_layout.h"
#include "proc_time.h" // defines: time_mono_s
#include "ring_testutil.h"

#define TOKEN 0x1234abcdull
#define WORLD 4

static void blob_of(uint8_t *b, uint64_t seed)
{
	for (int i = 0; i < RING_BOOT_BLOB_MAX; i++)
		b[i] = (uint8_t)(test_fill_word(seed, 1, (uint64_t)i / 8) >> (8 * (i % 8)));
}

// A child that publishes seed's blob and stays alive until *hold is closed; returns its pid.
static pid_t publisher(const char *name, uint64_t token, uint64_t seed, int *hold)
{
	int up[2], down[2];
	CHECK(pipe(up) == 0 && pipe(down) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		Ring *r;
		char err[256];
		uint8_t b[RING_BOOT_BLOB_MAX];
		close(up[0]);
		close(down[1]);
		blob_of(b, seed);
		if (ring_open(&r, name, NULL, err, sizeof err) || ring_boot_publish(r, token, WORLD, b, sizeof b))
			_exit(2);
		char c = 1, x;
		if (write(up[1], &c, 1) != 1)
			_exit(3);
		while (read(down[0], &x, 1) > 0) {
		}
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	char c;
	CHECK(read(up[0], &c, 1) == 1);
	close(up[0]);
	*hold = down[1];
	return pid;
}

static void finish(pid_t pid, int hold)
{
	int st;
	close(hold);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void states(Ring *r, const char *name)
{
	uint8_t got[RING_BOOT_BLOB_MAX], want[RING_BOOT_BLOB_MAX];
	RingBootSeen seen;
	CHECK_EQ_INT(ring_boot_read(r, TOKEN, WORLD, got, sizeof got, &seen), -EAGAIN);
	CHECK_EQ_INT(seen.state, RING_BOOT_NONE);

	int hold;
	pid_t pid = publisher(name, TOKEN, 7, &hold);
	blob_of(want, 7);
	CHECK_OK(ring_boot_read(r, TOKEN, WORLD, got, sizeof got, &seen));
	CHECK(memcmp(got, want, sizeof got) == 0 && seen.pid == pid && seen.state == RING_BOOT_READY);
	CHECK_EQ_INT(ring_boot_read(r, TOKEN + 1, WORLD, got, sizeof got, &seen), -EAGAIN);
	CHECK_EQ_INT(seen.state, RING_BOOT_OTHER_JOB);
	CHECK_EQ_INT(ring_boot_read(r, TOKEN, WORLD + 1, got, sizeof got, &seen), -EPROTO);
	CHECK_EQ_INT(seen.world, WORLD);
	CHECK_EQ_INT(ring_boot_read(r, TOKEN, WORLD, got, 64, &seen), -EPROTO);
	// the publisher exits: its id is a previous attempt's and is never handed out again
	finish(pid, hold);
	CHECK_EQ_INT(ring_boot_read(r, TOKEN, WORLD, got, sizeof got, &seen), -EAGAIN);
	CHECK_EQ_INT(seen.state, RING_BOOT_DEAD_PUBLISHER);
	CHECK_EQ_INT(seen.pid, pid);

	// a live publisher of this job replaces it, with a new generation
	uint64_t gen = seen.generation;
	CHECK_OK(ring_boot_publish(r, TOKEN, WORLD, want, sizeof want));
	CHECK_OK(ring_boot_read(r, TOKEN, WORLD, got, sizeof got, &seen));
	CHECK(seen.generation > gen && seen.pid == (int)getpid());
	CHECK_EQ_INT(ring_boot_clear(r, TOKEN + 1), -EPERM);
	CHECK_OK(ring_boot_clear(r, TOKEN));
	CHECK_EQ_INT(ring_boot_read(r, TOKEN, WORLD, got, sizeof got, &seen), -EAGAIN);
	CHECK_EQ_INT(seen.state, RING_BOOT_NONE);
	CHECK_EQ_INT(ring_boot_publish(r, TOKEN, WORLD, want, 0), -EINVAL);
	CHECK_EQ_INT(ring_boot_publish(r, TOKEN, WORLD, want, RING_BOOT_BLOB_MAX + 1), -EINVAL);
}

// a writer killed between its two seqlock stores leaves the word odd: the next one takes over
static void takeover(Ring *r)
{
	uint8_t b[RING_BOOT_BLOB_MAX], got[RING_BOOT_BLOB_MAX];
	blob_of(b, 9);
	atomic_fetch_add(&r->ctl->boot_seq, 1);
	RingBootSeen seen;
	CHECK_EQ_INT(ring_boot_read(r, TOKEN, WORLD, got, sizeof got, &seen), -EAGAIN);
	CHECK_EQ_INT(seen.state, RING_BOOT_BUSY);
	double t0 = time_mono_s();
	CHECK_OK(ring_boot_publish(r, TOKEN, WORLD, b, sizeof b));
	CHECK(time_mono_s() - t0 >= 0.09 && time_mono_s() - t0 < 5.0);
	CHECK_OK(ring_boot_read(r, TOKEN, WORLD, got, sizeof got, &seen));
	CHECK(memcmp(got, b, sizeof b) == 0);
}

// one child publishes blobs whose bytes all equal the publish count; no read may mix two
static void no_torn_reads(Ring *r, const char *name)
{
	CHECK_OK(ring_boot_clear(r, TOKEN)); // reads find nothing until the child's first publish
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		Ring *w;
		char err[256];
		uint8_t b[RING_BOOT_BLOB_MAX];
		if (ring_open(&w, name, NULL, err, sizeof err))
			_exit(2);
		for (int k = 0; k < 50000; k++) {
			memset(b, k & 0xff, sizeof b);
			if (ring_boot_publish(w, TOKEN, WORLD, b, sizeof b))
				_exit(3);
		}
		_exit(0);
	}
	long reads = 0, busy = 0;
	int st;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		uint8_t got[RING_BOOT_BLOB_MAX];
		RingBootSeen seen;
		int rc = ring_boot_read(r, TOKEN, WORLD, got, sizeof got, &seen);
		if (rc == -EAGAIN) {
			busy++;
			continue;
		}
		CHECK_OK(rc);
		for (int i = 1; i < RING_BOOT_BLOB_MAX; i++)
			CHECK(got[i] == got[0]);
		reads++;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	printf("concurrent: %ld whole reads, %ld while busy or after the writer exited\n", reads, busy);
	CHECK(reads > 0);
}

static void recreated(Ring *r, const char *name)
{
	uint8_t b[RING_BOOT_BLOB_MAX];
	blob_of(b, 11);
	CHECK_OK(ring_boot_publish(r, TOKEN, WORLD, b, sizeof b));
	Ring *fresh = test_ring_recreate(r, name);
	RingBootSeen seen;
	// the old mapping still holds the old id, but nobody may use it
	CHECK_EQ_INT(ring_boot_read(r, TOKEN, WORLD, b, sizeof b, &seen), -ESTALE);
	CHECK_EQ_INT(ring_boot_publish(r, TOKEN, WORLD, b, sizeof b), -ESTALE);
	CHECK_EQ_INT(ring_boot_read(fresh, TOKEN, WORLD, b, sizeof b, &seen), -EAGAIN);
	CHECK_EQ_INT(seen.state, RING_BOOT_NONE);
	ring_close(fresh);
}

int main(void)
{
	const char *name = test_ring_name("boot");
	Ring *r = test_ring_create(name, 4, 1);
	states(r, name);
	takeover(r);
	no_torn_reads(r, name);
	recreated(r, name);
	ring_close(r);
	printf("ok\n");
	return 0;
}
