// The NCCL backend of comm between two rank threads on a fake NCCL and CUDA runtime
// (tests/fake_nccl.c) that does what real non-blocking NCCL may: calls return ncclInProgress and
// the collective reaches its stream only after a seeded number of ncclCommGetAsyncError polls, and
// a device runs one NCCL kernel at a time. Checked: what the caller reads after every collective
// (control channel and data plane, started all-reduces and drain) is that collective's result, not
// a stale buffer; the fake saw no NCCL call on a communicator still in progress; a control call
// between data-plane collectives queued behind slow compute does not deadlock; a group that never
// forms, a peer that stops calling and an asynchronous error end in errors naming the rank within
// the timeout; grouped collectives (comm_group_start/end, nested) give this step's results and refuse
// a control call inside them; the planted bugs — ranks ordering a group's members differently, a host
// wait inside an open NCCL group — are reported by the fake. KT_SEED=n repeats one seed (default 1; "random": from the clock).
#include <errno.h>     // defines: ETIMEDOUT
#include <pthread.h>   // defines: pthread_create, pthread_join
#include <stdatomic.h> // defines: atomic_int
#include <stdio.h>     // defines: printf, fprintf
#include <stdlib.h>    // defines: getenv, strtoul
#include <string.h>    // defines: strstr, memset
#include <unistd.h>    // defines: getpid

#include "comm.h"         // defines: comm_nccl_open, comm_ctl_allgather, ...
#include "fake_nccl.h"    // defines: fake_nccl_config, fake_cuda_delay, fake_nccl_violations
#include "kern_backend.h" // defines: KBackend, KernDev, struct KernCtx, struct KEvent
#include "proc_time.h"    // defines: time_mono_s

enum { WORLD = 2, N = 257, ITERS = 60 };

static atomic_int failures;
#define EXPECT_T(cond, ...)                                                                                            \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                           \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fputc('\n', stderr);                                                                           \
			atomic_fetch_add(&failures, 1);                                                                \
		}                                                                                                      \
	} while (0)

// ---- a CUDA backend of the op contract with only streams, events, memory and copies, on the fake ----
static cudaStream_t sof(KernCtx *c)
{
	return c->priv;
}

static int fb_dev_open(KernDev *d, const KCtxOptions *o)
{
	d->nthreads = 1;
	return cudaSetDevice(d->device) == cudaSuccess ? 0 : -ENODEV;
}

static void fb_dev_close(KernDev *d) {}

static int fb_stream_open(KernCtx *c)
{
	cudaStream_t s;
	cudaSetDevice(c->dev->device);
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return -ENOMEM;
	c->priv = s;
	return 0;
}

static void fb_stream_close(KernCtx *c)
{
	cudaStreamDestroy(sof(c));
}

static int fb_stream_sync(KernCtx *c)
{
	return cudaStreamSynchronize(sof(c)) == cudaSuccess ? 0 : -EIO;
}

// the streams this test waits for are its own: each rank syncs the one it uses
static int fb_dev_sync(KernDev *d)
{
	return 0;
}

static int fb_alloc(KernDev *d, void **p, size_t n)
{
	if (cudaMalloc(p, n) != cudaSuccess)
		return -ENOMEM;
	memset(*p, 0, n);
	return 0;
}

static void fb_free(KernDev *d, void *p)
{
	cudaFree(p);
}

static int fb_copy(KernCtx *c, void *dst, const void *src, size_t n, enum cudaMemcpyKind k, int async)
{
	if (cudaMemcpyAsync(dst, src, n, k, sof(c)) != cudaSuccess)
		return -EIO;
	return async ? 0 : fb_stream_sync(c);
}

static int fb_upload(KernCtx *c, void *dst, const void *host, size_t n, int async)
{
	return fb_copy(c, dst, host, n, cudaMemcpyHostToDevice, async);
}

static int fb_download(KernCtx *c, void *host, const void *src, size_t n, int async)
{
	return fb_copy(c, host, src, n, cudaMemcpyDeviceToHost, async);
}

static int fb_event_create(KEvent *e)
{
	cudaEvent_t ev;
	if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess)
		return -ENOMEM;
	e->priv = ev;
	return 0;
}

