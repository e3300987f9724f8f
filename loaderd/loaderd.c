// loaderd: keeps a shared-memory ring full of decoded, cropped clips from a dataset manifest.
// Attaches to a running ring at any time, re-attaches when it is recreated, and on SIGTERM or
// SIGINT finishes the slots it holds before detaching.
#include "ld_bench.h"  // defines: ld_bench_run
#include "ld_config.h" // defines: LdConfig, ld_config_parse, ld_config_help, ld_config_format
#include "loader.h"    // defines: ld_libav_quiet
#include "ld_worker.h" // defines: LdShared, LdWorker, ld_worker_main
#include "log.h"       // defines: log_init, log_info, log_warnx, log_fatalx
#include "manifest.h"  // defines: manifest_open_verified, manifest_header, manifest_identity, manifest_file_changed
#include "ring.h"      // defines: ring_open, ring_info, ring_check_instance, ring_close, ring_check_data, ring_data_set

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if HAVE_NUMA
#include <numa.h>
#endif

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void check_numa(const LdConfig *c)
{
	if (c->numa_node < 0)
		return;
#if HAVE_NUMA
	if (numa_available() < 0 || numa_max_node() == 0) {
		log_info("one NUMA node on this machine: --numa-node %d has nothing to pin to, running unpinned",
			 c->numa_node);
		return;
	}
	if (c->numa_node > numa_max_node())
		log_fatalx("--numa-node %d: this machine's nodes are 0..%d", c->numa_node, numa_max_node());
	log_info("threads and buffers pinned to NUMA node %d", c->numa_node);
#else
	log_info("built without libnuma: --numa-node %d ignored", c->numa_node);
#endif
}

// opens the ring, waiting while it does not exist yet; NULL when asked to stop
static Ring *open_ring(const LdConfig *c)
{
	int said = 0;
	while (!stop_signal) {
		Ring *r;
		char err[256];
		int rc = ring_open(&r, c->ring, NULL, err, sizeof(err));
		if (rc == 0)
			return r;
		if (rc != -ENOENT)
			log_fatalx("ring %s: %s", c->ring, err);
		if (!said++)
			log_info("ring %s does not exist yet; waiting for it", c->ring);
		sleep_ms(200);
	}
	return NULL;
}

static int wait_threads(LdShared *sh, int ms)
{
	for (int t = 0; t < ms && atomic_load(&sh->running) > 0; t += 10)
		sleep_ms(10);
	return atomic_load(&sh->running);
}

// A stop signal ends the process within 2 s whatever the threads are doing (the watchdog may
// be off: --timeout-ms 0): 0.75 s to finish in-flight slots, then decoding is cancelled at its
// next check and unfinished positions are left for live producers to adopt; a thread still
// inside one libavcodec call 0.5 s later is left behind by _exit (the ring sees this process
// gone and its slots are adopted). What remains of the 2 s is for tearing the process down.
static void stop_within_deadline(LdShared *sh)
{
	if (wait_threads(sh, 750) == 0)
		return;
	atomic_store(&sh->cancel, 1);
	int left = wait_threads(sh, 500);
	if (left == 0)
		return;
	log_warnx("stopping on signal %d: %d thread%s still inside a decoder call; exiting without waiting (their "
		  "positions will be adopted)",
		  (int)stop_signal, left, left == 1 ? "" : "s");
	_exit(0);
}

// The manifest is held in memory as it was validated (manifest_open), so a rewrite of the file
// cannot touch this loader; says so once, since a loader started later reads the new file (and is
// refused by the ring unless it is the same dataset)
static void watch_manifest(LdShared *sh, const LdConfig *c)
{
	static int said;
	char why[256];
	if (said || !manifest_file_changed(sh->m, c->manifest, why, sizeof why))
		return;
	said = 1;
	log_warnx("manifest %s changed on disk since this loader read it (%s): it goes on serving the copy it read "
		  "and validated (dataset %016llx); a loader started now reads the new file, and the ring refuses it "
		  "unless it holds the same dataset",
		  c->manifest, why, (unsigned long long)manifest_identity(sh->m));
}

