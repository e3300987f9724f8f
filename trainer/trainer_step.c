// The training step as orchestration of queued ops: augment, forward, the loss's exchange
// (trainer/fastclip), backward whose gradient groups start bucketed all-reduces as they finish,
// the fused optimizer and the temperature's Adam step. The global log s is the model's
// logit_scale master value, so exported weights carry the temperature; the logged scalars are
// written into one of two device blocks, each read back once per logging interval while the steps
// fill the other, with the phases' device times from timed events.
#include "trainer_step.h"  // defines: TrainStep, ...
#include "errbuf.h"        // defines: TRY
#include "trainer_graph.h" // defines: train_graph_open, train_graph_close, train_graph_take, train_graph_run
#include "trainer_mae.h"   // defines: train_mae_create, train_mae_run
#include "proc_time.h"     // defines: time_mono_s
#include "ring.h"          // defines: RING_LABELS, RING_NO_LABEL

#include <errno.h>  // defines: EINVAL, ENOMEM, ENOSPC, EBUSY
#include <math.h>   // defines: log, NAN
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memcpy, strcmp, strncmp
#include <time.h>   // defines: clock_gettime

// timed rows of one block
static int timed_rows(const TrainStep *s)
{
	return s->cfg.log_every < TS_TIMED_ROWS ? s->cfg.log_every : TS_TIMED_ROWS;
}

// the event before phase k (k = TS_NPHASES: after the last) of row r of block b
static KEvent **phase_event(TrainStep *s, int b, int r, int k)
{
	return &s->phase_ev[((size_t)b * timed_rows(s) + (size_t)r) * (TS_NPHASES + 1) + (size_t)k];
}

