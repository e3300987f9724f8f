// A rank that dies (exits before a collective), leaves (closes early), never joins, or hangs
// alive makes every other rank fail with a clear error within its timeout instead of hanging.
#include <errno.h>  // defines: EPIPE, ETIMEDOUT
#include <stdlib.h> // defines: atoi
#include <string.h> // defines: strstr, strncpy
#include <time.h>   // defines: clock_gettime

#include "test_comm_util.h" // defines: tc_run, tc_shared
#include "proc_time.h"      // defines: time_mono_s

typedef struct {
	int mode; // 0 exit, 1 close early, 2 hang alive
	int victim;
	char err[4][256]; // each rank's comm_error
	int rc[4];
	double secs[4];
	int done; // ranks that got their error
} Shared;

static int fn(Comm *c, void *arg)
{
	Shared *s = arg;
	float x[64] = {0};
	KTensor tx = tc_tensor(x, KDT_F32, 64);
	KernCtx *k;
	if (kern_ctx_create_cpu(&k, 1) < 0 || comm_allreduce(c, &tx, COMM_SUM, k) < 0) // everyone alive here
		return 2;
	if (comm_rank(c) == s->victim) {
		if (s->mode == 0)
			_exit(3); // dies without closing
		if (s->mode == 1)
			return 0; // closes its communicator and leaves
		// alive but never reaches the collective; leaves once the others have given up
		for (int i = 0; i < 3000 && __atomic_load_n(&s->done, __ATOMIC_SEQ_CST) < comm_world(c) - 1; i++) {
			struct timespec ts = {0, 10 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		return 0;
	}
	double t0 = time_mono_s();
	int rc = comm_allreduce(c, &tx, COMM_SUM, k);
	s->secs[comm_rank(c)] = time_mono_s() - t0;
	s->rc[comm_rank(c)] = rc;
	strncpy(s->err[comm_rank(c)], comm_error(c), sizeof(s->err[0]) - 1);
	__atomic_fetch_add(&s->done, 1, __ATOMIC_SEQ_CST);
	return rc < 0 ? 0 : 1; // success here would be wrong
}

static int scenario(int mode, int K, int victim, double timeout_s, int want_err, const char *want_text)
{
	Shared *s = tc_shared(sizeof(Shared));
	s->mode = mode;
	s->victim = victim;
	int codes[4] = {0};
	int rc = tc_run(K, 4096, timeout_s, timeout_s + 20.0, fn, s, codes);
	int fail = rc < 0;
	for (int r = 0; r < K; r++) {
		if (r == victim)
			continue;
		int ok = codes[r] == 0 && s->rc[r] == -want_err && s->secs[r] < timeout_s + 2.0;
		// the rank that noticed names the victim; the others see the group aborted for it
		ok = ok && strstr(s->err[r], want_text) != NULL;
		printf("mode %d rank %d: rc %d after %.2fs: %s%s\n", mode, r, s->rc[r], s->secs[r], s->err[r],
		       ok ? "" : "  <-- wrong");
		fail |= !ok;
	}
	return fail;
}

int main(void)
{
	int fail = 0;
	fail |= scenario(0, 4, 2, 10.0, EPIPE, "rank 2");    // exits: noticed in ~20 ms, not 10 s
	fail |= scenario(1, 2, 1, 10.0, EPIPE, "rank 1");    // closes early
	fail |= scenario(2, 3, 0, 1.0, ETIMEDOUT, "rank 0"); // alive but stuck: the timeout names it
	printf(fail ? "FAIL: a dead, departed or stuck rank was not reported\n"
		    : "dead ranks reported without hanging\n");
	return fail;
}
