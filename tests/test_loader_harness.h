// Harness of the loaderd process tests: a synthetic dataset, a ring, loaderd processes started
// and stopped by the test, and a consumer that checks every position against the decode
// library run in-process for the same (seed, g).
#ifndef TESTS_TEST_LOADER_HARNESS_H
#define TESTS_TEST_LOADER_HARNESS_H
// defines: Th, th_loaderd, th_setup, th_setup_opts, th_log_count, th_fork_stops_blocked, th_wait_log, th_spawn, th_stop, th_kill, th_consume, th_teardown, th_log_has

#include "hash_fnv.h"         // defines: fnv1a64
#include "loader.h"           // defines: ld_sample_load, LdFiles, LdPlan
#include "ring.h"             // defines: ring_create, ring_consumer_*, ...
#include "test_loader_util.h" // defines: tl_dataset, tl_rmdir

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define TH_T 4
#define TH_HW 64
#define TH_SEED 5

typedef struct {
	char dir[256], manifest[300], ring[64];
	Ring *r;
	RingConsumer *c;
	Manifest *m;
	LdDecoder *d;
	LdFiles files;
	LdParams p;
	uint8_t *expect;
	uint64_t checked, errors;
	uint64_t hash[4096]; // per position: FNV-1a of payload (or error code)
} Th;

// the daemon under test: $LOADERD (e.g. a sanitizer build) or the one built in place
static inline const char *th_loaderd(void)
{
	const char *e = getenv("LOADERD");
	return e && *e ? e : "loaderd/loaderd";
}

static inline void th_ring(Th *t)
{
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = TH_T, .height = TH_HW, .width = TH_HW, .channels = 3, .text_len = 77};
	o.slots = 8;
	o.ranks = 1;
	o.seed = TH_SEED;
	o.replace = 1;
	char err[256];
	int rc = ring_create(&t->r, t->ring, &o, err, sizeof(err));
	if (rc)
		fprintf(stderr, "ring_create: %s\n", err);
	CHECK(rc == 0);
	CHECK(ring_consumer_attach(t->r, 0, &t->c) == 0);
}

static char th_exit_ring[64], th_exit_dir[256];

// on any exit (a failed CHECK too): no ring or temporary folder is left behind
static inline void th_atexit(void)
{
	if (th_exit_ring[0])
		ring_destroy(th_exit_ring);
	if (th_exit_dir[0])
		tl_rmdir(th_exit_dir);
}

// the dataset described by o (NULL: the default small one), a ring, and a consumer of rank 0
static inline void th_setup_opts(Th *t, const char *what, const LdFixtureOpts *opts)
{
	memset(t, 0, sizeof(*t));
	ld_libav_quiet();
	if (access(th_loaderd(), X_OK) != 0)
		test_skip("loaderd/loaderd is not built (run from the repository root after make)");
	LdFixtureOpts o = {.videos = 2,
			   .chunks_per_video = 2,
			   .width = 256,
			   .height = 144,
			   .fps = 24,
			   .frames_per_chunk = 36,
			   .gop = 12,
			   .bframes = 2,
			   .images = 2};
	tl_dataset(t->dir, sizeof(t->dir), opts ? opts : &o);
	snprintf(t->manifest, sizeof(t->manifest), "%s/manifest.bin", t->dir);
	snprintf(t->ring, sizeof(t->ring), "%s", test_ring_name(what));
	snprintf(th_exit_ring, sizeof(th_exit_ring), "%s", t->ring);
	snprintf(th_exit_dir, sizeof(th_exit_dir), "%s", t->dir);
	atexit(th_atexit);
	char err[256];
	CHECK(manifest_open(&t->m, t->manifest, err, sizeof(err)) == 0);
	CHECK(ld_decoder_new(&t->d) == 0);
	ld_params_default(&t->p);
	t->p.frames = TH_T;
	t->p.out_w = t->p.out_h = TH_HW;
	t->p.seed = TH_SEED;
	t->expect = malloc((size_t)TH_T * TH_HW * TH_HW * 3);
	th_ring(t);
}

static inline void th_setup(Th *t, const char *what)
{
	th_setup_opts(t, what, NULL);
}

// starts loaderd with extra arguments (NULL-terminated), output appended to dir/<tag>.log
// fork() with SIGTERM and SIGINT blocked in the child from its first instruction through exec:
// a stop sent at once stays pending until loaderd has its handlers (it unblocks them first
// thing), so a test may stop a loader it has just started; the parent's mask is unchanged
static inline pid_t th_fork_stops_blocked(void)
{
	sigset_t s, old;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGINT);
	sigprocmask(SIG_BLOCK, &s, &old);
	pid_t pid = fork();
	if (pid != 0)
		sigprocmask(SIG_SETMASK, &old, NULL);
	return pid;
}

