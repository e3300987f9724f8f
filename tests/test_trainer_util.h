// Helpers for the trainer tests: a small model configuration that runs in milliseconds per
// step, and deterministic synthetic batches (u8 clips, captions ending in the end token, ids,
// stream positions) staged and uploaded as the ring's would be.
#ifndef TESTS_TEST_TRAINER_UTIL_H
#define TESTS_TEST_TRAINER_UTIL_H
// defines: tt_small_model, tt_step_config, tt_batch, tt_upload, TtRank, tt_rank_open, tt_rank_step, tt_rank_close

#include <stdint.h> // defines: uint64_t, int64_t, int32_t

#include "trainer_step.h" // defines: TrainStepConfig, TrainStep, comm_local_open

// the tiny preset shrunk further: one block per tower, 16 px clips of 2 frames, 64 tokens
static inline void tt_small_model(ModelConfig *m)
{
	model_config_preset(m, "tiny");
	m->image_size = 16;
	m->patch = 8;
	m->frames = 2;
	m->vis_width = 32;
	m->vis_layers = 1;
	m->vis_heads = 2;
	m->vocab = 64;
	m->ctx_len = 12;
	m->txt_width = 32;
	m->txt_layers = 1;
	m->txt_heads = 2;
	m->embed_dim = 16;
}

static inline void tt_step_config(TrainStepConfig *c, FastclipKind kind, int batch, int64_t n)
{
	*c = (TrainStepConfig){0}; // fields this helper does not name keep their zero defaults (wd_groups)
	tt_small_model(&c->model);
	optim_config_default(&c->opt);
	c->opt.lr = 1e-3;
	c->opt.total_steps = 100;
	fastclip_config_default(&c->loss, kind);
	c->loss.lr_tau = kind == FASTCLIP_V2 ? c->loss.lr_tau : 0.01; // τ visibly moves in a few steps
	c->act = KDT_F32;
	c->batch = batch;
	c->dataset_size = n;
	c->bucket_bytes = 16 << 10; // several buckets even for the small model
	c->data_seed = 77;
	c->flip = 1;
	c->log_every = 1;
}

static inline uint64_t tt_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

// rows [row0, row0 + B) of a global batch of one step: clips (B, T, H, W, 3) u8, text (B, ctx) a
// caption of 2..ctx-1 ids ending in vocab-1 then zeros, ids (B), stream positions (B)
static inline void tt_batch(const ModelConfig *m, uint64_t seed, int step, int row0, int B, uint8_t *clips,
			    int32_t *text, int64_t *ids, int64_t *pos, int64_t n)
{
	const int64_t per = (int64_t)m->frames * m->image_size * m->image_size * 3;
	for (int b = 0; b < B; b++) {
		uint64_t key = tt_mix(seed * 1000003ull + (uint64_t)step * 1009ull + (uint64_t)(row0 + b));
		for (int64_t i = 0; i < per; i++)
			clips[b * per + i] = (uint8_t)(tt_mix(key + (uint64_t)i) >> 56);
		int len = 2 + (int)(tt_mix(key ^ 0x55) % (uint64_t)(m->ctx_len - 2));
		for (int i = 0; i < m->ctx_len; i++)
			text[b * m->ctx_len + i] =
				i < len - 1 ? 1 + (int32_t)(tt_mix(key + 99 + (uint64_t)i) % (uint64_t)(m->vocab - 2))
				: i == len - 1 ? m->vocab - 1
					       : 0;
		ids[b] = (int64_t)((step * 7 + (row0 + b) * 3) % n);
		pos[b] = (int64_t)(step * 1000 + row0 + b);
	}
}

// that batch into the step's stage, uploaded asynchronously as the ingest does
static inline int tt_upload(TrainStep *ts, uint64_t seed, int step, int row0)
{
	int rc = train_step_stage_begin(ts);
	if (rc < 0)
		return rc;
	tt_batch(&ts->cfg.model, seed, step, row0, ts->cfg.batch, ts->stage.clips, ts->stage.text, ts->stage.ids,
		 ts->stage.pos, ts->cfg.dataset_size > 0 ? ts->cfg.dataset_size : 1);
	return train_step_upload_staged(ts);
}

// one rank's step on a local comm with a batch uploaded once (tests of the update rules)
typedef struct {
	Comm *comm;
	KernCtx *ctx;
	TrainStep *ts;
} TtRank;

static inline int tt_rank_open(TtRank *r, const TrainStepConfig *cfg, uint64_t seed)
{
	if (comm_local_open(&r->comm) < 0 || kern_ctx_create_cpu(&r->ctx, 1) < 0 ||
	    train_step_create(&r->ts, r->ctx, r->comm, cfg) < 0 || train_step_init(r->ts, seed) < 0)
		return -1;
	return tt_upload(r->ts, seed, 0, 0);
}

// one step; row (TS_NSCALARS) gets its scalars (cfg.log_every must be 1)
static inline int tt_rank_step(TtRank *r, int epoch, TrainStepTimes *t, float *row)
{
	int rows, rc = train_step_run(r->ts, epoch, t);
	return rc < 0 ? rc : train_step_read_metrics(r->ts, row, &rows);
}

static inline void tt_rank_close(TtRank *r)
{
	train_step_destroy(r->ts);
	kern_ctx_destroy(r->ctx);
	comm_close(r->comm);
}

#endif
