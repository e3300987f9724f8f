// SIGTERM ends loaderd within 2 s in every state, the watchdog off (--timeout-ms 0) included:
// just started (the signal sent before its handlers exist), waiting for its ring, waiting for a
// free slot, and deep in decoding slow samples (a chunk with one keyframe in 240 frames of
// 640x360). Nothing is lost: a loader started afterwards adopts the positions the stopped one
// left unfinished, and every position arrives in order with the content the decode library
// gives in-process.
#include "test_loader_harness.h" // defines: Th, th_setup_opts, th_spawn, th_consume, ...
#include "proc_time.h"           // defines: time_mono_s

#include <time.h>

// SIGTERM, then the seconds until the process has exited (status 0 required)
static double stop_timed(const Th *th, const char *tag, pid_t pid)
{
	double t0 = time_mono_s();
	kill(pid, SIGTERM);
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid);
	double t = time_mono_s() - t0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "loaderd %d ended with status %#x\n", (int)pid, st);
		if (tag)
			th_dump_logs(th, tag);
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return t;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

int main(void)
{
	alarm(280);
	Th t;
	LdFixtureOpts slow = {.videos = 1,
			      .chunks_per_video = 1,
			      .width = 640,
			      .height = 360,
			      .fps = 24,
			      .frames_per_chunk = 240,
			      .gop = 240,
			      .texture = 60};
	th_setup_opts(&t, "ldstop", &slow);

	// waiting for a ring that does not exist
	char missing[80];
	snprintf(missing, sizeof missing, "%s-none", t.ring);
	const char *argv0[] = {th_loaderd(), "--ring", missing, "--manifest", t.manifest, "--timeout-ms", "0", NULL};
	pid_t w = th_fork_stops_blocked();
	if (w == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(argv0[0], (char *const *)argv0);
		_exit(127);
	}
	sleep_s(0.5);
	double t_wait = stop_timed(&t, NULL, w);

	// just started: a stop sent at once, while the starter still holds the stop signals blocked
	// across exec, waits for loaderd's handlers (which unblock them) and ends it cleanly
	pid_t j = th_spawn(&t, "just", "--threads", "1", "--timeout-ms", "0", NULL);
	double t_just = stop_timed(&t, "just", j);

	// decoding: 8 slow samples in flight on one thread, no watchdog; the stop comes while they are
	// all claimed and at most two are done, so finishing them takes longer than the 0.75 s grace
	pid_t a = th_spawn(&t, "slow", "--threads", "1", "--queue-depth", "8", "--timeout-ms", "0", NULL);
	RingStats st;
	for (int i = 0; i < 3000; i++) {
		ring_stats(t.r, &st, NULL, 0, NULL);
		if (st.writing + st.ready == 8 && st.ready <= 2 && st.writing > 0)
			break;
		sleep_s(0.01);
	}
	printf("stopping while decoding: %u slots being written, %u ready\n", st.writing, st.ready);
	CHECK(st.writing > 0);
	double t_decode = stop_timed(&t, "slow", a);

	// a full ring: 8 slots filled, the producer waits for space
	pid_t b = th_spawn(&t, "full", "--threads", "2", "--queue-depth", "1", "--timeout-ms", "0", NULL);
	// the slow loader's slots may fill the ring already: the stop must reach this one serving it
	th_wait_log(&t, "full", "serving ring", 1, 30);
	for (int i = 0; i < 600; i++) {
		ring_stats(t.r, &st, NULL, 0, NULL);
		if (st.ready == 8)
			break;
		sleep_s(0.1);
	}
	CHECK(st.ready == 8);
	double t_full = stop_timed(&t, "full", b);
	printf("SIGTERM to exit: just started %.2f s, waiting for the ring %.2f s, decoding (watchdog off) %.2f s, ring full "
	       "%.2f s\n",
	       t_just, t_wait, t_decode, t_full);
	CHECK(t_just < 2.0 && t_wait < 2.0 && t_decode < 2.0 && t_full < 2.0);
	CHECK(th_log_has(&t, "slow", "stopping on signal"));

	// nothing lost: a new loader adopts what the stopped ones left, every position arrives in order
	pid_t c = th_spawn(&t, "after", "--threads", "2", NULL);
	th_consume(&t, 12);
	th_stop(c);
	ring_stats(t.r, &st, NULL, 0, NULL);
	printf("%llu positions checked in order after the stops; %llu adopted\n", (unsigned long long)t.checked,
	       (unsigned long long)st.adopted);
	CHECK(t.checked == 12);
	th_teardown(&t);
	return 0;
}
