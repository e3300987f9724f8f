// The trainer's loop. A step leaves its scalars on the device; once per --metrics-every steps the
// host queues their copy to pinned memory and takes the interval before it, whose copy has long
// landed (two blocks, trainer_step.h), so the host never waits for the step it has just queued:
// with the default of 1, step k's figures are written while step k+1 runs. Before a checkpoint or
// the end every row is taken. Stopping: a stop request only sets a flag;
// each step starts with an all-gather over the control channel of (stop flag, stream position
// before this rank's batch), so all ranks stop at the same step boundary and rank 0 checkpoints
// every rank's position. A rank waiting for data when a stop comes abandons that batch (the
// loaders may be stopping too); every rank learns of it and the batch is read again after a resume.
#include "trainer_run.h" // defines: TrainerRun, trainer_run
#include "proc_time.h"   // defines: time_mono_s

#include <errno.h>  // defines: ERANGE, ECANCELED
#include <math.h>   // defines: exp, isfinite, NAN
#include <stdlib.h> // defines: calloc, free
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: strncmp, strerror
#include <time.h>   // defines: clock_gettime

#include "log.h"           // defines: log_info, log_error, log_debug, log_warnx, log_fatalx
#include "trainer_best.h"  // defines: trainer_best_offer
#include "trainer_ckpt.h"  // defines: trainer_ckpt_save
#include "trainer_graph.h" // defines: train_graph_note

typedef struct {
	uint64_t pos, stop;
	uint64_t landed; // this rank's oldest metrics block on its way to the host has landed
} Agree;

// what the host knows of a step before its scalars are read back
typedef struct {
	TrainerMetrics m;
	double data_wait_s, errors;
} Pending;

static void step_failed(TrainerRun *r, int64_t step, int rc)
{
	const char *why = kern_error_message(r->ctx);
	if (rc == -ERANGE && (!strncmp(why, "optimizer", 9) || !strncmp(why, "temp_step", 9)))
		log_fatalx("step %lld: the gradient is not finite (%s); last checkpoint at step %lld", (long long)step,
			   why, (long long)r->last_ckpt);
	if (comm_error(r->comm)[0])
		log_fatalx("step %lld failed: %s (%s)", (long long)step, comm_error(r->comm), strerror(-rc));
	if (!why[0] && rc == -EINVAL && kern_refusal()[0])
		log_fatalx("step %lld failed: an op refused its arguments (%s)", (long long)step, kern_refusal());
	log_fatalx("step %lld failed: %s", (long long)step, why[0] ? why : strerror(-rc));
}

static void log_step(const TrainerRun *r, const TrainerMetrics *m)
{
	const TrainerConfig *c = r->c;
	char mfu[32] = "";
	if (isfinite(m->mfu))
		snprintf(mfu, sizeof mfu, " MFU %.1f%%", 100 * m->mfu);
	if (m->mae) {
		log_info("step %lld/%lld epoch %d recon loss %.4f lr %.3g | %.3f s (data wait %.3f s, %.1f%%) %.1f "
			 "samples/s | mem %.2f GiB (peak %.2f)%s",
			 (long long)m->step, (long long)c->steps, m->epoch, m->loss, m->lr, m->step_s, m->data_wait_s,
			 m->data_wait_pct, m->samples_per_s, m->mem_bytes / 1073741824.0,
			 m->mem_peak_bytes / 1073741824.0, mfu);
		return;
	}
	log_info(
		"step %lld/%lld epoch %d loss %.4f nce %.4f acc %.2f tau %.4f lr %.3g | %.3f s (data wait %.3f s, %.1f%%) "
		"%.1f samples/s | mem %.2f GiB (peak %.2f)%s",
		(long long)m->step, (long long)c->steps, m->epoch, m->loss, m->nce, m->acc, m->tau, m->lr, m->step_s,
		m->data_wait_s, m->data_wait_pct, m->samples_per_s, m->mem_bytes / 1073741824.0,
		m->mem_peak_bytes / 1073741824.0, mfu);
}

