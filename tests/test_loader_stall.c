// The stall ticker counts the time the process was stopped (SIGSTOP until a child's SIGCONT)
// within a span, and only within it: nothing for a span of live work or sleep, nothing for a span
// that ended before the stop, about the stop's length for a span around it.
#include "ld_stall.h"  // defines: ld_stall_start, ld_stall_paused_ns, LD_STALL_TICK_NS
#include "proc_time.h" // defines: time_mono_ns
#include "testutil.h"  // defines: CHECK

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STOP_NS 600000000ull // how long the child leaves this process stopped

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(void)
{
	alarm(30);
	CHECK(ld_stall_paused_ns(0, time_mono_ns()) == 0); // no ticker yet: nothing known, no wait
	CHECK(ld_stall_start() == 0);
	CHECK(ld_stall_start() == 0); // once per process

	// live: a sleep and a busy loop are not pauses
	uint64_t a0 = time_mono_ns();
	sleep_ns(3 * LD_STALL_TICK_NS);
	while (time_mono_ns() - a0 < 6 * LD_STALL_TICK_NS)
		;
	uint64_t a1 = time_mono_ns();
	uint64_t live = ld_stall_paused_ns(a0, a1);
	printf("live span of %.0f ms: paused %.0f ms\n", (a1 - a0) / 1e6, live / 1e6);
	CHECK(live == 0);

	// stopped: the child resumes this process after STOP_NS
	uint64_t b0 = time_mono_ns();
	pid_t child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		sleep_ns(STOP_NS);
		kill(getppid(), SIGCONT);
		_exit(0);
	}
	kill(getpid(), SIGSTOP);
	uint64_t b1 = time_mono_ns();
	int st;
	CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st));
	uint64_t stopped = ld_stall_paused_ns(b0, b1);
	printf("stopped span of %.0f ms: paused %.0f ms\n", (b1 - b0) / 1e6, stopped / 1e6);
	CHECK(stopped + 2 * LD_STALL_TICK_NS >= STOP_NS && stopped <= b1 - b0);

	// the same pause lies outside a span that ended before it, and outside one after it
	CHECK(ld_stall_paused_ns(a0, a1) == 0);
	uint64_t c0 = time_mono_ns();
	sleep_ns(2 * LD_STALL_TICK_NS);
	CHECK(ld_stall_paused_ns(c0, time_mono_ns()) == 0);
	return 0;
}
