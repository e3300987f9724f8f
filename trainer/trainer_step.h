// One data-parallel training step of the dual encoder, on the op contract only: the batch (u8
// clips, tokens, ids, positions) uploaded asynchronously, augmented on the device, forward, the
// loss's exchange, backward with bucketed all-reduce overlapping it, the fused optimizer and the
// temperature rule; the logged scalars stay on the device until one read-back per interval, which
// the trainer queues and reads an interval later, so that the host never waits for the step it
// has just queued.
#ifndef TRAINER_STEP_H
#define TRAINER_STEP_H
// defines: TrainStepConfig, TrainStep, TrainStage, TrainStepTimes, TS_LOSS, TS_NCE, TS_ACC, TS_GRAD_NORM,
//          TS_CLIP, TS_LOG_S, TS_NSCALARS, train_step_create, train_step_destroy, train_step_init,
//          train_step_stage_begin, train_step_upload_sample, train_step_upload_meta, train_step_upload_staged,
//          train_step_run, train_step_read_metrics, train_step_after_load, train_step_init_from,
//          TS_PH_*, TS_NPHASES, TS_TIMED_ROWS, train_step_fetch_begin, train_step_fetch_end, train_step_fetch_pending,
//          train_step_fetch_ready, train_step_mark, train_step_finish_row, train_step_tau_lr, train_step_times, TS_PLANT_*

#include <stdint.h> // defines: int64_t, uint64_t

#include "comm.h"        // defines: Comm, CommBuckets
#include "fastclip.h"    // defines: FastclipConfig, FastclipExchange
#include "model.h"       // defines: ClipModel, Optimizer, OptConfig, StInitOpts
#include "trainer_cls.h" // defines: ClsConfig, ClsHeads

typedef struct {
	ModelConfig model;
	OptConfig opt;
	FastclipConfig loss;
	KDtype act;           // activations and the weight copies: KDT_F32 or KDT_BF16 (--precision)
	int batch;            // B: this rank's samples per step
	int64_t dataset_size; // rows of the u / τ table (manifest samples); unused by openclip
	WdGroups wd_groups;   // which tensors the optimizer decays (written into the model's spec table)
	size_t bucket_bytes;  // gradient all-reduce bucket bound
	uint64_t data_seed;   // the ring's seed: augmentation flips are keyed by (seed, g)
	int flip;             // 1: horizontal flip per clip
	// steps between read-backs of the logged scalars (rows of the metrics block: --metrics-every)
	int log_every;
	int grad_checkpoint; // recompute each block's activations in backward (--grad-checkpoint)
	// the captions' vocabulary (the training manifest's bpe_vocab_hash, "%016llx"; "" unknown) and
	// its merges file: checkpoints record both, so tools/eval refuses a held-out split of another
	const char *vocab, *vocab_merges;
	// the training manifest's dataset (manifest_identity "%016llx", "" unknown) and its path: what
	// checkpoints record so that a resume on another dataset is refused (--resume-on-new-data)
	const char *data_id, *data_name;
	// a resume on another dataset: the checkpoint's FastCLIP table (per-sample u of the old samples)
	// is not loaded, the estimators start over
	int fresh_table;
	// --objective classify: the video tower and cls's linear heads, trained on the ring's labels
	// (the text tower and logit_scale frozen, no contrastive loss); 0: the contrastive objective
	int classify;
	ClsConfig cls;
	// --objective mae: the masked autoencoder (trainer_mae.c) instead of the dual encoder: model is
	// then NULL and mae its MaeModel, TS_LOSS the reconstruction MSE, the other contrastive columns 0
	int mae;
	MaeConfig mae_cfg;
	// --cuda-graph: the steady-state step as CUDA graphs where the backend records them
	// (trainer_graph.h: what is captured, what is not, and the objectives it covers); 0: eager
	int cuda_graph;
	// test only, planted bugs: TS_PLANT_BAKED the update captured with its per-step values (lr,
	// step) as host arguments, so every replay repeats the capture step's; TS_PLANT_WAIT a host wait
	// inside the update's capture, which the runtime refuses (the steps then run eagerly)
	int graph_plant;
} TrainStepConfig;

enum { TS_PLANT_BAKED = 1, TS_PLANT_WAIT = 2 }; // TrainStepConfig.graph_plant

