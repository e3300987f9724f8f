// The training step glue: model forward/backward on the op interface, the loss's distributed
// exchange on host feature copies, the bucketed all-reduce over the flat gradient buffer, then
// AdamW/LAMB and the temperature. The global log s lives in FastclipTemp and is mirrored into
// the model's logit_scale parameter, so exported weights carry the temperature.
#include "trainer_step.h" // defines: TrainStep, ...

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <math.h>   // defines: exp, log, isfinite
#include <stdlib.h> // defines: calloc, malloc, free
#include <time.h>   // defines: clock_gettime

#define TRY(x)                                                                                                         \
	do {                                                                                                           \
		int rc_ = (x);                                                                                         \
		if (rc_ < 0)                                                                                           \
			return rc_;                                                                                    \
	} while (0)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void train_step_destroy(TrainStep *s)
{
	if (!s)
		return;
	comm_buckets_free(s->buckets);
	fastclip_step_free(s->fstep);
	if (s->has_tables)
		fastclip_tables_free(&s->tables);
	optim_destroy(s->opt);
	kern_free(s->ctx, &s->dv);
	kern_free(s->ctx, &s->dt);
	clip_model_destroy(s->model);
	free(s->e1);
	free(s->e2);
	free(s->de1);
	free(s->de2);
	free(s->sim);
	free(s);
}

static int create(TrainStep *s)
{
	const TrainStepConfig *c = &s->cfg;
	const int B = c->batch, E = c->model.embed_dim;
	TRY(clip_model_create(&s->model, s->ctx, &c->model, B, KDT_F32));
	ClipModel *m = s->model;
	TRY(model_params_set_wd_groups(m->specs, m->n_specs, c->wd_groups));
	TRY(optim_create(&s->opt, s->ctx, &c->opt, m->specs, m->n_specs, m->n_params, KDT_F32));
	if (c->loss.kind != FASTCLIP_OPENCLIP) {
		TRY(fastclip_tables_create(&s->tables, &c->loss, c->dataset_size));
		s->has_tables = 1;
	}
	TRY(fastclip_step_create(&s->fstep, &c->loss, s->comm, s->has_tables ? &s->tables : NULL, B, E));
	float **grads = malloc(sizeof(float *) * (size_t)m->n_specs);
	size_t *sizes = malloc(sizeof(size_t) * (size_t)m->n_specs);
	if (!grads || !sizes) {
		free(grads);
		free(sizes);
		return -ENOMEM;
	}
	// the CPU backend's tensors are host memory; a device backend would hand device pointers to NCCL
	for (int i = 0; i < m->n_specs; i++) {
		grads[i] = (float *)m->grads.data + m->specs[i].offset;
		sizes[i] = (size_t)m->specs[i].numel;
	}
	int rc = comm_buckets_create(&s->buckets, s->comm, m->n_specs, grads, sizes, c->bucket_bytes);
	free(grads);
	free(sizes);
	TRY(rc);
	size_t fe = (size_t)B * E;
	s->e1 = malloc(fe * sizeof(float));
	s->e2 = malloc(fe * sizeof(float));
	s->de1 = malloc(fe * sizeof(float));
	s->de2 = malloc(fe * sizeof(float));
	s->sim = malloc((size_t)B * B * sizeof(double));
	if (!s->e1 || !s->e2 || !s->de1 || !s->de2 || !s->sim)
		return -ENOMEM;
	const int64_t shape[2] = { B, E };
	TRY(kern_alloc(s->ctx, &s->dv, KDT_F32, 2, shape));
	TRY(kern_alloc(s->ctx, &s->dt, KDT_F32, 2, shape));
	return fastclip_temp_init(&s->temp, c->loss.tau_init);
}