// takes the oldest block on its way to the host and reports its steps (pend: the host's facts of
// each block's steps); every rank calls it at the same steps
static void report(TrainerRun *r, Pending **pend_blocks)
{
	const TrainerConfig *c = r->c;
	const int64_t w0 = kern_ctx_host_waits(r->ctx);
	float *dev = calloc((size_t)c->metrics_every * TS_NSCALARS, sizeof(float));
	// per row, averaged over the ranks: loss, nce, acc, data wait, errors, classify's heads' loss and top-1
	enum { NRED = 5 + 2 * CLS_MAX_HEADS };
	double *red = calloc((size_t)c->metrics_every * NRED, sizeof(double));
	double *ph = calloc((size_t)c->metrics_every * TS_NPHASES, sizeof(double));
	if (!dev || !red || !ph)
		log_fatalx("out of memory");
	int rows, blk = 0, rc = train_step_fetch_end(r->ts, dev, ph, &rows, &blk);
	if (rc < 0)
		step_failed(r, r->step, rc);
	Pending *pend = pend_blocks[blk];
	for (int i = 0; i < rows; i++) {
		double *x = red + NRED * i;
		x[0] = dev[i * TS_NSCALARS + TS_LOSS];
		x[1] = dev[i * TS_NSCALARS + TS_NCE];
		x[2] = dev[i * TS_NSCALARS + TS_ACC];
		x[3] = pend[i].data_wait_s;
		x[4] = pend[i].errors;
		for (int k = 0; k < CLS_MAX_HEADS; k++)
			x[5 + k] = dev[i * TS_NSCALARS + TS_CLS_LOSS + k],
			      x[5 + CLS_MAX_HEADS + k] = dev[i * TS_NSCALARS + TS_CLS_TOP1 + k];
	}
	if (comm_ctl_allreduce(r->comm, red, (size_t)rows * NRED, COMM_AVG) < 0)
		log_fatalx("step %lld: ranks lost each other: %s", (long long)r->step, comm_error(r->comm));
	if (rows)
		pend[rows - 1].m.host_waits += kern_ctx_host_waits(r->ctx) - w0;
	for (int i = 0; i < rows; i++) {
		TrainerMetrics *m = &pend[i].m;
		const float *d = dev + i * TS_NSCALARS;
		const double *x = red + NRED * i;
		m->loss = x[0];
		m->nce = x[1];
		m->acc = x[2];
		m->data_wait_s = x[3];
		m->error_slots = x[4] * c->ranks;
		const double *t = ph + (size_t)i * TS_NPHASES; // device time
		m->t_augment = t[TS_PH_AUGMENT], m->t_forward = t[TS_PH_FORWARD], m->t_exchange = t[TS_PH_EXCHANGE];
		m->t_backward = t[TS_PH_BACKWARD], m->t_allreduce = t[TS_PH_ALLREDUCE], m->t_update = t[TS_PH_UPDATE];
		m->tau = exp(-(double)d[TS_LOG_S]);
		m->grad_norm = d[TS_GRAD_NORM];
		m->cls_heads = r->ts->cls ? r->ts->cls->cfg.n_heads : 0; // classify: the ranks' mean, as the loss
		m->mae = r->ts->mae != NULL;
		for (int k = 0; k < m->cls_heads; k++)
			m->cls_loss[k] = x[5 + k], m->cls_top1[k] = x[5 + CLS_MAX_HEADS + k];
		m->data_wait_pct = m->step_s > 0 ? 100.0 * m->data_wait_s / m->step_s : 0;
		m->mfu = c->peak_tflops > 0 && m->step_s > 0
				 ? r->flops_per_step / m->step_s / (c->peak_tflops * 1e12 * c->ranks)
				 : NAN;
		if (r->mf && (rc = trainer_metrics_write(r->mf, m)) < 0)
			log_fatalx("cannot write %s: %s", r->mpath, strerror(-rc));
		if (c->rank == 0 && (m->step % c->log_every == 0 || m->step == c->steps))
			log_step(r, m);
	}
	if (r->mf && (rc = trainer_metrics_flush(r->mf)) < 0)
		log_fatalx("cannot write %s: %s", r->mpath, strerror(-rc));
	free(dev);
	free(red);
	free(ph);
}