static void fb_event_destroy(KEvent *e)
{
	cudaEventDestroy(e->priv);
}

static int fb_event_record(KEvent *e, KernCtx *c)
{
	return cudaEventRecord(e->priv, sof(c)) == cudaSuccess ? 0 : -EIO;
}

static int fb_stream_wait_event(KernCtx *c, KEvent *e)
{
	return cudaStreamWaitEvent(sof(c), e->priv, 0) == cudaSuccess ? 0 : -EIO;
}

static int fb_event_query(KEvent *e)
{
	return cudaEventQuery(e->priv) == cudaSuccess;
}

static int fb_event_sync(KEvent *e)
{
	return cudaEventSynchronize(e->priv) == cudaSuccess ? 0 : -EIO;
}

static void *fb_stream_native(KernCtx *c)
{
	return sof(c);
}

// kern_ctx.c takes this as the CUDA backend (it refers to kcuda_backend weakly)
const KBackend kcuda_backend = {
	.name = "fake-cuda",
	.dev_open = fb_dev_open,
	.dev_close = fb_dev_close,
	.stream_open = fb_stream_open,
	.stream_close = fb_stream_close,
	.stream_sync = fb_stream_sync,
	.dev_sync = fb_dev_sync,
	.alloc = fb_alloc,
	.free = fb_free,
	.upload = fb_upload,
	.download = fb_download,
	.event_create = fb_event_create,
	.event_destroy = fb_event_destroy,
	.event_record = fb_event_record,
	.stream_wait_event = fb_stream_wait_event,
	.event_query = fb_event_query,
	.event_sync = fb_event_sync,
	.stream_native = fb_stream_native,
};

// ---- the ranks ----
typedef struct {
	int rank, scenario;
	const unsigned char *id;
	double timeout_s;
	unsigned rng;
	atomic_int *fatal_calls;
	pthread_barrier_t *closing; // every rank is done calling (a peer that stops calling stays)
} Rank;

enum { S_COLLECTIVES, S_ALONE, S_PEER_STOPS, S_ASYNC_ERROR, S_GROUP_MISORDER };

static int draw(Rank *r, int n)
{
	r->rng = r->rng * 1103515245u + 12345u;
	return (int)((r->rng >> 16) % (unsigned)n);
}

static void on_fatal(void *arg, const char *msg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
}

static float val(int it, int rank, int i)
{
	return (float)(it * 3 + rank * 100 + i);
}

// a slow kernel on the stream, sometimes, so the collective queued next waits for compute
static void maybe_slow(Rank *r, KernCtx *ctx)
{
	if (draw(r, 3) == 0)
		fake_cuda_delay(kern_stream_native(ctx), 100 + draw(r, 1500));
}

static void control_checks(Rank *r, Comm *c, int it)
{
	struct {
		uint64_t pos, stop;
	} mine = {(uint64_t)(it * 1000 + r->rank), (uint64_t)(it % 7 == r->rank)}, all[WORLD];
	memset(all, 0, sizeof all);
	int rc = comm_ctl_allgather(c, &mine, all, sizeof mine);
	EXPECT_T(rc == 0, "rank %d step %d: ctl all-gather: %d %s", r->rank, it, rc, comm_error(c));
	for (int k = 0; k < WORLD && !rc; k++)
		EXPECT_T(all[k].pos == (uint64_t)(it * 1000 + k) && all[k].stop == (uint64_t)(it % 7 == k),
			 "rank %d step %d: the agreement read rank %d's position %llu stop %llu (stale: not this "
			 "step's %d)",
			 r->rank, it, k, (unsigned long long)all[k].pos, (unsigned long long)all[k].stop,
			 it * 1000 + k);
	char word[16] = "";
	int root = it % WORLD;
	if (r->rank == root)
		snprintf(word, sizeof word, "step%d", it);
	rc = comm_ctl_broadcast(c, word, sizeof word, root);
	char want[16];
	snprintf(want, sizeof want, "step%d", it);
	EXPECT_T(rc == 0 && !strcmp(word, want), "rank %d step %d: ctl broadcast read '%s': %d %s", r->rank, it, word,
		 rc, comm_error(c));
}

