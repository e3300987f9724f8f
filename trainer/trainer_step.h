// One data-parallel training step of the dual encoder on any loss: forward both towers, the
// FastCLIP/OpenCLIP exchange for the feature gradients, backward, bucketed gradient all-reduce,
// optimizer step and the temperature rule of the loss. One rank; K ranks through a Comm.
#ifndef TRAINER_STEP_H
#define TRAINER_STEP_H
// defines: TrainStepConfig, TrainStep, TrainStepStats, train_step_create, train_step_destroy,
//          train_step_init, train_step_init_from, train_step_grads, train_step_update, train_step_run, train_step_sync_log_s

#include <stdint.h> // defines: int64_t, uint64_t

#include "comm.h"            // defines: Comm
#include "comm_bucket.h"     // defines: CommBuckets
#include "fastclip_config.h" // defines: FastclipConfig
#include "fastclip_step.h"   // defines: FastclipStep
#include "fastclip_tables.h" // defines: FastclipTables
#include "fastclip_temp.h"   // defines: FastclipTemp
#include "model_clip.h"      // defines: ClipModel
#include "optim_adam.h"      // defines: Optimizer, OptConfig
#include "st_openclip.h"     // defines: StInitOpts

typedef struct {
	ModelConfig model;
	OptConfig opt;
	FastclipConfig loss;
	int batch;             // B: this rank's samples per step
	int64_t dataset_size;  // rows of the u / τ tables (manifest samples); unused by openclip
	WdGroups wd_groups;    // which tensors the optimizer decays (written into the model's spec table)
	size_t bucket_bytes;   // gradient all-reduce bucket bound
} TrainStepConfig;

typedef struct {
	KernCtx *ctx;
	Comm *comm;
	TrainStepConfig cfg;
	ClipModel *model;
	Optimizer *opt;
	FastclipStep *fstep;
	FastclipTables tables;  // FastCLIP kinds only (has_tables)
	int has_tables;
	FastclipTemp temp;      // the global log s: learned here (v0, v3), constant (v1, v2), mirror (openclip)
	CommBuckets *buckets;
	float *e1, *e2;         // (B, E) host copies of this rank's features
	float *de1, *de2;       // (B, E) feature gradients of this rank's loss
	KTensor dv, dt;         // (B, E) the same on the backend
	double *sim;            // (B, B) e1 · e2ᵀ of the local batch, for the metrics
} TrainStep;

typedef struct {
	double loss;      // this rank's surrogate (FastCLIP) or local InfoNCE over the gathered batch (openclip)
	double nce;       // symmetric InfoNCE of this rank's local B x B batch at the step's τ (a learning signal
	                  // comparable across losses)
	double acc;       // fraction of local pairs whose video retrieves its own text in the local batch
	double dlog_s;    // rank-averaged gradient of log s
	double log_s;     // log s after the update
	double lr;        // learning rate of this update
	double lr_tau;    // the global temperature's learning rate of this update (v0, v3; else 0)
	double grad_norm; // global gradient norm before clipping
	double t_forward, t_exchange, t_backward, t_allreduce, t_update; // seconds
} TrainStepStats;

// Allocates model, optimizer, tables and buckets for cfg; parameters are zero until
// train_step_init or a checkpoint load. -EINVAL on a bad configuration, -ENOMEM.
int train_step_create(TrainStep **out, KernCtx *ctx, Comm *comm, const TrainStepConfig *cfg);
void train_step_destroy(TrainStep *s);
// deterministic parameters from seed, the loss's initial temperature written into logit_scale
int train_step_init(TrainStep *s, uint64_t seed);
// after train_step_init: weights from an open_clip / OpenAI CLIP safetensors file (see
// st_openclip_init: the temporal embedding stays zero, τ stays the loss's --temperature)
int train_step_init_from(TrainStep *s, const char *path, StInitOpts *o, char *err, size_t errlen);
// forward, exchange, backward and all-reduce: afterwards s->model->grads holds the rank-averaged
// parameter gradients (logit_scale's entry: the averaged dL/dlog s) and the tables are updated.
// video (B, T, H, W, 3) normalized f32, text (B, ctx) i32, ids (B) table rows; epoch drives γ.
int train_step_grads(TrainStep *s, const KTensor *video, const KTensor *text, const int64_t *ids, int epoch,
		     TrainStepStats *st);
// optimizer step on the parameters and the temperature update of the loss kind, as FastCLIP:
// the gradient norm and its clipping cover logit_scale when τ is learned (v0, v3); v0's τ rate
// is --lr-tau (default the model's --lr) on the model's warmup+cosine; logit_scale is clamped to
// [0, ln 100] after every step for every loss. -ERANGE when the gradient norm is not finite
// (nothing changed)
int train_step_update(TrainStep *s, TrainStepStats *st);
int train_step_run(TrainStep *s, const KTensor *video, const KTensor *text, const int64_t *ids, int epoch,
		   TrainStepStats *st);
// writes s->temp.log_s into the model's logit_scale parameter (after a checkpoint load of temp)
int train_step_sync_log_s(TrainStep *s);

#endif