// hands the current block to the host and reports blocks until at most `keep` are on their way:
// 1 after a full block (the lag of one interval), 0 before a checkpoint or the end (every step)
static void hand_over(TrainerRun *r, Pending **pend, int keep)
{
	int rc = train_step_fetch_begin(r->ts);
	if (rc < 0)
		step_failed(r, r->step, rc);
	while (train_step_fetch_pending(r->ts) > keep)
		report(r, pend);
}

// every rank's stop flag and stream position: one agreed step boundary for all; 1 when done.
// After an abandoned batch nothing is gathered: the positions before it stay the checkpoint's.
static int agree(TrainerRun *r, Agree *all, int abandoned)
{
	const TrainerConfig *c = r->c;
	Agree mine = {trainer_ingest_position(r->in), (uint64_t)*r->stop, train_step_fetch_ready(r->ts) != 0};
	if (!abandoned && comm_ctl_allgather(r->comm, &mine, all, sizeof mine) < 0)
		log_fatalx("step %lld: ranks lost each other: %s", (long long)r->step, comm_error(r->comm));
	r->fetch_landed = !abandoned;
	for (int k = 0; k < c->ranks && !abandoned; k++) {
		r->positions[k] = all[k].pos;
		r->stopped |= all[k].stop != 0;
		r->fetch_landed &= all[k].landed != 0;
	}
	r->stopped |= abandoned;
	return r->stopped || r->step >= c->steps || (c->stop_after_steps && r->step - r->start >= c->stop_after_steps);
}

static void checkpoint(TrainerRun *r)
{
	char err[512];
	int rc = trainer_ckpt_save(r->ckdir, r->ts, r->step, r->positions, r->c->ranks, r->in->seed, r->c->keep_last,
				   err, sizeof err);
	if (rc < 0) {
		log_error("checkpoint at step %lld failed: %s", (long long)r->step, err);
		r->save_failed = 1;
	} else {
		log_info("checkpoint at step %lld: %s/ckpt-%08lld.safetensors", (long long)r->step, r->ckdir,
			 (long long)r->step);
		r->save_failed = 0;
		r->last_ckpt = r->step;
	}
}

static void evaluate(TrainerRun *r)
{
	char err[512];
	double te = time_mono_s();
	EvalReport rep;
	if (trainer_eval_run(r->ev, r->ts->model, r->step, r->epath, &rep, err, sizeof err) < 0)
		log_fatalx("evaluation at step %lld failed: %s", (long long)r->step, err);
	log_info("eval at step %lld: R@1 %s %.1f%% %s %.1f%% (chance %.1f%%) in %.1f s", (long long)r->step,
		 eval_report_dir(&rep, 1), 100 * rep.t2v.r1, eval_report_dir(&rep, 0), 100 * rep.v2t.r1,
		 100 * rep.chance.r1, time_mono_s() - te);
	if (!r->best)
		return;
	// a failed save loses no training: the previous best stays, and the next evaluation tries again
	int rc = trainer_best_offer(r->best, &rep, r->ts, r->step, r->positions, r->c->ranks, r->in->seed, err,
				    sizeof err);
	if (rc < 0)
		log_error("step %lld: %s", (long long)r->step, err);
	else if (rc > 0)
		log_info("step %lld: %s %.1f%% is the best so far: kept in %s", (long long)r->step, r->best->metric,
			 100 * r->best->score, r->best->dir);
}

// whether any rank's ingest was cancelled by a stop request (every rank calls it each step)
static int any_abandoned(TrainerRun *r, int mine, Agree *scratch)
{
	int *all = (int *)scratch, any = 0; // c->ranks ints fit in c->ranks Agree records
	if (comm_ctl_allgather(r->comm, &mine, all, sizeof mine) < 0)
		log_fatalx("step %lld: ranks lost each other: %s", (long long)r->step, comm_error(r->comm));
	for (int k = 0; k < r->c->ranks; k++)
		any |= all[k];
	if (any)
		log_info("step %lld: a stop request came while rank(s) waited for data: the batch is abandoned",
			 (long long)r->step);
	return any;
}

