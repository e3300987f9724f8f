// A loaderd stopped (SIGSTOP) for longer than its --timeout-ms while it decodes loses no sample:
// when it resumes, a sample whose watchdog ran out only because the process was not running is
// decoded again instead of being published as a "timeout" error slot, so every position arrives
// bit-identical to the in-process decode of (seed, g), as in a run nobody paused. A budget the
// decoder cannot meet on a live process still ends in "timeout" error slots.
#include "loader.h"              // defines: LD_ERR_TIMEOUT
#include "proc_time.h"           // defines: time_mono_s
#include "test_loader_harness.h" // defines: Th, th_setup_opts, th_spawn, th_consume, ...

#include <time.h>

#define PAUSES 3

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

// a watchdog well above what a sample takes here (a sanitizer build, a busy machine): 5 times the
// slowest in-process decode of the dataset's samples, at least 300 ms
static int timeout_for(Th *t)
{
	double slowest = 0;
	char err[512];
	for (uint64_t g = 0; g < 6; g++) {
		LdPlan plan;
		double t0 = time_mono_s();
		CHECK(ld_sample_load(t->d, &t->files, t->m, g, &t->p, &plan, t->expect, err, sizeof(err)) == 0);
		double took = time_mono_s() - t0;
		slowest = took > slowest ? took : slowest;
	}
	int ms = (int)(5000 * slowest);
	printf("slowest sample decodes in %.0f ms in-process\n", 1000 * slowest);
	return ms < 300 ? 300 : ms;
}

// waits until the loader has a claimed position in hand (it is decoding), then stops it for
// seconds and lets it go on
static void pause_while_decoding(const Th *t, pid_t pid, double seconds)
{
	RingStats st;
	for (int i = 0; i < 500; i++) {
		ring_stats(t->r, &st, NULL, 0, NULL);
		if (st.writing > 0)
			break;
		sleep_s(0.002);
	}
	CHECK(st.writing > 0);
	CHECK(kill(pid, SIGSTOP) == 0);
	sleep_s(seconds);
	CHECK(kill(pid, SIGCONT) == 0);
}

// consumes positions until `until`: each is a timeout error slot or the in-process decode
static uint64_t consume_hung(Th *t, uint64_t until)
{
	size_t bytes = (size_t)TH_T * TH_HW * TH_HW * 3;
	char err[512];
	uint64_t timeouts = 0;
	while (ring_consumer_position(t->c) < until) {
		RingSlot s;
		CHECK(ring_consumer_acquire(t->c, &s, 30000) == 0);
		if (s.flags & RING_SLOT_ERROR) {
			if (s.error != LD_ERR_TIMEOUT)
				fprintf(stderr, "position %llu: error %d, not a timeout\n",
					(unsigned long long)s.position, s.error);
			CHECK(s.error == LD_ERR_TIMEOUT);
			timeouts++;
		} else {
			LdPlan plan;
			CHECK(ld_sample_load(t->d, &t->files, t->m, s.position, &t->p, &plan, t->expect, err,
					     sizeof(err)) == 0);
			CHECK(!memcmp(s.payload, t->expect, bytes));
		}
		CHECK(ring_consumer_release(t->c, &s) == 0);
	}
	return timeouts;
}

static const Th *dump_on_exit; // a failed check shows the loader's log before the folder goes

static void dump_log(void)
{
	if (dump_on_exit)
		th_dump_logs(dump_on_exit, "paused");
}

int main(void)
{
	alarm(120);
	Th t;
	// slowish samples (one keyframe in 120 frames): a stop lands in the middle of a decode
	LdFixtureOpts slow = {.videos = 1,
			      .chunks_per_video = 1,
			      .width = 320,
			      .height = 180,
			      .fps = 24,
			      .frames_per_chunk = 120,
			      .gop = 120,
			      .texture = 60};
	th_setup_opts(&t, "ldsigstop", &slow);
	dump_on_exit = &t;
	atexit(dump_log); // runs before the harness removes the folder

	int timeout_ms = timeout_for(&t);
	double pause_s = 3 * timeout_ms / 1000.0;
	char timeout[16];
	snprintf(timeout, sizeof timeout, "%d", timeout_ms);
	pid_t a = th_spawn(&t, "paused", "--workers", "1", "--queue-depth", "2", "--timeout-ms", timeout, NULL);
	CHECK(th_wait_log(&t, "paused", "serving ring", 1, 30) == 1);
	double t0 = time_mono_s();
	for (int k = 0; k < PAUSES; k++) {
		th_consume(&t, 2 * (uint64_t)k + 1); // frees slots: the loader is decoding when the stop comes
		pause_while_decoding(&t, a, pause_s);
	}
	th_consume(&t, 2 * PAUSES + 2);
	double took = time_mono_s() - t0;
	RingStats st;
	ring_stats(t.r, &st, NULL, 0, NULL);
	int again = th_log_count(&t, "paused", "decoding it again");
	printf("%llu positions checked over %d stops of %.1f s (--timeout-ms %d) in %.1f s: %llu error slots, "
	       "%d samples decoded again\n",
	       (unsigned long long)t.checked, PAUSES, pause_s, timeout_ms, took, (unsigned long long)st.errors, again);
	if (st.errors || !again)
		th_dump_logs(&t, "paused");
	CHECK(t.errors == 0 && st.errors == 0); // th_consume checked every payload against (seed, g)
	CHECK(again >= 1);
	CHECK(th_log_count(&t, "paused", "timeout (code") == 0);
	th_stop(a);
	dump_on_exit = NULL;
	ring_stats(t.r, &st, NULL, 0, NULL);
	th_consume(&t, ring_consumer_position(t.c) + st.ready); // what the stopped loader finished

	// a live loader whose decoder cannot meet a 1 ms budget: timeouts as before, nothing redone
	pid_t h = th_spawn(&t, "hung", "--workers", "1", "--queue-depth", "2", "--timeout-ms", "1", NULL);
	uint64_t timeouts = consume_hung(&t, ring_consumer_position(t.c) + 6);
	th_stop(h);
	printf("a 1 ms watchdog on a live loader: %llu of 6 positions timed out\n", (unsigned long long)timeouts);
	if (timeouts < 5 || !th_log_has(&t, "hung", "watchdog: deadline passed"))
		th_dump_logs(&t, "hung");
	CHECK(timeouts >= 5 && th_log_has(&t, "hung", "watchdog: deadline passed"));
	th_teardown(&t);
	return 0;
}