int train_step_create(TrainStep **out, KernCtx *ctx, Comm *comm, const TrainStepConfig *cfg)
{
	char msg[160];
	if (!out || !ctx || !comm || !cfg || cfg->batch < 1 || (int64_t)comm->world * cfg->batch < 2 ||
	    model_config_check(&cfg->model, msg, sizeof msg) < 0 || fastclip_config_check(&cfg->loss) < 0 ||
	    cfg->bucket_bytes < sizeof(float) || (cfg->loss.kind != FASTCLIP_OPENCLIP && cfg->dataset_size < 1))
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

int train_step_sync_log_s(TrainStep *s)
{
	float f = (float)s->temp.log_s;
	return kern_upload(s->ctx, &s->model->w.logit_scale, &f, sizeof f);
}

int train_step_init(TrainStep *s, uint64_t seed)
{
	TRY(model_init_params(s->ctx, &s->cfg.model, &s->model->params, seed));
	TRY(fastclip_temp_init(&s->temp, s->cfg.loss.tau_init));
	return train_step_sync_log_s(s);
}

int train_step_init_from(TrainStep *s, const char *path, StInitOpts *o, char *err, size_t errlen)
{
	ClipModel *m = s->model;
	TRY(st_openclip_init(path, s->ctx, &s->cfg.model, m->specs, m->n_specs, &m->params, o, err, errlen));
	return train_step_sync_log_s(s);
}

// symmetric InfoNCE and retrieval accuracy of the local B x B batch at scale exp(log_s);
// sim (B, B) scratch
static void local_metrics(const float *e1, const float *e2, int B, int E, double log_s, double *sim, double *nce,
			  double *acc)
{
	const double sc = exp(log_s);
	for (int i = 0; i < B; i++)
		for (int j = 0; j < B; j++) {
			double d = 0.0;
			for (int k = 0; k < E; k++)
				d += (double)e1[i * E + k] * e2[j * E + k];
			sim[i * B + j] = d;
		}
	double lrow = 0.0, lcol = 0.0;
	int hits = 0;
	for (int i = 0; i < B; i++) {
		double mr = -INFINITY, mc = -INFINITY, sr = 0.0, scol = 0.0;
		int best = 0;
		for (int j = 0; j < B; j++) {
			if (sim[i * B + j] > mr) {
				mr = sim[i * B + j];
				best = j;
			}
			mc = fmax(mc, sim[j * B + i]);
		}
		for (int j = 0; j < B; j++) {
			sr += exp(sc * (sim[i * B + j] - mr));
			scol += exp(sc * (sim[j * B + i] - mc));
		}
		lrow += sc * (mr - sim[i * B + i]) + log(sr);
		lcol += sc * (mc - sim[i * B + i]) + log(scol);
		hits += best == i;
	}
	*nce = 0.5 * (lrow + lcol) / B;
	*acc = (double)hits / B;
}

int train_step_grads(TrainStep *s, const KTensor *video, const KTensor *text, const int64_t *ids, int epoch,
		     TrainStepStats *st)
{
	ClipModel *m = s->model;
	const int B = s->cfg.batch, E = s->cfg.model.embed_dim;
	const size_t fbytes = (size_t)B * E * sizeof(float);
	double t0 = now_s();
	TRY(clip_model_zero_grad(m));
	TRY(clip_model_forward(m, video, text));
	TRY(kern_download(s->ctx, s->e1, fbytes, &m->vfeat));
	TRY(kern_download(s->ctx, s->e2, fbytes, &m->tfeat));
	double t1 = now_s();
	FastclipGrads g = { .de1 = s->de1, .de2 = s->de2 };
	TRY(fastclip_step_run(s->fstep, epoch, s->e1, s->e2, ids, s->temp.log_s, &g));
	local_metrics(s->e1, s->e2, B, E, s->temp.log_s, s->sim, &st->nce, &st->acc);
	st->loss = g.loss;
	double t2 = now_s();
	TRY(kern_upload(s->ctx, &s->dv, s->de1, fbytes));
	TRY(kern_upload(s->ctx, &s->dt, s->de2, fbytes));
	TRY(clip_model_backward(m, &s->dv, &s->dt));
	float dls = (float)g.dlog_s;
	TRY(kern_upload(s->ctx, &m->g.logit_scale, &dls, sizeof dls));
	TRY(kern_sync(s->ctx));
	double t3 = now_s();
	// backward is one call here, so the buckets are marked after it, last layers first
	for (int i = m->n_specs - 1; i >= 0; i--)
		TRY(comm_buckets_ready(s->buckets, i));
	TRY(comm_buckets_finish(s->buckets));
	TRY(kern_download(s->ctx, &dls, sizeof dls, &m->g.logit_scale));
	st->dlog_s = dls;
	double t4 = now_s();
	st->t_forward = t1 - t0;
	st->t_exchange = t2 - t1;
	st->t_backward = t3 - t2;
	st->t_allreduce = t4 - t3;
	return 0;
}

// the global τ's rate for the update after `step` completed ones (FastCLIP main.py: the
// logit_scale group); 0 when τ is not learned
static double tau_lr(const TrainStep *s, int64_t step)
{
	const FastclipConfig *lc = &s->cfg.loss;
	if (lc->kind == FASTCLIP_V3) // step_thresh: constant, ×1/3 once τ ≤ 0.03
		return fastclip_tau_lr_rgclg(lc, s->temp.log_s);
	if (lc->kind == FASTCLIP_V0) // cosine_lr with the model's warmup, steps and lr_min
		return optim_lr_of(&s->opt->cfg, lc->lr_tau < 0 ? s->opt->cfg.lr : lc->lr_tau, step);
	return 0.0;
}

int train_step_update(TrainStep *s, TrainStepStats *st)
{
	ClipModel *m = s->model;
	const FastclipConfig *lc = &s->cfg.loss;
	double t0 = now_s();
	st->lr = optim_lr(&s->opt->cfg, s->opt->step);
	st->lr_tau = tau_lr(s, s->opt->step);
	if (lc->kind == FASTCLIP_OPENCLIP) {
		// open_clip: logit_scale is an ordinary parameter of the optimizer
		TRY(optim_step(s->opt, &m->params, &m->grads, &st->grad_norm));
		float ls;
		TRY(kern_download(s->ctx, &ls, sizeof ls, &m->w.logit_scale));
		s->temp.log_s = ls;
	} else {
		// FastCLIP: logit_scale requires a gradient only when τ is learned (v0, v3), so only then
		// is its gradient in the clipped norm; τ then follows its own rule with the clipped gradient
		const float zero = 0.0f;
		const int learned = lc->kind == FASTCLIP_V0 || lc->kind == FASTCLIP_V3;
		if (!learned)
			TRY(kern_upload(s->ctx, &m->g.logit_scale, &zero, sizeof zero));
		TRY(optim_clip_grads(s->opt, &m->grads, &st->grad_norm));
		float dls;
		TRY(kern_download(s->ctx, &dls, sizeof dls, &m->g.logit_scale));
		TRY(kern_upload(s->ctx, &m->g.logit_scale, &zero, sizeof zero));
		TRY(optim_update(s->opt, &m->params, &m->grads));
		if (learned)
			TRY(fastclip_temp_step(&s->temp, dls, st->lr_tau, lc->beta1_tau, lc->beta2_tau, lc->eps_tau));
	}
	// every loss, constant τ included: FastCLIP clamps logit_scale after each step, so
	// --temperature 0.005 trains at 0.01 from the second step on
	s->temp.log_s = fastclip_clamp_log_s(s->temp.log_s);
	TRY(train_step_sync_log_s(s));
	st->log_s = s->temp.log_s;
	st->t_update = now_s() - t0;
	return 0;
}

int train_step_run(TrainStep *s, const KTensor *video, const KTensor *text, const int64_t *ids, int epoch,
		   TrainStepStats *st)
{
	TRY(train_step_grads(s, video, text, ids, epoch, st));
	return train_step_update(s, st);
}
