// The training loop of one rank: agreement on stop and stream positions over the control
// channel, checkpoints and evaluations between steps, ingest + step, and once per metrics
// interval the read-back of the logged scalars into RUN_DIR/metrics.jsonl and the log.
#ifndef TRAINER_RUN_H
#define TRAINER_RUN_H
// defines: TrainerRun, trainer_run

#include <signal.h> // defines: sig_atomic_t
#include <stdint.h> // defines: int64_t, uint64_t
#include <stdio.h>  // defines: FILE

#include "trainer_best.h"    // defines: TrainerBest
#include "trainer_eval.h"    // defines: TrainerEval
#include "trainer_flags.h"   // defines: TrainerConfig
#include "trainer_ingest.h"  // defines: TrainerIngest
#include "trainer_metrics.h" // defines: TrainerMetrics
#include "trainer_step.h"    // defines: TrainStep

typedef struct {
	const TrainerConfig *c;
	KernCtx *ctx;
	Comm *comm;
	TrainStep *ts;
	TrainerIngest *in;
	TrainerEval *ev;   // rank 0 with --eval-manifest, else NULL
	TrainerBest *best; // rank 0 with --keep-best, else NULL
	FILE *mf;          // rank 0's metrics.jsonl, else NULL
	const char *ckdir, *mpath, *epath;
	volatile sig_atomic_t *stop; // set by the signal handler
	int64_t step, last_ckpt;     // the step to run next; the last checkpoint's step (-1: none)
	uint64_t *positions;         // (ranks) every rank's next stream position
	// double-buffered batch (the buffers are the TrainStep's): step k reads buffer k % 2 while the
	// copies of step k + 1 fill the other on the ingest's copy stream; these order the two streams
	KEvent *ready[2], *freed[2]; // copies done (copy stream) / step done reading (compute stream)
	int buf;                     // the buffer the next step fills and reads
	double flops_per_step;       // model FLOPs of one step over every rank (MFU's numerator)
	// filled by trainer_run
	int64_t start; // the first step of this run
	int stopped, save_failed;
	int fetch_landed; // at the last agreement, every rank's oldest metrics block had landed
	double total_s;
	// trainer_run's own buffers, held here rather than only in its locals: a fatal error exits from
	// deep inside a step, and a pointer left in a register is a leak to LeakSanitizer at exit
	void *agree_buf, *pend_buf[2];
} TrainerRun;

// Runs until --steps, --stop-after-steps or a signal (every rank stops at the same step, rank 0
// checkpoints). Fatal errors end the process with a message naming the step (log_fatalx).
void trainer_run(TrainerRun *r);

#endif