static void check_buf(Rank *r, KernCtx *ctx, const KTensor *t, const float *want, size_t n, const char *what, int it)
{
	float got[WORLD * N];
	int rc = kern_download(ctx, got, n * sizeof(float), t);
	size_t bad = n;
	for (size_t i = 0; i < n && !rc; i++)
		if (got[i] != want[i]) {
			bad = i;
			break;
		}
	EXPECT_T(rc == 0 && bad == n, "rank %d step %d: %s read %g at [%zu], the collective gives %g (rc %d)", r->rank,
		 it, what, bad < n ? got[bad] : 0.0, bad, bad < n ? want[bad] : 0.0, rc);
}

// the exchange's pattern: two all-gathers of different sizes in one group (a nested group inside),
// after slow compute; both results are this step's, and a control call inside the group is refused
static void grouped(Rank *r, Comm *c, KernCtx *ctx, const KTensor *a, KTensor *b, const KTensor *s3, KTensor *b3,
		    const float *want_b, int it)
{
	maybe_slow(r, ctx);
	int rc = comm_group_start(c);
	rc |= comm_allgather(c, a, b, ctx);
	rc |= comm_group_start(c);
	rc |= comm_allgather(c, s3, b3, ctx);
	rc |= comm_group_end(c);
	int rv = comm_ctl_barrier(c);
	EXPECT_T(rv == -EINVAL && strstr(comm_error(c), "inside a group"),
		 "rank %d step %d: a control call inside a group: %d '%s'", r->rank, it, rv, comm_error(c));
	rc |= comm_group_end(c);
	EXPECT_T(rc == 0, "rank %d step %d: the grouped all-gathers: %d %s", r->rank, it, rc, comm_error(c));
	check_buf(r, ctx, b, want_b, WORLD * N, "grouped all-gather", it);
	float want3[WORLD * 3];
	for (int k = 0; k < WORLD; k++)
		for (int i = 0; i < 3; i++)
			want3[k * 3 + i] = (float)(it - 7 * k - i);
	check_buf(r, ctx, b3, want3, WORLD * 3, "grouped small all-gather", it);
}

