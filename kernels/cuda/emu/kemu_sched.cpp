// Asynchronous streams for the shim: every stream-ordered call becomes an op in its stream's
// queue, and a seeded scheduler runs the queues later in a random interleaving.
//
// Design note. With KEMU_SCHED_SEED unset (and no kemu_sched call) every op runs when it is issued,
// as the shim always did. With a seed, an op waits in its stream's queue until the scheduler runs
// it; a step runs the head op of a stream chosen at random among those whose head is ready. What
// orders ops is only what CUDA guarantees: the order within a stream, cudaStreamWaitEvent (on the
// record that was most recent when it was called), the legacy default stream against blocking
// streams, and the host's waits (stream, event and device synchronize, a successful query, the
// copies that block the caller). The scheduler runs work at those waits (what they need, then a
// random amount more), at queries (a random amount) and at each enqueue (a random amount of the earlier ops).
// Every op carries a vector clock (one component per stream) built from its stream's previous op,
// the records it waits for and what the host had waited for when it was issued; kemu_check.cpp
// compares the clock of each device-memory access against the last writer and reader of the same
// 4 bytes, so a missing event wait is reported whatever interleaving ran (kemu_check_order_*).
// A fault of an op becomes the sticky error that every later call returns, as on a device.
// Not modelled: ops of one stream overlapping, host callbacks, graphs, per-thread default streams
// (cudaStreamPerThread is the legacy stream here), stream priorities.
#include "kemu_impl.h" // defines: kemu_sched_*, kemu_check_order_*

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <deque>

struct KemuRecord {
	bool done = false;
	KemuVClock vc{};
	double t_ms = 0; // the host clock when it ran (cudaEventElapsedTime)
};

