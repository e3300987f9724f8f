// Each shm collective with K = 2, 3, 4 forked ranks: the data plane on the CPU backend's tensors
// (all-gather of any dtype, all-reduce sum and average in f32 and bf16, reduce-scatter) and the
// control channel (all-gather, f64 all-reduce, broadcast, barrier), with payloads larger than a
// slot (several rounds), and the data plane's byte counters equal to the ring model.
#include <math.h>   // defines: fabs
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: memcmp

#include "test_comm_util.h" // defines: tc_run, tc_tensor

enum { SLOT = 256, NA = 1000 }; // NA floats = 4000 bytes > SLOT: many rounds

static float val(int rank, size_t i)
{
	return (float)(rank * 1000 + (int)(i % 997)) * 0.25f;
}

static int data_plane(Comm *c, KernCtx *s)
{
	const int K = comm_world(c), me = comm_rank(c);
	int bad = 0;
	static float send[NA], buf[NA], rs_send[4 * 100], rs_recv[100];
	static uint16_t hb[NA];
	float *recv = malloc(sizeof(float) * NA * K);
	for (size_t i = 0; i < NA; i++)
		send[i] = val(me, i);
	KTensor ts = tc_tensor(send, KDT_F32, NA), tr = tc_tensor(recv, KDT_F32, (int64_t)NA * K);
	if (comm_allgather(c, &ts, &tr, s) < 0)
		return 1 << 20;
	for (int r = 0; r < K; r++)
		for (size_t i = 0; i < NA; i++)
			bad |= recv[r * NA + i] != val(r, i);
	// all-reduce sum and average (rank-order float sums)
	KTensor tb = tc_tensor(buf, KDT_F32, NA);
	memcpy(buf, send, sizeof(buf));
	if (comm_allreduce(c, &tb, COMM_SUM, s) < 0)
		return 1 << 21;
	for (size_t i = 0; i < NA; i++) {
		float acc = val(0, i);
		for (int r = 1; r < K; r++)
			acc += val(r, i);
		bad |= (buf[i] != acc) << 1;
	}
	memcpy(buf, send, sizeof(buf));
	if (comm_allreduce(c, &tb, COMM_AVG, s) < 0)
		return 1 << 22;
	for (size_t i = 0; i < NA; i++) {
		float acc = val(0, i);
		for (int r = 1; r < K; r++)
			acc += val(r, i);
		bad |= (buf[i] != acc / (float)K) << 2;
	}
	// bf16: widened, summed in f32 in rank order, rounded once
	for (size_t i = 0; i < NA; i++)
		hb[i] = kern_bf16_from_f32(val(me, i) * 0.01f);
	KTensor th = tc_tensor(hb, KDT_BF16, NA);
	if (comm_allreduce(c, &th, COMM_SUM, s) < 0)
		return 1 << 23;
	for (size_t i = 0; i < NA; i++) {
		float acc = kern_f32_from_bf16(kern_bf16_from_f32(val(0, i) * 0.01f));
		for (int r = 1; r < K; r++)
			acc += kern_f32_from_bf16(kern_bf16_from_f32(val(r, i) * 0.01f));
		bad |= (hb[i] != kern_bf16_from_f32(acc)) << 3;
	}
	// reduce-scatter: block q of rank r is val(r, q*n+i)
	const size_t n = 100;
	for (int q = 0; q < K; q++)
		for (size_t i = 0; i < n; i++)
			rs_send[q * n + i] = val(me, q * n + i);
	KTensor rss = tc_tensor(rs_send, KDT_F32, (int64_t)(K * n)), rsr = tc_tensor(rs_recv, KDT_F32, (int64_t)n);
	if (comm_reduce_scatter(c, &rss, &rsr, COMM_SUM, s) < 0)
		return 1 << 24;
	for (size_t i = 0; i < n; i++) {
		float acc = val(0, me * n + i);
		for (int r = 1; r < K; r++)
			acc += val(r, me * n + i);
		bad |= (rs_recv[i] != acc) << 4;
	}
	// bytes: the ring model (DESIGN §7)
	const CommStats *st = comm_stats(c);
	double b = sizeof(send);
	bad |= (st->bytes[COMM_ALLGATHER] != (K - 1) * b) << 5;
	bad |= (st->bytes[COMM_ALLREDUCE] != 2 * (2.0 * (K - 1) * b / K) + 2.0 * (K - 1) * (NA * 2.0) / K) << 6;
	bad |= (st->bytes[COMM_REDUCE_SCATTER] != (K - 1) * n * 4.0) << 7;
	bad |= (st->calls[COMM_ALLREDUCE] != 3) << 8;
	free(recv);
	return bad;
}

static int control(Comm *c)
{
	const int K = comm_world(c), me = comm_rank(c);
	int bad = 0;
	static char recv[4 * 3000];
	char send[3000];
	for (int i = 0; i < 3000; i++)
		send[i] = (char)(me * 7 + i);
	if (comm_ctl_allgather(c, send, recv, sizeof send) < 0)
		return 1 << 25;
	for (int r = 0; r < K; r++)
		for (int i = 0; i < 3000; i++)
			bad |= (recv[r * 3000 + i] != (char)(r * 7 + i)) << 9;
	double d[600];
	for (int i = 0; i < 600; i++)
		d[i] = me + i * 0.1;
	if (comm_ctl_allreduce(c, d, 600, COMM_AVG) < 0)
		return 1 << 26;
	for (int i = 0; i < 600; i++) {
		double acc = 0 + i * 0.1;
		for (int r = 1; r < K; r++)
			acc += r + i * 0.1;
		bad |= (d[i] != acc / K) << 10;
	}
	float bc[NA];
	for (size_t i = 0; i < NA; i++)
		bc[i] = me == K - 1 ? val(7, i) : -1.0f;
	if (comm_ctl_broadcast(c, bc, sizeof(bc), K - 1) < 0)
		return 1 << 27;
	for (size_t i = 0; i < NA; i++)
		bad |= (bc[i] != val(7, i)) << 11;
	if (comm_ctl_barrier(c) < 0)
		return 1 << 28;
	// the control channel is not data-plane traffic
	bad |= (comm_stats(c)->calls[COMM_ALLGATHER] != 1) << 12;
	char line[256], want[256];
	comm_stats_format(comm_stats(c), line, sizeof(line));
	snprintf(want, sizeof(want), "allgather=1/%.0fB allreduce=3/", (K - 1) * (double)(NA * 4));
	bad |= (strncmp(line, want, strlen(want)) != 0) << 13;
	return bad;
}

static int fn(Comm *c, void *arg)
{
	(void)arg;
	KernCtx *s;
	if (kern_ctx_create_cpu(&s, 1) < 0)
		return 2;
	int bad = data_plane(c, s);
	bad |= control(c);
	kern_ctx_destroy(s);
	if (bad)
		printf("rank %d of %d: wrong results, mask 0x%x\n", comm_rank(c), comm_world(c), bad);
	return bad ? 1 : 0;
}

int main(void)
{
	int fail = 0;
	for (int K = 2; K <= 4; K++) {
		int codes[4] = {0};
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
