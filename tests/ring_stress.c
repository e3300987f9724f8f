// The ring stress harness: producers and consumers as separate processes (or threads), every
// payload derived from (seed, g) and checked, ranks checked for exactly-once in-order delivery,
// and in kill mode producers SIGKILLed at random moments (often between claim and publish).
#include "ring_stress.h"
#include "proc_time.h" // defines: time_mono_ns

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "ring_testutil.h"

#define MAX_P 64
#define MAX_N 64

typedef struct {
	_Atomic int stop;
	_Atomic int failed;
	_Atomic int consumers_done;
	_Atomic int in_window[MAX_P];
	_Atomic uint64_t max_wait_ns[MAX_N];
	_Atomic uint64_t adopted_seen[MAX_N];
	_Atomic uint64_t errors_seen[MAX_N];
	char failure[256];
} StressShared;

typedef struct {
	const StressConfig *cfg;
	StressShared *sh;
	Ring *ring; // threads mode: shared mapping; process mode: NULL (each opens its own)
	int index;
} StressRole;

static void stress_fail(StressShared *sh, const char *fmt, uint64_t a, uint64_t b)
{
	if (atomic_exchange(&sh->failed, 1) == 0)
		snprintf(sh->failure, sizeof sh->failure, fmt, (unsigned long long)a, (unsigned long long)b);
}

static int is_error_position(uint64_t g)
{
	return g % 101 == 7;
}

static Ring *role_ring(StressRole *role)
{
	if (role->ring)
		return role->ring;
	Ring *r = NULL;
	char err[256];
	if (ring_open(&r, role->cfg->ring, NULL, err, sizeof err) != 0) {
		fprintf(stderr, "stress: %s\n", err);
		return NULL;
	}
	return r;
}

static void *producer_body(void *arg)
{
	StressRole *role = arg;
	const StressConfig *cfg = role->cfg;
	StressShared *sh = role->sh;
	Ring *r = role_ring(role);
	if (!r)
		return stress_fail(sh, "producer cannot open ring", 0, 0), NULL;
	RingInfo info;
	ring_info(r, &info);
	RingProducer *p;
	int e = ring_producer_attach(r, role->index % 2, &p);
	if (e)
		return stress_fail(sh, "producer attach failed: %llu", (uint64_t)-e, 0), NULL;
	uint64_t rng = cfg->seed ^ ((uint64_t)getpid() << 20) ^ (uint64_t)role->index;
	while (!atomic_load(&sh->stop)) {
		RingSlot s;
		e = ring_producer_claim(p, &s, 50);
		if (e == -ETIMEDOUT)
			continue;
		if (e) {
			if (e != -ESHUTDOWN)
				stress_fail(sh, "claim failed: %llu", (uint64_t)-e, 0);
			break;
		}
		atomic_store(&sh->in_window[role->index], 1);
		uint64_t g = s.position;
		size_t half = info.payload_bytes / 2;
		memset(s.payload, 0xa5, half); // garbage a dead producer may leave behind
		if (cfg->kill) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			if ((rng >> 33) % 4 == 0)
				usleep((useconds_t)((rng >> 40) % 400));
		}
		test_fill_payload(s.payload, info.payload_bytes, s.text, info.geometry.text_len, info.seed, g);
		s.sample_id = g ^ 0x5a5a5a5aull;
		e = is_error_position(g) ? ring_producer_publish_error(p, &s, (int32_t)(g % 1000 + 1))
					 : ring_producer_publish(p, &s);
		atomic_store(&sh->in_window[role->index], 0);
		if (e) {
			stress_fail(sh, "publish of %llu failed: %llu", g, (uint64_t)-e);
			break;
		}
		if (cfg->slow_us)
			usleep((useconds_t)cfg->slow_us);
	}
	ring_producer_detach(p);
	if (!role->ring)
		ring_close(r);
	return NULL;
}

