// The masked autoencoder's step on the op contract (train_mae_run): masks on the host from the
// batch's stream positions, then forward, backward and update queued like the contrastive step's
// (trainer_step.c holds the buckets, the metrics block and the phase events it shares).
#include "trainer_mae.h" // defines: train_mae_create, ...
#include "errbuf.h"      // defines: TRY
#include "proc_time.h"   // defines: time_mono_s

#include <errno.h>  // defines: EINVAL
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: strcmp

int train_mae_create(TrainStep *s)
{
	const TrainStepConfig *c = &s->cfg;
	ClipModelOpts mo = {.grad_checkpoint = c->grad_checkpoint};
	TRY(mae_model_create(&s->mae, s->ctx, &c->model, &c->mae_cfg, c->batch, c->act, &mo));
	MaeModel *m = s->mae;
	TRY(model_params_set_wd_groups(m->specs, m->n_specs, c->wd_groups));
	return optim_create(&s->opt, s->ctx, &c->opt, m->specs, m->n_specs, m->n_params);
}

int train_mae_init(TrainStep *s, uint64_t seed)
{
	TRY(mae_init_params(s->ctx, &s->cfg.model, &s->cfg.mae_cfg, &s->mae->params, seed));
	TRY(kern_zero(s->ctx, &s->temp_mv));
	s->temp_steps = 0;
	return mae_model_sync_weights(s->mae);
}

int train_mae_run(TrainStep *s, KTensor *row, TrainStepTimes *t)
{
	MaeModel *m = s->mae;
	KernCtx *c = s->ctx;
	KTensor loss;
	TRY(kern_zero(c, row));
	TRY(kern_view(&loss, row, TS_LOSS, 1, (const int64_t[]){1}));
	double t0 = time_mono_s();
	TRY(train_step_mark(s, TS_PH_AUGMENT));
	TRY(mae_model_set_masks(m, s->stage.pos, s->cfg.data_seed));
	TRY(train_step_mark(s, TS_PH_FORWARD)); // the tubelet augment is the forward's first op
	TRY(mae_model_forward(m, &s->clips, &s->pos, s->cfg.data_seed, s->cfg.flip, 1.0));
	TRY(kern_copy(c, &loss, &m->loss));
	double t1 = time_mono_s();
	TRY(train_step_mark(s, TS_PH_EXCHANGE));
	TRY(train_step_mark(s, TS_PH_BACKWARD));
	TRY(mae_model_backward(m));
	double t2 = time_mono_s();
	TRY(train_step_mark(s, TS_PH_ALLREDUCE));
	TRY(comm_buckets_finish(s->buckets, c));
	double t3 = time_mono_s();
	TRY(train_step_mark(s, TS_PH_UPDATE));
	const double lr = optim_lr(&s->opt->cfg, s->opt->step);
	TRY(optim_step(s->opt, &m->params, m->dt != m->pdt ? &m->weights : NULL, &m->grads));
	TRY(train_step_finish_row(s, row));
	double t4 = time_mono_s();
	*t = (TrainStepTimes){
		.lr = lr, .t_forward = t1 - t0, .t_backward = t2 - t1, .t_allreduce = t3 - t2, .t_update = t4 - t3};
	return 0;
}

int train_mae_ckpt_meta(const TrainStep *s, const char **kv, char *buf, size_t len)
{
	if (!s->mae)
		return 0;
	mae_config_str(&s->cfg.mae_cfg, buf, len);
	kv[0] = "avclip.objective", kv[1] = "mae", kv[2] = "avclip.mae", kv[3] = buf;
	return 2;
}

int train_mae_resume_check(int mae, const MaeConfig *run, const StFile *f, const char *path, long long step, char *err,
			   size_t errlen)
{
	const char *ob = st_meta(f, "avclip.objective"), *mc = st_meta(f, "avclip.mae");
	const int file_mae = ob && !strcmp(ob, "mae");
	if (file_mae != mae) {
		snprintf(err, errlen,
			 "cannot resume %s: the checkpoint of step %lld (%s) was written by %s; resume with its "
			 "objective, or start a new run from its video tower (tools/export, then --init-from)",
			 mae ? "--objective mae" : "this objective", step, path,
			 file_mae ? "--objective mae (a masked autoencoder)" : "another --objective (a dual encoder)");
		return -EINVAL;
	}
	char want[96];
	if (!mae)
		return 0;
	mae_config_str(run, want, sizeof want);
	MaeConfig have;
	if (!mc || mae_config_parse(mc, &have) || strcmp(mc, want)) {
		snprintf(err, errlen,
			 "cannot resume: the checkpoint of step %lld (%s) was written for the decoder [%s], this run's "
			 "is [%s] (--mae-decoder-width/-layers/-heads, --mask-ratio)",
			 step, path, mc ? mc : "none recorded", want);
		return -EINVAL;
	}
	return 0;
}
