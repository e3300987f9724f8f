// One loader thread: a ring producer that claims positions, reads their files ahead through
// its own reader, decodes each sample straight into its slot and publishes it (or an error).
#ifndef LOADERD_LD_WORKER_H
#define LOADERD_LD_WORKER_H
// defines: LdShared, LdWorker, ld_worker_main

#include "ld_config.h" // defines: LdConfig
#include "loader.h"    // defines: LdParams
#include "manifest.h"  // defines: Manifest
#include "ring.h"      // defines: Ring

#include <pthread.h>
#include <stdatomic.h>

// what every thread of the process shares
typedef struct {
	const LdConfig *cfg;
	const Manifest *m;
	Ring *ring;
	uint32_t ring_ranks;    // N of the ring (--node/--nodes map its positions to the global stream)
	LdParams params;        // geometry from the ring, seed and mode from the config/ring
	atomic_int stop;        // finish in-flight slots, detach, return
	atomic_int cancel;      // stop decoding now; unfinished slots are left for live producers to adopt
	atomic_int running;     // threads that have not returned yet
	atomic_int pread_noted; // the io_uring fallback is logged once per process
	atomic_int damaged;     // a thread found the ring's slot words damaged (-EPROTO)
	pthread_mutex_t elog_lock;
	uint64_t *elog; // samples whose error was already logged (open addressing)
	size_t elog_cap;
	atomic_ullong produced, errors;
	int timing; // --bench: threads keep a cost account and add it to cost when they end
	pthread_mutex_t cost_lock;
	LdCost cost;
} LdShared;

typedef struct {
	LdShared *sh;
	int index;
	int rc; // 0 or -errno (attach failed ...)
	pthread_t tid;
} LdWorker;

void *ld_worker_main(void *arg);

#endif
