// The trainer's bucketed gradient all-reduce (trainer/comm/comm_bucket.c, as the NCCL backend
// orders it) on the CUDA backend through the shim's asynchronous streams: a one-rank communicator
// whose all-reduce runs on a comm stream of its own, after the bucket's ready event, reading and
// writing the bucket in place, and whose drain makes the caller's stream wait for it. Three steps
// of the trainer's own step under several schedule seeds: the stream-order checker must see no
// gradient written after its bucket was reported ready, and no optimizer read before the drain.
// --planted-no-drain leaves the drain's wait out; that run passes only if the race is caught.
// Always on asynchronous streams: KEMU_SCHED_SEED's seed, else 1 (make test-seeds: fresh ones).
#include "comm_impl.h"         // defines: CommOps, struct Comm (a test backend)
#include "kcu_twin.h"          // defines: KtEnv, kt_*
#include "test_trainer_util.h" // defines: tt_step_config, tt_upload, comm_local_open

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { STEPS = 3, B = 4 };

void kemu_sched_c(uint64_t seed) __attribute__((weak)); // the shim's (emu/kemu.h)

typedef struct {
	const CommOps *local; // everything but the bucketed all-reduce
	KernCtx *cq;          // the comm stream
	KEvent *drained;
	KTensor tmp;
	int planted;
} StreamComm;

static StreamComm g_sc;
static CommOps g_ops;

// an all-reduce over one rank, in place, as a kernel on the comm stream would do it
static int sc_allreduce_start(Comm *c, KTensor *buf, CommReduce op, KEvent *ready)
{
	StreamComm *s = &g_sc;
	int64_t n = kern_numel(buf);
	if (kern_numel(&s->tmp) < n) {
		kern_sync(s->cq);
		kern_free(s->cq, &s->tmp);
		int rc = kern_alloc(s->cq, &s->tmp, buf->dtype, 1, &n);
		if (rc)
			return rc;
	}
	KTensor v;
	int rc = kern_view(&v, &s->tmp, 0, 1, &n);
	rc = rc ? rc : kern_stream_wait_event(s->cq, ready);
	rc = rc ? rc : kern_copy(s->cq, &v, buf);
	return rc ? rc : kern_copy(s->cq, buf, &v);
}

static int sc_drain(Comm *c, KernCtx *stream)
{
	int rc = kern_event_record(g_sc.drained, g_sc.cq);
	return rc || g_sc.planted ? rc : kern_stream_wait_event(stream, g_sc.drained);
}

static int open_comm(Comm **out, KernCtx *ctx, int planted)
{
	int rc = comm_local_open(out);
	if (rc)
		return rc;
	g_sc = (StreamComm){.local = (*out)->ops, .planted = planted};
	g_ops = *(*out)->ops;
	g_ops.allreduce_start = sc_allreduce_start;
	g_ops.drain = sc_drain;
	(*out)->ops = &g_ops;
	rc = kern_stream_create(ctx, &g_sc.cq);
	return rc ? rc : kern_event_create(ctx, &g_sc.drained);
}

static void close_comm(Comm *comm)
{
	if (g_sc.cq) {
		kern_sync(g_sc.cq);
		kern_free(g_sc.cq, &g_sc.tmp);
		kern_event_destroy(g_sc.drained);
		kern_ctx_destroy(g_sc.cq);
	}
	comm->ops = g_sc.local;
	comm_close(comm);
}

static int train(uint64_t seed, int planted)
{
	TrainStepConfig cfg;
	tt_step_config(&cfg, FASTCLIP_V3, B, 16);
	cfg.model.vis_width = cfg.model.txt_width = 128; // the head dims the CUDA attention has
	cfg.model.embed_dim = 32;
	cfg.act = KDT_BF16;
	cfg.bucket_bytes = 64 << 10; // several buckets, so all-reduces overlap the backward
	Comm *comm = NULL;
	KernCtx *ctx = NULL;
	TrainStep *ts = NULL;
	KCtxOptions o = {.backend = KERN_BACKEND_CUDA, .threads = 1, .attention = KERN_ATTN_OWN};
	int rc = kern_ctx_create(&ctx, &o);
	rc = rc ? rc : open_comm(&comm, ctx, planted);
	rc = rc ? rc : train_step_create(&ts, ctx, comm, &cfg);
	rc = rc ? rc : train_step_init(ts, seed);
	int buckets = ts ? comm_buckets_count(ts->buckets) : 0;
	for (int s = 0; s < STEPS && !rc; s++) {
		TrainStepTimes t;
		float rows[TS_NSCALARS];
		int n;
		rc = tt_upload(ts, seed, s, 0);
		rc = rc ? rc : train_step_run(ts, 0, &t);
		rc = rc ? rc : train_step_read_metrics(ts, rows, &n);
	}
	rc = rc ? rc : kern_sync(ctx);
	printf("seed %llu: %d buckets, %s: %d%s%s\n", (unsigned long long)seed, buckets,
	       planted ? "drain without its wait" : "as the trainer orders it", rc, rc ? " " : "",
	       rc && ctx ? kern_error_message(ctx) : "");
	if (ts)
		train_step_destroy(ts);
	if (comm)
		close_comm(comm);
	if (ctx)
		kern_ctx_destroy(ctx);
	if (!rc && buckets < 2)
		return -EDOM; // nothing overlapped: the test would prove nothing
	return rc;
}

int main(int argc, char **argv)
{
	const int planted = argc > 1 && !strcmp(argv[1], "--planted-no-drain");
	if (!kemu_sched_c) {
		printf("not linked with the shim: skipped\n");
		return 77;
	}
	// one schedule per process (a sticky error ends the device): KEMU_SCHED_SEED's, else 1
	const char *env = getenv("KEMU_SCHED_SEED");
	uint64_t seed = !env || !*env ? 1 : strcmp(env, "random") ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	kemu_sched_c(seed);
	int rc = train(seed, planted);
	if (planted)
		return rc ? 0 : 1; // caught
	return rc ? 1 : 0;
}
