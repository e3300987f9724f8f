// Bucketed gradient all-reduce with K=2 ranks over one flat buffer: groups reported in backward
// order (adjacent, descending) form buckets that are contiguous ranges reduced in place, and the
// result is the average of every element, as one flat all-reduce gives; a group out of order or a
// step with a group never reported is an error. Overlap: a bucket's all-reduce runs on the comm
// thread, so reporting returns at once while the peer is still busy (its "backward" sleeps), and
// only finish waits for it.
#include <errno.h>  // defines: EINVAL
#include <string.h> // defines: memcmp
#include <time.h>   // defines: clock_gettime, nanosleep

#include "test_comm_util.h" // defines: tc_run, tc_tensor, tc_shared
#include "proc_time.h"      // defines: time_mono_s

enum { NG = 5, NP = 300 + 7 + 1000 + 64 + 129 };
static const int64_t LEN[NG] = {129, 64, 1000, 7, 300}; // backward order: from the buffer's end down

typedef struct {
	double ready_s[2], finish_s[2];
} Shared;

static float g0(int rank, int64_t i)
{
	return (float)((rank + 1) * (i % 13 + 1)) * 0.5f + (float)i * 0.001f;
}

static int fn(Comm *c, void *arg)
{
	Shared *sh = arg;
	const int me = comm_rank(c);
	static float store[NP];
	int64_t off[NG], end = NP;
	for (int k = 0; k < NG; k++)
		end = off[k] = end - LEN[k];
	KernCtx *s;
	KTensor g = tc_tensor(store, KDT_F32, NP);
	CommBuckets *b;
	if (kern_ctx_create_cpu(&s, 1) < 0 || comm_buckets_create(&b, c, s, &g, off, LEN, NG, 1600) < 0) // 400 floats
		return 2;
	int bad = comm_buckets_count(b) < 3;
	for (int step = 0; step < 2; step++) {
		for (int64_t i = 0; i < NP; i++)
			store[i] = g0(me, i) * (float)(step + 1);
		double t0 = time_mono_s();
		for (int k = 0; k < NG; k++) {
			if (me == 1 && step == 1) { // a slow backward on rank 1: rank 0 must not wait for it here
				struct timespec ts = {0, 60 * 1000 * 1000};
				nanosleep(&ts, NULL);
			}
			if (comm_buckets_ready(b, s, off[k], LEN[k]) < 0)
				return 3;
		}
		double t1 = time_mono_s();
		if (comm_buckets_finish(b, s) < 0)
			return 4;
		if (step == 1) {
			sh->ready_s[me] = t1 - t0;
			sh->finish_s[me] = time_mono_s() - t1;
		}
		for (int64_t i = 0; i < NP; i++) {
			float want = (g0(0, i) * (float)(step + 1) + g0(1, i) * (float)(step + 1)) / 2.0f;
			bad |= (store[i] != want) << 1;
		}
	}
	bad |= (comm_buckets_ready(b, s, off[1], LEN[1]) != -EINVAL) << 2; // not the next group
	bad |= (comm_buckets_ready(b, s, off[0], LEN[0]) != 0) << 3;
	// the other groups were never reported, so the step is incomplete
	bad |= (comm_buckets_finish(b, s) != -EINVAL) << 4;
	int64_t gap[2] = {NP - 10, NP - 30}, glen[2] = {10, 10}; // not adjacent
	CommBuckets *b2;
	bad |= (comm_buckets_create(&b2, c, s, &g, gap, glen, 2, 1600) != -EINVAL) << 5;
	comm_buckets_free(b);
	kern_ctx_destroy(s);
	if (bad)
		printf("rank %d: mask 0x%x\n", me, bad);
	return bad ? 1 : 0;
}

int main(void)
{
	int codes[2] = {0};
	Shared *sh = tc_shared(sizeof(Shared));
	if (!sh || tc_run(2, 4096, 10.0, 30.0, fn, sh, codes) < 0)
		return 1;
	int fail = codes[0] || codes[1];
	printf("bucketed all-reduce %s (exit codes %d %d)\n", fail ? "FAILED" : "averages every gradient", codes[0],
	       codes[1]);
	// rank 0 reported its five groups while rank 1 was sleeping 5 x 60 ms: without a comm thread
	// its first full bucket's reduction would have held it there
	int overlap = sh->ready_s[0] < 0.1 && sh->finish_s[0] > 0.15;
	printf("%s rank 0 reported its groups in %.3f s and waited %.3f s in finish while rank 1 ran backward\n",
	       overlap ? "ok  " : "FAIL", sh->ready_s[0], sh->finish_s[0]);
	return fail || !overlap;
}
