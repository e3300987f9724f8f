// clock_gettime wrappers in the units the callers compare against, so no program or test keeps
// its own copy.
#include "proc_time.h" // defines: time_mono_ns, time_mono_ms, time_mono_s, time_real_ns, time_real_s, time_cpu_s, time_thread_cpu_ns

#include <time.h> // defines: clock_gettime, CLOCK_*

static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double s_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t time_mono_ns(void)
{
	return ns_of(CLOCK_MONOTONIC);
}
int64_t time_mono_ms(void)
{
	return (int64_t)(ns_of(CLOCK_MONOTONIC) / 1000000);
}
double time_mono_s(void)
{
	return s_of(CLOCK_MONOTONIC);
}
uint64_t time_real_ns(void)
{
	return ns_of(CLOCK_REALTIME);
}
double time_real_s(void)
{
	return s_of(CLOCK_REALTIME);
}
double time_cpu_s(void)
{
	return s_of(CLOCK_PROCESS_CPUTIME_ID);
}
uint64_t time_thread_cpu_ns(void)
{
	return ns_of(CLOCK_THREAD_CPUTIME_ID);
}