static int fetch_open(TrainStep *s)
{
	const size_t n = 2 * (size_t)timed_rows(s) * (TS_NPHASES + 1);
	if (!(s->phase_ev = calloc(n, sizeof(KEvent *))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		TRY(kern_event_create_timed(s->ctx, &s->phase_ev[i]));
	for (int b = 0; b < 2; b++) {
		TRY(kern_host_alloc(s->ctx, (void **)&s->fetch_host[b],
				    sizeof(float) * (size_t)s->cfg.log_every * TS_NSCALARS));
		TRY(kern_event_create(s->ctx, &s->fetch_done[b]));
	}
	return 0;
}

static void fetch_close(TrainStep *s)
{
	for (size_t i = 0; s->phase_ev && i < 2 * (size_t)timed_rows(s) * (TS_NPHASES + 1); i++)
		kern_event_destroy(s->phase_ev[i]);
	free(s->phase_ev);
	for (int b = 0; b < 2; b++) {
		kern_host_free(s->ctx, s->fetch_host[b]);
		kern_event_destroy(s->fetch_done[b]);
	}
}

void train_step_destroy(TrainStep *s)
{
	if (!s)
		return;
	train_graph_close(s);
	comm_buckets_free(s->buckets);
	if (s->xchg)
		fastclip_exchange_free(s->xchg);
	cls_heads_destroy(s->cls);
	optim_destroy(s->opt);
	KTensor *t[] = {&s->clips_buf[0], &s->text_buf[0], &s->clips_buf[1], &s->text_buf[1],
			&s->ids,          &s->pos,         &s->temp_mv,      &s->metrics};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		kern_free(s->ctx, t[i]);
	kern_event_destroy(s->staged);
	fetch_close(s);
	kern_host_free(s->ctx, s->stage.clips);
	kern_host_free(s->ctx, s->stage.text);
	kern_host_free(s->ctx, s->stage.ids);
	kern_host_free(s->ctx, s->stage.pos);
	kern_host_free(s->ctx, s->stage.labels);
	clip_model_destroy(s->model);
	mae_model_destroy(s->mae);
	free(s);
}

// backward's gradient groups go to the buckets as they finish
static int on_grads_ready(void *arg, int64_t offset, int64_t length)
{
	TrainStep *s = arg;
	return comm_buckets_ready(s->buckets, s->ctx, offset, length);
}

static int create_batch(TrainStep *s)
{
	const ModelConfig *m = &s->cfg.model;
	const int64_t B = s->cfg.batch, S = m->image_size;
	const size_t clip = (size_t)(m->frames * S * S * 3);
	TRY(kern_alloc(s->ctx, &s->clips_buf[0], KDT_U8, 5, (const int64_t[]){B, m->frames, S, S, 3}));
	TRY(kern_alloc(s->ctx, &s->text_buf[0], KDT_I32, 2, (const int64_t[]){B, m->ctx_len}));
	s->nbuf = 1;
	TRY(train_step_select_buffer(s, 0));
	TRY(kern_alloc(s->ctx, &s->ids, KDT_I64, 1, &B));
	TRY(kern_alloc(s->ctx, &s->pos, KDT_I64, 1, &B));
	TRY(kern_host_alloc(s->ctx, (void **)&s->stage.clips, clip * (size_t)B));
	TRY(kern_host_alloc(s->ctx, (void **)&s->stage.text, sizeof(int32_t) * (size_t)(B * m->ctx_len)));
	TRY(kern_host_alloc(s->ctx, (void **)&s->stage.ids, sizeof(int64_t) * (size_t)B));
	TRY(kern_host_alloc(s->ctx, (void **)&s->stage.pos, sizeof(int64_t) * (size_t)B));
	TRY(kern_host_alloc(s->ctx, (void **)&s->stage.labels, sizeof(int32_t) * RING_LABELS * (size_t)B));
	for (int64_t i = 0; i < RING_LABELS * B; i++)
		s->stage.labels[i] = RING_NO_LABEL;
	return kern_event_create(s->ctx, &s->staged);
}

int train_step_double_buffer(TrainStep *s)
{
	if (s->nbuf != 1)
		return s->nbuf > 1 ? -EEXIST : -EINVAL;
	const KTensor *c = &s->clips_buf[0], *t = &s->text_buf[0];
	TRY(kern_alloc(s->ctx, &s->clips_buf[1], KDT_U8, c->ndim, c->shape));
	int rc = kern_alloc(s->ctx, &s->text_buf[1], KDT_I32, t->ndim, t->shape);
	if (rc < 0) {
		kern_free(s->ctx, &s->clips_buf[1]);
		return rc;
	}
	s->nbuf = 2;
	return 0;
}

int train_step_select_buffer(TrainStep *s, int k)
{
	if (k < 0 || k >= s->nbuf)
		return -EINVAL;
	s->clips = s->clips_buf[k];
	s->text = s->text_buf[k];
	return 0;
}

// the contrastive objective: logit_scale's rule and the loss's exchange
static int create_contrastive(TrainStep *s)
{
	const TrainStepConfig *c = &s->cfg;
	// logit_scale: v0 and v3 learn τ with its own Adam step (kern_temp_step), its gradient in the
	// clipped norm; elsewhere it is the optimizer's, clamped to [0, ln 100] after the update (open_clip:
	// an AdamW parameter; v1, v2: a constant, its gradient 0, so the update only clamps it)
	if (fastclip_learns_global_tau(c->loss.kind))
		TRY(optim_set_rule(s->opt, "logit_scale", KSEG_EXTERNAL, 0, 0));
	else
		TRY(optim_set_rule(s->opt, "logit_scale", KSEG_CLAMP, 0.0f, (float)FASTCLIP_LOG_S_MAX));
	TRY(fastclip_exchange_create(&s->xchg, &c->loss, s->comm, s->ctx, c->batch, c->model.embed_dim, c->act,
				     c->dataset_size));
	return 0;
}

// classify: the heads; every tensor outside the video tower (and visual.proj, which the pooled
// feature does not pass) frozen: no update, no weight decay, out of the gradient norm
static int create_classify(TrainStep *s)
{
	const TrainStepConfig *c = &s->cfg;
	ClipModel *m = s->model;
	for (int i = 0; i < m->n_specs; i++)
		if (strncmp(m->specs[i].name, "visual.", 7) || !strcmp(m->specs[i].name, "visual.proj"))
			TRY(optim_set_rule(s->opt, m->specs[i].name, KSEG_FROZEN, 0, 0));
	TRY(clip_model_set_drop_path(m, c->cls.drop_path, c->cls.drop_path_linear));
	return cls_heads_create(&s->cls, s->ctx, &c->cls, &c->opt, c->batch, c->model.vis_width, c->act);
}

// the dual encoder, its optimizer and the objective's parts
static int create_clip(TrainStep *s)
{
	const TrainStepConfig *c = &s->cfg;
	ClipModelOpts mo = {.grad_checkpoint = c->grad_checkpoint, .vision_only = c->classify};
	TRY(clip_model_create_opts(&s->model, s->ctx, &c->model, c->batch, c->act, &mo));
	ClipModel *m = s->model;
	TRY(model_params_set_wd_groups(m->specs, m->n_specs, c->wd_groups));
	TRY(optim_create(&s->opt, s->ctx, &c->opt, m->specs, m->n_specs, m->n_params));
	if (c->classify)
		TRY(create_classify(s));
	else
		TRY(create_contrastive(s));
	clip_model_set_grad_hook(m, on_grads_ready, s);
	return 0;
}

static int create(TrainStep *s)
{
	const TrainStepConfig *c = &s->cfg;
	if (c->mae) {
		TRY(train_mae_create(s));
		mae_model_set_grad_hook(s->mae, on_grads_ready, s);
	} else {
		TRY(create_clip(s));
	}
	// the buckets over the model's gradient groups (either model's: the same record)
	KTensor *grads = s->mae ? &s->mae->grads : &s->model->grads;
	const ClipGradGroup *groups = s->mae ? s->mae->groups : s->model->groups;
	const int ng = s->mae ? s->mae->n_groups : s->model->n_groups;
	int64_t *off = calloc((size_t)ng, sizeof(int64_t)), *len = calloc((size_t)ng, sizeof(int64_t));
	int rc = off && len ? 0 : -ENOMEM;
	for (int k = 0; k < ng && !rc; k++) {
		off[k] = groups[k].offset;
		len[k] = groups[k].length;
	}
	if (!rc)
		rc = comm_buckets_create(&s->buckets, s->comm, s->ctx, grads, off, len, ng, c->bucket_bytes);
	free(off);
	free(len);
	TRY(rc);
	TRY(kern_alloc(s->ctx, &s->temp_mv, KDT_F32, 1, (const int64_t[]){2}));
	TRY(kern_alloc(s->ctx, &s->metrics, KDT_F32, 2, (const int64_t[]){2 * (int64_t)c->log_every, TS_NSCALARS}));
	TRY(fetch_open(s));
	TRY(kern_ctx_reserve_workspace(s->ctx, kern_loss_ws_bytes(s->ctx, c->batch, c->batch, c->model.embed_dim)));
	TRY(create_batch(s));
	snprintf(s->graph_state, sizeof s->graph_state, "off (--no-cuda-graph)");
	rc = c->cuda_graph ? train_graph_open(s, s->graph_state, sizeof s->graph_state) : 0;
	return rc < 0 ? rc : 0;
}

int train_step_create(TrainStep **out, KernCtx *ctx, Comm *comm, const TrainStepConfig *cfg)
{
	char msg[160];
	const int contrast = cfg && !cfg->classify && !cfg->mae;
	if (!out || !ctx || !comm || !cfg || cfg->batch < 1 || (int64_t)comm_world(comm) * cfg->batch < 2 ||
	    model_config_check(&cfg->model, msg, sizeof msg) < 0 || fastclip_config_check(&cfg->loss) < 0 ||
	    cfg->bucket_bytes < sizeof(float) ||
	    (contrast && fastclip_uses_table(cfg->loss.kind) && cfg->dataset_size < 1) ||
	    (cfg->act != KDT_F32 && cfg->act != KDT_BF16) || cfg->log_every < 1)
		return -EINVAL;
	TrainStep *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->comm = comm;
	s->cfg = *cfg;
	int rc = create(s);
	if (rc < 0) {
		train_step_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

int train_step_after_load(TrainStep *s)
{
	return s->mae ? mae_model_sync_weights(s->mae) : clip_model_sync_weights(s->model);
}

int train_step_init(TrainStep *s, uint64_t seed)
{
	if (s->mae)
		return train_mae_init(s, seed);
	ClipModel *m = s->model;
	TRY(model_init_params(s->ctx, &s->cfg.model, &m->params, seed));
	const float log_s = (float)log(1.0 / s->cfg.loss.tau_init);
	TRY(kern_upload(s->ctx, &m->log_s, &log_s, sizeof log_s));
	TRY(kern_zero(s->ctx, &s->temp_mv));
	s->temp_steps = 0;
	if (s->cls)
		TRY(cls_heads_init(s->cls, seed));
	return clip_model_sync_weights(m);
}

int train_step_init_from(TrainStep *s, const char *path, StInitOpts *o, char *err, size_t errlen)
{
	ClipModel *m = s->model;
	if (!m) {
		snprintf(err, errlen, "--init-from is not implemented for --objective mae");
		return -ENOTSUP;
	}
	TRY(st_openclip_init(path, s->ctx, &s->cfg.model, m->specs, m->n_specs, &m->params, o, err, errlen));
	const float log_s = (float)log(1.0 / s->cfg.loss.tau_init); // τ stays the loss's --temperature
	TRY(kern_upload(s->ctx, &m->log_s, &log_s, sizeof log_s));
	return clip_model_sync_weights(m);
}

static int event_done(KEvent *ev)
{
	int q = kern_event_query(ev);
	return q == 1 ? 0 : q < 0 ? q : kern_event_sync(ev);
}

int train_step_stage_begin(TrainStep *s)
{
	return event_done(s->staged);
}

int train_step_upload_sample(TrainStep *s, int b, const uint8_t *clip, const int32_t *text)
{
	if (b < 0 || b >= s->cfg.batch)
		return -EINVAL;
	const ModelConfig *m = &s->cfg.model;
	const int64_t per = (int64_t)m->frames * m->image_size * m->image_size * 3, L = m->ctx_len;
	KTensor cv, tv;
	TRY(kern_view(&cv, &s->clips, b * per, 1, &per));
	TRY(kern_view(&tv, &s->text, b * L, 1, &L));
	TRY(kern_upload_async(s->ctx, &cv, clip, (size_t)per));
	return kern_upload_async(s->ctx, &tv, text, sizeof(int32_t) * (size_t)L);
}

int train_step_upload_meta(TrainStep *s)
{
	TRY(kern_upload_async(s->ctx, &s->ids, s->stage.ids, kern_nbytes(&s->ids)));
	TRY(kern_upload_async(s->ctx, &s->pos, s->stage.pos, kern_nbytes(&s->pos)));
	return kern_event_record(s->staged, s->ctx);
}

int train_step_upload_staged(TrainStep *s)
{
	const ModelConfig *m = &s->cfg.model;
	const size_t per = (size_t)m->frames * m->image_size * m->image_size * 3;
	for (int b = 0; b < s->cfg.batch; b++)
		TRY(train_step_upload_sample(s, b, s->stage.clips + per * (size_t)b,
					     s->stage.text + (size_t)b * m->ctx_len));
	return train_step_upload_meta(s);
}

// the global τ's rate for the update after `step` completed ones (the loss's rule,
// fastclip_tau_base_lr, on the model's schedule where the loss says so); 0 when τ is not learned
static double tau_lr(const TrainStep *s, int64_t step)
{
	const FastclipConfig *lc = &s->cfg.loss;
	const double base = fastclip_tau_base_lr(lc, s->opt->cfg.lr);
	return fastclip_tau_scheduled(lc->kind) ? optim_lr_of(&s->opt->cfg, base, step) : base;
}

// a loss that learns the global τ gives it its own Adam step on the rank-averaged dL/dlog s,
// clipped by the factor of the model's gradient norm
static int temperature(TrainStep *s, double lr)
{
	const FastclipConfig *lc = &s->cfg.loss;
	if (!fastclip_learns_global_tau(lc->kind))
		return 0;
	ClipModel *m = s->model;
	const KTempStep h = fastclip_temp_hyper(lc, lr, s->temp_steps + 1);
	TRY(kern_temp_step(s->ctx, &m->log_s, &s->temp_mv, &m->g.logit_scale, &s->opt->norm_clip,
			   m->dt != m->pdt ? &m->w.logit_scale : NULL, &h));
	s->temp_steps++;
	return 0;
}

// records the event before phase k of the row being written (rows past the timed ones: none)
static int mark(TrainStep *s, int k)
{
	return s->rows < timed_rows(s) ? kern_event_record(*phase_event(s, s->blk, s->rows, k), s->ctx) : 0;
}

// the logged scalars every objective writes after the update: the gradient norm, the clip
// factor and log s; then the row is done
static int finish_row(TrainStep *s, KTensor *row)
{
	KTensor pair, scalar;
	TRY(kern_view(&pair, row, TS_GRAD_NORM, 1, (const int64_t[]){2}));
	TRY(kern_copy(s->ctx, &pair, &s->opt->norm_clip));
	TRY(kern_view(&scalar, row, TS_LOG_S, 1, (const int64_t[]){1}));
	if (s->model) // the masked autoencoder has no temperature: 0 stays
		TRY(kern_copy(s->ctx, &scalar, &s->model->log_s));
	TRY(mark(s, TS_NPHASES));
	s->rows++;
	return 0;
}

// classify: augment, Mixup/CutMix, the video tower with drop path (this rank's rows of the global
// batch), dropout and the heads' soft-target CE (TS_LOSS their sum, TS_NCE and TS_ACC zero),
// backward, the heads' all-reduce and one clipped norm over the tower's and the heads' gradients
static int run_classify(TrainStep *s, KTensor *row, TrainStepTimes *t)
{
	ClipModel *m = s->model;
	KernCtx *c = s->ctx;
	const ModelConfig *mc = &s->cfg.model;
	const int H = s->cfg.cls.n_heads;
	KTensor loss[CLS_MAX_HEADS], top[CLS_MAX_HEADS], total;
	for (int k = 0; k < CLS_MAX_HEADS; k++) {
		TRY(kern_view(&loss[k], row, TS_CLS_LOSS + k, 1, (const int64_t[]){1}));
		TRY(kern_view(&top[k], row, TS_CLS_TOP1 + k, 1, (const int64_t[]){1}));
	}
	TRY(kern_zero(c, row));
	double t0 = time_mono_s();
	TRY(mark(s, TS_PH_AUGMENT));
	TRY(kern_augment_tubelet(c, &m->patches, &s->clips, &s->pos, s->cfg.data_seed, s->cfg.flip, mc->patch,
				 mc->tubelet));
	TRY(cls_heads_mix(s->cls, &m->patches, s->cfg.data_seed, (uint64_t)s->opt->step, mc->image_size, mc->patch));
	const int64_t B = s->cfg.batch;
	TRY(clip_model_drop_path_draw(m, s->cfg.data_seed, (uint64_t)s->opt->step, comm_rank(s->comm) * B,
				      comm_world(s->comm) * B));
	double t1 = time_mono_s();
	TRY(mark(s, TS_PH_FORWARD));
	TRY(clip_model_forward_visual(m, &m->patches));
	TRY(cls_heads_forward(s->cls, &m->vln, &s->pos, s->cfg.data_seed, s->stage.labels, loss, top));
	TRY(kern_view(&total, row, TS_LOSS, 1, (const int64_t[]){1}));
	TRY(H > 1 ? kern_add(c, &total, &loss[0], &loss[1]) : kern_copy(c, &total, &loss[0]));
	double t2 = time_mono_s();
	TRY(mark(s, TS_PH_EXCHANGE));
	TRY(mark(s, TS_PH_BACKWARD));
	TRY(cls_heads_backward(s->cls));
	TRY(clip_model_backward_visual(m, &s->cls->dfeat));
	double t3 = time_mono_s();
	TRY(mark(s, TS_PH_ALLREDUCE));
	TRY(comm_buckets_finish(s->buckets, c));
	TRY(mark(s, TS_PH_UPDATE));
	const double lr = optim_lr(&s->opt->cfg, s->opt->step);
	TRY(cls_step_update(s->cls, s->comm, s->opt, &m->params, m->dt != m->pdt ? &m->weights : NULL, &m->grads,
			    s->opt->cfg.clip_norm));
	TRY(finish_row(s, row));
	double t4 = time_mono_s();
	*t = (TrainStepTimes){
		.lr = lr, .t_augment = t1 - t0, .t_forward = t2 - t1, .t_backward = t3 - t2, .t_update = t4 - t3};
	return 0;
}

int train_step_run(TrainStep *s, int epoch, TrainStepTimes *t)
{
	if (!s || !t || epoch < 0)
		return -EINVAL;
	if (s->rows >= s->cfg.log_every)
		return -ENOSPC;
	if (s->fetch_rows[s->blk])
		return -EBUSY;
	ClipModel *m = s->model;
	KernCtx *c = s->ctx;
	KTensor row, scalar, pair;
	TRY(kern_view(&row, &s->metrics, ((int64_t)s->blk * s->cfg.log_every + s->rows) * TS_NSCALARS, 1,
		      (const int64_t[]){TS_NSCALARS}));
	if (s->cls)
		return run_classify(s, &row, t);
	if (s->mae)
		return train_mae_run(s, &row, t);
	if (s->graph && train_graph_take(s))
		return train_graph_run(s, &row, epoch, t);
	double t0 = time_mono_s();
	TRY(mark(s, TS_PH_AUGMENT));
	TRY(kern_augment_tubelet(c, &m->patches, &s->clips, &s->pos, s->cfg.data_seed, s->cfg.flip, s->cfg.model.patch,
				 s->cfg.model.tubelet));
	double t1 = time_mono_s();
	TRY(mark(s, TS_PH_FORWARD));
	TRY(clip_model_forward_patches(m, &m->patches, &s->text));
	TRY(kern_view(&pair, &row, TS_NCE, 1, (const int64_t[]){2}));
	TRY(kern_clip_metrics(c, &pair, &m->vfeat, &m->tfeat, &m->log_s));
	double t2 = time_mono_s();
	TRY(mark(s, TS_PH_EXCHANGE));
	TRY(kern_view(&scalar, &row, TS_LOSS, 1, (const int64_t[]){1}));
	TRY(fastclip_exchange_run(s->xchg, c, &m->vfeat, &m->tfeat, &s->ids, &m->log_s, epoch, &scalar,
				  &m->g.logit_scale));
	double t3 = time_mono_s();
	TRY(mark(s, TS_PH_BACKWARD));
	TRY(clip_model_backward(m, fastclip_exchange_de1(s->xchg), fastclip_exchange_de2(s->xchg)));
	double t4 = time_mono_s();
	TRY(mark(s, TS_PH_ALLREDUCE));
	TRY(comm_buckets_finish(s->buckets, c));
	double t5 = time_mono_s();
	TRY(mark(s, TS_PH_UPDATE));
	const double lr = optim_lr(&s->opt->cfg, s->opt->step), lr_tau = tau_lr(s, s->opt->step);
	TRY(optim_step(s->opt, &m->params, m->dt != m->pdt ? &m->weights : NULL, &m->grads));
	TRY(temperature(s, lr_tau));
	TRY(finish_row(s, &row));
	double t6 = time_mono_s();
	*t = train_step_times(lr, lr_tau, (const double[]){t0, t1, t2, t3, t4, t5, t6});
	return 0;
}

int train_step_mark(TrainStep *s, int k)
{
	return mark(s, k);
}

int train_step_finish_row(TrainStep *s, KTensor *row)
{
	return finish_row(s, row);
}

int train_step_fetch_begin(TrainStep *s)
{
	if (!s->rows)
		return 0;
	const int b = s->blk;
	KTensor blk;
	TRY(kern_view(&blk, &s->metrics, (int64_t)b * s->cfg.log_every * TS_NSCALARS, 1,
		      (const int64_t[]){(int64_t)s->rows * TS_NSCALARS}));
	TRY(kern_download_async(s->ctx, s->fetch_host[b], kern_nbytes(&blk), &blk));
	TRY(kern_event_record(s->fetch_done[b], s->ctx));
	s->fetch_rows[b] = s->rows;
	s->blk ^= 1;
	s->rows = 0;
	return 0;
}

int train_step_fetch_pending(const TrainStep *s)
{
	return (s->fetch_rows[0] > 0) + (s->fetch_rows[1] > 0);
}

// the device seconds of row r's phases in block b (NaN where not timed or not readable)
static void phase_times(TrainStep *s, int b, int r, double *out)
{
	for (int k = 0; k < TS_NPHASES; k++) {
		double ms = NAN;
		if (r >= timed_rows(s) ||
		    kern_event_elapsed(*phase_event(s, b, r, k), *phase_event(s, b, r, k + 1), &ms))
			ms = NAN;
		out[k] = ms / 1e3;
	}
}

// the oldest block on its way to the host, -1 when none is: the block the steps write when it is
// still on its way (handed over before the one just handed, which moved the steps to it), else
// the other
static int oldest(const TrainStep *s)
{
	return s->fetch_rows[s->blk] ? s->blk : s->fetch_rows[s->blk ^ 1] ? s->blk ^ 1 : -1;
}

int train_step_fetch_ready(TrainStep *s)
{
	const int b = oldest(s);
	return b < 0 ? 0 : kern_event_query(s->fetch_done[b]);
}

int train_step_fetch_end(TrainStep *s, float *out, double *phases, int *rows, int *block)
{
	*rows = 0;
	const int b = oldest(s);
	if (b < 0)
		return 0;
	const int rc = kern_event_sync(s->fetch_done[b]);
	const int n = s->fetch_rows[b];
	s->fetch_rows[b] = 0;
	if (rc < 0)
		return rc;
	memcpy(out, s->fetch_host[b], sizeof(float) * (size_t)n * TS_NSCALARS);
	for (int r = 0; phases && r < n; r++)
		phase_times(s, b, r, phases + (size_t)r * TS_NPHASES);
	*rows = n;
	if (block)
		*block = b;
	return 0;
}

int train_step_read_metrics(TrainStep *s, float *out, int *rows)
{
	*rows = 0;
	TRY(train_step_fetch_begin(s));
	if (!train_step_fetch_pending(s))
		return kern_stream_sync(s->ctx);
	while (train_step_fetch_pending(s)) {
		int n;
		TRY(train_step_fetch_end(s, out + (size_t)*rows * TS_NSCALARS, NULL, &n, NULL));
		*rows += n;
	}
	return 0;
}

TrainStepTimes train_step_times(double lr, double lr_tau, const double at[7])
{
	return (TrainStepTimes){.lr = lr,
				.lr_tau = lr_tau,
				.t_augment = at[1] - at[0],
				.t_forward = at[2] - at[1],
				.t_exchange = at[3] - at[2],
				.t_backward = at[4] - at[3],
				.t_allreduce = at[5] - at[4],
				.t_update = at[6] - at[5]};
}

double train_step_tau_lr(const TrainStep *s, int64_t step)
{
	return tau_lr(s, step);
}
