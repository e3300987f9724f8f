// Per-step metrics of a run as JSON lines in RUN_DIR/metrics.jsonl (one object per step, names
// as the flags and tools/plot use them), written by rank 0 once per logging interval, when the
// device's scalars of the interval's steps are read back, and flushed then.
#ifndef TRAINER_METRICS_H
#define TRAINER_METRICS_H
// defines: TrainerMetrics, trainer_metrics_open, trainer_metrics_write, trainer_metrics_flush

#include <stdint.h> // defines: int64_t
#include <stdio.h>  // defines: FILE

typedef struct {
	int64_t step; // optimizer updates done, this one included
	int epoch;
	double loss, nce, acc; // means over ranks (see TrainStepStats)
	double tau, lr, grad_norm;
	double step_s;        // wall time of the step, data wait included
	double samples_per_s; // global batch / step_s
	double data_wait_s;   // mean over ranks of the time waiting for READY slots
	double error_slots;   // error slots skipped in this step, all ranks
	double comm_bytes;    // bytes this rank sent in the step's collectives (DESIGN §7 model)
	double allgather_bytes, reduce_scatter_bytes, allreduce_bytes; // the same per collective
	// rank 0's phases, device seconds (timed events; null past the first 64 rows of a read-back)
	double t_augment, t_forward, t_exchange, t_backward, t_allreduce, t_update;
	int64_t host_waits;   // rank 0's host waits on the device in the step (its read-back included)
	int64_t slow_paths;   // rank 0's products off the library's fast path in the step (kern_ctx_slow_paths)
	int64_t launches;     // rank 0's device work items queued in the step (kern_ctx_launches; 0 on the CPU)
	double data_wait_pct; // data_wait_s / step_s, percent
	double mfu;           // model FLOPs per second / (--peak-tflops x ranks); NaN (null) without a peak
	double mem_bytes, mem_peak_bytes; // rank 0's device tensor bytes after the step, and the most so far
	// --objective classify: its heads (0 otherwise: none of these written), each head's loss
	// (loss_head<k>) and train top-1 on the unmixed labels (top1_head<k>, a rough figure)
	int cls_heads;
	double cls_loss[2], cls_top1[2];
	int mae; // --objective mae: loss is the reconstruction MSE (also written as recon_loss); nce, acc, tau not
} TrainerMetrics;

// A fresh file (keep_through < 0), or the existing one cut after the line of step keep_through
// (a resumed run: lines a crashed run wrote after its last checkpoint would repeat steps), then
// opened for appending. NULL with errno on failure.
FILE *trainer_metrics_open(const char *path, int64_t keep_through);
// one JSON object on one line; -errno on a write error
int trainer_metrics_write(FILE *f, const TrainerMetrics *m);
// fflush; -errno on a write error
int trainer_metrics_flush(FILE *f);

#endif
