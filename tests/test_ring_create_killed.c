// A creator with other threads, killed by a stop signal at any moment of ring creation, leaves
// neither a temporary segment nor a partial ring: ring_create holds the stop signals only in its
// own thread, so another thread takes the signal and the process ends without cleaning up (what
// OpenBLAS's worker threads made of `ringctl create` under ASan). SIGKILL likewise.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "ring_testutil.h"

static void *idle_thread(void *arg)
{
	for (;;)
		pause();
	return arg;
}

// the child: a second thread with every signal open, then creations of a 48 MiB ring until killed
static void creator(const char *name)
{
	pthread_t t;
	if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
		_exit(3);
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = 4, .height = 224, .width = 224, .channels = 3, .text_len = 4};
	o.slots = 80;
	o.replace = 1;
	char err[512];
	for (;;) {
		Ring *r = NULL;
		if (ring_create(&r, name, &o, err, sizeof err) != 0) {
			fprintf(stderr, "creator: %s\n", err);
			_exit(2);
		}
		ring_close(r);
	}
}

int main(void)
{
	alarm(120);
	char name[64], err[512], left[256] = "";
	snprintf(name, sizeof name, "%s", test_ring_name("killed"));
	snprintf(test_ring_created, sizeof test_ring_created, "%s", name);
	atexit(test_ring_cleanup);
	char tmp_part[96];
	snprintf(tmp_part, sizeof tmp_part, ".%s.", name);

	const int sigs[3] = {SIGTERM, SIGINT, SIGKILL};
	int killed = 0, rounds = 30;
	for (int i = 0; i < rounds; i++) {
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			signal(SIGINT, SIG_DFL); // a test run from a background job inherits SIGINT ignored
			creator(name);
		}
		// 2..60 ms: before, during and between creations (each takes several ms)
		struct timespec d = {0, (2 + (i * 7919) % 59) * 1000000L};
		nanosleep(&d, NULL);
		int sig = sigs[i % 3];
		CHECK_EQ_INT(kill(pid, sig), 0);
		int st;
		CHECK(waitpid(pid, &st, 0) == pid);
		EXPECT(WIFSIGNALED(st), "creator exited %d instead of dying by the signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		killed++;
		int n = test_shm_count(tmp_part, left, sizeof left);
		EXPECT(n == 0, "round %d (%s after %ld ms): %s left in /dev/shm", i, strsignal(sig),
		       (long)(d.tv_nsec / 1000000), left);
		Ring *q;
		int e = ring_open(&q, name, NULL, err, sizeof err);
		EXPECT(e == 0 || e == -ENOENT, "round %d: the ring left is not whole: %s", i, err);
		if (test_failures) {
			char path[400];
			snprintf(path, sizeof path, "/dev/shm/%s", left);
			if (n)
				unlink(path);
			return 1;
		}
		if (e == 0) {
			ring_close(q);
			CHECK_OK(ring_destroy(name));
		}
	}
	printf("%d creators with a second thread killed mid-creation: nothing but whole rings left\n", killed);
	return 0;
}
