// A rank is dead when its pid is gone or now names another process: comm_shm records each
// rank's process start time next to its pid (common/proc_ident, as the ring does), so a pid
// the system gave to a new process reads as dead at once instead of keeping the group waiting
// until the timeout, and a rank whose pid was reused can be attached again.
#include "comm.h"            // defines: comm_shm_create, comm_shm_attach, comm_shm_unlink
#include "proc_time.h"       // defines: time_mono_s
#include "comm_shm_layout.h" // defines: struct ShmHeader
#include "proc_ident.h"      // defines: proc_start_time, proc_is_dead
#include "testutil.h"        // defines: CHECK, CHECK_EQ_INT

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

int main(void)
{
	// the helper: this process is alive with its start time, not with another one
	uint64_t me = proc_start_time(getpid()), parent = proc_start_time(getppid());
	CHECK(me > 0 && parent > 0);
	CHECK(!proc_is_dead(getpid(), me) && !proc_is_dead(getpid(), 0));
	CHECK(proc_is_dead(getppid(), parent + 1)); // the parent's pid "reused" by another process
	pid_t gone = fork();
	if (gone == 0)
		_exit(0);
	CHECK(waitpid(gone, NULL, 0) == gone);
	CHECK(proc_is_dead(gone, 0) && proc_is_dead(-1, 0));

	char name[64], path[128];
	snprintf(name, sizeof name, "avclip-test-reuse-%d", (int)getpid());
	snprintf(path, sizeof path, "/dev/shm/%s", name);
	CHECK_EQ_INT(comm_shm_create(name, 2, 4096), 0);
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	struct ShmHeader *h = mmap(NULL, HDR_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	CHECK(h != MAP_FAILED);

	// rank 1's pid now belongs to a live process that is not rank 1 (its start time differs)
	atomic_store(&h->start_times[1], parent + 1);
	atomic_store(&h->pids[1], getppid());
	Comm *c;
	CHECK_EQ_INT(comm_shm_attach(name, 0, 20.0, &c), 0);
	double x[16] = {0};
	double t0 = time_mono_s();
	int rc = comm_ctl_allreduce(c, x, 16, COMM_SUM);
	double t = time_mono_s() - t0;
	printf("collective with a reused pid as rank 1: rc %d after %.2f s: %s\n", rc, t, comm_error(c));
	CHECK(rc < 0 && t < 2.0 && strstr(comm_error(c), "rank 1") && strstr(comm_error(c), "exited"));
	comm_close(c);

	// a rank whose recorded pid was reused attaches again; one held by its live process does not
	CHECK_EQ_INT(comm_shm_create(name, 2, 4096), 0);
	fd = open(path, O_RDWR);
	munmap(h, HDR_BYTES);
	h = mmap(NULL, HDR_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	atomic_store(&h->start_times[0], parent + 1);
	atomic_store(&h->pids[0], getppid());
	CHECK_EQ_INT(comm_shm_attach(name, 0, 5.0, &c), 0);
	Comm *again;
	CHECK_EQ_INT(comm_shm_attach(name, 0, 5.0, &again), -EBUSY);
	comm_close(c);
	munmap(h, HDR_BYTES);
	comm_shm_unlink(name);
	printf("a reused pid reads as a dead rank; its rank can be attached again\n");
	return 0;
}