static void collectives(Rank *r, Comm *c, KernCtx *ctx)
{
	KTensor a, b, e, g, s3, b3;
	int64_t n = N, wn = WORLD * N, n3 = 3, wn3 = WORLD * 3;
	int rc = kern_alloc(ctx, &a, KDT_F32, 1, &n) | kern_alloc(ctx, &b, KDT_F32, 1, &wn) |
		 kern_alloc(ctx, &e, KDT_F32, 1, &n) | kern_alloc(ctx, &g, KDT_F32, 1, &n) |
		 kern_alloc(ctx, &s3, KDT_F32, 1, &n3) | kern_alloc(ctx, &b3, KDT_F32, 1, &wn3);
	KEvent *ready = NULL;
	rc |= kern_event_create(ctx, &ready);
	EXPECT_T(rc == 0, "rank %d: buffers: %d", r->rank, rc);
	float host[N], want_b[WORLD * N], want_e[N], want_g[N];
	for (int it = 0; it < ITERS && !rc && !atomic_load(&failures); it++) {
		for (int i = 0; i < N; i++) {
			host[i] = val(it, r->rank, i);
			want_e[i] = 2.0f * WORLD * host[i];
			want_g[i] = 0;
			for (int k = 0; k < WORLD; k++) {
				want_b[k * N + i] = 2.0f * val(it, k, i);
				want_g[i] += val(it, k, i) + 0.5f;
			}
		}
		control_checks(r, c, it);
		rc |= kern_upload(ctx, &a, host, sizeof host);
		float small[3] = {(float)(it - 7 * r->rank), (float)(it - 7 * r->rank - 1),
				  (float)(it - 7 * r->rank - 2)};
		rc |= kern_upload(ctx, &s3, small, sizeof small);
		for (int i = 0; i < WORLD * N; i++)
			want_b[i] *= 0.5f; // the plain all-gather's result, before the all-reduce doubles it
		grouped(r, c, ctx, &a, &b, &s3, &b3, want_b, it);
		for (int i = 0; i < WORLD * N; i++)
			want_b[i] *= 2.0f;
		maybe_slow(r, ctx);
		rc |= comm_allgather(c, &a, &b, ctx);
		// a control call while the all-gather may still wait for compute: behind it on every device
		double v[2] = {it + r->rank, 0.5 * r->rank};
		int rv = comm_ctl_allreduce(c, v, 2, COMM_SUM);
		EXPECT_T(rv == 0 && v[0] == 2 * it + 1 && v[1] == 0.5, "rank %d step %d: ctl all-reduce read %g %g: %s",
			 r->rank, it, v[0], v[1], comm_error(c));
		maybe_slow(r, ctx);
		rc |= comm_allreduce(c, &b, COMM_SUM, ctx);
		check_buf(r, ctx, &b, want_b, WORLD * N, "all-gather then all-reduce", it);
		rc |= comm_reduce_scatter(c, &b, &e, COMM_SUM, ctx);
		check_buf(r, ctx, &e, want_e, N, "reduce-scatter", it);
		// a bucket's all-reduce started after slow backward, a control call before the drain
		for (int i = 0; i < N; i++)
			host[i] += 0.5f;
		rc |= kern_upload(ctx, &g, host, sizeof host);
		maybe_slow(r, ctx);
		rc |= kern_event_record(ready, ctx);
		rc |= comm_allreduce_start(c, &g, COMM_SUM, ready);
		rv = comm_ctl_barrier(c);
		EXPECT_T(rv == 0, "rank %d step %d: ctl barrier: %s", r->rank, it, comm_error(c));
		rc |= comm_drain(c, ctx);
		check_buf(r, ctx, &g, want_g, N, "started all-reduce after drain", it);
		EXPECT_T(rc == 0, "rank %d step %d: a data-plane call failed: %d %s", r->rank, it, rc, comm_error(c));
	}
	kern_stream_sync(ctx);
	kern_event_destroy(ready);
	kern_free(ctx, &a);
	kern_free(ctx, &b);
	kern_free(ctx, &e);
	kern_free(ctx, &g);
	kern_free(ctx, &s3);
	kern_free(ctx, &b3);
}

// the planted bug: rank 1 orders the group's two all-gathers the other way round. The fake reports
// it (its check of every rank's n-th collective) and fails the communicator, so nothing mixes
// buffers or hangs: the next control call fails on every rank.
static void group_misorder(Rank *r, Comm *c, KernCtx *ctx)
{
	KTensor x, y, X, Y;
	int64_t nx = N, ny = 3, wx = WORLD * N, wy = WORLD * 3;
	int rc = kern_alloc(ctx, &x, KDT_F32, 1, &nx) | kern_alloc(ctx, &y, KDT_F32, 1, &ny) |
		 kern_alloc(ctx, &X, KDT_F32, 1, &wx) | kern_alloc(ctx, &Y, KDT_F32, 1, &wy);
	EXPECT_T(rc == 0, "rank %d: buffers: %d", r->rank, rc);
	rc = comm_group_start(c);
	if (r->rank == 0)
		rc |= comm_allgather(c, &x, &X, ctx) | comm_allgather(c, &y, &Y, ctx);
	else
		rc |= comm_allgather(c, &y, &Y, ctx) | comm_allgather(c, &x, &X, ctx);
	rc |= comm_group_end(c);
	kern_stream_sync(ctx);
	// the data communicator's error reaches this rank through a call's poll or the watchdog's
	for (double t0 = time_mono_s(); rc == 0 && time_mono_s() - t0 < 3 * r->timeout_s;)
		rc = comm_ctl_barrier(c);
	EXPECT_T(rc < 0, "rank %d: misordered group members went unnoticed (rc %d)", r->rank, rc);
	kern_free(ctx, &x);
	kern_free(ctx, &y);
	kern_free(ctx, &X);
	kern_free(ctx, &Y);
}