// the scalars a step leaves in its row of the metrics block (f32, on the device)
enum {
	TS_LOSS = 0,  // this rank's surrogate (FastCLIP) or local InfoNCE over the gathered batch (openclip)
	TS_NCE,       // symmetric InfoNCE of this rank's local B x B batch at the step's τ
	TS_ACC,       // fraction of local pairs whose video retrieves its own text in the local batch
	TS_GRAD_NORM, // global gradient norm before clipping (rank-averaged gradients)
	TS_CLIP,      // the clip factor applied
	TS_LOG_S,     // log(1/τ) after the update
	TS_CLS_LOSS,  // classify: each head's soft-target CE (CLS_MAX_HEADS columns)
	TS_CLS_TOP1 = TS_CLS_LOSS + CLS_MAX_HEADS, // classify: each head's train top-1 on the unmixed labels
	TS_NSCALARS = TS_CLS_TOP1 + CLS_MAX_HEADS
};

// the step's phases, timed on the device between events recorded on the step's stream
enum {
	TS_PH_AUGMENT = 0,
	TS_PH_FORWARD,   // forward and the batch metrics
	TS_PH_EXCHANGE,  // the loss's exchange (FastCLIP's all-gathers and u update)
	TS_PH_BACKWARD,  // backward, bucket all-reduces starting as groups finish
	TS_PH_ALLREDUCE, // the wait for the last buckets
	TS_PH_UPDATE,    // optimizer and τ
	TS_NPHASES
};
// rows of a metrics block whose phases are timed; later rows (--metrics-every above it) read NaN
#define TS_TIMED_ROWS 64

// pinned host staging of one batch; the ring's clips and tokens go from its registered mapping
// instead, so the trainer stages only ids and positions (tests stage everything)
typedef struct {
	uint8_t *clips;  // (B, T, H, W, 3)
	int32_t *text;   // (B, ctx)
	int64_t *ids;    // (B) sample ids: table rows
	int64_t *pos;    // (B) stream positions g: augmentation keys
	int32_t *labels; // (B, RING_LABELS) class labels (classify)
} TrainStage;

// wall seconds of the phases on the host (on the CPU backend the ops run when queued, so these are
// the phases' times; on a GPU they are queueing times: the device's are train_step_fetch_end's)
typedef struct {
	double lr;     // the model's learning rate of this update
	double lr_tau; // the global temperature's (v0, v3; else 0)
	double t_augment, t_forward, t_exchange, t_backward, t_allreduce, t_update;
} TrainStepTimes;

typedef struct {
	KernCtx *ctx;
	Comm *comm;
	TrainStepConfig cfg;
	ClipModel *model; // NULL with mae
	MaeModel *mae;    // --objective mae, else NULL
	Optimizer *opt;
	FastclipExchange *xchg; // NULL with classify
	ClsHeads *cls;          // the heads with classify, else NULL
	CommBuckets *buckets;
	KTensor ids, pos; // the batch's sample ids and stream positions on the device, (B) i64 each
	// The batch buffers on the device, (B, T, H, W, 3) u8 and (B, ctx) i32: buffer 0 from
	// train_step_create, buffer 1 from train_step_double_buffer. They are this module's: the
	// others fill and read the one train_step_select_buffer made current, through clips and text.
	KTensor clips_buf[2], text_buf[2];
	int nbuf;
	KTensor clips, text; // the current buffer's (not owned: copies of clips_buf[k], text_buf[k])
	TrainStage stage;
	KEvent *staged;     // recorded after the last upload from the stage
	KTensor temp_mv;    // (2) f32: Adam moments of the global τ (v0, v3)
	int64_t temp_steps; // its updates so far
	// the logged scalars: two blocks of log_every rows, (2·log_every, TS_NSCALARS) f32. Steps write
	// block blk; a full one goes to the host (train_step_fetch_begin) while the next fills the other
	KTensor metrics;
	int rows, blk;            // rows written to block blk since it was last handed to the host
	float *fetch_host[2];     // pinned: each block's copy on the host
	KEvent *fetch_done[2];    // recorded after that copy
	int fetch_rows[2];        // rows of block k on their way to the host (0: none)
	KEvent **phase_ev;        // (2, min(log_every, TS_TIMED_ROWS), TS_NPHASES + 1) timed events
	struct TrainGraph *graph; // --cuda-graph's graphs (trainer_graph.c); NULL: every step eager
	char graph_state[200];    // --cuda-graph: "on: ..." or "off: why" (train_graph_open's answer)
} TrainStep;

