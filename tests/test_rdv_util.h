// Helpers for the rendezvous tests: an RdvInfo from options alone (an empty environment, so a
// CI run under Slurm cannot leak in), forked ranks whose results land in shared memory, a free
// port, and a clock.
#ifndef TESTS_TEST_RDV_UTIL_H
#define TESTS_TEST_RDV_UTIL_H
// defines: RdvResult, tr_info, tr_results, tr_spawn, tr_join, tr_free_port, tr_blob, tr_sleep_ms,
//          tr_expect_error

#include <arpa/inet.h>  // defines: htonl
#include <netinet/in.h> // defines: sockaddr_in
#include <signal.h>     // defines: kill
#include <sys/mman.h>   // defines: mmap
#include <sys/socket.h> // defines: socket, bind
#include <sys/wait.h>   // defines: waitpid
#include <time.h>       // defines: clock_gettime

#include "comm.h"      // defines: RdvInfo, rdv_resolve, rdv_exchange
#include "proc_time.h" // defines: time_mono_s
#include "testutil.h"  // defines: CHECK

typedef struct {
	int rc; // what the exchange returned
	int done;
	double secs; // how long it took
	char err[512];
	uint8_t blob[RDV_BLOB_MAX];
} RdvResult;

static inline void tr_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

// rank `rank` of `world` on one node list of `nodes`, master "host:port", the given job and method
static inline RdvInfo tr_info(int rank, int world, int nodes, const char *master, const char *job, RdvMethod m,
			      const char *file, int timeout_ms)
{
	static char *const empty_env[] = {NULL};
	RdvOptions o;
	rdv_options_default(&o);
	o.rank = rank;
	o.world_size = world;
	o.nodes = nodes;
	o.master = master;
	o.job = job;
	o.method = m;
	o.file = file;
	o.timeout_ms = timeout_ms;
	RdvInfo info;
	char err[512];
	if (rdv_resolve(&info, &o, empty_env, err, sizeof err) < 0) {
		fprintf(stderr, "rdv_resolve: %s\n", err);
		exit(1);
	}
	return info;
}

static inline RdvResult *tr_results(int n)
{
	void *p = mmap(NULL, sizeof(RdvResult) * (size_t)n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	return p;
}

// a blob that names its seed in every byte pattern
static inline void tr_blob(uint8_t *b, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(test_fill_word(seed, 0, i / 8) >> (8 * (i % 8)));
}

// Forks one rank: it runs rdv_exchange (rank 0 hands out blob_seed's blob) and records the
// outcome in *out. ring: for the ring method (the child uses the parent's mapping).
static inline pid_t tr_spawn(const RdvInfo *info, Ring *ring, uint64_t blob_seed, RdvResult *out)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid)
		return pid;
	uint8_t blob[RDV_BLOB_MAX] = {0};
	if (info->rank == 0)
		tr_blob(blob, sizeof blob, blob_seed);
	double t0 = time_mono_s();
	out->rc = rdv_exchange(info, ring, blob, sizeof blob, out->err, sizeof out->err);
	out->secs = time_mono_s() - t0;
	memcpy(out->blob, blob, sizeof blob);
	__atomic_store_n(&out->done, 1, __ATOMIC_SEQ_CST);
	_exit(0);
}

// waits for the children (pids <= 0 are skipped); kills them and fails the test after limit_s
static inline void tr_join(pid_t *pids, int n, double limit_s)
{
	double t0 = time_mono_s();
	int left = 0;
	for (int k = 0; k < n; k++)
		left += pids[k] > 0;
	while (left > 0) {
		for (int k = 0; k < n; k++) {
			int st;
			if (pids[k] > 0 && waitpid(pids[k], &st, WNOHANG) == pids[k]) {
				pids[k] = -1;
				left--;
			}
		}
		if (left > 0 && time_mono_s() - t0 > limit_s) {
			for (int k = 0; k < n; k++)
				if (pids[k] > 0)
					kill(pids[k], SIGKILL);
			fprintf(stderr, "ranks still running after %.0f s: a wait without a deadline\n", limit_s);
			exit(1);
		}
		tr_sleep_ms(5);
	}
}

// a TCP port nobody listens on right now (the kernel's choice, released again)
static inline int tr_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	CHECK(fd >= 0);
	CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
	CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	close(fd);
	return ntohs(a.sin_port);
}

// r failed with rc and its message holds every one of the words (NULL-terminated)
static inline void tr_expect_error(const RdvResult *r, int rc, const char *const *words, const char *what)
{
	if (r->rc != rc) {
		fprintf(stderr, "%s: rc %d (%s), want %d; message: %s\n", what, r->rc, strerror(-r->rc), rc, r->err);
		exit(1);
	}
	for (; *words; words++)
		if (!strstr(r->err, *words)) {
			fprintf(stderr, "%s: message lacks '%s': %s\n", what, *words, r->err);
			exit(1);
		}
	printf("%s: %s\n", what, r->err);
}

#endif
