// make bench-ring: handoffs per second through the ring with empty payloads (1 producer ->
// 1 consumer, 4 -> 2) and clip-sized payload throughput as a ratio to single-threaded memcpy
// of the same bytes measured in the same run. Producers and consumers are separate processes.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "ring_testutil.h"
#include "proc_time.h" // defines: time_mono_s

typedef struct {
	_Atomic int stop;
	_Atomic int ready;
	_Atomic int go;
} Shared;

// 1 -> 1 payload runs pin the producer and the consumer to different CPUs, as loaderd and
// the trainer are in a real job
static void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu % CPU_SETSIZE, &set);
	sched_setaffinity(0, sizeof set, &set);
}

static void producer(const char *name, Shared *sh, const uint8_t *src)
{
	Ring *r;
	RingProducer *p;
	if (ring_open(&r, name, NULL, NULL, 0) || ring_producer_attach(r, 0, &p))
		_exit(2);
	RingInfo info;
	ring_info(r, &info);
	atomic_fetch_add(&sh->ready, 1);
	while (!atomic_load(&sh->go)) {
	}
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		RingSlot s;
		int e = ring_producer_claim(p, &s, 20);
		if (e == -ETIMEDOUT)
			continue;
		if (e)
			break;
		if (src)
			memcpy(s.payload, src, info.payload_bytes);
		ring_producer_publish(p, &s);
	}
	ring_producer_detach(p);
	_exit(0);
}

static void consumer(const char *name, Shared *sh, uint32_t rank, uint64_t count, uint8_t *dst)
{
	Ring *r;
	RingConsumer *c;
	if (ring_open(&r, name, NULL, NULL, 0) || ring_consumer_attach(r, rank, &c))
		_exit(2);
	RingInfo info;
	ring_info(r, &info);
	atomic_fetch_add(&sh->ready, 1);
	while (!atomic_load(&sh->go)) {
	}
	for (uint64_t i = 0; i < count; i++) {
		RingSlot s;
		if (ring_consumer_acquire(c, &s, 10000))
			_exit(3);
		if (dst)
			memcpy(dst, s.payload, info.payload_bytes);
		ring_consumer_release(c, &s);
	}
	ring_consumer_detach(c);
	_exit(0);
}

// Moves `per_rank` positions to each of N consumers from P producers; returns seconds.
static double run(int P, int N, uint32_t slots, RingGeometry g, uint64_t per_rank, int copy)
{
	char name[64];
	snprintf(name, sizeof name, "%s", test_ring_name("bench"));
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = g;
	o.slots = slots;
	o.ranks = (uint32_t)N;
	o.replace = 1;
	Ring *r;
	char err[256];
	if (ring_create(&r, name, &o, err, sizeof err)) {
		fprintf(stderr, "bench: %s\n", err);
		exit(1);
	}
	size_t bytes = ring_payload_bytes(&g);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	Shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint8_t *src = copy ? malloc(bytes) : NULL, *dst = copy ? malloc(bytes) : NULL;
	if (copy)
		memset(src, 7, bytes), memset(dst, 1, bytes);
	pid_t pids[16];
	int n = 0;
	for (int k = 0; k < N; k++)
		if ((pids[n++] = fork()) == 0)
			pin(copy && ncpu > 1 ? 1 : -1), consumer(name, sh, (uint32_t)k, per_rank, dst);
	for (int i = 0; i < P; i++)
		if ((pids[n++] = fork()) == 0)
			pin(copy && ncpu > 1 ? 0 : -1), producer(name, sh, src);
	while (atomic_load(&sh->ready) < P + N)
		usleep(100);
	double t0 = time_mono_s();
	atomic_store(&sh->go, 1);
	for (int k = 0; k < N; k++)
		waitpid(pids[k], NULL, 0);
	double t = time_mono_s() - t0;
	atomic_store(&sh->stop, 1);
	for (int i = N; i < n; i++)
		waitpid(pids[i], NULL, 0);
	ring_close(r);
	ring_destroy(name);
	munmap(sh, sizeof *sh);
	free(src);
	free(dst);
	return t;
}

static double best_of(int reps, int P, int N, uint32_t slots, RingGeometry g, uint64_t per_rank, int copy)
{
	double best = 1e30;
	for (int i = 0; i < reps; i++) {
		double t = run(P, N, slots, g, per_rank, copy);
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 3;
	RingGeometry empty = {.frames = 1, .height = 1, .width = 1, .channels = 1, .text_len = 0};
	RingGeometry clip = {.frames = 16, .height = 224, .width = 224, .channels = 3, .text_len = 77};
	uint64_t handoffs = 2000000;
	double t11 = best_of(reps, 1, 1, 256, empty, handoffs, 0);
	double t42 = best_of(reps, 4, 2, 256, empty, handoffs / 2, 0);
	printf("handoffs, empty payload, 1 producer -> 1 consumer: %.2f M/s\n", (double)handoffs / t11 / 1e6);
	printf("handoffs, empty payload, 4 producers -> 2 consumers: %.2f M/s\n", (double)handoffs / t42 / 1e6);

	size_t bytes = ring_payload_bytes(&clip);
	uint64_t clips = 400;
	double tring = best_of(reps, 1, 1, 8, clip, clips, 1);
	// baselines, one thread copying the same bytes once per clip: into one hot buffer (the
	// L2/L3 copy speed), and into as many slot-sized buffers as the ring has slots (the same
	// memory footprint the ring's payloads occupy): the ratio uses the second
	const int S = 8;
	uint8_t *a = malloc(bytes), *b = malloc(bytes), *slots = aligned_alloc(4096, bytes * S);
	memset(a, 7, bytes), memset(b, 1, bytes), memset(slots, 3, bytes * S);
	double thot = 1e30, tfoot = 1e30;
	for (int i = 0; i < reps; i++) {
		double t0 = time_mono_s();
		for (uint64_t k = 0; k < clips; k++) {
			memcpy(b, a, bytes);
			__asm__ __volatile__("" : : "r"(b) : "memory");
		}
		double t1 = time_mono_s();
		for (uint64_t k = 0; k < clips; k++) {
			memcpy(slots + (k % S) * bytes, a, bytes);
			__asm__ __volatile__("" : : "r"(slots) : "memory");
		}
		double t2 = time_mono_s();
		if (t1 - t0 < thot)
			thot = t1 - t0;
		if (t2 - t1 < tfoot)
			tfoot = t2 - t1;
	}
	free(a), free(b), free(slots);
	double moved = (double)bytes * (double)clips;
	double ring_gbs = moved / tring / 1e9, hot_gbs = moved / thot / 1e9, foot_gbs = moved / tfoot / 1e9;
	printf("payload %zu B (16x224x224x3), 1 -> 1, producer writes, consumer reads: %.2f GB/s (%.0f clips/s)\n",
	       bytes, ring_gbs, (double)clips / tring);
	printf("memcpy, one thread, into %d slot-sized buffers: %.2f GB/s; into one hot buffer: %.2f GB/s (ratio to it: %.2f)\n",
	       S, foot_gbs, hot_gbs, ring_gbs / hot_gbs);
	printf("ring: handoffs 1->1 %.2f M/s, 4->2 %.2f M/s (target >= 1.0); payload 1->1 / memcpy = %.2f (target >= 0.7)\n",
	       (double)handoffs / t11 / 1e6, (double)handoffs / t42 / 1e6, ring_gbs / foot_gbs);
	return 0;
}
