// The stall ticker: one thread per process that notices the times the process was not running.
// Design note: the thread sleeps LD_STALL_TICK_NS at a time and reads CLOCK_MONOTONIC; a gap
// between two readings much longer than the tick means that for about the excess nothing of the
// process ran (SIGSTOP until SIGCONT, a frozen VM, a swap storm, no CPU), and the gap is kept as
// an interval. Guarantees: a gap is recorded, under the lock, before the reading that ends it is
// published, so a caller that waits until the ticker has read past t1 sees every pause that ended
// by t1. Not guaranteed: where inside a gap the pause fell (its overlap with a span is an upper
// bound), nor that a late tick was the whole process's (a ticker starved of CPU while others
// ran reads as a pause too: a caller must treat the answer as an excuse to retry, boundedly).
#include "ld_stall.h" // defines: ld_stall_start, ld_stall_paused_ns

#include "proc_time.h" // defines: time_mono_ns

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#define GAP_NS (4 * LD_STALL_TICK_NS) // a tick later than this is a pause, not scheduling noise
#define N_GAPS 64                     // the pauses remembered (a sample spans few)
#define WAIT_TICKS 4                  // how long a caller waits for the ticker to read past t1

typedef struct {
	uint64_t begin, end; // the readings on either side of the gap
	uint64_t lost;       // end - begin less one tick: how long the process was not running
} Gap;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t ticked; // on CLOCK_MONOTONIC
	int running;
	uint64_t last;    // the ticker's latest reading
	Gap gaps[N_GAPS]; // gap k at gaps[k % N_GAPS]
	unsigned long long n_gaps;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int start_rc;

static void *ticker(void *arg)
{
	(void)arg;
	uint64_t prev = time_mono_ns();
	for (;;) {
		struct timespec ts = {0, (long)LD_STALL_TICK_NS};
		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
			;
		uint64_t now = time_mono_ns();
		pthread_mutex_lock(&S.lock);
		if (now - prev > GAP_NS)
			S.gaps[S.n_gaps++ % N_GAPS] = (Gap){prev, now, now - prev - LD_STALL_TICK_NS};
		S.last = now;
		pthread_cond_broadcast(&S.ticked);
		pthread_mutex_unlock(&S.lock);
		prev = now;
	}
	return NULL;
}

static void start(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	start_rc = -pthread_cond_init(&S.ticked, &ca);
	pthread_condattr_destroy(&ca);
	if (start_rc)
		return;
	S.last = time_mono_ns();
	// the ticker takes no signals: they stay with the threads that handle them
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_t tid;
	start_rc = -pthread_create(&tid, &a, ticker, NULL);
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_lock(&S.lock); // read by ld_stall_paused_ns in threads that never called start
	S.running = start_rc == 0;
	pthread_mutex_unlock(&S.lock);
}

int ld_stall_start(void)
{
	pthread_once(&start_once, start);
	return start_rc;
}

uint64_t ld_stall_paused_ns(uint64_t t0, uint64_t t1)
{
	pthread_mutex_lock(&S.lock);
	if (!S.running) {
		pthread_mutex_unlock(&S.lock);
		return 0;
	}
	uint64_t now = time_mono_ns(), until = (now > t1 ? now : t1) + WAIT_TICKS * LD_STALL_TICK_NS;
	struct timespec limit = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};
	while (S.last <= t1)
		if (pthread_cond_timedwait(&S.ticked, &S.lock, &limit) == ETIMEDOUT)
			break;
	uint64_t paused = 0;
	unsigned long long k = S.n_gaps > N_GAPS ? S.n_gaps - N_GAPS : 0;
	for (; k < S.n_gaps; k++) {
		const Gap *g = &S.gaps[k % N_GAPS];
		uint64_t b = g->begin > t0 ? g->begin : t0, e = g->end < t1 ? g->end : t1;
		if (e > b)
			paused += e - b < g->lost ? e - b : g->lost;
	}
	pthread_mutex_unlock(&S.lock);
	return paused;
}
