// Helpers for the comm tests: run a function in K forked rank processes over a fresh shm
// segment, with a deadline after which the children are killed and the test fails; host arrays
// as the CPU backend's device tensors.
#ifndef TESTS_TEST_COMM_UTIL_H
#define TESTS_TEST_COMM_UTIL_H
// defines: tc_segment_name, tc_run, tc_shared, tc_tensor

#include <signal.h>   // defines: kill, SIGKILL
#include <stdio.h>    // defines: printf, snprintf
#include <sys/mman.h> // defines: mmap
#include <sys/wait.h> // defines: waitpid
#include <time.h>     // defines: nanosleep
#include <unistd.h>   // defines: fork, getpid, _exit

#include "comm.h" // defines: comm_shm_create, comm_shm_attach, comm_shm_unlink

typedef int (*TcRankFn)(Comm *c, void *arg);

// n elements of dt at data: on the CPU backend device memory is host memory
static inline KTensor tc_tensor(void *data, KDtype dt, int64_t n)
{
	return kern_tensor_make(data, dt, 1, &n);
}

static inline void tc_segment_name(char *buf, size_t len, const char *tag)
{
	snprintf(buf, len, "avclip-test-%s-%d", tag, (int)getpid());
}

// zero-filled memory shared with the forked ranks
static inline void *tc_shared(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

// Forks world ranks; rank r attaches (timeout_s) and returns fn's value as its exit code
// (attach failure: 90). codes[r] gets each exit code (or 128+signal). Returns -1 when the
// children did not all finish within deadline_s (they are killed), else 0.
static inline int tc_run(int world, size_t slot, double timeout_s, double deadline_s, TcRankFn fn, void *arg,
			 int *codes)
{
	char name[64];
	tc_segment_name(name, sizeof(name), "run");
	if (comm_shm_create(name, world, slot) < 0) {
		printf("comm_shm_create failed\n");
		return -1;
	}
	pid_t pids[COMM_SHM_MAX_WORLD];
	for (int r = 0; r < world; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			Comm *c;
			if (comm_shm_attach(name, r, timeout_s, &c) < 0)
				_exit(90);
			int rc = fn(c, arg);
			comm_close(c);
			_exit(rc);
		}
	}
	int left = world, timed_out = 0;
	for (int ticks = 0; left > 0; ticks++) {
		for (int r = 0; r < world; r++) {
			int st;
			if (pids[r] > 0 && waitpid(pids[r], &st, WNOHANG) == pids[r]) {
				codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				pids[r] = -1;
				left--;
			}
		}
		if (left > 0 && ticks * 0.01 > deadline_s) {
			for (int r = 0; r < world; r++)
				if (pids[r] > 0)
					kill(pids[r], SIGKILL);
			timed_out = 1;
			deadline_s = 1e9;
		}
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	comm_shm_unlink(name);
	return timed_out ? -1 : 0;
}

#endif
