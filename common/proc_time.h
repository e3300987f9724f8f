// The process's clocks: monotonic time for durations and deadlines, wall time for timestamps
// other processes read, CPU time for benchmarks on a shared machine (neighbours don't count).
#ifndef COMMON_PROC_TIME_H
#define COMMON_PROC_TIME_H
// defines: time_mono_ns, time_mono_ms, time_mono_s, time_real_ns, time_real_s, time_cpu_s, time_thread_cpu_ns

#include <stdint.h> // defines: uint64_t

uint64_t time_mono_ns(void);       // CLOCK_MONOTONIC
int64_t time_mono_ms(void);        // CLOCK_MONOTONIC
double time_mono_s(void);          // CLOCK_MONOTONIC
uint64_t time_real_ns(void);       // CLOCK_REALTIME: Unix time
double time_real_s(void);          // CLOCK_REALTIME: Unix time
double time_cpu_s(void);           // CPU time of this process, all threads
uint64_t time_thread_cpu_ns(void); // CPU time of the calling thread

#endif