// runs the threads on one ring instance until a signal or until the ring is recreated or gone
static void serve(LdShared *sh, Ring *r, const LdConfig *c, LdWorker *w)
{
	RingInfo info;
	ring_info(r, &info);
	if (info.geometry.channels != 3 || info.geometry.frames > LD_MAX_FRAMES)
		log_fatalx("ring %s: geometry C=%u T=%u; the loader writes C=3 and T <= %d", c->ring,
			   info.geometry.channels, info.geometry.frames, LD_MAX_FRAMES);
	if (info.geometry.text_len == 0)
		log_fatalx("ring %s carries no caption tokens (text length 0): recreate it with --text-len", c->ring);
	// the job's dataset: a loader given another manifest (or this one rewritten since) never joins
	RingDataId mine;
	char why[1024];
	ring_data_set(&mine, manifest_identity(sh->m), manifest_header(sh->m)->vocab_hash, c->manifest);
	if (ring_check_data(r, c->ring, &mine, "this loader", why, sizeof why) < 0)
		log_fatalx("%s", why);
	if (!info.data.id) // a ring made by hand or by a test: said, not warned about
		log_info("ring %s records no dataset (made without ringctl create --manifest): nothing checks that "
			 "its trainers expect the clips of %s",
			 c->ring, c->manifest);
	sh->ring = r;
	sh->ring_ranks = info.ranks;
	if (c->node >= c->nodes)
		log_fatalx("--node %d must be below --nodes %d", c->node, c->nodes);
	sh->params.frames = (int)info.geometry.frames;
	sh->params.out_h = (int)info.geometry.height;
	sh->params.out_w = (int)info.geometry.width;
	sh->params.seed = c->seed >= 0 ? (uint64_t)c->seed : info.seed;
	if (c->seed >= 0 && (uint64_t)c->seed != info.seed)
		log_warnx("--seed %lld differs from the ring's seed %llu: consumers may expect the ring's",
			  (long long)c->seed, (unsigned long long)info.seed);
	atomic_store(&sh->stop, 0);
	atomic_store(&sh->cancel, 0);
	atomic_store(&sh->running, c->threads);
	log_info("serving ring %s (instance %llx, T=%u %ux%u, %u slots, %u ranks, seed %llu) with %d threads", c->ring,
		 (unsigned long long)info.instance_id, info.geometry.frames, info.geometry.height, info.geometry.width,
		 info.slots, info.ranks, (unsigned long long)sh->params.seed, c->threads);
	for (int i = 0; i < c->threads; i++) {
		w[i] = (LdWorker){.sh = sh, .index = i};
		if (pthread_create(&w[i].tid, NULL, ld_worker_main, &w[i]) != 0)
			log_fatalx("cannot start thread %d", i);
	}
	for (int tick = 1; !stop_signal; tick++) {
		sleep_ms(100);
		if (tick % 10 == 0)
			watch_manifest(sh, c);
		if (atomic_load(&sh->damaged))
			log_fatalx("ring %s is damaged: a slot holds a position no sound ring can have; recreate it",
				   c->ring);
		int rc = ring_check_instance(r);
		if (rc == -ESTALE || rc == -ENOENT) {
			log_info("ring %s was %s: finishing in-flight slots and re-attaching", c->ring,
				 rc == -ESTALE ? "recreated" : "removed");
			break;
		}
	}
	atomic_store(&sh->stop, 1);
	if (stop_signal)
		stop_within_deadline(sh);
	for (int i = 0; i < c->threads; i++)
		pthread_join(w[i].tid, NULL);
	log_info("detached from ring %s: %llu clips, %llu errors so far", c->ring,
		 (unsigned long long)atomic_load(&sh->produced), (unsigned long long)atomic_load(&sh->errors));
}

int main(int argc, char **argv)
{
	// from the first instruction: a stop during start-up (a large manifest being checked) is clean too
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	// a starter may block the stop signals across fork and exec so that one sent at once waits
	// for these handlers instead of killing the process before main: take them from here on
	sigset_t stops;
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigprocmask(SIG_UNBLOCK, &stops, NULL);

	LdConfig c;
	char err[600];
	int pr = ld_config_parse(&c, argc, argv, err, sizeof(err));
	if (pr == 1) {
		char help[8192];
		ld_config_help(help, sizeof help);
		fputs(help, stdout);
		return 0;
	}
	int level = log_parse_level(pr == 0 ? c.log_level : "info");
	log_init("loaderd", level < 0 ? LOG_INFO : (LogLevel)level);
	if (c.renamed_note[0])
		log_warnx("%s", c.renamed_note);
	if (pr < 0)
		log_fatalx("%s", err);
	char line[1024];
	ld_config_format(&c, line, sizeof(line));
	log_info("config: %s", line);
	ld_libav_quiet();
	check_numa(&c);

	LdShared sh = {.cfg = &c};
	if (manifest_open_verified((Manifest **)&sh.m, c.manifest, err, sizeof(err)) != 0)
		log_fatalx("manifest %s: %s", c.manifest, err);
	log_info("manifest %s: %llu samples, %u chunks", c.manifest,
		 (unsigned long long)manifest_header(sh.m)->n_samples, manifest_header(sh.m)->n_chunks);
	ld_params_default(&sh.params);
	sh.params.cancel = &sh.cancel;
	sh.params.train = c.train;
	sh.params.flip = c.flip;
	sh.params.timeout_ms = (uint32_t)c.timeout_ms;
	sh.params.threads = c.decoder_threads;
	sh.params.clip_decoders = c.clip_decoders;
	sh.params.loop_filter = !strcmp(c.loop_filter, "all")    ? LD_LOOP_FILTER_ALL
				: !strcmp(c.loop_filter, "none") ? LD_LOOP_FILTER_NONE
								 : LD_LOOP_FILTER_REF;
	pthread_mutex_init(&sh.elog_lock, NULL);
	sh.elog_cap = 1 << 16;
	sh.elog = calloc(sh.elog_cap, sizeof(uint64_t));
	if (!sh.elog)
		log_fatalx("out of memory");

	if (c.bench) {
		int status = ld_bench_run(&sh, &c, &stop_signal);
		free(sh.elog);
		manifest_close((Manifest *)sh.m);
		return status;
	}
	LdWorker *w = calloc((size_t)c.threads, sizeof(*w));
	if (!w)
		log_fatalx("out of memory");
	while (!stop_signal) {
		Ring *r = open_ring(&c);
		if (!r)
			break;
		serve(&sh, r, &c, w);
		ring_close(r);
	}
	log_info("stopping on signal %d: %llu clips, %llu errors", (int)stop_signal,
		 (unsigned long long)atomic_load(&sh.produced), (unsigned long long)atomic_load(&sh.errors));
	free(w);
	free(sh.elog);
	manifest_close((Manifest *)sh.m);
	return 0;
}
