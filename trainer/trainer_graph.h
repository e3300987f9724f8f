// The training step as CUDA graphs (--cuda-graph, issue 25 §7): the contrastive objective's
// forward, backward and update captured once and replayed each step, the rest of the step eager.
#ifndef TRAINER_GRAPH_H
#define TRAINER_GRAPH_H
// defines: TrainGraph, train_graph_open, train_graph_close, train_graph_take, train_graph_run,
//          train_graph_note

#include <stddef.h> // defines: size_t

#include "trainer_step.h" // defines: TrainStep, TrainStepTimes

// What is a graph and what is not. A graph replays its ops with the arguments of its capture, so
// a segment can be one only when nothing in it changes per step but device memory, and when it
// holds no host wait and no collective (the comm backends keep host-side state per call). So:
//   eager  augment (reads the current batch buffer), the tokens' copy into the graphs' buffer
//   graph  forward: both towers and the logged batch metrics
//   eager  the loss's exchange (all-gathers, FastCLIP's u update with the epoch's γ)
//   graph  backward, one piece per gradient group: where backward reports a group, the piece ends,
//          and the group's bucket all-reduce starts eagerly between two launches, as without graphs
//   eager  the wait for the last buckets
//   eager  the update's per-step values (lr, bias corrections of the model's and τ's Adam steps)
//          copied from pinned memory to the device
//   graph  update: gradient norm and clip, the fused optimizer, τ's step, the logged scalars
//   eager  the row's copy into the metrics block, the phase events
// The first step a process runs is eager (library state made lazily, such as cuBLASLt's plans);
// the second captures all graphs before any of its work runs, then launches them; later steps
// launch. Host state the captured ops keep (the optimizer's step count, τ's) is advanced by the
// replay as the eager step advances it. The objective covered is the contrastive one (a FastCLIP or
// OpenCLIP exchange); classify is not (its Mixup parameters are host arguments drawn per step).
typedef struct TrainGraph TrainGraph;

// Prepares graphs for s: 1 when its steps will run through them, 0 when not with why saying so
// (the backend records no graphs, KERN_CUDA_SYNC, an objective not covered), < 0 an allocation's
// error.
int train_graph_open(TrainStep *s, char *why, size_t len);
void train_graph_close(TrainStep *s);
// At the start of a step (its batch uploaded, nothing of it queued yet): 1 when this step runs
// through the graphs (train_graph_run), 0 when eagerly: the process's first step, or graphs off
// (a capture failed: train_graph_note says why, once)
int train_graph_take(TrainStep *s);
// the step (train_step_run's contract) writing row of the metrics block
int train_graph_run(TrainStep *s, KTensor *row, int epoch, TrainStepTimes *t);
// a line for the log when there is news, once: 1 graphs captured (what and how many launches),
// 2 a fallback to eager steps and why (a warning); 0 nothing new
int train_graph_note(TrainStep *s, char *buf, size_t len);

#endif
