// How long this process was not running (SIGSTOP, a frozen VM, a swap storm, no CPU) within a
// span of CLOCK_MONOTONIC time, so a watchdog can tell a sample that hung from one that was paused.
#ifndef LOADERD_LD_STALL_H
#define LOADERD_LD_STALL_H
// defines: ld_stall_start, ld_stall_paused_ns, LD_STALL_TICK_NS

#include <stdint.h>

#define LD_STALL_TICK_NS 50000000ull // the ticker's period (50 ms)

// Starts the process's ticker thread (once; later calls return at once). 0 or -errno.
int ld_stall_start(void);

// Nanoseconds, at most, that the process was not running within [t0, t1] (time_mono_ns values,
// t1 up to now). Waits up to a few ticks for the ticker to run past t1, so a stop that ended just
// before t1 is counted; 0 when the ticker is not running.
uint64_t ld_stall_paused_ns(uint64_t t0, uint64_t t1);

#endif
