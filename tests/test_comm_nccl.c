// The NCCL backend of comm on one GPU (exit 77 without one, or without the CUDA backend or NCCL in
// this build): one rank's collectives on device buffers give the local results (all-gather and
// reduce-scatter copy, all-reduce keeps, average too), a started all-reduce completes by drain, the
// control channel works on host buffers, and a group that never forms (world 2, one rank) ends in
// -ETIMEDOUT within the timeout with a sentence naming the rank.
#include <errno.h>  // defines: ETIMEDOUT
#include <stdio.h>  // defines: printf, fprintf
#include <string.h> // defines: memcmp, strstr
#include <time.h>   // defines: clock_gettime

#include "testutil.h"  // defines: EXPECT, test_failures
#include "proc_time.h" // defines: time_mono_s
#include "comm.h"      // defines: comm_nccl_open, comm_nccl_unique_id, ...
#include "kern_ops.h"  // defines: kern_ctx_create, kern_alloc, kern_upload, kern_download

enum { N = 1000 };

static void data_plane(Comm *c, KernCtx *ctx)
{
	float host[N], back[N];
	for (int i = 0; i < N; i++)
		host[i] = (float)i * 0.25f - 7.0f;
	KTensor a, b, e;
	int64_t n = N;
	int rc = kern_alloc(ctx, &a, KDT_F32, 1, &n) | kern_alloc(ctx, &b, KDT_F32, 1, &n);
	rc |= kern_alloc(ctx, &e, KDT_F32, 1, &n) | kern_upload(ctx, &a, host, sizeof host);
	EXPECT(rc == 0, "device buffers: %d", rc);
	EXPECT(comm_allgather(c, &a, &b, ctx) == 0 && kern_download(ctx, back, sizeof back, &b) == 0 &&
		       !memcmp(back, host, sizeof host),
	       "all-gather of one rank copies: %s", comm_error(c));
	EXPECT(comm_allreduce(c, &b, COMM_AVG, ctx) == 0 && kern_download(ctx, back, sizeof back, &b) == 0 &&
		       !memcmp(back, host, sizeof host),
	       "average over one rank keeps the values: %s", comm_error(c));
	EXPECT(comm_reduce_scatter(c, &a, &e, COMM_SUM, ctx) == 0 && kern_download(ctx, back, sizeof back, &e) == 0 &&
		       !memcmp(back, host, sizeof host),
	       "reduce-scatter of one rank copies: %s", comm_error(c));
	KEvent *ready;
	kern_event_create(ctx, &ready);
	rc = kern_event_record(ready, ctx);
	if (!rc)
		rc = comm_allreduce_start(c, &b, COMM_SUM, ready);
	if (!rc)
		rc = comm_drain(c, ctx);
	EXPECT(rc == 0 && kern_download(ctx, back, sizeof back, &b) == 0 && !memcmp(back, host, sizeof host),
	       "started all-reduce and drain: %d %s", rc, comm_error(c));
	kern_event_destroy(ready);
	kern_free(ctx, &a);
	kern_free(ctx, &b);
	kern_free(ctx, &e);
}

static void control(Comm *c)
{
	struct {
		uint64_t pos, stop;
	} mine = {12345, 0}, all;
	EXPECT(comm_ctl_allgather(c, &mine, &all, sizeof mine) == 0 && all.pos == 12345, "ctl all-gather: %s",
	       comm_error(c));
	double v[3] = {1.5, -2, 1e9};
	EXPECT(comm_ctl_allreduce(c, v, 3, COMM_AVG) == 0 && v[0] == 1.5 && v[1] == -2 && v[2] == 1e9,
	       "ctl all-reduce: %s", comm_error(c));
	char word[8] = "avclip";
	EXPECT(comm_ctl_broadcast(c, word, sizeof word, 0) == 0 && !strcmp(word, "avclip"), "ctl broadcast: %s",
	       comm_error(c));
	EXPECT(comm_ctl_barrier(c) == 0, "ctl barrier: %s", comm_error(c));
}

int main(void)
{
	if (!comm_nccl_available()) {
		printf("skip: this build has no NCCL\n");
		return 77;
	}
	KernCtx *ctx;
	KCtxOptions ko = {.backend = KERN_BACKEND_CUDA};
	if (kern_ctx_create(&ctx, &ko) < 0) {
		printf("skip: no CUDA backend in this build or no GPU\n");
		return 77;
	}
	unsigned char id[RDV_BLOB_MAX];
	const size_t len = comm_nccl_id_bytes();
	char err[512] = "";
	Comm *c = NULL;
	CommNcclOptions o = {.timeout_s = 30};
	int rc = comm_nccl_unique_id(id, len);
	if (!rc)
		rc = comm_nccl_open(&c, ctx, 0, 1, id, len, &o, err, sizeof err);
	EXPECT(rc == 0, "one-rank group: %d %s", rc, err);
	if (c) {
		EXPECT(comm_rank(c) == 0 && comm_world(c) == 1, "rank %d world %d", comm_rank(c), comm_world(c));
		data_plane(c, ctx);
		control(c);
		comm_close(c);
	}
	// rank 0 of 2 whose peer never comes: a timeout naming the rank, not a hang
	o.timeout_s = 2;
	double t0 = time_mono_s();
	Comm *lonely = NULL;
	rc = comm_nccl_unique_id(id, len);
	if (!rc)
		rc = comm_nccl_open(&lonely, ctx, 0, 2, id, len, &o, err, sizeof err);
	double dt = time_mono_s() - t0;
	EXPECT(rc == -ETIMEDOUT && strstr(err, "rank 0") && dt < 20, "missing peer: rc %d after %.1f s: %s", rc, dt,
	       err);
	if (lonely)
		comm_close(lonely);
	kern_ctx_destroy(ctx);
	if (test_failures)
		return 1;
	printf("NCCL, one rank: data plane, started all-reduce, control channel; a missing peer times out in %.1f s\n",
	       dt);
	return 0;
}
