// The benchmark mode. Design note: the threads are the daemon's (ld_worker_main: claim, read
// the planned byte ranges with io_uring or pread, decode into the slot, publish), filling a
// private ring that one in-process consumer drains, so what is timed is what a run does minus
// the trainer. Clips/s per core = clips per second of process CPU time (the consumer's few
// microseconds per clip included) over the run after a warm-up; the cost per clip comes from
// the threads' decoder accounts.
#include "ld_bench.h"  // defines: ld_bench_run
#include "ld_cores.h"  // defines: ld_cores_print
#include "proc_time.h" // defines: time_mono_ns

#include "loader.h" // defines: LdParams
#include "log.h"    // defines: log_info, log_warnx

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef struct {
	Ring *ring;
	atomic_int done;
} Drain;

static void *drain_main(void *arg)
{
	Drain *dr = arg;
	RingConsumer *c;
	if (ring_consumer_attach(dr->ring, 0, &c) != 0)
		return NULL;
	while (!atomic_load(&dr->done)) {
		RingSlot s;
		if (ring_consumer_acquire(c, &s, 100) == 0)
			ring_consumer_release(c, &s);
	}
	ring_consumer_detach(c);
	return NULL;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static double wall_s(void)
{
	return time_mono_ns() * 1e-9;
}

static void report(const LdShared *sh, const LdConfig *c, uint64_t clips, double wall, double cpu)
{
	const LdCost *k = &sh->cost;
	double per_core = cpu > 0 ? clips / cpu : 0;
	// the decoder accounts cover the whole run; scale them to the clips they made
	double all = (double)(atomic_load(&sh->produced) + atomic_load(&sh->errors));
	double ms = all > 0 ? 1e-6 / all : 0, split = (k->open_ns + k->demux_ns + k->decode_needed_ns +
						       k->decode_key_ns + k->decode_ref_ns + k->convert_ns) *
						      ms;
	printf("%llu clips (%llu errors) in %.1f s: %.1f clips/s; %.1f s of CPU: %.1f clips/s per core\n",
	       (unsigned long long)clips, (unsigned long long)atomic_load(&sh->errors), wall, clips / wall, cpu,
	       per_core);
	printf("per clip, ms of one core: decoder + packet set-up %.2f | decode needed frames %.2f | key frames only "
	       "referenced %.2f | other frames only referenced %.2f | crop + convert %.2f | reads, ring, plan, rest %.2f\n",
	       (k->open_ns + k->demux_ns) * ms, k->decode_needed_ns * ms, k->decode_key_ns * ms, k->decode_ref_ns * ms,
	       k->convert_ns * ms, per_core > 0 ? 1e3 / per_core - split : 0);
	printf("per clip: %.1f frames decoded, %.1f packets, %.1f kB of packets\n", all ? k->frames / all : 0,
	       all ? k->packets / all : 0, all ? k->bytes / all / 1e3 : 0);
	printf("loader cores a GPU needs = its clips/s / %.1f (e.g. %.1f cores per 100 clips/s)\n", per_core,
	       per_core > 0 ? 100 / per_core : 0);
	if (c->bench_for[0])
		ld_cores_print(stdout, &c->bench_model, per_core);
}

int ld_bench_run(LdShared *sh, const LdConfig *c, volatile sig_atomic_t *stop)
{
	char name[64], err[256];
	snprintf(name, sizeof(name), "avclip-bench-%d", (int)getpid());
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = (uint32_t)c->bench_t,
				    .height = (uint32_t)c->bench_h,
				    .width = (uint32_t)c->bench_w,
				    .channels = 3,
				    .text_len = 77};
	o.slots = (uint32_t)(2 * c->threads * c->queue_depth + 8);
	o.ranks = 1;
	o.seed = c->seed >= 0 ? (uint64_t)c->seed : 1;
	o.replace = 1;
	Ring *r;
	if (ring_create(&r, name, &o, err, sizeof(err)) != 0) {
		log_warnx("--bench: cannot create a ring: %s", err);
		return 1;
	}
	sh->ring = r;
	sh->params.frames = c->bench_t, sh->params.out_h = c->bench_h, sh->params.out_w = c->bench_w;
	sh->params.seed = o.seed;
	sh->timing = 1;
	pthread_mutex_init(&sh->cost_lock, NULL);
	printf("loaderd --bench: %s, clips %dx%dx%d (%s), %d thread(s), queue depth %d, --io %s, --loop-filter %s, "
	       "--clip-decoders %d, %d s\n",
	       c->manifest, c->bench_t, c->bench_h, c->bench_w, c->train ? "train" : "eval", c->threads, c->queue_depth,
	       c->io, c->loop_filter, c->clip_decoders, c->bench);
	fflush(stdout);
	Drain dr = {.ring = r};
	pthread_t drain;
	LdWorker *w = calloc((size_t)c->threads, sizeof(*w));
	if (!w || pthread_create(&drain, NULL, drain_main, &dr) != 0) {
		log_warnx("--bench: cannot start threads");
		return 1;
	}
	atomic_store(&sh->running, c->threads);
	for (int i = 0; i < c->threads; i++) {
		w[i] = (LdWorker){.sh = sh, .index = i};
		if (pthread_create(&w[i].tid, NULL, ld_worker_main, &w[i]) != 0)
			log_fatalx("cannot start thread %d", i);
	}
	// the first seconds open decoders and fill the page cache: measured from after them
	double warm = c->bench >= 10 ? 2.0 : c->bench / 5.0, t0 = wall_s(), t1 = t0, cpu1 = 0;
	uint64_t clips1 = 0;
	int warmed = 0;
	while (!*stop && wall_s() - t0 < c->bench) {
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
		if (!warmed && wall_s() - t0 >= warm) {
			warmed = 1, t1 = wall_s(), cpu1 = cpu_s(), clips1 = atomic_load(&sh->produced);
		}
	}
	double t2 = wall_s(), cpu2 = cpu_s();
	uint64_t clips2 = atomic_load(&sh->produced);
	if (*stop) // a stop signal: the figures are not printed, so in-flight clips are not finished either
		atomic_store(&sh->cancel, 1);
	atomic_store(&sh->stop, 1);
	for (int i = 0; i < c->threads; i++)
		pthread_join(w[i].tid, NULL);
	atomic_store(&dr.done, 1);
	pthread_join(drain, NULL);
	ring_destroy(name);
	ring_close(r);
	free(w);
	if (!warmed || clips2 <= clips1) {
		log_warnx("--bench: no clips made after the warm-up (see the errors above, or give more seconds)");
		return 1;
	}
	report(sh, c, clips2 - clips1, t2 - t1, cpu2 - cpu1);
	return 0;
}