static void *rank_main(void *arg)
{
	Rank *r = arg;
	KernCtx *ctx;
	KCtxOptions ko = {.backend = KERN_BACKEND_CUDA, .device = r->rank};
	int rc = kern_ctx_create(&ctx, &ko);
	EXPECT_T(rc == 0, "rank %d: the fake CUDA backend: %d", r->rank, rc);
	if (rc) {
		pthread_barrier_wait(r->closing);
		return NULL;
	}
	CommNcclOptions o = {.timeout_s = r->timeout_s, .fatal = on_fatal, .fatal_arg = r->fatal_calls};
	char err[256] = "";
	Comm *c = NULL;
	const int world = r->scenario == S_ALONE ? 2 : WORLD;
	double t0 = time_mono_s();
	rc = comm_nccl_open(&c, ctx, r->rank, world, r->id, comm_nccl_id_bytes(), &o, err, sizeof err);
	if (r->scenario == S_ALONE) {
		double dt = time_mono_s() - t0;
		EXPECT_T(rc == -ETIMEDOUT && strstr(err, "rank 0 of 2") && dt < r->timeout_s + 2,
			 "a group that never forms: rc %d after %.1f s: '%s'", rc, dt, err);
	} else {
		EXPECT_T(rc == 0, "rank %d: comm_nccl_open: %d %s", r->rank, rc, err);
	}
	if (rc || r->scenario == S_ALONE) {
		pthread_barrier_wait(r->closing);
		kern_ctx_destroy(ctx);
		return NULL;
	}
	uint64_t x = 1, all[WORLD];
	if (r->scenario == S_COLLECTIVES) {
		collectives(r, c, ctx);
	} else if (r->scenario == S_PEER_STOPS) {
		EXPECT_T(comm_ctl_allgather(c, &x, all, sizeof x) == 0, "rank %d: first call: %s", r->rank,
			 comm_error(c));
		if (r->rank == 0) {
			t0 = time_mono_s();
			rc = comm_ctl_allgather(c, &x, all, sizeof x);
			double dt = time_mono_s() - t0;
			EXPECT_T(rc == -ETIMEDOUT && strstr(comm_error(c), "rank 0") && dt < r->timeout_s + 2,
				 "a peer that stopped calling: rc %d after %.1f s: '%s'", rc, dt, comm_error(c));
			EXPECT_T(comm_ctl_barrier(c) == -EPIPE && strstr(comm_error(c), "rank 0"),
				 "a call after the abort fails at once naming the rank: '%s'", comm_error(c));
		}
	} else if (r->scenario == S_GROUP_MISORDER) {
		group_misorder(r, c, ctx);
	} else if (r->scenario == S_ASYNC_ERROR) {
		EXPECT_T(comm_ctl_allgather(c, &x, all, sizeof x) == 0, "rank %d: first call: %s", r->rank,
			 comm_error(c));
		if (r->rank == 1)
			fake_nccl_set_async_error(1, ncclRemoteError);
		rc = comm_ctl_allgather(c, &x, all, sizeof x);
		if (r->rank == 0 && rc == 0) // the failed rank's copy may have been queued before its error
			rc = comm_ctl_allgather(c, &x, all, sizeof x);
		if (r->rank == 1)
			EXPECT_T(rc == -EPIPE && strstr(comm_error(c), "rank 1") &&
					 strstr(comm_error(c), "remote error"),
				 "an asynchronous error: rc %d '%s'", rc, comm_error(c));
		else
			EXPECT_T(rc < 0 && strstr(comm_error(c), "rank 0"), "the peer of a failed rank: rc %d '%s'", rc,
				 comm_error(c));
	}
	pthread_barrier_wait(r->closing);
	comm_close(c);
	kern_ctx_destroy(ctx);
	return NULL;
}

