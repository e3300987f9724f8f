// loaderd --bench: clips/s per core of this loader on the user's manifest and clip geometry,
// measured on the daemon's own threads, so --loaders-per-node can be sized before a run.
#ifndef LOADERD_LD_BENCH_H
#define LOADERD_LD_BENCH_H
// defines: ld_bench_run

#include "ld_worker.h" // defines: LdShared

#include <signal.h>

// Runs sh's threads into a private ring of c->bench_clip geometry for c->bench seconds (or
// until *stop), printing the figures to stdout. Returns the exit status.
int ld_bench_run(LdShared *sh, const LdConfig *c, volatile sig_atomic_t *stop);

#endif
