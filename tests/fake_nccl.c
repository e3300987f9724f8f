// A fake NCCL and CUDA runtime, linked into tests in place of libnccl and libcudart, so that the NCCL
// backend of comm runs its collectives between rank threads without a GPU, with what real NCCL may do.
//
// Model. A stream is a queue run in order by a thread of its own; an event completes when the stream
// it was recorded on reaches it; a copy to or from pageable host memory blocks the caller until the
// stream has run it (CUDA may), one with pinned memory (cudaMallocHost) does not. Device memory is
// host memory filled with 0xab. A communicator is non-blocking when its config says so: then init,
// split, finalize and every collective return ncclInProgress (or, one time in five, ncclSuccess with
// the work queued) and the collective is put on its stream only after a seeded number of
// ncclCommGetAsyncError polls (from any thread) — before that, whatever the caller queues behind it
// or waits for runs without it, and another NCCL call on that communicator is a misuse the fake
// counts. A collective runs once every rank's copy has reached the head of its stream; a
// communicator's collectives run in issue order; with `exclusive` a device runs one NCCL kernel at a
// time (a kernel holds its device from its start until all ranks have run it), so kernels of two
// communicators issued in different orders on two devices deadlock, as NCCL warns they may. Abort
// makes the communicator's queued work a no-op; a peer's abort or destroy makes the group's waiting
// work end with ncclRemoteError from ncclCommGetAsyncError (so nothing waits forever). Groups are
// NCCL's: ncclGroupStart/End nest per thread, a collective issued inside one is only recorded and the
// outermost ncclGroupEnd puts the group on its streams (non-blocking: after the polls, returning
// ncclInProgress). Checked, as violations: every rank's n-th collective of a communicator is the
// same call (kind, count, dtype, op, root, and its place in a group of the same size) — a mismatch
// (ranks ordering a group's members differently) also fails the communicators with ncclInvalidUsage
// instead of mixing buffers; and no host wait (a synchronize, a blocking copy) on a thread whose open
// group holds collectives. Everything is guarded by one mutex: it is a model.
#include "fake_nccl.h" // defines: fake_nccl_config, fake_cuda_delay, fake_nccl_violations

#include <pthread.h> // defines: pthread_mutex_t, pthread_cond_t
#include <stdarg.h>  // defines: va_list
#include <stdint.h>  // defines: uint64_t
#include <stdio.h>   // defines: snprintf
#include <stdlib.h>  // defines: calloc, free
#include <string.h>  // defines: memcpy, memset
#include <time.h>    // defines: nanosleep

enum { MAXR = 8, NSLOT = 4 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned g_seed = 1;
static int g_max_polls = 8, g_exclusive;
static int g_violations;
static char g_first[256];
static int g_dev_busy[MAXR];
static __thread int t_dev;

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	if (!g_violations++) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(g_first, sizeof g_first, fmt, ap);
		va_end(ap);
	}
}

void fake_nccl_config(unsigned seed, int max_polls, int exclusive)
{
	pthread_mutex_lock(&mu);
	g_seed = seed ? seed : 1;
	g_max_polls = max_polls > 0 ? max_polls : 1;
	g_exclusive = exclusive;
	pthread_mutex_unlock(&mu);
}

int fake_nccl_violations(char *first, size_t n)
{
	pthread_mutex_lock(&mu);
	int v = g_violations;
	if (first && n)
		snprintf(first, n, "%s", g_first);
	pthread_mutex_unlock(&mu);
	return v;
}

// ---- pinned host ranges ----
typedef struct Pinned {
	char *p;
	size_t n;
	struct Pinned *next;
} Pinned;
static Pinned *g_pinned;

static int pinned(const void *p, size_t n)
{
	for (Pinned *r = g_pinned; r; r = r->next)
		if ((const char *)p >= r->p && (const char *)p + n <= r->p + r->n)
			return 1;
	return 0;
}

// ---- communicators ----
typedef struct Coll {
	struct ncclComm *comm;
	uint64_t seq;
	enum { C_ALLGATHER, C_ALLREDUCE, C_REDUCE_SCATTER, C_BROADCAST } kind;
	const void *send;
	void *recv;
	size_t count; // elements: the send count (all-gather), the receive count (reduce-scatter), else both
	ncclDataType_t dt;
	ncclRedOp_t op;
	int root;
	cudaStream_t stream;
	int gsize, gpos;   // its group's size and its place in it (0, 0: not in a group)
	int rank;          // the issuing rank (for the reports)
	struct Coll *next; // the next of a group (the thread's open group, a communicator's pending ones)
} Coll;