static inline pid_t th_spawn(Th *t, const char *tag, ...)
{
	const char *argv[32] = {th_loaderd(), "--ring", t->ring, "--manifest", t->manifest, "--log-level", "info"};
	int n = 7;
	va_list ap;
	va_start(ap, tag);
	const char *a;
	while ((a = va_arg(ap, const char *)) && n < 30)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	char logp[400];
	snprintf(logp, sizeof(logp), "%s/%s.log", t->dir, tag);
	pid_t pid = th_fork_stops_blocked();
	CHECK(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); // a failed check (exit 1) takes its loaders with it
		FILE *f = freopen(logp, "a", stderr);
		(void)f;
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

// SIGTERM and wait: loaderd must finish its slots and exit 0
static inline void th_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "loaderd %d ended with status %#x\n", (int)pid, st);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static inline void th_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
}

// consumes positions until `until` (exclusive), checking each against the in-process decode
static inline void th_consume(Th *t, uint64_t until)
{
	size_t bytes = (size_t)TH_T * TH_HW * TH_HW * 3;
	char err[512];
	while (ring_consumer_position(t->c) < until) {
		RingSlot s;
		int rc = ring_consumer_acquire(t->c, &s, 30000);
		if (rc)
			fprintf(stderr, "acquire at %llu: %s\n", (unsigned long long)ring_consumer_position(t->c),
				strerror(-rc));
		CHECK(rc == 0);
		LdPlan plan;
		int want =
			-ld_sample_load(t->d, &t->files, t->m, s.position, &t->p, &plan, t->expect, err, sizeof(err));
		if (want) {
			if (!(s.flags & RING_SLOT_ERROR) || s.error != want)
				fprintf(stderr, "position %llu: expected error %d (%s), slot flags %u error %d\n",
					(unsigned long long)s.position, want, err, s.flags, s.error);
			CHECK((s.flags & RING_SLOT_ERROR) && s.error == want);
			t->errors++;
		} else {
			if (s.flags & RING_SLOT_ERROR)
				fprintf(stderr, "position %llu: unexpected error %d\n", (unsigned long long)s.position,
					s.error);
			CHECK(!(s.flags & RING_SLOT_ERROR));
			CHECK(s.sample_id == plan.sample);
			if (memcmp(s.payload, t->expect, bytes))
				fprintf(stderr, "position %llu: payload differs from the in-process decode\n",
					(unsigned long long)s.position);
			CHECK(!memcmp(s.payload, t->expect, bytes));
			const uint16_t *tok = manifest_tokens(t->m, plan.sample);
			for (int i = 0; i < 77; i++)
				CHECK(s.text[i] == tok[i]);
		}
		if (s.position < 4096)
			t->hash[s.position] = want ? (uint64_t)want : fnv1a64(s.payload, bytes);
		t->checked++;
		CHECK(ring_consumer_release(t->c, &s) == 0);
	}
}

// lines of dir/<tag>.log that contain text
static inline int th_log_count(const Th *t, const char *tag, const char *text)
{
	char p[400], line[1024];
	snprintf(p, sizeof(p), "%s/%s.log", t->dir, tag);
	FILE *f = fopen(p, "r");
	int found = 0;
	while (f && fgets(line, sizeof(line), f))
		found += strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return found;
}

// waits up to seconds for tag's log to hold text at least n times; returns the count
static inline int th_wait_log(const Th *t, const char *tag, const char *text, int n, double seconds)
{
	int k = 0;
	for (int i = 0; i < (int)(seconds * 20) && (k = th_log_count(t, tag, text)) < n; i++)
		usleep(50000);
	return k;
}

static inline int th_log_has(const Th *t, const char *tag, const char *text)
{
	return th_log_count(t, tag, text) > 0;
}

static inline void th_dump_logs(const Th *t, const char *tag)
{
	char p[400], line[1024];
	snprintf(p, sizeof(p), "%s/%s.log", t->dir, tag);
	FILE *f = fopen(p, "r");
	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "[%s] %s", tag, line);
	if (f)
		fclose(f);
}

static inline void th_teardown(Th *t)
{
	ring_consumer_detach(t->c);
	ring_close(t->r);
	ring_destroy(t->ring);
	ld_files_free(&t->files);
	ld_decoder_free(t->d);
	manifest_close(t->m);
	free(t->expect);
	tl_rmdir(t->dir);
	th_exit_ring[0] = th_exit_dir[0] = 0;
}

#endif
