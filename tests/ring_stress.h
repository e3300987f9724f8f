// The multi-process (or multi-thread) ring stress harness shared by the stress, kill and
// thread tests and by `make demo`: P producers fill positions from (seed, g), N consumers
// check every payload and that each rank sees exactly its positions, in order, once.
#ifndef TESTS_RING_STRESS_H
#define TESTS_RING_STRESS_H
// defines: StressConfig, stress_config_default, stress_run, stress_main

#include <stdint.h>

typedef struct {
	const char *ring;       // ring name (default: unique per process)
	int producers;          // P
	int consumers;          // N = ranks
	uint64_t positions;     // positions checked in all (split over ranks)
	uint32_t slots;         // S
	uint32_t payload_bytes; // per slot (clip T=1 H=1 W=payload C=1)
	int threads;            // 1: producers and consumers are threads of one process (for TSan)
	int kill;               // 1: SIGKILL producers at random moments and restart them
	int min_kills;          // kill mode: fail unless at least this many kills happened
	int slow_us;            // producers sleep this long per position (demo pacing)
	uint32_t adopt_timeout_ms;
	uint64_t max_wait_ms; // fail if a consumer ever waited longer for one position (0: no check)
	int keep;             // leave the ring in place at the end (demo)
	uint64_t seed;
} StressConfig;

void stress_config_default(StressConfig *c);
// returns 0 when every check passed; prints a summary line
int stress_run(const StressConfig *c);
// parses --producers --consumers --positions --slots --payload --threads --kill --slow-us
// --min-kills --ring --keep on top of c, then runs
int stress_main(int argc, char **argv, StressConfig *c);

#endif
