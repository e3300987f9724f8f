// Ring creation is bounded: a segment larger than the shm file system or the memory is refused
// before a byte is allocated, with both numbers; a stop signal during creation leaves nothing
// (unnamed segment or named temporary); temporaries of creators that died are swept.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "ring_layout.h" // defines: ring_create_named_temp
#include "ring_testutil.h"
#include "proc_time.h" // defines: time_mono_s

int main(void)
{
	alarm(120);
	char name[64], err[512];
	snprintf(name, sizeof name, "%s", test_ring_name("limits"));
	RingCreateOptions o;
	Ring *r = NULL;

	// 2^20 slots of 16x224x224x3 clips: 2.5 TB, refused at once with the sizes named
	ring_create_options_default(&o);
	o.slots = 1u << 20;
	double t0 = time_mono_s();
	CHECK_EQ_INT(ring_create(&r, name, &o, err, sizeof err), -ENOSPC);
	printf("%s (%.3f s)\n", err, time_mono_s() - t0);
	CHECK(strstr(err, "needs 2529.") && strstr(err, "GB free") && strstr(err, "available memory"));
	CHECK(time_mono_s() - t0 < 1.0);
	CHECK_EQ_INT(test_shm_count(name, NULL, 0), 0);

	// a stop signal pending while the segment is built: nothing is published and nothing is left,
	// whether the segment is built unnamed (O_TMPFILE) or under the named fallback temporary
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = 1, .height = 64, .width = 64, .channels = 3, .text_len = 4};
	o.slots = 16;
	for (int named = 0; named < 2; named++) {
		ring_create_named_temp = named;
		sigset_t term, old;
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		signal(SIGTERM, SIG_IGN); // delivered when unblocked below: ignored
		sigprocmask(SIG_BLOCK, &term, &old);
		raise(SIGTERM);
		CHECK_EQ_INT(ring_create(&r, name, &o, err, sizeof err), -EINTR);
		printf("%s\n", err);
		CHECK(strstr(err, "interrupted") && strstr(err, "nothing was published"));
		CHECK(!named || (strstr(err, "temporary segment") && strstr(err, "removed")));
		CHECK_EQ_INT(test_shm_count(name, NULL, 0), 0);
		sigprocmask(SIG_SETMASK, &old, NULL);
		signal(SIGTERM, SIG_DFL);
	}

	// a creator killed outright (SIGKILL cannot be caught) leaves its temporary file: the next
	// creation of that name sweeps it away
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	CHECK(dead > 0 && waitpid(dead, NULL, 0) == dead);
	char stale[256];
	snprintf(stale, sizeof stale, "/dev/shm/.%s.creating.%d", name, (int)dead);
	int fd = open(stale, O_CREAT | O_RDWR, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK_OK(ring_create(&r, name, &o, err, sizeof err)); // still the named fallback
	snprintf(test_ring_created, sizeof test_ring_created, "%s", name);
	atexit(test_ring_cleanup);
	CHECK(access(stale, F_OK) != 0);
	char tmp_part[96];
	snprintf(tmp_part, sizeof tmp_part, ".%s.creating.", name);
	CHECK_EQ_INT(test_shm_count(tmp_part, NULL, 0), 0);
	ring_close(r);
	CHECK_OK(ring_destroy(name));
	ring_create_named_temp = 0;

	// ringctl interrupted at any moment: either the ring exists whole or nothing is left
	for (int i = 0; i < 6; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			execl("tools/ringctl", "ringctl", "create", "--ring", name, "--frames", "4", "--height", "224",
			      "--width", "224", "--slots", "64", (char *)NULL);
			_exit(127);
		}
		struct timespec d = {0, i * 8 * 1000000L};
		nanosleep(&d, NULL);
		kill(pid, i % 2 ? SIGINT : SIGTERM);
		int st;
		CHECK(waitpid(pid, &st, 0) == pid);
		CHECK(!(WIFEXITED(st) && WEXITSTATUS(st) == 127));
		CHECK_EQ_INT(test_shm_count(tmp_part, NULL, 0), 0);
		Ring *q;
		if (ring_open(&q, name, NULL, err, sizeof err) == 0) { // finished before the signal: a whole ring
			ring_close(q);
			CHECK_OK(ring_destroy(name));
		}
		printf("ringctl stopped after %d ms: %s\n", i * 8,
		       WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "finished");
	}
	printf("ring creation: limits checked first, temporaries never left behind\n");
	return 0;
}
