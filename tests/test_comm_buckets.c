// Bucketed gradient all-reduce with K=2 ranks: gradients marked ready in different orders on
// each rank are averaged exactly as one flat all-reduce would, bucket by bucket in index order;
// a step with a gradient never marked ready is an error.
#include <errno.h>  // defines: EINVAL
#include <string.h> // defines: memcmp

#include "comm_bucket.h"    // defines: comm_buckets_create, comm_buckets_ready, ...
#include "test_comm_util.h" // defines: tc_run

enum { NP = 5 };
static const size_t sizes[NP] = { 300, 7, 1000, 64, 129 };

static float g0(int rank, int p, size_t i)
{
	return (float)((rank + 1) * (p + 1)) * 0.5f + (float)i * 0.001f;
}

static int fn(Comm *c, void *arg)
{
	(void)arg;
	static float store[NP][1000];
	float *grads[NP];
	for (int p = 0; p < NP; p++)
		grads[p] = store[p];
	CommBuckets *b;
	if (comm_buckets_create(&b, c, NP, grads, sizes, 1600) < 0) // 400 floats: several buckets
		return 2;
	int bad = comm_buckets_count(b) < 3;
	for (int step = 0; step < 2; step++) {
		for (int p = 0; p < NP; p++)
			for (size_t i = 0; i < sizes[p]; i++)
				store[p][i] = g0(c->rank, p, i) * (step + 1);
		// rank 0 marks in backward order, rank 1 in forward order: buckets still go in order
		for (int k = 0; k < NP; k++)
			if (comm_buckets_ready(b, c->rank == 0 ? NP - 1 - k : k) < 0)
				return 3;
		if (comm_buckets_finish(b) < 0)
			return 4;
		for (int p = 0; p < NP; p++)
			for (size_t i = 0; i < sizes[p]; i++) {
				float want = (g0(0, p, i) * (step + 1) + g0(1, p, i) * (step + 1)) / 2.0f;
				bad |= (store[p][i] != want) << 1;
			}
	}
	bad |= (comm_buckets_ready(b, NP) != -EINVAL) << 2; // no such parameter
	bad |= (comm_buckets_ready(b, 0) != 0 || comm_buckets_ready(b, 0) != -EINVAL) << 3; // twice
	// parameter 0 is the last bucket: the others were never marked, so the step is incomplete
	bad |= (comm_buckets_finish(b) != -EINVAL) << 4;
	comm_buckets_free(b);
	if (bad)
		printf("rank %d: mask 0x%x\n", c->rank, bad);
	return bad ? 1 : 0;
}

int main(void)
{
	int codes[2] = { 0 };
	if (tc_run(2, 4096, 10.0, 30.0, fn, NULL, codes) < 0)
		return 1;
	int fail = codes[0] || codes[1];
	printf(fail ? "FAIL: bucketed all-reduce (exit codes %d %d)\n" : "bucketed all-reduce averages every gradient\n",
	       codes[0], codes[1]);
	return fail;
}