// each shape the backend ran off its fast path (a product cuBLASLt refused), once
static void log_slow_paths(TrainerRun *r)
{
	char line[256];
	while (kern_ctx_slow_path_note(r->ctx, line, sizeof line))
		log_warnx("step %lld: a slow path (counted in the metrics' slow_paths): %s", (long long)r->step, line);
}

// ingest and one step; the host-side facts of the step go into p. 0 when the batch was abandoned.
static int one_step(TrainerRun *r, Pending *p, Agree *scratch)
{
	const TrainerConfig *c = r->c;
	TrainStep *ts = r->ts;
	char err[512];
	double t0 = time_mono_s(), w0 = r->in->wait_s;
	const int64_t h0 = kern_ctx_host_waits(r->ctx), s0 = kern_ctx_slow_paths(r->ctx),
		      l0 = kern_ctx_launches(r->ctx);
	const uint64_t e0 = r->in->errors;
	const int i = r->buf;
	int rc = train_step_select_buffer(ts, i);
	if (!rc)
		rc = train_step_stage_begin(ts);
	IngestBatch b = {.batch = c->batch_size,
			 .clips = &ts->clips,
			 .text = &ts->text,
			 .ids = ts->stage.ids,
			 .pos = ts->stage.pos,
			 .labels = ts->cls ? ts->stage.labels : NULL,
			 .free_ev = r->freed[i],
			 .ready = r->ready[i]};
	if (!rc && (rc = trainer_ingest_batch(r->in, &b, c->dataset_size, c->data_timeout, err, sizeof err)) < 0 &&
	    rc != -ECANCELED)
		log_fatalx("step %lld: %s", (long long)r->step, err);
	if (any_abandoned(r, rc == -ECANCELED, scratch))
		return 0;
	if (!rc)
		rc = kern_stream_wait_event(r->ctx, r->ready[i]);
	if (!rc)
		rc = train_step_upload_meta(ts);
	const int64_t per_epoch = trainer_steps_per_epoch(c);
	int epoch = per_epoch > 0 ? (int)(r->step / per_epoch) : 0;
	comm_stats_reset(r->comm);
	TrainStepTimes tt;
	if (!rc)
		rc = train_step_run(ts, epoch, &tt);
	if (!rc) // the next copies into this buffer wait for the step's last reader (backward reads the tokens)
		rc = kern_event_record(r->freed[i], r->ctx);
	if (rc < 0)
		step_failed(r, r->step, rc);
	r->buf ^= 1;
	const CommStats *cst = comm_stats(r->comm);
	if (c->log_level[0] == 'd') {
		char cs[256];
		comm_stats_format(cst, cs, sizeof cs);
		log_debug("step %lld comm: %s", (long long)r->step, cs);
	}
	double dt = time_mono_s() - t0;
	*p = (Pending){.data_wait_s = r->in->wait_s - w0, .errors = (double)(r->in->errors - e0)};
	p->m = (TrainerMetrics){.step = r->step + 1,
				.epoch = epoch,
				.lr = tt.lr,
				.step_s = dt,
				.samples_per_s = (double)c->batch_size * c->ranks / dt,
				.allgather_bytes = cst->bytes[COMM_ALLGATHER],
				.reduce_scatter_bytes = cst->bytes[COMM_REDUCE_SCATTER],
				.allreduce_bytes = cst->bytes[COMM_ALLREDUCE],
				.comm_bytes = cst->bytes[COMM_ALLGATHER] + cst->bytes[COMM_REDUCE_SCATTER] +
					      cst->bytes[COMM_ALLREDUCE],
				.host_waits = kern_ctx_host_waits(r->ctx) - h0,
				.slow_paths = kern_ctx_slow_paths(r->ctx) - s0,
				.launches = kern_ctx_launches(r->ctx) - l0};
	log_slow_paths(r);
	char gn[400];
	const int gnote = train_graph_note(ts, gn, sizeof gn);
	if (gnote == 1) // captured
		log_info("step %lld: %s", (long long)r->step + 1, gn);
	else if (gnote == 2) // a capture failed: the steps run eagerly
		log_warnx("step %lld: %s", (long long)r->step + 1, gn);
	KMemInfo mi;
	kern_ctx_memory(r->ctx, &mi); // the tensor counts are filled whatever the backend says of its device
	p->m.mem_bytes = (double)mi.tensor_bytes;
	p->m.mem_peak_bytes = (double)mi.tensor_peak;
	return 1;
}