static void *consumer_body(void *arg)
{
	StressRole *role = arg;
	const StressConfig *cfg = role->cfg;
	StressShared *sh = role->sh;
	Ring *r = role_ring(role);
	if (!r)
		return stress_fail(sh, "consumer cannot open ring", 0, 0), NULL;
	RingInfo info;
	ring_info(r, &info);
	const uint64_t N = (uint64_t)cfg->consumers, rank = (uint64_t)role->index;
	RingConsumer *c;
	int e = ring_consumer_attach(r, (uint32_t)rank, &c);
	if (e)
		return stress_fail(sh, "consumer attach failed: %llu", (uint64_t)-e, 0), NULL;
	uint64_t mine = cfg->positions / N + (rank < cfg->positions % N), expected = rank, max_wait = 0;
	for (uint64_t k = 0; k < mine && !atomic_load(&sh->failed); k++, expected += N) {
		RingSlot s;
		uint64_t t0 = time_mono_ns();
		e = ring_consumer_acquire(c, &s, 60000);
		uint64_t waited = time_mono_ns() - t0;
		if (waited > max_wait)
			max_wait = waited;
		if (e) {
			stress_fail(sh, "rank acquire failed (error %llu) at position %llu", (uint64_t)-e, expected);
			break;
		}
		if (s.position != expected) {
			stress_fail(sh, "rank got position %llu, expected %llu", s.position, expected);
			break;
		}
		if (s.flags & RING_SLOT_ADOPTED)
			atomic_fetch_add(&sh->adopted_seen[rank], 1);
		if (s.flags & RING_SLOT_ERROR) {
			atomic_fetch_add(&sh->errors_seen[rank], 1);
			if (!is_error_position(s.position) || s.error != (int32_t)(s.position % 1000 + 1))
				stress_fail(sh, "unexpected error slot at %llu (code %llu)", s.position,
					    (uint64_t)s.error);
		} else if (is_error_position(s.position)) {
			stress_fail(sh, "position %llu should carry an error", s.position, 0);
		} else if (s.sample_id != (s.position ^ 0x5a5a5a5aull) ||
			   !test_check_payload(s.payload, info.payload_bytes, s.text, info.geometry.text_len, info.seed,
					       s.position)) {
			stress_fail(sh, "payload of position %llu is wrong (sample id %llu)", s.position, s.sample_id);
		}
		if ((e = ring_consumer_release(c, &s)) != 0)
			stress_fail(sh, "release of %llu failed: %llu", s.position, (uint64_t)-e);
	}
	atomic_store(&sh->max_wait_ns[rank], max_wait);
	atomic_fetch_add(&sh->consumers_done, 1);
	ring_consumer_detach(c);
	if (!role->ring)
		ring_close(r);
	return NULL;
}

static pid_t spawn(void *(*body)(void *), StressRole *role)
{
	pid_t pid = fork();
	if (pid == 0) {
		body(role);
		_exit(atomic_load(&role->sh->failed) ? 1 : 0);
	}
	return pid;
}

void stress_config_default(StressConfig *c)
{
	memset(c, 0, sizeof *c);
	c->producers = 3;
	c->consumers = 2;
	c->positions = 200000;
	c->slots = 64;
	c->payload_bytes = 192;
	c->adopt_timeout_ms = 100;
	c->min_kills = 50;
	c->seed = 20261130;
}

static void kill_loop(const StressConfig *cfg, StressShared *sh, StressRole *roles, pid_t *pids, int *kills, int *mid)
{
	uint64_t rng = cfg->seed | 1;
	while (atomic_load(&sh->consumers_done) < cfg->consumers && !atomic_load(&sh->failed)) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		usleep((useconds_t)(20000 + rng % 40000)); // a kill every 20-60 ms
		int i = (int)((rng >> 20) % (uint64_t)cfg->producers);
		if ((rng >> 40) & 1) // aim for the window between claim and publish
			for (int spin = 0; spin < 400 && !atomic_load(&sh->in_window[i]); spin++)
				usleep(25);
		int in_window = atomic_load(&sh->in_window[i]);
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
		atomic_store(&sh->in_window[i], 0);
		(*kills)++;
		*mid += in_window;
		pids[i] = spawn(producer_body, &roles[i]);
	}
}