typedef struct {
	uint64_t seq;
	int arrived, left;
	void *stage[MAXR];
	Coll first; // what the first rank to arrive issued: every other rank must have issued the same
} Slot;

typedef struct Clique {
	char id[NCCL_UNIQUE_ID_BYTES];
	int world, joined;
	struct ncclComm *members[MAXR];
	Slot slot[NSLOT];
	int mismatch; // ranks issued different collectives at one position: all of them fail
	struct {
		int arrived, color[MAXR], key[MAXR];
		struct ncclComm *child[MAXR];
	} split[4];
	struct Clique *next;
} Clique;

struct ncclComm {
	Clique *q; // NULL until a split's group is known
	int rank, world, dev, blocking;
	int init_pending, finalizing, finalized, aborted, destroyed, nsplit;
	int polls;
	Coll *pending; // issued (a chain: one call, or a group), not yet on its stream
	uint64_t issued, done;
	ncclResult_t async_err;
	unsigned rng;
	struct ncclComm *next;
};

static Clique *g_cliques;
static struct ncclComm *g_comms;
static unsigned g_ids;

static int draw(struct ncclComm *c, int n)
{
	c->rng = c->rng * 1103515245u + 12345u;
	return (int)((c->rng >> 16) % (unsigned)n);
}

static int polls_for(struct ncclComm *c)
{
	return 1 + draw(c, g_max_polls);
}

static size_t dt_bytes(ncclDataType_t dt)
{
	switch (dt) {
	case ncclInt8:
	case ncclUint8: return 1;
	case ncclFloat16:
	case ncclBfloat16: return 2;
	case ncclInt32:
	case ncclUint32:
	case ncclFloat32: return 4;
	default: return 8;
	}
}

// ---- streams ----
typedef struct Op {
	enum { OP_COPY, OP_RECORD, OP_WAIT, OP_DELAY, OP_COLL } kind;
	void *dst;
	const void *src;
	size_t n;
	cudaEvent_t ev;
	uint64_t gen;
	long us;
	Coll *coll;
	uint64_t ticket;
	struct Op *next;
} Op;

struct CUstream_st {
	int dev, busy, stop;
	Op *head, *tail;
	uint64_t queued, retired;
	pthread_t th;
};

struct CUevent_st {
	uint64_t recorded, done;
};

static void wait_cv(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += 20 * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&cv, &mu, &t);
}

static void reduce(Coll *k, Slot *s, int world, char *out, size_t at, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		double v = 0;
		for (int q = 0; q < world; q++)
			v += k->dt == ncclFloat64 ? ((double *)s->stage[q])[at + i] : ((float *)s->stage[q])[at + i];
		if (k->op == ncclAvg)
			v /= world;
		if (k->dt == ncclFloat64)
			((double *)out)[i] = v;
		else
			((float *)out)[i] = (float)v;
	}
}

// with mu held: a member of c's group destroyed or aborted its communicator
static int peer_gone(struct ncclComm *c)
{
	for (int r = 0; r < c->world; r++) {
		struct ncclComm *m = c->q->members[r];
		if (m && m != c && (m->destroyed || m->aborted))
			return 1;
	}
	return 0;
}

// with mu held: whether the collective cannot go on (aborted here; a peer gone: a remote error)
static int broken(struct ncclComm *c)
{
	if (!c->aborted && peer_gone(c) && c->async_err == ncclSuccess)
		c->async_err = ncclRemoteError;
	if (!c->aborted && c->q->mismatch && c->async_err == ncclSuccess)
		c->async_err = ncclInvalidUsage;
	return c->aborted || c->async_err == ncclRemoteError || c->async_err == ncclInvalidUsage;
}

static const char *const kind_names[] = {"all-gather", "all-reduce", "reduce-scatter", "broadcast"};

static int same_call(const Coll *a, const Coll *b)
{
	return a->kind == b->kind && a->count == b->count && a->dt == b->dt && a->op == b->op && a->root == b->root &&
	       a->gsize == b->gsize && a->gpos == b->gpos;
}

