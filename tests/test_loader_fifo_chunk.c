// A chunk path that is a FIFO (a hostile manifest, or a chunk replaced in the dataset folder)
// never blocks a reader: loaderd's io_uring and pread readers and the in-process decode
// (clipdump, eval) publish the positions that need it as "missing" error slots, naming the path,
// and every other position as before; nothing waits past the test's alarm.
#include "loader.h"              // defines: LD_ERR_MISSING
#include "test_loader_harness.h" // defines: Th, th_setup, th_spawn, th_consume, ...

#include <sys/stat.h>

int main(void)
{
	Th t;
	th_setup(&t, "ldfifo");
	const ManifestChunk *c = manifest_chunk(t.m, 0);
	char full[600];
	CHECK(manifest_resolve(t.m, manifest_string(t.m, c->path_off), full, sizeof full) == 0);
	CHECK(unlink(full) == 0 && mkfifo(full, 0644) == 0);
	alarm(120); // the old readers blocked in open() for good: SIGALRM ends the test as a failure

	char err[512];
	uint8_t *buf = NULL;
	size_t cap = 0, size = 0;
	int rc = ld_file_read(full, 0, 0, 0, &buf, &cap, &size, err, sizeof err);
	printf("in-process read of the FIFO: %d: %s\n", rc, err);
	CHECK(rc == -LD_ERR_MISSING && strstr(err, full) && strstr(err, "not a regular file (a FIFO)"));
	free(buf);

	pid_t a = th_spawn(&t, "a", "--threads", "2", NULL);
	th_consume(&t, 40); // checks every slot against the in-process load, errors included
	th_stop(a);
	pid_t b = th_spawn(&t, "b", "--io", "pread", "--threads", "1", NULL);
	th_consume(&t, 80);
	th_stop(b);
	alarm(0);
	printf("%llu positions, %llu of them error slots for the FIFO chunk\n", (unsigned long long)t.checked,
	       (unsigned long long)t.errors);
	CHECK(t.errors > 0);
	CHECK(th_log_has(&t, "a", "not a regular file") || th_log_has(&t, "a", "missing"));
	unlink(full);
	th_teardown(&t);
	printf("ok: a FIFO chunk gives error slots, no reader blocks\n");
	return 0;
}