// Allocates model, optimizer, exchange (tables) and buckets for cfg; parameters are zero until
// train_step_init or a checkpoint load. -EINVAL on a bad configuration, -ENOMEM.
int train_step_create(TrainStep **out, KernCtx *ctx, Comm *comm, const TrainStepConfig *cfg);
void train_step_destroy(TrainStep *s);
// deterministic parameters from seed, logit_scale at log(1/τ init), the weight copies refreshed
int train_step_init(TrainStep *s, uint64_t seed);
// after train_step_init: weights from an open_clip / OpenAI CLIP safetensors file (see
// st_openclip_init: the temporal embedding stays zero, τ stays the loss's --temperature)
int train_step_init_from(TrainStep *s, const char *path, StInitOpts *o, char *err, size_t errlen);
// after a checkpoint replaced the master parameters: refreshes the weight copies
int train_step_after_load(TrainStep *s);

// allocates batch buffer 1 like buffer 0 (a loop that fills one while a step reads the other);
// freed with the step. 0, -EEXIST when it exists, -ENOMEM.
int train_step_double_buffer(TrainStep *s);
// makes batch buffer k current: the uploads fill it and the steps read it. -EINVAL when it is not
// allocated.
int train_step_select_buffer(TrainStep *s, int k);
// the host may write s->stage from now on (waits only if the last upload from it is still running)
int train_step_stage_begin(TrainStep *s);
// queues the copy of sample b's clip (T, H, W, 3) u8 and tokens (ctx) i32 into the device batch;
// both must lie in pinned or registered memory and stay untouched until the copy is done
// (record an event after it)
int train_step_upload_sample(TrainStep *s, int b, const uint8_t *clip, const int32_t *text);
// queues the copy of s->stage.ids and .pos
int train_step_upload_meta(TrainStep *s);
// every sample and the ids and positions from s->stage
int train_step_upload_staged(TrainStep *s);

// One step on the uploaded batch; epoch drives γ. Queues everything; the host waits only where the
// comm backend must (see comm.h). The update is FastCLIP's: the clipped gradient norm covers
// logit_scale when τ is learned (v0, v3), whose own Adam step reads the same clip factor; v0's τ
// rate is --lr-tau (default the model's --lr) on the model's warmup + cosine, v3's is --lr-tau, /3
// once τ ≤ 0.03; logit_scale is clamped to [0, ln 100] after every step for every loss. Writes row
// s->rows of block s->blk: -ENOSPC when the block is full (read it back or hand it over first),
// -EBUSY when that block is still on its way to the host. A non-finite gradient norm is latched by the device ("optimizer")
// and returned by the next op or sync point.
int train_step_run(TrainStep *s, int epoch, TrainStepTimes *t);
// one read-back that waits: out (rows, TS_NSCALARS) gets every row not yet read (blocks handed to
// the host first, oldest first, then the current one), *rows their count; returns the latched error
// of the device, if any
int train_step_read_metrics(TrainStep *s, float *out, int *rows);
// Queues the copy of the current block's rows to the host and moves the steps to the other block
// (nothing when no row is written). The next train_step_run is -EBUSY until the other block, if it
// is still on its way, has been taken with train_step_fetch_end.
int train_step_fetch_begin(TrainStep *s);
// blocks on their way to the host (0, 1 or 2)
int train_step_fetch_pending(const TrainStep *s);
// 1 when the oldest of them has landed (train_step_fetch_end would not wait), 0 when none has or
// none is on its way, or the latched error; never waits
int train_step_fetch_ready(TrainStep *s);
// Takes the oldest block on its way to the host, waiting for its copy: out (rows, TS_NSCALARS), the
// device seconds of each row's phases into phases (rows, TS_NPHASES; NaN past TS_TIMED_ROWS; NULL:
// not wanted), *rows and the block's index into *block. *rows = 0 when none is pending. Returns the
// latched error of the device, if any.
int train_step_fetch_end(TrainStep *s, float *out, double *phases, int *rows, int *block);

// for an objective's own step function (trainer_mae.c) and for trainer_graph.c, which runs the same
// step through graphs: records the event before phase k of the row being written; ends the row (the
// gradient norm, clip factor and log s) after the update; the global τ's rate for the update after
// `step` completed ones
int train_step_mark(TrainStep *s, int k);
int train_step_finish_row(TrainStep *s, KTensor *row);
double train_step_tau_lr(const TrainStep *s, int64_t step);
// the contrastive step's times from the host clock read at the start of each phase and at its end
// (at[0] augment, [1] forward, [2] exchange, [3] backward, [4] all-reduce, [5] update, [6] end)
TrainStepTimes train_step_times(double lr, double lr_tau, const double at[7]);

#endif