static const char *describe(const Coll *k, char *buf, size_t n)
{
	int w = snprintf(buf, n, "%s of %zu x dtype %d", kind_names[k->kind], k->count, (int)k->dt);
	if (k->gsize && w > 0 && (size_t)w < n)
		snprintf(buf + w, n - (size_t)w, " as member %d of a group of %d", k->gpos + 1, k->gsize);
	return buf;
}

// with mu held, on the stream's thread
static void run_coll(Coll *k)
{
	struct ncclComm *c = k->comm;
	Clique *q = c->q;
	while (c->done != k->seq && !broken(c))
		wait_cv();
	if (broken(c))
		return;
	if (g_exclusive) {
		while (g_dev_busy[c->dev] && !broken(c))
			wait_cv();
		if (broken(c))
			return;
		g_dev_busy[c->dev] = 1;
	}
	Slot *s = &q->slot[k->seq % NSLOT];
	while (s->arrived && s->seq != k->seq && !broken(c))
		wait_cv();
	if (broken(c))
		goto out;
	if (!s->arrived) {
		s->first = *k;
	} else if (!same_call(&s->first, k)) {
		char a[96], b[96];
		violation("collective #%llu: rank %d issued %s, rank %d issued %s (ranks issued their (grouped) "
			  "collectives in different orders)",
			  (unsigned long long)k->seq, s->first.rank, describe(&s->first, a, sizeof a), k->rank,
			  describe(k, b, sizeof b));
		q->mismatch = 1;
		broken(c);
		goto out;
	}
	s->seq = k->seq;
	size_t eb = dt_bytes(k->dt), in = k->kind == C_REDUCE_SCATTER ? k->count * (size_t)c->world : k->count;
	s->stage[c->rank] = malloc(in * eb);
	memcpy(s->stage[c->rank], k->send, in * eb);
	s->arrived++;
	pthread_cond_broadcast(&cv);
	while (s->arrived < c->world && !broken(c))
		wait_cv();
	if (s->arrived < c->world)
		goto out;
	switch (k->kind) {
	case C_ALLGATHER:
		for (int r = 0; r < c->world; r++)
			memcpy((char *)k->recv + (size_t)r * in * eb, s->stage[r], in * eb);
		break;
	case C_BROADCAST: memcpy(k->recv, s->stage[k->root], in * eb); break;
	case C_ALLREDUCE: reduce(k, s, c->world, k->recv, 0, k->count); break;
	case C_REDUCE_SCATTER: reduce(k, s, c->world, k->recv, (size_t)c->rank * k->count, k->count); break;
	}
	if (++s->left == c->world) {
		for (int r = 0; r < c->world; r++) {
			free(s->stage[r]);
			s->stage[r] = NULL;
		}
		s->arrived = s->left = 0;
	}
	c->done = k->seq + 1;
out:
	if (g_exclusive)
		g_dev_busy[c->dev] = 0;
	pthread_cond_broadcast(&cv);
}