namespace
{

struct Op {
	const char *name;
	std::function<cudaError_t()> work;             // empty for a record or a wait
	std::vector<std::shared_ptr<KemuRecord>> deps; // run after these
	std::shared_ptr<KemuRecord> rec;               // completed by this op
	std::shared_ptr<const KemuVClock> host;        // what the host had waited for at the enqueue
	// a copy into pinned host memory: run only for a host wait or query, never at another op's
	// enqueue, so a host read of its destination before waiting reads the poison, whatever the seed
	bool lazy = false;
};

struct Stream {
	bool used, blocking;
	std::deque<Op *> q;
	KemuVClock vc;
	uint64_t issued;             // ops ever queued
	uint64_t seen[KEMU_NSTREAM]; // legacy ordering: the other stream's `issued` last ordered against
};

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
struct State {
	bool configured, async;
	uint64_t rng;
	Stream s[KEMU_NSTREAM];
	std::shared_ptr<const KemuVClock> host = std::make_shared<KemuVClock>();
	cudaError_t sticky;
} S;

// ops still queued when the process ends (a program that never waited for them) are freed, so a
// leak checker sees only the program's own
struct Reaper {
	~Reaper()
	{
		for (auto &st : S.s)
			for (Op *op : st.q)
				delete op;
	}
} reaper;

void configure()
{
	if (S.configured)
		return;
	S.configured = true;
	const char *e = getenv("KEMU_SCHED_SEED");
	if (!e || !*e)
		return;
	S.async = true;
	S.rng = strcmp(e, "random") ? strtoull(e, nullptr, 0) : (uint64_t)time(nullptr) ^ (uint64_t)getpid() << 32;
	if (!strcmp(e, "random"))
		fprintf(stderr, "kemu: KEMU_SCHED_SEED=%llu repeats this schedule\n", (unsigned long long)S.rng);
	S.s[0].used = S.s[0].blocking = true; // the legacy default stream
}

uint64_t rand64()
{
	uint64_t z = (S.rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void merge(KemuVClock &a, const KemuVClock &b)
{
	for (int i = 0; i < KEMU_NSTREAM; i++)
		a.c[i] = a.c[i] > b.c[i] ? a.c[i] : b.c[i];
}

void host_learns(const KemuVClock &vc)
{
	auto h = std::make_shared<KemuVClock>(*S.host);
	merge(*h, vc);
	S.host = h;
}

bool ready(const Stream &st, bool allow_lazy)
{
	if (st.q.empty() || (st.q.front()->lazy && !allow_lazy))
		return false;
	for (auto &d : st.q.front()->deps)
		if (!d->done)
			return false;
	return true;
}

void fail(cudaError_t e)
{
	if (!S.sticky)
		S.sticky = e;
	kemu_set_error(e);
}

void run_head(int id)
{
	Stream &st = S.s[id];
	Op *op = st.q.front();
	st.q.pop_front();
	for (auto &d : op->deps)
		merge(st.vc, d->vc);
	merge(st.vc, *op->host);
	st.vc.c[id]++;
	if (op->work) {
		kemu_check_order_begin(id, &st.vc, op->name);
		cudaError_t e = S.sticky ? cudaSuccess : op->work(); // a faulted device runs nothing more
		if (kemu_check_order_end())
			e = e ? e : cudaErrorLaunchFailure;
		if (e)
			fail(e);
	}
	if (op->rec) {
		op->rec->vc = st.vc;
		op->rec->t_ms = kemu_now_ms();
		op->rec->done = true;
	}
	delete op;
}

// one op of a stream whose head is ready, chosen at random; false when none is (allow_lazy: for
// the host, which may run lazy copies)
bool step(bool allow_lazy = true)
{
	int pick[KEMU_NSTREAM], n = 0;
	for (int i = 0; i < KEMU_NSTREAM; i++)
		if (S.s[i].used && ready(S.s[i], allow_lazy))
			pick[n++] = i;
	if (!n)
		return false;
	run_head(pick[rand64() % (uint64_t)n]);
	return true;
}

void run_some(unsigned most, bool allow_lazy = true)
{
	for (uint64_t k = rand64() % (most + 1); k && step(allow_lazy); k--) {
	}
}

template <class Pred>
void run_until(Pred done)
{
	while (!done() && step()) {
	}
	run_some(2);
}

// An implicit record at the tail of stream `id`, for the legacy stream's ordering.
std::shared_ptr<KemuRecord> tail_record(int id)
{
	auto r = std::make_shared<KemuRecord>();
	Stream &st = S.s[id];
	st.q.push_back(new Op{"(legacy stream order)", {}, {}, r, S.host});
	st.issued++;
	return r;
}

// The legacy default stream waits for every blocking stream's earlier work, and every blocking
// stream waits for the legacy stream's.
void legacy_deps(int id, std::vector<std::shared_ptr<KemuRecord>> &deps)
{
	Stream &st = S.s[id];
	if (!st.blocking)
		return;
	for (int o = 0; o < KEMU_NSTREAM; o++) {
		if (o == id || !S.s[o].used || !S.s[o].blocking || (id != 0 && o != 0))
			continue;
		if (S.s[o].issued > st.seen[o]) {
			deps.push_back(tail_record(o));
			st.seen[o] = S.s[o].issued;
		}
	}
}

// Queues op after a random number of earlier ops have run: never the new one itself, so the host
// always gets to see a copy's destination before the copy has run.
cudaError_t push(int id, Op *op)
{
	if (S.sticky) { // a faulted device runs nothing more: the op is dropped, not kept until exit
		delete op;
		return S.sticky;
	}
	run_some(2, false);
	legacy_deps(id, op->deps);
	S.s[id].q.push_back(op);
	S.s[id].issued++;
	return S.sticky;
}

} // namespace

bool kemu_sched_async(void)
{
	pthread_mutex_lock(&lock);
	configure();
	bool a = S.async;
	pthread_mutex_unlock(&lock);
	return a;
}

void kemu_sched(uint64_t seed)
{
	pthread_mutex_lock(&lock);
	configure();
	if (!S.async) {
		S.async = true;
		S.s[0].used = S.s[0].blocking = true;
	}
	S.rng = seed;
	pthread_mutex_unlock(&lock);
}

extern "C" void kemu_sched_c(uint64_t seed)
{
	kemu_sched(seed);
}

int kemu_sched_stream_open(bool blocking)
{
	pthread_mutex_lock(&lock);
	configure();
	int id = -1;
	for (int i = 1; i < KEMU_NSTREAM && id < 0; i++)
		if (!S.s[i].used)
			id = i;
	if (id > 0) { // the clock goes on from the slot's last user, so old records stay comparable
		Stream &st = S.s[id];
		st.used = true;
		st.blocking = blocking;
		merge(st.vc, *S.host);
	}
	pthread_mutex_unlock(&lock);
	return id;
}

void kemu_sched_stream_close(int id)
{
	pthread_mutex_lock(&lock);
	run_until([&] { return S.s[id].q.empty(); });
	host_learns(S.s[id].vc);
	S.s[id].used = false;
	pthread_mutex_unlock(&lock);
}

cudaError_t kemu_sched_enqueue(int id, const char *name, std::function<cudaError_t()> work, bool lazy)
{
	pthread_mutex_lock(&lock);
	configure();
	cudaError_t e;
	if (!S.async) {
		pthread_mutex_unlock(&lock);
		return work();
	}
	Op *op = new Op{name, std::move(work), {}, nullptr, S.host};
	op->lazy = lazy;
	e = push(id, op);
	pthread_mutex_unlock(&lock);
	return e;
}

std::shared_ptr<KemuRecord> kemu_sched_record(int id)
{
	auto r = std::make_shared<KemuRecord>();
	pthread_mutex_lock(&lock);
	configure();
	if (S.async)
		push(id, new Op{"cudaEventRecord", {}, {}, r, S.host});
	else
		r->done = true, r->t_ms = kemu_now_ms();
	pthread_mutex_unlock(&lock);
	return r;
}

cudaError_t kemu_sched_wait(int id, const std::shared_ptr<KemuRecord> &r)
{
	pthread_mutex_lock(&lock);
	cudaError_t e = S.sticky;
	if (S.async && r)
		e = push(id, new Op{"cudaStreamWaitEvent", {}, {r}, nullptr, S.host});
	pthread_mutex_unlock(&lock);
	return e;
}

cudaError_t kemu_sched_sync_stream(int id)
{
	pthread_mutex_lock(&lock);
	if (S.async) {
		// a blocking stream's sync waits for the legacy stream's earlier work too
		auto r = std::make_shared<KemuRecord>();
		push(id, new Op{"cudaStreamSynchronize", {}, {}, r, S.host});
		run_until([&] { return r->done; });
		host_learns(r->vc);
	}
	cudaError_t e = S.sticky;
	pthread_mutex_unlock(&lock);
	return e;
}

cudaError_t kemu_sched_sync_record(const std::shared_ptr<KemuRecord> &r)
{
	pthread_mutex_lock(&lock);
	if (S.async && r) {
		run_until([&] { return r->done; });
		host_learns(r->vc);
	}
	cudaError_t e = S.sticky;
	pthread_mutex_unlock(&lock);
	return e;
}

cudaError_t kemu_sched_sync_all(void)
{
	pthread_mutex_lock(&lock);
	if (S.async) {
		while (step()) {
		}
		for (auto &st : S.s)
			if (st.used)
				host_learns(st.vc);
	}
	cudaError_t e = S.sticky;
	pthread_mutex_unlock(&lock);
	return e;
}

// true when the stream's work has all run (or the record has)
cudaError_t kemu_sched_query_stream(int id)
{
	pthread_mutex_lock(&lock);
	bool done = true;
	if (S.async) {
		run_some(3);
		done = S.s[id].q.empty();
		if (done)
			host_learns(S.s[id].vc);
	}
	cudaError_t e = S.sticky ? S.sticky : done ? cudaSuccess : cudaErrorNotReady;
	pthread_mutex_unlock(&lock);
	return e;
}

double kemu_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

// ms between two records that have run (cudaEventElapsedTime); never runs work
cudaError_t kemu_sched_elapsed(const std::shared_ptr<KemuRecord> &a, const std::shared_ptr<KemuRecord> &b, float *ms)
{
	pthread_mutex_lock(&lock);
	cudaError_t e = S.sticky;
	if (!e)
		e = !a || !b ? cudaErrorInvalidResourceHandle : !a->done || !b->done ? cudaErrorNotReady : cudaSuccess;
	if (!e)
		*ms = (float)(b->t_ms - a->t_ms);
	pthread_mutex_unlock(&lock);
	return e;
}

cudaError_t kemu_sched_query_record(const std::shared_ptr<KemuRecord> &r)
{
	pthread_mutex_lock(&lock);
	bool done = true;
	if (S.async && r) {
		run_some(3);
		done = r->done;
		if (done)
			host_learns(r->vc);
	}
	cudaError_t e = S.sticky ? S.sticky : done ? cudaSuccess : cudaErrorNotReady;
	pthread_mutex_unlock(&lock);
	return e;
}

extern "C" int kemu_async_c(void)
{
	return kemu_sched_async();
}

extern "C" int kemu_enqueue_c(void *stream, const char *name, int (*run)(void *ctx), void *ctx, void (*drop)(void *ctx))
{
	if (!kemu_stream_ok((cudaStream_t)stream)) {
		drop(ctx);
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	}
	std::shared_ptr<void> hold(ctx, drop); // freed with the op, run or not
	return kemu_sched_enqueue(kemu_stream_id((cudaStream_t)stream), name,
				  [run, hold]() { return (cudaError_t)run(hold.get()); });
}