int stress_run(const StressConfig *cfg)
{
	if (cfg->producers < 1 || cfg->producers > MAX_P || cfg->consumers < 1 || cfg->consumers > MAX_N) {
		fprintf(stderr, "stress: 1..%d producers and 1..%d consumers\n", MAX_P, MAX_N);
		return 1;
	}
	StressShared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry =
		(RingGeometry){.frames = 1, .height = 1, .width = cfg->payload_bytes, .channels = 1, .text_len = 4};
	o.slots = cfg->slots;
	o.ranks = (uint32_t)cfg->consumers;
	o.seed = cfg->seed;
	o.adopt_timeout_ms = cfg->adopt_timeout_ms;
	o.replace = 1;
	Ring *r;
	char err[256];
	if (ring_create(&r, cfg->ring, &o, err, sizeof err) != 0) {
		fprintf(stderr, "stress: %s\n", err);
		return 1;
	}
	if (!cfg->keep) {
		snprintf(test_ring_created, sizeof test_ring_created, "%s", cfg->ring);
		atexit(test_ring_cleanup);
	}
	StressRole prod[MAX_P], cons[MAX_N];
	pid_t ppid[MAX_P], cpid[MAX_N];
	pthread_t pt[MAX_P], ct[MAX_N];
	for (int i = 0; i < cfg->producers; i++)
		prod[i] = (StressRole){cfg, sh, cfg->threads ? r : NULL, i};
	for (int k = 0; k < cfg->consumers; k++)
		cons[k] = (StressRole){cfg, sh, cfg->threads ? r : NULL, k};
	uint64_t t0 = time_mono_ns();
	int kills = 0, mid = 0, bad_exit = 0;
	for (int k = 0; k < cfg->consumers; k++)
		if (cfg->threads)
			pthread_create(&ct[k], NULL, consumer_body, &cons[k]);
		else
			cpid[k] = spawn(consumer_body, &cons[k]);
	for (int i = 0; i < cfg->producers; i++)
		if (cfg->threads)
			pthread_create(&pt[i], NULL, producer_body, &prod[i]);
		else
			ppid[i] = spawn(producer_body, &prod[i]);
	if (cfg->kill && !cfg->threads)
		kill_loop(cfg, sh, prod, ppid, &kills, &mid);
	for (int k = 0; k < cfg->consumers; k++) {
		int status = 0;
		if (cfg->threads)
			pthread_join(ct[k], NULL);
		else if (waitpid(cpid[k], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad_exit++;
	}
	double secs = (double)(time_mono_ns() - t0) / 1e9;
	atomic_store(&sh->stop, 1);
	for (int i = 0; i < cfg->producers; i++) {
		int status = 0;
		if (cfg->threads)
			pthread_join(pt[i], NULL);
		else if (waitpid(ppid[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad_exit++;
	}
	RingStats st;
	ring_stats(r, &st, NULL, 0, NULL);
	uint64_t max_wait = 0, adopted_seen = 0, errors_seen = 0;
	for (int k = 0; k < cfg->consumers; k++) {
		if (sh->max_wait_ns[k] > max_wait)
			max_wait = sh->max_wait_ns[k];
		adopted_seen += sh->adopted_seen[k];
		errors_seen += sh->errors_seen[k];
	}
	printf("stress: %s P=%d N=%d S=%u: %llu positions in %.2f s (%.0f/s), errors %llu, kills %d (%d between claim and publish), "
	       "adopted %llu (seen by consumers %llu), max consumer wait %.1f ms\n",
	       cfg->threads ? "threads" : "processes", cfg->producers, cfg->consumers, cfg->slots,
	       (unsigned long long)cfg->positions, secs, (double)cfg->positions / secs, (unsigned long long)errors_seen,
	       kills, mid, (unsigned long long)st.adopted, (unsigned long long)adopted_seen, (double)max_wait / 1e6);
	int ok = 1;
	if (atomic_load(&sh->failed))
		printf("FAIL: %s\n", sh->failure), ok = 0;
	if (bad_exit)
		printf("FAIL: %d processes exited badly\n", bad_exit), ok = 0;
	if (st.consumed != cfg->positions)
		printf("FAIL: ring counted %llu consumed\n", (unsigned long long)st.consumed), ok = 0;
	uint64_t want_errors = 0;
	for (uint64_t g = 7; g < cfg->positions; g += 101)
		want_errors++;
	if (errors_seen != want_errors)
		printf("FAIL: %llu error slots seen, %llu expected\n", (unsigned long long)errors_seen,
		       (unsigned long long)want_errors),
			ok = 0;
	if (cfg->kill && kills < cfg->min_kills)
		printf("FAIL: only %d kills (want >= %d)\n", kills, cfg->min_kills), ok = 0;
	if (cfg->kill && mid > 0 && st.adopted == 0)
		printf("FAIL: %d kills between claim and publish, none adopted\n", mid), ok = 0;
	if (cfg->max_wait_ms && max_wait > cfg->max_wait_ms * 1000000ull)
		printf("FAIL: a consumer waited %.1f ms (limit %llu ms)\n", (double)max_wait / 1e6,
		       (unsigned long long)cfg->max_wait_ms),
			ok = 0;
	ring_close(r);
	munmap(sh, sizeof *sh);
	return ok ? 0 : 1;
}

int stress_main(int argc, char **argv, StressConfig *c)
{
	static const struct option opts[] = {{"producers", 1, 0, 'p'},
					     {"consumers", 1, 0, 'c'},
					     {"positions", 1, 0, 'n'},
					     {"slots", 1, 0, 's'},
					     {"payload", 1, 0, 'b'},
					     {"threads", 0, 0, 't'},
					     {"kill", 0, 0, 'k'},
					     {"slow-us", 1, 0, 'w'},
					     {"ring", 1, 0, 'r'},
					     {"keep", 0, 0, 'K'},
					     {"min-kills", 1, 0, 'm'},
					     {"help", 0, 0, 'h'},
					     {0, 0, 0, 0}};
	static char name[64];
	snprintf(name, sizeof name, "%s", test_ring_name("stress"));
	if (!c->ring)
		c->ring = name;
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'p': c->producers = atoi(optarg); break;
		case 'c': c->consumers = atoi(optarg); break;
		case 'n': c->positions = strtoull(optarg, NULL, 10); break;
		case 's': c->slots = (uint32_t)atoi(optarg); break;
		case 'b': c->payload_bytes = (uint32_t)atoi(optarg); break;
		case 't': c->threads = 1; break;
		case 'k': c->kill = 1; break;
		case 'w': c->slow_us = atoi(optarg); break;
		case 'r': c->ring = optarg; break;
		case 'K': c->keep = 1; break;
		case 'm': c->min_kills = atoi(optarg); break;
		default:
			printf("usage: %s [--producers P] [--consumers N] [--positions K] [--slots S] [--payload BYTES]\n"
			       "          [--threads] [--kill] [--min-kills K] [--slow-us US] [--ring NAME] [--keep]\n",
			       argv[0]);
			return ch == 'h' ? 0 : 2;
		}
	}
	return stress_run(c);
}
