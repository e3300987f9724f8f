// The pread path (--io pread, as when io_uring is refused) gives the same clips, and a loader
// added and removed (SIGTERM) mid-run finishes its slots and exits 0 with nothing lost; the
// added one asks for NUMA node 0 and says once what it did.
#include "test_loader_harness.h" // defines: Th, th_setup, th_spawn, th_consume, ...

int main(void)
{
	Th t;
	th_setup(&t, "ldpr");
	pid_t a = th_spawn(&t, "a", "--io", "pread", "--threads", "1", NULL);
	th_consume(&t, 20);
	pid_t b = th_spawn(&t, "b", "--threads", "1", "--queue-depth", "3", "--numa-node", "0", NULL);
	th_consume(&t, 50);
	th_stop(b); // removed mid-run: finishes what it claimed, detaches
	th_consume(&t, 80);
	th_stop(a);
	if (!th_log_has(&t, "a", "reading with pread"))
		th_dump_logs(&t, "a");
	CHECK(th_log_has(&t, "a", "reading with pread"));
	CHECK(th_log_has(&t, "b", "stopping on signal"));
	CHECK(th_log_has(&t, "b", "NUMA node")); // one line either way: pinned, or one node here
	printf("%llu positions checked with a pread loader; a second loader joined and left\n",
	       (unsigned long long)t.checked);
	th_teardown(&t);
	return 0;
}
