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
// Stream capture (CUDA graphs, in either mode): a capturing stream keeps what is enqueued on it as
// nodes instead (work functions holding their arguments as captured), and a graph launch enqueues
// them again, so a replay runs each op with the arguments of its capture; the calls CUDA forbids
// while a thread captures fail with its capture-mode errors and invalidate the capture.
// Not modelled: ops of one stream overlapping, host callbacks, fork/join capture over several
// streams, per-thread default streams (cudaStreamPerThread is the legacy stream here), stream
// priorities.
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
	double t_ms = 0;      // the host clock when it ran (cudaEventElapsedTime)
	uint64_t capture = 0; // nonzero: made inside that stream capture (no device record: a captured event)
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

// a stream's capture sequence (id 0: none)
struct Capture {
	uint64_t id = 0;
	bool invalid = false, relaxed = false;
	pthread_t thread{};
	std::shared_ptr<KemuNodes> nodes;
};

struct Stream {
	bool used, blocking;
	Capture cap;
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
	int captures;         // streams capturing now
	uint64_t capture_ids; // the last capture's id
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

// The calling thread's captures (not relaxed) cannot record `call`: each is invalidated.
cudaError_t forbid_locked(const char *call)
{
	bool any = false;
	for (int i = 0; i < KEMU_NSTREAM && S.captures; i++) {
		Capture &c = S.s[i].cap;
		if (c.id && !c.relaxed && pthread_equal(c.thread, pthread_self())) {
			if (!c.invalid)
				fprintf(stderr,
					"kemu: %s while this thread captures stream %d into a graph: "
					"cudaErrorStreamCaptureUnsupported, the capture is invalidated\n",
					call, i);
			c.invalid = any = true;
		}
	}
	return any ? kemu_set_error(cudaErrorStreamCaptureUnsupported) : cudaSuccess;
}

cudaError_t refuse_locked(int id, cudaError_t e, const char *why)
{
	Capture &c = S.s[id].cap;
	if (c.id && !c.invalid)
		fprintf(stderr,
			"kemu: %s on stream %d while it captures into a graph: %s, the capture is invalidated\n", why,
			id, cudaGetErrorName(e));
	c.invalid = true;
	return kemu_set_error(e);
}

// the open capture whose id is `capture` (-1: none, it has ended)
int capture_stream(uint64_t capture)
{
	for (int i = 0; i < KEMU_NSTREAM && capture; i++)
		if (S.s[i].cap.id == capture)
			return i;
	return -1;
}

// a host wait or query of a record made inside a capture: cudaErrorCapturedEvent (the capture, if
// still open, is invalidated)
cudaError_t captured_record(const std::shared_ptr<KemuRecord> &r, const char *call)
{
	int i = capture_stream(r->capture);
	return i >= 0 ? refuse_locked(i, cudaErrorCapturedEvent, call) : kemu_set_error(cudaErrorCapturedEvent);
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
	bool a = S.async || S.captures > 0;
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
	if (S.s[id].cap.id) { // the runtime refuses to destroy a capturing stream; the capture ends here
		S.s[id].cap = Capture();
		S.captures--;
	}
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
	Capture &cap = S.s[id].cap;
	if (cap.id) { // recorded, not run: a graph launch runs it
		e = cap.invalid ? kemu_set_error(cudaErrorStreamCaptureInvalidated) : cudaSuccess;
		if (!e)
			cap.nodes->push_back(KemuNode{name, std::move(work), lazy});
		pthread_mutex_unlock(&lock);
		return e;
	}
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
	if (S.s[id].cap.id)
		r->capture = S.s[id].cap.id; // the event now names a point of the capture, nothing on the device
	else if (S.async)
		push(id, new Op{"cudaEventRecord", {}, {}, r, S.host});
	else
		r->done = true, r->t_ms = kemu_now_ms();
	pthread_mutex_unlock(&lock);
	return r;
}

// inside a capture: a record of the same capture is in stream order already; one made outside
// would tie the graph to work that is not in it. Outside: a captured record would join the stream
// to the capture (fork/join), which is not modelled.
static cudaError_t capture_wait(int id, const std::shared_ptr<KemuRecord> &r)
{
	const Capture &c = S.s[id].cap;
	if (c.id) {
		if (c.invalid)
			return kemu_set_error(cudaErrorStreamCaptureInvalidated);
		if (!r || r->capture == c.id)
			return cudaSuccess;
		return refuse_locked(id, r->capture ? cudaErrorStreamCaptureMerge : cudaErrorStreamCaptureIsolation,
				     r->capture ? "cudaStreamWaitEvent on an event of another capture"
						: "cudaStreamWaitEvent on an event recorded outside the capture");
	}
	int k = capture_stream(r->capture);
	if (k < 0)
		return kemu_set_error(cudaErrorCapturedEvent);
	return refuse_locked(
		k, cudaErrorStreamCaptureUnsupported,
		"cudaStreamWaitEvent of another stream on a captured event (fork/join capture: not modelled)");
}

cudaError_t kemu_sched_wait(int id, const std::shared_ptr<KemuRecord> &r)
{
	pthread_mutex_lock(&lock);
	if (S.s[id].cap.id || (r && r->capture)) {
		cudaError_t ce = capture_wait(id, r);
		pthread_mutex_unlock(&lock);
		return ce;
	}
	cudaError_t e = S.sticky;
	if (S.async && r)
		e = push(id, new Op{"cudaStreamWaitEvent", {}, {r}, nullptr, S.host});
	pthread_mutex_unlock(&lock);
	return e;
}

cudaError_t kemu_sched_sync_stream(int id)
{
	pthread_mutex_lock(&lock);
	if (S.s[id].cap.id) {
		cudaError_t ce = refuse_locked(id, cudaErrorStreamCaptureUnsupported, "cudaStreamSynchronize");
		pthread_mutex_unlock(&lock);
		return ce;
	}
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
	if (r && r->capture) {
		cudaError_t ce = captured_record(r, "cudaEventSynchronize of a captured event");
		pthread_mutex_unlock(&lock);
		return ce;
	}
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
	if (cudaError_t ce = S.captures ? forbid_locked("a wait for the whole device") : cudaSuccess) {
		pthread_mutex_unlock(&lock);
		return ce;
	}
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
	if (S.s[id].cap.id) {
		cudaError_t ce = refuse_locked(id, cudaErrorStreamCaptureUnsupported, "cudaStreamQuery");
		pthread_mutex_unlock(&lock);
		return ce;
	}
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
	if (!e && a && b && (a->capture || b->capture))
		e = captured_record(a->capture ? a : b, "cudaEventElapsedTime of a captured event");
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
	if (r && r->capture) {
		cudaError_t ce = captured_record(r, "cudaEventQuery of a captured event");
		pthread_mutex_unlock(&lock);
		return ce;
	}
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

// ---- stream capture ----
cudaError_t kemu_sched_capture_begin(int id, bool relaxed)
{
	pthread_mutex_lock(&lock);
	configure();
	Capture &c = S.s[id].cap;
	cudaError_t e = id == 0 ? cudaErrorStreamCaptureUnsupported : c.id ? cudaErrorIllegalState : cudaSuccess;
	if (!e) {
		c.id = ++S.capture_ids;
		c.invalid = false;
		c.relaxed = relaxed;
		c.thread = pthread_self();
		c.nodes = std::make_shared<KemuNodes>();
		S.captures++;
	}
	pthread_mutex_unlock(&lock);
	return kemu_set_error(e);
}

cudaError_t kemu_sched_capture_end(int id, std::shared_ptr<const KemuNodes> *out)
{
	pthread_mutex_lock(&lock);
	Capture &c = S.s[id].cap;
	cudaError_t e = !c.id                                                    ? cudaErrorStreamCaptureUnmatched
			: !c.relaxed && !pthread_equal(c.thread, pthread_self()) ? cudaErrorStreamCaptureWrongThread
			: c.invalid                                              ? cudaErrorStreamCaptureInvalidated
										 : cudaSuccess;
	*out = e ? nullptr : c.nodes;
	if (e != cudaErrorStreamCaptureUnmatched && e != cudaErrorStreamCaptureWrongThread) {
		c = Capture();
		S.captures--;
	}
	pthread_mutex_unlock(&lock);
	return kemu_set_error(e);
}

int kemu_sched_capture_status(int id)
{
	pthread_mutex_lock(&lock);
	const Capture &c = S.s[id].cap;
	int st = !c.id ? KEMU_CAPTURE_NONE : c.invalid ? KEMU_CAPTURE_INVALID : KEMU_CAPTURE_ACTIVE;
	pthread_mutex_unlock(&lock);
	return st;
}

cudaError_t kemu_sched_capture_forbid(const char *call)
{
	pthread_mutex_lock(&lock);
	cudaError_t e = S.captures ? forbid_locked(call) : cudaSuccess;
	pthread_mutex_unlock(&lock);
	return e;
}

cudaError_t kemu_sched_capture_refuse(int id, cudaError_t e, const char *why)
{
	pthread_mutex_lock(&lock);
	e = refuse_locked(id, e, why);
	pthread_mutex_unlock(&lock);
	return e;
}

cudaError_t kemu_sched_launch_graph(int id, const KemuNodes &nodes, std::shared_ptr<KemuRecord> *last)
{
	pthread_mutex_lock(&lock);
	configure();
	Capture &c = S.s[id].cap;
	if (c.id) { // a graph launched into a capture becomes part of it
		cudaError_t e = c.invalid ? kemu_set_error(cudaErrorStreamCaptureInvalidated) : cudaSuccess;
		for (size_t i = 0; !e && i < nodes.size(); i++)
			c.nodes->push_back(nodes[i]);
		pthread_mutex_unlock(&lock);
		return e;
	}
	if (!S.async) { // every node runs now, in order; the first failure ends the launch
		pthread_mutex_unlock(&lock);
		for (const KemuNode &n : nodes)
			if (cudaError_t e = n.work())
				return kemu_set_error(e);
		return cudaSuccess;
	}
	// behind the graph's previous launch (CUDA orders launches of one executable graph), then each
	// node as an op of the stream, with the host's clock of now
	if (*last)
		push(id, new Op{"cudaGraphLaunch (after its previous launch)", {}, {*last}, nullptr, S.host});
	for (const KemuNode &n : nodes) {
		Op *op = new Op{n.name, n.work, {}, nullptr, S.host};
		op->lazy = n.lazy;
		push(id, op);
	}
	auto r = std::make_shared<KemuRecord>();
	push(id, new Op{"cudaGraphLaunch (end)", {}, {}, r, S.host});
	*last = r;
	cudaError_t e = S.sticky;
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
