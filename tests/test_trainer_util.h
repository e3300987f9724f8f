// Helpers for the trainer tests: a small model configuration that runs in milliseconds per
// step, and deterministic synthetic batches (pixels, captions ending in the end token, ids).
#ifndef TESTS_TEST_TRAINER_UTIL_H
#define TESTS_TEST_TRAINER_UTIL_H
// defines: tt_small_model, tt_step_config, tt_batch, TtRank, tt_rank_open, tt_rank_grads, tt_rank_close

#include <stdint.h> // defines: uint64_t, int64_t, int32_t

#include <stdlib.h> // defines: malloc, free

#include "trainer_comm_local.h" // defines: trainer_comm_local_open
#include "trainer_step.h"       // defines: TrainStepConfig

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
	c->batch = batch;
	c->dataset_size = n;
	c->bucket_bytes = 16 << 10; // several buckets even for the small model
}

static inline uint64_t tt_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

// rows [row0, row0 + B) of a global batch of one step: video (B, T, H, W, 3) in [-1, 1],
// text (B, ctx) a caption of 2..ctx-1 ids ending in vocab-1 then zeros, ids (B)
static inline void tt_batch(const ModelConfig *m, uint64_t seed, int step, int row0, int B, float *video,
			    int32_t *text, int64_t *ids, int64_t n)
{
	const int64_t per = (int64_t)m->frames * m->image_size * m->image_size * 3;
	for (int b = 0; b < B; b++) {
		uint64_t key = tt_mix(seed * 1000003ull + (uint64_t)step * 1009ull + (uint64_t)(row0 + b));
		for (int64_t i = 0; i < per; i++)
			video[b * per + i] = (float)((double)(tt_mix(key + (uint64_t)i) >> 11) / 4503599627370496.0 - 1.0);
		int len = 2 + (int)(tt_mix(key ^ 0x55) % (uint64_t)(m->ctx_len - 2));
		for (int i = 0; i < m->ctx_len; i++)
			text[b * m->ctx_len + i] = i < len - 1 ? 1 + (int32_t)(tt_mix(key + 99 + (uint64_t)i) % (uint64_t)(m->vocab - 2))
							       : i == len - 1 ? m->vocab - 1 : 0;
		ids[b] = (int64_t)((step * 7 + (row0 + b) * 3) % n);
	}
}

// one rank's step on a local comm with a batch uploaded once (tests of the update rules)
typedef struct {
	Comm *comm;
	KernCtx *ctx;
	TrainStep *ts;
	KTensor tv, tt;
	int64_t ids[64];
} TtRank;

static inline int tt_rank_open(TtRank *r, const TrainStepConfig *cfg, uint64_t seed)
{
	const ModelConfig *m = &cfg->model;
	const int B = cfg->batch;
	const int64_t per = (int64_t)m->frames * m->image_size * m->image_size * 3;
	if (B > 64 || trainer_comm_local_open(&r->comm) < 0 || kern_ctx_create_cpu(&r->ctx, 1) < 0 ||
	    train_step_create(&r->ts, r->ctx, r->comm, cfg) < 0 || train_step_init(r->ts, seed) < 0)
		return -1;
	float *video = malloc(sizeof(float) * (size_t)(per * B));
	int32_t *text = malloc(sizeof(int32_t) * (size_t)B * m->ctx_len);
	int rc = !video || !text ||
		 kern_alloc(r->ctx, &r->tv, KDT_F32, 5, (int64_t[]){ B, m->frames, m->image_size, m->image_size, 3 }) < 0 ||
		 kern_alloc(r->ctx, &r->tt, KDT_I32, 2, (int64_t[]){ B, m->ctx_len }) < 0;
	if (!rc) {
		tt_batch(m, seed, 0, 0, B, video, text, r->ids, cfg->dataset_size > 0 ? cfg->dataset_size : 1000);
		rc = kern_upload(r->ctx, &r->tv, video, kern_nbytes(&r->tv)) < 0 ||
		     kern_upload(r->ctx, &r->tt, text, kern_nbytes(&r->tt)) < 0;
	}
	free(video);
	free(text);
	return rc ? -1 : 0;
}

static inline int tt_rank_grads(TtRank *r, int epoch, TrainStepStats *st)
{
	return train_step_grads(r->ts, &r->tv, &r->tt, r->ids, epoch, st);
}

static inline void tt_rank_close(TtRank *r)
{
	train_step_destroy(r->ts);
	kern_ctx_destroy(r->ctx);
	comm_close(r->comm);
}

#endif