// the planted host wait, on the fake's NCCL directly (comm refuses it: a control call inside a
// group): one rank, ncclGroupStart, an all-gather, a stream synchronize before ncclGroupEnd. The
// fake reports the wait, and the collective reaches the stream only at ncclGroupEnd (NCCL's rule).
static void planted_host_wait(void)
{
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t s;
	float *send, *recv;
	cudaSetDevice(0);
	if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRankConfig(&comm, 1, id, 0, NULL) != ncclSuccess ||
	    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
	    cudaMalloc((void **)&send, 16) != cudaSuccess || cudaMalloc((void **)&recv, 16) != cudaSuccess) {
		EXPECT_T(0, "the planted host wait: setup failed");
		return;
	}
	for (int i = 0; i < 4; i++)
		send[i] = (float)i + 1;
	ncclGroupStart();
	ncclAllGather(send, recv, 4, ncclFloat32, comm, s);
	cudaStreamSynchronize(s);
	EXPECT_T(recv[0] != 1.0f, "a collective inside a group ran before ncclGroupEnd");
	ncclGroupEnd();
	cudaStreamSynchronize(s);
	EXPECT_T(recv[0] == 1.0f && recv[3] == 4.0f, "the group's all-gather after ncclGroupEnd read %g %g", recv[0],
		 recv[3]);
	ncclCommDestroy(comm);
	cudaStreamDestroy(s);
	cudaFree(send);
	cudaFree(recv);
}

static void run(int scenario, int ranks, double timeout_s, unsigned seed, atomic_int *fatal_calls)
{
	unsigned char id[RDV_BLOB_MAX];
	if (comm_nccl_unique_id(id, comm_nccl_id_bytes()) < 0) {
		EXPECT_T(0, "comm_nccl_unique_id failed");
		return;
	}
	Rank r[WORLD];
	pthread_t th[WORLD];
	pthread_barrier_t closing;
	pthread_barrier_init(&closing, NULL, (unsigned)ranks);
	for (int k = 0; k < ranks; k++) {
		r[k] = (Rank){.rank = k,
			      .scenario = scenario,
			      .id = id,
			      .timeout_s = timeout_s,
			      .rng = seed * 7919u + (unsigned)k,
			      .fatal_calls = fatal_calls,
			      .closing = &closing};
		pthread_create(&th[k], NULL, rank_main, &r[k]);
	}
	for (int k = 0; k < ranks; k++)
		pthread_join(th[k], NULL);
	pthread_barrier_destroy(&closing);
}

int main(void)
{
	if (!comm_nccl_available()) {
		printf("skip: this build has no NCCL backend\n");
		return 77;
	}
	const char *s = getenv("KT_SEED");
	unsigned seed = !s                     ? 1
			: !strcmp(s, "random") ? (unsigned)time_mono_s() ^ (unsigned)getpid()
					       : (unsigned)strtoul(s, NULL, 0);
	printf("seed %u (KT_SEED=%u repeats it)\n", seed, seed);
	fake_nccl_config(seed, 8, 1);
	atomic_int fatal_calls = 0;
	double t0 = time_mono_s();
	run(S_COLLECTIVES, WORLD, 10, seed, &fatal_calls);
	printf("collectives: %d steps of 2 ranks in %.2f s\n", ITERS, time_mono_s() - t0);
	char first[256];
	int v = fake_nccl_violations(first, sizeof first);
	EXPECT_T(v == 0, "%d NCCL call(s) on a communicator still in progress or gone; the first: %s", v, first);
	EXPECT_T(atomic_load(&fatal_calls) == 0, "the watchdog fired %d time(s) in a healthy run",
		 atomic_load(&fatal_calls));
	run(S_ALONE, 1, 0.3, seed, &fatal_calls);
	run(S_PEER_STOPS, WORLD, 1.5, seed, &fatal_calls);
	run(S_ASYNC_ERROR, WORLD, 1.5, seed, &fatal_calls);
	v = fake_nccl_violations(first, sizeof first);
	EXPECT_T(v == 0, "%d NCCL call(s) on a communicator still in progress or gone; the first: %s", v, first);
	// the planted bugs, last: the fake's count of violations only grows
	planted_host_wait();
	v = fake_nccl_violations(first, sizeof first);
	EXPECT_T(v > 0 && strstr(first, "inside an open NCCL group"), "a host wait inside a group: %d '%s'", v, first);
	const int before = v;
	run(S_GROUP_MISORDER, WORLD, 1.5, seed, &fatal_calls);
	v = fake_nccl_violations(NULL, 0);
	EXPECT_T(v > before, "misordered group members: the fake saw no violation (%d)", v);
	fake_nccl_free();
	int f = atomic_load(&failures);
	printf("%s\n", f ? "FAIL" : "ok");
	return f ? 1 : 0;
}
