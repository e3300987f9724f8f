// What a training step holds on the device, before any of it is allocated: the model's parameters
// and activations counted by the model's own allocation code, the optimizer's moments, the op
// workspace, and the batch, exchange and metrics buffers; and the largest batch within a budget.
#ifndef TRAINER_MEMORY_H
#define TRAINER_MEMORY_H
// defines: TrainerMemory, trainer_memory_plan, trainer_memory_fit

#include <stddef.h> // defines: size_t

#include "trainer_step.h" // defines: TrainStepConfig

typedef struct {
	size_t params;      // master weights, gradients, the bf16 weight copy
	size_t optimizer;   // AdamW/LAMB moments and the norm scalars
	size_t activations; // the model's saved activations and backward scratch
	size_t workspace;   // the op workspace the step's stream reserves
	size_t data;        // the two batch buffers, the loss exchange (gathered features, u/τ table), metrics
	size_t total;
} TrainerMemory;

// the device bytes of train_step_create(cfg) on a world of `world` ranks plus the trainer's second
// batch buffer (the tensors exactly as the CPU backend counts them, and the workspace); -EINVAL
int trainer_memory_plan(KernCtx *ctx, const TrainStepConfig *cfg, int world, TrainerMemory *out);
// the largest batch (at most cfg->batch) whose plan fits in budget bytes, 0 when not even 1 does
int trainer_memory_fit(KernCtx *ctx, const TrainStepConfig *cfg, int world, size_t budget, int *batch);

#endif
