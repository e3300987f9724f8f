// Timing of the loader's per-sample path for benchmarks: plan, read the planned byte ranges
// through the loader's reader, decode into a clip; thread CPU time split as the cost budget.
#ifndef TOOLS_BENCH_RUN_H
#define TOOLS_BENCH_RUN_H
// defines: BenchRun, bench_run_clips, bench_run_print_budget

#include "loader.h" // defines: ld_plan_make, ld_clip_decode, LdParams, LdDecoder, LdCost, LdReader

#include <stdint.h>
#include <stdio.h>

typedef struct {
	uint64_t clips;
	uint64_t plan_ns, read_ns, decode_ns; // thread CPU time
	uint64_t bytes_read, reads;
	LdCost cost; // the decoder's split of decode_ns
} BenchRun;

// Loads positions [g0, g0 + n) with p (timing on) and adds to out. 0, or the first sample's
// error with a reason in err.
int bench_run_clips(const Manifest *m, LdDecoder *d, LdReader *rd, const LdParams *p, uint64_t g0, int n, uint8_t *dst,
		    BenchRun *out, char *err, size_t errlen);
// clips per CPU-second of a run
double bench_run_rate(const BenchRun *r);
// the cost budget of runs[0..n) side by side, ms per clip, columns named by names[]
void bench_run_print_budget(FILE *f, const BenchRun *runs, const char *const *names, int n);

#endif
