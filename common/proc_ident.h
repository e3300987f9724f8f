// Which process a pid names: a pid plus its start time (field 22 of /proc/<pid>/stat) identifies
// one process for the machine's uptime, while a pid alone is reused. The ring's process tables
// and the CPU ranks' comm group both decide liveness with it.
#ifndef COMMON_PROC_IDENT_H
#define COMMON_PROC_IDENT_H
// defines: proc_start_time, proc_is_dead

#include <stdint.h>

// start time of pid in clock ticks since boot; 0 when it is gone or unknown
uint64_t proc_start_time(int pid);
// 1 when the process that had start time `start` under `pid` is gone: the pid does not exist,
// is a zombie, or now names a process started at another time (start 0: the pid alone decides)
int proc_is_dead(int pid, uint64_t start);

#endif
