// Two loaderd processes fill a ring while this consumer checks every clip against the decode
// library in-process; one loader is SIGKILLed mid-run and restarted, and nothing is lost:
// every position arrives once, in order, bit-identical to (seed, g). Missing-file positions
// arrive as error slots with the same code the library gives.
#include "test_loader_harness.h" // defines: Th, th_setup, th_spawn, th_consume, ...

int main(void)
{
	Th t;
	th_setup(&t, "ldkill");
	// one chunk is gone: its samples must come back as "missing" error slots
	char gone[400];
	snprintf(gone, sizeof(gone), "%s/chunks/vid01_1.mp4", t.dir);
	CHECK(unlink(gone) == 0);
	pid_t a = th_spawn(&t, "a", "--threads", "1", NULL);
	pid_t b = th_spawn(&t, "b", "--threads", "2", "--queue-depth", "2", NULL);
	th_consume(&t, 30);
	th_kill(a);
	th_consume(&t, 60);
	a = th_spawn(&t, "a2", "--threads", "1", NULL);
	th_consume(&t, 100);
	th_stop(a);
	th_stop(b);
	printf("%llu positions checked (%llu error slots), one loader killed and restarted\n",
	       (unsigned long long)t.checked, (unsigned long long)t.errors);
	if (t.errors == 0 || !th_log_has(&t, "b", "missing"))
		th_dump_logs(&t, "b");
	CHECK(t.checked == 100 && t.errors > 0);
	RingStats st;
	ring_stats(t.r, &st, NULL, 0, NULL);
	printf("ring counters: produced %llu, errors %llu, adopted %llu\n", (unsigned long long)st.produced,
	       (unsigned long long)st.errors, (unsigned long long)st.adopted);
	CHECK(st.errors >= t.errors); // what ringstat shows
	CHECK(th_log_has(&t, "b", "config:") || th_log_has(&t, "a", "config:"));
	th_teardown(&t);
	return 0;
}
