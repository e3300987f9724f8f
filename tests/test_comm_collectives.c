// Each shm collective with K = 2, 3, 4 forked ranks: all-gather, all-reduce (sum, average),
// reduce-scatter, broadcast, barrier, with payloads larger than a slot (several rounds), and
// the byte counters equal to the ring communication model.
#include <math.h>   // defines: fabs
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: memcmp

#include "test_comm_util.h" // defines: tc_run

enum { SLOT = 256, NA = 1000 }; // NA floats = 4000 bytes > SLOT: many rounds

static float val(int rank, size_t i)
{
	return (float)(rank * 1000 + (int)(i % 997)) * 0.25f;
}

static int fn(Comm *c, void *arg)
{
	(void)arg;
	const int K = c->world, me = c->rank;
	int bad = 0;
	// all-gather
	float send[NA], *recv = malloc(sizeof(float) * NA * K);
	for (size_t i = 0; i < NA; i++)
		send[i] = val(me, i);
	if (comm_allgather(c, send, recv, sizeof(send)) < 0)
		return 2;
	for (int r = 0; r < K; r++)
		for (size_t i = 0; i < NA; i++)
			bad |= recv[r * NA + i] != val(r, i);
	// all-reduce sum and average (rank-order float sums)
	float buf[NA];
	memcpy(buf, send, sizeof(buf));
	if (comm_allreduce_f32(c, buf, NA, COMM_SUM) < 0)
		return 3;
	for (size_t i = 0; i < NA; i++) {
		float acc = val(0, i);
		for (int r = 1; r < K; r++)
			acc += val(r, i);
		bad |= (buf[i] != acc) << 1;
	}
	memcpy(buf, send, sizeof(buf));
	if (comm_allreduce_f32(c, buf, NA, COMM_AVG) < 0)
		return 4;
	for (size_t i = 0; i < NA; i++) {
		float acc = val(0, i);
		for (int r = 1; r < K; r++)
			acc += val(r, i);
		bad |= (buf[i] != acc / (float)K) << 2;
	}
	// reduce-scatter: block q of rank r is val(r, q*n+i)
	const size_t n = 100;
	float rs_send[4 * 100], rs_recv[100];
	for (int q = 0; q < K; q++)
		for (size_t i = 0; i < n; i++)
			rs_send[q * n + i] = val(me, q * n + i);
	if (comm_reduce_scatter_f32(c, rs_send, rs_recv, n, COMM_SUM) < 0)
		return 5;
	for (size_t i = 0; i < n; i++) {
		float acc = val(0, me * n + i);
		for (int r = 1; r < K; r++)
			acc += val(r, me * n + i);
		bad |= (rs_recv[i] != acc) << 3;
	}
	// broadcast from the last rank
	float bc[NA];
	for (size_t i = 0; i < NA; i++)
		bc[i] = me == K - 1 ? val(7, i) : -1.0f;
	if (comm_broadcast(c, bc, sizeof(bc), K - 1) < 0)
		return 6;
	for (size_t i = 0; i < NA; i++)
		bad |= (bc[i] != val(7, i)) << 4;
	if (comm_barrier(c) < 0)
		return 7;
	// bytes: the ring model (DESIGN §7)
	double b = sizeof(send);
	bad |= (c->stats.bytes[COMM_ALLGATHER] != (K - 1) * b) << 5;
	bad |= (c->stats.bytes[COMM_ALLREDUCE] != 2 * (2.0 * (K - 1) * b / K)) << 6;
	bad |= (c->stats.bytes[COMM_REDUCE_SCATTER] != (K - 1) * n * 4.0) << 7;
	bad |= (c->stats.bytes[COMM_BROADCAST] != (me == K - 2 ? 0.0 : b)) << 8;
	bad |= (c->stats.calls[COMM_ALLREDUCE] != 2 || c->stats.calls[COMM_BARRIER] != 1) << 9;
	char line[256], want[256];
	comm_stats_format(&c->stats, line, sizeof(line));
	snprintf(want, sizeof(want), "allgather=1/%.0fB allreduce=2/%.0fB reduce_scatter=1/%.0fB", (K - 1) * b,
		 2 * (2.0 * (K - 1) * b / K), (K - 1) * n * 4.0);
	bad |= (strncmp(line, want, strlen(want)) != 0) << 10;
	free(recv);
	if (bad)
		printf("rank %d of %d: wrong results, mask 0x%x\n", me, K, bad);
	return bad ? 1 : 0;
}

int main(void)
{
	int fail = 0;
	for (int K = 2; K <= 4; K++) {
		int codes[4] = { 0 };
		if (tc_run(K, SLOT, 10.0, 30.0, fn, NULL, codes) < 0) {
			printf("K=%d: ranks did not finish in time\n", K);
			return 1;
		}
		for (int r = 0; r < K; r++)
			if (codes[r]) {
				printf("K=%d rank %d exit %d\n", K, r, codes[r]);
				fail = 1;
			}
		printf("K=%d: %s\n", K, fail ? "FAIL" : "all collectives correct");
	}
	printf(fail ? "FAIL: a collective gave a wrong result\n" : "all collectives correct for K=2,3,4\n");
	return fail;
}
