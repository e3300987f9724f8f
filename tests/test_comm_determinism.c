// The shm all-reduce and reduce-scatter are deterministic: two separate runs of K=4 ranks give
// bit-identical results on every rank, equal to the float sum in rank order 0..K−1.
#include <stdint.h> // defines: uint64_t
#include <string.h> // defines: memcmp

#include "test_comm_util.h" // defines: tc_run, tc_shared

enum { K = 4, N = 20000 };

typedef struct {
	float out[2][K][N]; // (run, rank, N)
	float rs[2][K][N / K];
	int run;
} Shared;

// values over many magnitudes so that the summation order changes the rounding
static float input(int rank, int i)
{
	uint64_t x = (uint64_t)(rank * N + i + 1) * 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	double m = (double)(x % 100000) / 1000.0 - 50.0;
	int e = (int)(x >> 40) % 30 - 15;
	return (float)(m * (double)(1 << (e > 0 ? e : 0)) / (double)(1 << (e < 0 ? -e : 0)));
}

static int fn(Comm *c, void *arg)
{
	Shared *s = arg;
	const int me = comm_rank(c);
	KernCtx *k;
	if (kern_ctx_create_cpu(&k, 1) < 0)
		return 4;
	float *buf = s->out[s->run][me];
	for (int i = 0; i < N; i++)
		buf[i] = input(me, i);
	KTensor tb = tc_tensor(buf, KDT_F32, N);
	if (comm_allreduce(c, &tb, COMM_SUM, k) < 0)
		return 2;
	static float send[N];
	for (int i = 0; i < N; i++)
		send[i] = input(me, i);
	KTensor ts = tc_tensor(send, KDT_F32, N), tr = tc_tensor(s->rs[s->run][me], KDT_F32, N / K);
	int rc = comm_reduce_scatter(c, &ts, &tr, COMM_SUM, k) < 0 ? 3 : 0;
	kern_ctx_destroy(k);
	return rc;
}

int main(void)
{
	Shared *s = tc_shared(sizeof(Shared));
	for (s->run = 0; s->run < 2; s->run++) {
		int codes[K] = {0};
		if (tc_run(K, 1 << 14, 10.0, 40.0, fn, s, codes) < 0)
			return 1;
		for (int r = 0; r < K; r++)
			if (codes[r]) {
				printf("run %d rank %d exit %d\n", s->run, r, codes[r]);
				return 1;
			}
	}
	int fail = 0, order_matters = 0;
	for (int i = 0; i < N; i++) {
		float acc = input(0, i), rev = input(K - 1, i);
		for (int r = 1; r < K; r++)
			acc += input(r, i);
		for (int r = K - 2; r >= 0; r--)
			rev += input(r, i);
		order_matters += memcmp(&acc, &rev, sizeof(float)) != 0;
		for (int run = 0; run < 2; run++)
			for (int r = 0; r < K; r++)
				fail |= memcmp(&s->out[run][r][i], &acc, sizeof(float)) != 0;
		int q = i / (N / K), j = i % (N / K);
		for (int run = 0; run < 2; run++)
			fail |= memcmp(&s->rs[run][q][j], &acc, sizeof(float)) != 0;
	}
	printf("%d of %d sums depend on the order; results %s\n", order_matters, N,
	       fail ? "DIFFER between ranks, runs or from the rank-order sum" : "bit-identical across ranks and runs");
	if (order_matters == 0) {
		printf("FAIL: inputs do not exercise the summation order\n");
		return 1;
	}
	return fail;
}