// the second batch buffer and the events that order the two buffers between the streams
static void buffers_open(TrainerRun *r)
{
	TrainStep *ts = r->ts;
	int rc = train_step_double_buffer(ts);
	for (int k = 0; k < 2 && !rc; k++)
		if (!(rc = kern_event_create(r->ctx, &r->ready[k])))
			rc = kern_event_create(r->ctx, &r->freed[k]);
	if (rc < 0)
		log_fatalx("cannot allocate the second batch buffer (%zu bytes of clips): %s", kern_nbytes(&ts->clips),
			   strerror(-rc));
	r->buf = 0;
}

static void buffers_close(TrainerRun *r)
{
	kern_sync(r->ctx);                  // nothing may still read or fill a buffer
	train_step_select_buffer(r->ts, 0); // (buffer 1 goes with the step)
	for (int k = 0; k < 2; k++) {
		kern_event_destroy(r->ready[k]);
		kern_event_destroy(r->freed[k]);
	}
}

void trainer_run(TrainerRun *r)
{
	const TrainerConfig *c = r->c;
	Agree *all = calloc((size_t)c->ranks, sizeof(Agree));
	Pending *pend[2] = {calloc((size_t)c->metrics_every, sizeof(Pending)),
			    calloc((size_t)c->metrics_every, sizeof(Pending))};
	r->agree_buf = all, r->pend_buf[0] = pend[0], r->pend_buf[1] = pend[1];
	if (!all || !pend[0] || !pend[1])
		log_fatalx("out of memory");
	buffers_open(r);
	r->start = r->step;
	// model FLOPs of one step of every rank (forward + backward = 3x forward)
	r->flops_per_step =
		3.0 * (c->mae ? mae_flops_per_sample(&c->model, &c->mae_cfg) : model_flops_per_sample(&c->model)) *
		c->batch_size * c->ranks;
	int64_t last_eval = -1;
	double t_run = time_mono_s();
	for (int abandoned = 0;;) {
		int done = agree(r, all, abandoned);
		if (r->fetch_landed)     // every rank's figures have landed: written now, not after the next
			report(r, pend); // step (which may wait long for data)
		int ckpt_due = r->step != r->last_ckpt &&
			       (done || (c->ckpt_every && r->step > r->start && r->step % c->ckpt_every == 0));
		if ((done || ckpt_due) && (r->ts->rows || train_step_fetch_pending(r->ts)))
			hand_over(r, pend, 0); // metrics.jsonl reaches the checkpoint's step
		if (c->rank == 0 && ckpt_due)
			checkpoint(r);
		// rank 0 evaluates between steps; the others wait at the next step's all-gather
		if (r->ev && r->step > r->start && r->step != last_eval && !r->stopped &&
		    (done || (c->eval_every && r->step % c->eval_every == 0))) {
			evaluate(r);
			last_eval = r->step;
		}
		if (done)
			break;
		if (!one_step(r, &pend[r->ts->blk][r->ts->rows], all)) {
			abandoned = 1;
			continue;
		}
		r->step++;
		if (r->ts->rows == c->metrics_every)
			hand_over(r, pend, 1);
	}
	r->total_s = time_mono_s() - t_run;
	buffers_close(r);
	free(all);
	free(pend[0]);
	free(pend[1]);
	r->agree_buf = r->pend_buf[0] = r->pend_buf[1] = NULL;
}