static void *stream_main(void *arg)
{
	cudaStream_t s = arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (!s->head && !s->stop)
			pthread_cond_wait(&cv, &mu);
		if (!s->head)
			break;
		Op *o = s->head;
		s->busy = 1;
		switch (o->kind) {
		case OP_COPY: memcpy(o->dst, o->src, o->n); break;
		case OP_RECORD:
			if (o->ev->done < o->gen)
				o->ev->done = o->gen;
			break;
		case OP_WAIT:
			while (o->ev->done < o->gen)
				pthread_cond_wait(&cv, &mu);
			break;
		case OP_DELAY: {
			pthread_mutex_unlock(&mu);
			struct timespec t = {o->us / 1000000, (o->us % 1000000) * 1000};
			nanosleep(&t, NULL);
			pthread_mutex_lock(&mu);
			break;
		}
		case OP_COLL: run_coll(o->coll); free(o->coll);
		}
		s->head = o->next;
		if (!s->head)
			s->tail = NULL;
		s->busy = 0;
		s->retired = o->ticket;
		free(o);
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

// with mu held
static uint64_t push(cudaStream_t s, Op o)
{
	Op *p = malloc(sizeof *p);
	*p = o;
	p->ticket = ++s->queued;
	p->next = NULL;
	if (s->tail)
		s->tail->next = p;
	else
		s->head = p;
	s->tail = p;
	pthread_cond_broadcast(&cv);
	return p->ticket;
}

static void enqueue(Coll *k)
{
	push(k->stream, (Op){.kind = OP_COLL, .coll = k});
}

// with mu held: a chain of collectives (a group) onto their streams, in order
static void enqueue_chain(Coll *k)
{
	while (k) {
		Coll *next = k->next;
		k->next = NULL;
		enqueue(k);
		k = next;
	}
}

static void free_chain(Coll *k)
{
	while (k) {
		Coll *next = k->next;
		free(k);
		k = next;
	}
}

// ---- groups (ncclGroupStart/End): per thread, as NCCL keeps them ----
// A collective issued inside a group is only recorded; the outermost ncclGroupEnd puts every
// recorded one on its stream (a non-blocking communicator: after its polls, as one call).
static __thread int t_group_depth;
static __thread Coll *t_group_head, *t_group_tail;
static __thread int t_group_n;

// with mu held: a host wait while this thread's open group holds collectives that are not on their
// streams yet (NCCL: only after ncclGroupEnd returns may the host wait for a group's streams)
static void host_wait(const char *call)
{
	if (t_group_depth && t_group_n)
		violation("%s inside an open NCCL group that holds %d collective(s): they are not on their "
			  "streams until ncclGroupEnd, so the wait cannot see them",
			  call, t_group_n);
}

// ---- the CUDA runtime ----
cudaError_t cudaSetDevice(int device)
{
	if (device < 0 || device >= MAXR)
		return cudaErrorInvalidDevice;
	t_dev = device;
	return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
	*device = t_dev;
	return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
	return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t e)
{
	return e == cudaSuccess ? "no error" : e == cudaErrorNotReady ? "not ready" : "fake CUDA error";
}

cudaError_t cudaMalloc(void **p, size_t n)
{
	*p = malloc(n ? n : 1);
	if (!*p)
		return cudaErrorMemoryAllocation;
	memset(*p, 0xab, n);
	return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
	free(p);
	return cudaSuccess;
}

cudaError_t cudaMallocHost(void **p, size_t n)
{
	Pinned *r = calloc(1, sizeof *r);
	*p = malloc(n ? n : 1);
	if (!r || !*p) {
		free(r);
		free(*p);
		return cudaErrorMemoryAllocation;
	}
	r->p = *p;
	r->n = n;
	pthread_mutex_lock(&mu);
	r->next = g_pinned;
	g_pinned = r;
	pthread_mutex_unlock(&mu);
	return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p)
{
	pthread_mutex_lock(&mu);
	for (Pinned **r = &g_pinned; *r; r = &(*r)->next)
		if ((*r)->p == p) {
			Pinned *d = *r;
			*r = d->next;
			free(d);
			break;
		}
	pthread_mutex_unlock(&mu);
	free(p);
	return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *out, unsigned int flags)
{
	cudaStream_t s = calloc(1, sizeof *s);
	if (!s)
		return cudaErrorMemoryAllocation;
	s->dev = t_dev;
	if (pthread_create(&s->th, NULL, stream_main, s)) {
		free(s);
		return cudaErrorMemoryAllocation;
	}
	*out = s;
	return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	pthread_mutex_lock(&mu);
	s->stop = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(s->th, NULL);
	free(s);
	return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
	pthread_mutex_lock(&mu);
	int idle = !s->head && !s->busy;
	pthread_mutex_unlock(&mu);
	return idle ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	pthread_mutex_lock(&mu);
	host_wait("cudaStreamSynchronize");
	while (s->head || s->busy)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s)
{
	if (!s)
		return cudaErrorInvalidResourceHandle;
	pthread_mutex_lock(&mu);
	uint64_t t = push(s, (Op){.kind = OP_COPY, .dst = dst, .src = src, .n = n});
	int blocks = (kind == cudaMemcpyHostToDevice && !pinned(src, n)) ||
		     (kind == cudaMemcpyDeviceToHost && !pinned(dst, n));
	if (blocks)
		host_wait("a blocking cudaMemcpyAsync");
	while (blocks && s->retired < t)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return cudaSuccess;
}

void fake_cuda_delay(cudaStream_t s, long us)
{
	pthread_mutex_lock(&mu);
	push(s, (Op){.kind = OP_DELAY, .us = us});
	pthread_mutex_unlock(&mu);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
	*e = calloc(1, sizeof **e);
	return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	free(e); // the tests destroy events only once nothing waits on them
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	pthread_mutex_lock(&mu);
	push(s, (Op){.kind = OP_RECORD, .ev = e, .gen = ++e->recorded});
	pthread_mutex_unlock(&mu);
	return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
	pthread_mutex_lock(&mu);
	push(s, (Op){.kind = OP_WAIT, .ev = e, .gen = e->recorded});
	pthread_mutex_unlock(&mu);
	return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
	pthread_mutex_lock(&mu);
	int done = e->done >= e->recorded;
	pthread_mutex_unlock(&mu);
	return done ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	pthread_mutex_lock(&mu);
	host_wait("cudaEventSynchronize");
	uint64_t g = e->recorded;
	while (e->done < g)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return cudaSuccess;
}

// ---- NCCL ----
const char *ncclGetErrorString(ncclResult_t r)
{
	static const char *const names[] = {"success",        "unhandled cuda error", "system error",
					    "internal error", "invalid argument",     "invalid usage",
					    "remote error",   "in progress"};
	return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "unknown";
}

const char *ncclGetLastError(ncclComm_t comm)
{
	return "";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	memset(id, 0, sizeof *id);
	pthread_mutex_lock(&mu);
	snprintf(id->internal, sizeof id->internal, "fake-nccl-%u", ++g_ids);
	pthread_mutex_unlock(&mu);
	return ncclSuccess;
}

static struct ncclComm *new_comm(int dev, int blocking)
{
	struct ncclComm *c = calloc(1, sizeof *c);
	c->dev = dev;
	c->blocking = blocking;
	c->rng = g_seed * 2654435761u + (unsigned)dev * 40503u + g_ids;
	c->next = g_comms;
	g_comms = c;
	return c;
}

static Clique *new_clique(const char *id, int world)
{
	Clique *q = calloc(1, sizeof *q);
	memcpy(q->id, id, sizeof q->id);
	q->world = world;
	q->next = g_cliques;
	g_cliques = q;
	return q;
}

// with mu held: the state ncclCommGetAsyncError reports, progress made
static ncclResult_t poll_state(struct ncclComm *c)
{
	if (c->init_pending) {
		if (!c->q || c->q->joined < c->q->world || --c->polls > 0)
			return ncclInProgress;
		c->init_pending = 0;
	}
	if (c->pending) {
		if (--c->polls > 0)
			return ncclInProgress;
		enqueue_chain(c->pending);
		c->pending = NULL;
	}
	if (c->finalizing && !c->finalized) {
		if (c->done < c->issued || --c->polls > 0)
			return ncclInProgress;
		c->finalized = 1;
	}
	return c->async_err;
}

// with mu held: a communicator an NCCL call may use now
static int usable(struct ncclComm *c, const char *call)
{
	if (!c || c->destroyed || c->aborted) {
		violation("%s on a communicator that was destroyed or aborted", call);
		return 0;
	}
	if (c->init_pending || c->pending || (c->finalizing && !c->finalized)) {
		violation("%s on a communicator still in progress (ncclCommGetAsyncError was not polled to "
			  "ncclSuccess)",
			  call);
		return 0;
	}
	return 1;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *out, int nranks, ncclUniqueId id, int rank, ncclConfig_t *config)
{
	if (nranks < 1 || nranks > MAXR || rank < 0 || rank >= nranks)
		return ncclInvalidArgument;
	pthread_mutex_lock(&mu);
	Clique *q = g_cliques;
	while (q && memcmp(q->id, id.internal, sizeof q->id))
		q = q->next;
	if (!q)
		q = new_clique(id.internal, nranks);
	struct ncclComm *c = new_comm(t_dev, !config || config->blocking != 0);
	c->q = q;
	c->rank = rank;
	c->world = nranks;
	q->members[rank] = c;
	q->joined++;
	c->init_pending = 1;
	c->polls = polls_for(c);
	*out = c;
	pthread_cond_broadcast(&cv);
	ncclResult_t r = ncclInProgress;
	if (c->blocking)
		while ((r = poll_state(c)) == ncclInProgress)
			wait_cv();
	pthread_mutex_unlock(&mu);
	return r;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *out, ncclConfig_t *config)
{
	pthread_mutex_lock(&mu);
	if (!usable(comm, "ncclCommSplit") || comm->nsplit >= 4) {
		pthread_mutex_unlock(&mu);
		return ncclInvalidUsage;
	}
	Clique *p = comm->q;
	int k = comm->nsplit++;
	struct ncclComm *c = new_comm(comm->dev, !config || config->blocking != 0);
	c->init_pending = 1;
	c->polls = polls_for(c);
	p->split[k].color[comm->rank] = color;
	p->split[k].key[comm->rank] = key;
	p->split[k].child[comm->rank] = c;
	if (++p->split[k].arrived == p->world) // the groups are known: one clique per color
		for (int r = 0; r < p->world; r++) {
			struct ncclComm *m = p->split[k].child[r];
			if (m->q)
				continue;
			char id[NCCL_UNIQUE_ID_BYTES] = {0};
			snprintf(id, sizeof id, "%.80s/split%d/%d", p->id, k, p->split[k].color[r] & 0xffff);
			Clique *q = new_clique(id, 0);
			for (int s = 0; s < p->world; s++)
				if (p->split[k].color[s] == p->split[k].color[r])
					q->world++;
			for (int s = 0; s < p->world; s++) {
				if (p->split[k].color[s] != p->split[k].color[r])
					continue;
				struct ncclComm *n = p->split[k].child[s];
				n->q = q;
				n->world = q->world;
				n->rank = 0;
				for (int t = 0; t < p->world; t++)
					if (p->split[k].color[t] == p->split[k].color[s] &&
					    (p->split[k].key[t] < p->split[k].key[s] ||
					     (p->split[k].key[t] == p->split[k].key[s] && t < s)))
						n->rank++;
				q->members[n->rank] = n;
				q->joined++;
			}
		}
	*out = c;
	pthread_cond_broadcast(&cv);
	ncclResult_t r = ncclInProgress;
	if (c->blocking)
		while ((r = poll_state(c)) == ncclInProgress)
			wait_cv();
	pthread_mutex_unlock(&mu);
	return r;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state)
{
	pthread_mutex_lock(&mu);
	ncclResult_t r = ncclSuccess;
	if (!comm || comm->destroyed || comm->aborted) {
		violation("ncclCommGetAsyncError on a communicator that was destroyed or aborted");
		r = ncclInvalidArgument;
	} else {
		*state = poll_state(comm);
	}
	pthread_mutex_unlock(&mu);
	return r;
}

static ncclResult_t issue(ncclComm_t comm, Coll k, const char *call)
{
	if (!k.stream)
		return ncclInvalidArgument;
	pthread_mutex_lock(&mu);
	if (!usable(comm, call)) {
		pthread_mutex_unlock(&mu);
		return ncclInvalidUsage;
	}
	Coll *p = malloc(sizeof *p);
	*p = k;
	p->comm = comm;
	p->rank = comm->rank;
	p->seq = comm->issued++;
	p->next = NULL;
	ncclResult_t r = ncclSuccess;
	if (t_group_depth) { // recorded; its place in the group is known at the end
		p->gpos = t_group_n++;
		if (t_group_tail)
			t_group_tail->next = p;
		else
			t_group_head = p;
		t_group_tail = p;
	} else if (comm->blocking || draw(comm, 5) == 0) {
		enqueue(p);
	} else {
		comm->pending = p;
		comm->polls = polls_for(comm);
		r = ncclInProgress;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclComm_t comm,
			   cudaStream_t s)
{
	return issue(comm,
		     (Coll){.kind = C_ALLGATHER, .send = send, .recv = recv, .count = count, .dt = dt, .stream = s},
		     "ncclAllGather");
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op,
			   ncclComm_t comm, cudaStream_t s)
{
	if (dt != ncclFloat32 && dt != ncclFloat64)
		return ncclInvalidArgument;
	return issue(comm,
		     (Coll){.kind = C_ALLREDUCE,
			    .send = send,
			    .recv = recv,
			    .count = count,
			    .dt = dt,
			    .op = op,
			    .stream = s},
		     "ncclAllReduce");
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op,
			       ncclComm_t comm, cudaStream_t s)
{
	if (dt != ncclFloat32 && dt != ncclFloat64)
		return ncclInvalidArgument;
	return issue(comm,
		     (Coll){.kind = C_REDUCE_SCATTER,
			    .send = send,
			    .recv = recv,
			    .count = count,
			    .dt = dt,
			    .op = op,
			    .stream = s},
		     "ncclReduceScatter");
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t dt, int root, ncclComm_t comm,
			   cudaStream_t s)
{
	return issue(comm,
		     (Coll){.kind = C_BROADCAST,
			    .send = send,
			    .recv = recv,
			    .count = count,
			    .dt = dt,
			    .root = root,
			    .stream = s},
		     "ncclBroadcast");
}

ncclResult_t ncclGroupStart(void)
{
	t_group_depth++;
	return ncclSuccess;
}

// The outermost end: each communicator's recorded collectives go on their streams in issue order,
// at once (blocking) or after its polls (non-blocking, ncclInProgress). One communicator per group
// is what comm_nccl.c issues; several work, each keeping its own order.
ncclResult_t ncclGroupEnd(void)
{
	if (t_group_depth == 0)
		return ncclInvalidUsage;
	if (--t_group_depth)
		return ncclSuccess;
	pthread_mutex_lock(&mu);
	Coll *k = t_group_head;
	const int n = t_group_n;
	t_group_head = t_group_tail = NULL;
	t_group_n = 0;
	ncclResult_t r = ncclSuccess;
	while (k) {
		struct ncclComm *c = k->comm;
		Coll *head = NULL, **tail = &head, *rest = NULL, **rtail = &rest;
		for (Coll *x = k, *next; x; x = next) { // this communicator's collectives, in order
			next = x->next;
			x->next = NULL;
			x->gsize = n;
			if (x->comm == c) {
				*tail = x;
				tail = &x->next;
			} else {
				*rtail = x;
				rtail = &x->next;
			}
		}
		k = rest;
		if (c->aborted || c->destroyed) {
			free_chain(head);
		} else if (c->blocking || draw(c, 5) == 0) {
			enqueue_chain(head);
		} else {
			c->pending = head;
			c->polls = polls_for(c);
			r = ncclInProgress;
		}
	}
	pthread_mutex_unlock(&mu);
	return r;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	pthread_mutex_lock(&mu);
	ncclResult_t r = ncclInvalidUsage;
	if (usable(comm, "ncclCommFinalize")) {
		comm->finalizing = 1;
		comm->polls = polls_for(comm);
		r = ncclInProgress;
		if (comm->blocking)
			while ((r = poll_state(comm)) == ncclInProgress)
				wait_cv();
	}
	pthread_mutex_unlock(&mu);
	return r;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	pthread_mutex_lock(&mu);
	ncclResult_t r = ncclInvalidUsage;
	if (usable(comm, "ncclCommDestroy")) {
		comm->destroyed = 1;
		r = ncclSuccess;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	pthread_mutex_lock(&mu);
	ncclResult_t r = ncclInvalidUsage;
	if (!comm || comm->destroyed || comm->aborted) {
		violation("ncclCommAbort on a communicator that was destroyed or aborted");
	} else {
		comm->aborted = 1;
		free_chain(comm->pending);
		comm->pending = NULL;
		r = ncclSuccess;
	}
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return r;
}

void fake_nccl_set_async_error(int dev, ncclResult_t r)
{
	pthread_mutex_lock(&mu);
	for (struct ncclComm *c = g_comms; c; c = c->next)
		if (c->dev == dev)
			c->async_err = r;
	pthread_mutex_unlock(&mu);
}

void fake_nccl_free(void)
{
	pthread_mutex_lock(&mu);
	while (g_comms) {
		struct ncclComm *c = g_comms;
		g_comms = c->next;
		free_chain(c->pending);
		free(c);
	}
	while (g_cliques) {
		Clique *q = g_cliques;
		g_cliques = q->next;
		for (int s = 0; s < NSLOT; s++)
			for (int r = 0; r < MAXR; r++)
				free(q->slot[s].stage[r]);
		free(q);
	}
	while (g_pinned) {
		Pinned *r = g_pinned;
		g_pinned = r->next;
		free(r);
	}
	pthread_mutex_unlock(&mu);
}
