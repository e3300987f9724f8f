// trainer: one rank of the CPU backend. Consumes rank r's positions of the ring, augments,
// runs the training step with the other ranks over comm, logs metrics and checkpoints.
//
// Stopping: SIGTERM, SIGINT and SIGHUP only set a flag; a later signal changes nothing (a
// terminal's Ctrl-C reaches the trainers and then launch.sh's SIGTERM follows), so every stop
// request ends in a checkpoint; SIGKILL is the way to exit without one. A rank waiting for data
// abandons that batch at once (the loaders may be stopping too). Each step starts with an
// all-gather of (stop flag, stream position before this rank's batch), so all ranks stop at the
// same step boundary and rank 0 checkpoints every rank's position; an abandoned batch is read
// again after a resume.
#define _GNU_SOURCE // sched_getaffinity, CPU_COUNT
#include <errno.h>    // defines: errno, ENOENT, EEXIST
#include <sched.h>    // defines: sched_getaffinity, CPU_COUNT
#include <math.h>     // defines: exp
#include <signal.h>   // defines: sigaction, SIGTERM, SIGINT
#include <stdio.h>    // defines: snprintf, fputs
#include <stdlib.h>   // defines: malloc, free, exit
#include <string.h>   // defines: strerror, memset
#include <sys/stat.h> // defines: mkdir, stat
#include <time.h>     // defines: clock_gettime
#include <unistd.h>   // defines: write, _exit, access

#include "comm_shm.h"           // defines: comm_shm_create, comm_shm_attach, comm_shm_unlink
#include "log.h"                // defines: log_init, log_info, log_fatalx
#include "model_params.h"       // defines: ParamSpec, model_layout
#include "trainer_augment.h"    // defines: trainer_augment_batch
#include "trainer_ckpt.h"       // defines: trainer_ckpt_save, trainer_ckpt_load
#include "trainer_comm_local.h" // defines: trainer_comm_local_open
#include "trainer_eval.h"       // defines: TrainerEval, trainer_eval_open, trainer_eval_run
#include "trainer_flags.h"      // defines: TrainerConfig, trainer_flags_parse, ...
#include "trainer_ingest.h"     // defines: TrainerIngest, ...
#include "trainer_metrics.h"    // defines: TrainerMetrics, ...
#include "trainer_step.h"       // defines: TrainStep, ...

#define COMM_SLOT_BYTES (4u << 20)

static volatile sig_atomic_t g_stop; // the signal of the first stop request

static void on_signal(int sig)
{
	if (g_stop) {
		static const char msg[] = "trainer: already stopping: the checkpoint of the last step comes first "
					  "(SIGKILL exits without it)\n";
		ssize_t w = write(2, msg, sizeof msg - 1);
		(void)w;
		return;
	}
	g_stop = sig;
}

static void catch_stop_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int mkdir_p(const char *path)
{
	char buf[1100];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0755) && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static Comm *open_comm(const TrainerConfig *c)
{
	Comm *comm;
	int rc;
	if (c->ranks == 1 && !c->comm[0]) {
		if ((rc = trainer_comm_local_open(&comm)) < 0)
			log_fatalx("rank 0: cannot make a local communicator: %s", strerror(-rc));
		return comm;
	}
	rc = comm_shm_attach(c->comm, c->rank, c->comm_timeout, &comm);
	if (rc == -ENOENT)
		log_fatalx("comm group '%s' does not exist (create it with: trainer --comm-create --comm %s --ranks %d)", c->comm,
			   c->comm, c->ranks);
	if (rc < 0)
		log_fatalx("cannot join comm group '%s' as rank %d: %s", c->comm, c->rank,
			   rc == -EBUSY ? "a live process holds that rank" : rc == -EPROTO ? "segment of another version" : strerror(-rc));
	if (comm->world != c->ranks)
		log_fatalx("comm group '%s' has %d ranks but this run has --ranks %d", c->comm, comm->world, c->ranks);
	return comm;
}

// the --config file as it was read, so a run's log shows what it ran with even after the
// file changes
static void log_config_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return; // trainer_flags_parse has read it already; a vanished file is not worth a stop
	char line[1024];
	log_info("config file %s:", path);
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = 0;
		log_info("  | %s", line);
	}
	fclose(f);
}

// --threads 0: this process's CPUs shared among the ranks of the machine, so N ranks do not
// oversubscribe the cores (launch.sh passes the cores left after its loaders instead)
static int pick_threads(const TrainerConfig *c, char *why, size_t len)
{
	if (c->threads > 0) {
		snprintf(why, len, "--threads %d", c->threads);
		return c->threads;
	}
	cpu_set_t cs;
	int cpus = sched_getaffinity(0, sizeof cs, &cs) == 0 ? CPU_COUNT(&cs) : (int)sysconf(_SC_NPROCESSORS_ONLN);
	int threads = cpus / c->ranks > 1 ? cpus / c->ranks : 1;
	snprintf(why, len, "--threads 0: %d CPUs / %d rank(s); loaders on this machine share them", cpus, c->ranks);
	return threads;
}

// what the run will do, in the words a user checks first: steps, epochs, which column shows
// learning, and a batch that swallows the dataset
static void log_plan(const TrainerConfig *c, int64_t step)
{
	const int64_t per_epoch = trainer_steps_per_epoch(c), per_step = (int64_t)c->batch_size * c->ranks;
	const int64_t samples = c->train_num_samples > 0 ? c->train_num_samples : c->dataset_size;
	if (per_epoch > 0)
		log_info("plan: steps %lld to %lld, %lld steps per epoch (%lld samples, %lld per step): %.1f epochs",
			 (long long)step, (long long)c->steps, (long long)per_epoch, (long long)samples, (long long)per_step,
			 (double)c->steps / (double)per_epoch);
	const int fastclip = c->loss.kind != FASTCLIP_OPENCLIP;
	if (fastclip)
		log_info("note: with --loss %s the loss column is FastCLIP's surrogate, whose gradient is the estimator; "
			 "it stays nearly flat (fastclip-v1: about 2.0 by construction). Learning shows as nce falling "
			 "and acc rising", c->loss_name);
	if (samples > 0 && per_step > samples)
		log_warnx("one step takes %lld samples (--batch-size %d x %d ranks), more than an epoch's %lld: every "
			  "step is a new epoch%s", (long long)per_step, c->batch_size, c->ranks, (long long)samples,
			  fastclip ? ", so FastCLIP's γ schedule (per epoch, --gamma-decay-epochs) is used up within a few "
				     "steps; use a smaller batch or more data" : "");
}

typedef struct {
	uint64_t pos, stop;
} Agree;

// the parameter counts of the model the flags describe, for tools that rebuild it elsewhere
// (tools/bench/torch_clip.py checks its PyTorch twin against this)
static int print_params(const TrainerConfig *c)
{
	int n;
	int64_t total, vis = 0;
	model_layout(&c->model, NULL, &n, &total);
	ParamSpec *specs = calloc((size_t)n, sizeof *specs);
	if (!specs)
		log_fatalx("out of memory");
	model_layout(&c->model, specs, &n, &total);
	for (int i = 0; i < n; i++)
		vis += strncmp(specs[i].name, "visual.", 7) ? 0 : specs[i].numel;
	printf("{\"model\":\"%s\",\"params\":%lld,\"visual\":%lld,\"text\":%lld,\"tensors\":%d}\n", c->model_name,
	       (long long)total, (long long)vis, (long long)(total - vis), n);
	free(specs);
	return 0;
}

int main(int argc, char **argv)
{
	log_init("trainer", LOG_INFO);
	static TrainerConfig c;
	char err[512];
	if (trainer_flags_parse(&c, argc, argv, err, sizeof err) < 0)
		log_fatalx("%s", err);
	if (c.help) {
		static char help[16384];
		trainer_flags_help(help, sizeof help);
		fputs(help, stdout);
		return 0;
	}
	char lname[32];
	snprintf(lname, sizeof lname, "trainer.r%d", c.rank);
	log_init(lname, (LogLevel)log_parse_level(c.log_level));
	if (c.comm_create) {
		int rc = comm_shm_create(c.comm, c.ranks, COMM_SLOT_BYTES);
		if (rc < 0)
			log_fatalx("cannot create comm group '%s' for %d ranks: %s", c.comm, c.ranks, strerror(-rc));
		log_info("comm group '%s' created for %d ranks", c.comm, c.ranks);
		return 0;
	}
	if (c.print_geometry) { // the ring a launcher creates for this model, as ringctl flags
		printf("--frames %d --height %d --width %d --text-len %d\n", c.model.frames, c.model.image_size,
		       c.model.image_size, c.model.ctx_len);
		return 0;
	}
	if (c.print_steps) {
		printf("steps %lld steps-per-epoch %lld\n", (long long)c.steps, (long long)trainer_steps_per_epoch(&c));
		return 0;
	}
	if (c.print_params)
		return print_params(&c);
	if (c.resume_position) {
		char dir[1100];
		int64_t step;
		uint64_t first;
		snprintf(dir, sizeof dir, "%s/ckpt", c.run_dir);
		int nr, rc = trainer_ckpt_first_position(dir, &step, &nr, &first, err, sizeof err);
		if (rc == -ENOENT) {
			printf("0\n");
			return 0;
		}
		if (rc < 0)
			log_fatalx("%s", err);
		printf("%llu\n", (unsigned long long)first);
		return 0;
	}
	if (c.comm_unlink) {
		int rc = comm_shm_unlink(c.comm);
		if (rc < 0 && rc != -ENOENT)
			log_fatalx("cannot remove comm group '%s': %s", c.comm, strerror(-rc));
		return 0;
	}
	catch_stop_signals();
	if (c.config[0])
		log_config_file(c.config);

	TrainerIngest in;
	int rc;
	if ((rc = trainer_ingest_open(&in, c.ring, c.rank, c.ranks, &c.model, err, sizeof err)) < 0)
		log_fatalx("%s", err);
	in.cancel = &g_stop;
	Comm *comm = open_comm(&c);
	char ckdir[1100], mpath[1100], epath[1100];
	snprintf(ckdir, sizeof ckdir, "%s/ckpt", c.run_dir);
	snprintf(mpath, sizeof mpath, "%s/metrics.jsonl", c.run_dir);
	snprintf(epath, sizeof epath, "%s/eval.jsonl", c.run_dir);
	rc = mkdir_p(ckdir);
	if (rc < 0)
		log_fatalx("cannot create run directory %s: %s", ckdir, strerror(-rc));
	char marker[1200];
	snprintf(marker, sizeof marker, "%s/LATEST", ckdir);
	if (!c.resume && access(marker, F_OK) == 0)
		log_fatalx("%s already holds a checkpoint: pass --resume to continue it, or use a new --run-dir", c.run_dir);

	char why_threads[96];
	int threads = pick_threads(&c, why_threads, sizeof why_threads);
	KernCtx *ctx;
	KCtxOptions ko = {.backend = KERN_BACKEND_CPU, .threads = threads, .attention = c.attention_impl};
	if ((rc = kern_ctx_create(&ctx, &ko)) < 0 && rc == -ENOTSUP && c.attention_impl == KERN_ATTN_CUDNN)
		log_fatalx("--attention cudnn needs the CUDA backend (cuDNN's fused attention); this trainer runs the CPU backend");
	if (rc < 0)
		log_fatalx("cannot create the CPU kernel context: %s", strerror(-rc));
	TrainStepConfig tc = { .model = c.model, .opt = c.opt, .loss = c.loss, .batch = c.batch_size,
			       .dataset_size = c.dataset_size, .wd_groups = c.wd, .bucket_bytes = (size_t)(c.bucket_mb * 1048576.0) };
	TrainStep *ts;
	if ((rc = train_step_create(&ts, ctx, comm, &tc)) < 0)
		log_fatalx("cannot build the model and step (batch %d x %d ranks): %s", c.batch_size, c.ranks, strerror(-rc));

	TrainerEval *ev = NULL;
	if (c.rank == 0 && c.eval_manifest[0] && (rc = trainer_eval_open(&ev, c.eval_manifest, ts->model, !strcmp(c.eval_match, "caption"), err, sizeof err)) < 0)
		log_fatalx("%s", err);
	uint64_t *positions = calloc((size_t)c.ranks, sizeof(uint64_t));
	Agree *agree = calloc((size_t)c.ranks, sizeof(Agree));
	if (!positions || !agree)
		log_fatalx("out of memory");
	int64_t step = 0, last_ckpt = -1, last_eval = -1, start;
	if (c.resume) { // a clearer message than a tensor-size mismatch when the rank count changed
		int64_t cs;
		int nr;
		uint64_t first;
		if (trainer_ckpt_first_position(ckdir, &cs, &nr, &first, err, sizeof err) == 0 && nr != c.ranks)
			log_fatalx("cannot resume: the checkpoint of step %lld was written by %d ranks, this run has --ranks %d",
				   (long long)cs, nr, c.ranks);
	}
	rc = c.resume ? trainer_ckpt_load(ckdir, ts, &step, positions, c.ranks, in.seed, err, sizeof err) : -ENOENT;
	if (rc == 0) {
		last_ckpt = step;
		log_info("resumed from %s at step %lld, stream position %llu", ckdir, (long long)step,
			 (unsigned long long)positions[c.rank]);
		// a stop request here leaves nothing new to save: the loop's first boundary sees it
		if ((rc = trainer_ingest_skip_to(&in, positions[c.rank], c.data_timeout, err, sizeof err)) < 0 &&
		    rc != -ECANCELED)
			log_fatalx("%s", err);
	} else if (rc == -ENOENT) {
		if (c.resume)
			log_warnx("--resume: %s holds no checkpoint, so this run starts from scratch at step 0", ckdir);
		if ((rc = train_step_init(ts, c.seed)) < 0)
			log_fatalx("cannot initialise the parameters: %s", strerror(-rc));
		if (c.init_from[0]) {
			StInitOpts io = { .skip_mismatched = c.init_skip_mismatched };
			if ((rc = train_step_init_from(ts, c.init_from, &io, err, sizeof err)) < 0)
				log_fatalx("--init-from: %s", err);
			log_info("weights from %s%s%s", c.init_from, io.note[0] ? "; " : "", io.note);
		}
	} else {
		log_fatalx("cannot resume: %s", err);
	}
	static char desc[8192];
	trainer_flags_describe(&c, desc, sizeof desc);
	log_info("effective config: %s", desc);
	log_info("model %s: %lld parameters, backend %s with %d threads (%s), ring '%s' seed %llu", c.model_name,
		 (long long)ts->model->n_params, kern_ctx_backend_name(ctx), kern_ctx_threads(ctx), why_threads, c.ring,
		 (unsigned long long)in.seed);
	log_info("attention (--attention %s): %s", c.attention, kern_ctx_attention(ctx));
	// FastCLIP's epoch (γ schedule, v2's τ betas) counts --train-num-samples; the u tables have
	// --dataset-size rows. Both are logged because they may differ (a subset per epoch).
	const int64_t steps_per_epoch = trainer_steps_per_epoch(&c);
	log_info("epoch: %lld samples (--train-num-samples) = %lld steps of %d x %d; u tables: %lld rows (--dataset-size)",
		 (long long)c.train_num_samples, (long long)steps_per_epoch, c.batch_size, c.ranks, (long long)c.dataset_size);
	log_plan(&c, step);

	start = step;
	FILE *mf = NULL;
	if (c.rank == 0 && !(mf = trainer_metrics_open(mpath, last_ckpt >= 0 ? step : -1)))
		log_fatalx("cannot open %s: %s", mpath, strerror(errno));
	const ModelConfig *m = &c.model;
	const int B = c.batch_size;
	const size_t pix = (size_t)m->frames * m->image_size * m->image_size * 3;
	uint8_t *clips = malloc((size_t)B * pix);                          // (B, T, H, W, 3) from the ring
	float *video = malloc((size_t)B * pix * sizeof(float));            // (B, T, H, W, 3) normalized
	int32_t *text = malloc((size_t)B * m->ctx_len * sizeof(int32_t)); // (B, ctx) token ids
	int64_t *ids = malloc((size_t)B * sizeof(int64_t));                // (B) sample ids (table rows)
	uint64_t *pos = malloc((size_t)B * sizeof(uint64_t));              // (B) stream positions g
	KTensor tv, tt; // the batch on the backend: (B, T, H, W, 3) f32, (B, ctx) i32
	if (!clips || !video || !text || !ids || !pos ||
	    kern_alloc(ctx, &tv, KDT_F32, 5, (int64_t[]){ B, m->frames, m->image_size, m->image_size, 3 }) < 0 ||
	    kern_alloc(ctx, &tt, KDT_I32, 2, (int64_t[]){ B, m->ctx_len }) < 0)
		log_fatalx("out of memory for a batch of %d", B);

	int save_failed = 0, stopped = 0;
	double t_run = now_s();
	for (int abandoned = 0;;) {
		// every rank's stop flag and stream position: one agreed step boundary for all ranks
		Agree mine = { trainer_ingest_position(&in), (uint64_t)g_stop };
		if (!abandoned && (rc = comm_allgather(comm, &mine, agree, sizeof mine)) < 0)
			log_fatalx("step %lld: ranks lost each other: %s", (long long)step, comm_error(comm));
		for (int r = 0; r < c.ranks && !abandoned; r++) {
			positions[r] = agree[r].pos;
			stopped |= agree[r].stop != 0;
		}
		stopped |= abandoned;
		int done = stopped || step >= c.steps || (c.stop_after_steps && step - start >= c.stop_after_steps);
		if (c.rank == 0 && step != last_ckpt && (done || (c.ckpt_every && step > start && step % c.ckpt_every == 0))) {
			if ((rc = trainer_ckpt_save(ckdir, ts, step, positions, c.ranks, in.seed, c.keep_last, err, sizeof err)) < 0) {
				log_error("checkpoint at step %lld failed: %s", (long long)step, err);
				save_failed = 1;
			} else {
				log_info("checkpoint at step %lld: %s/ckpt-%08lld.safetensors", (long long)step, ckdir, (long long)step);
				save_failed = 0;
				last_ckpt = step;
			}
		}
		// rank 0 evaluates between steps; the others wait in the step's first collective
		if (ev && step > start && step != last_eval && !stopped &&
		    (done || (c.eval_every && step % c.eval_every == 0))) {
			double t2v, v2t, chance, te = now_s();
			if ((rc = trainer_eval_run(ev, ts->model, step, epath, &t2v, &v2t, &chance, err, sizeof err)) < 0)
				log_fatalx("evaluation at step %lld failed: %s", (long long)step, err);
			log_info("eval at step %lld: R@1 text->video %.1f%% video->text %.1f%% (chance %.1f%%) in %.1f s",
				 (long long)step, t2v, v2t, chance, now_s() - te);
			last_eval = step;
		}
		if (done)
			break;

		// a stop request while no data comes abandons the batch on every rank (the loaders may be
		// stopping too); the checkpoint above the loop's next turn holds the positions before it
		const double t0 = now_s(), w0 = in.wait_s;
		const uint64_t e0 = in.errors;
		rc = trainer_ingest_batch(&in, B, clips, text, ids, pos, c.dataset_size, c.data_timeout, err, sizeof err);
		if (rc < 0 && rc != -ECANCELED)
			log_fatalx("step %lld: %s", (long long)step, err);
		int gone = rc == -ECANCELED, any_gone = 0;
		int *all_gone = (int *)agree; // c.ranks ints fit in c.ranks Agree records
		if ((rc = comm_allgather(comm, &gone, all_gone, sizeof gone)) < 0)
			log_fatalx("step %lld: ranks lost each other: %s", (long long)step, comm_error(comm));
		for (int r = 0; r < c.ranks; r++)
			any_gone |= all_gone[r];
		if (any_gone) {
			log_info("step %lld: a stop request came while rank(s) waited for data: the batch is abandoned",
				 (long long)step);
			abandoned = 1;
			continue;
		}
		trainer_augment_batch(clips, B, m->frames, m->image_size, m->image_size, pos, in.seed, c.flip, video);
		if (kern_upload(ctx, &tv, video, kern_nbytes(&tv)) < 0 || kern_upload(ctx, &tt, text, kern_nbytes(&tt)) < 0)
			log_fatalx("step %lld: cannot upload the batch", (long long)step);
		int epoch = steps_per_epoch > 0 ? (int)(step / steps_per_epoch) : 0;
		comm_stats_reset(comm);
		TrainStepStats st;
		if ((rc = train_step_run(ts, &tv, &tt, ids, epoch, &st)) < 0) {
			if (rc == -ERANGE)
				log_fatalx("step %lld: the gradient is not finite (norm %g); last checkpoint at step %lld", (long long)step,
					   st.grad_norm, (long long)last_ckpt);
			if (comm_error(comm)[0])
				log_fatalx("step %lld failed: %s (%s)", (long long)step, comm_error(comm), strerror(-rc));
			log_fatalx("step %lld failed: %s", (long long)step, strerror(-rc));
		}
		const CommStats cst = comm->stats; // the step's collectives only
		double comm_bytes = 0;
		for (int op = 0; op < COMM_NOPS; op++)
			comm_bytes += cst.bytes[op];
		if (c.log_level[0] == 'd') {
			char cs[256];
			comm_stats_format(&cst, cs, sizeof cs);
			log_debug("step %lld comm: %s", (long long)step, cs);
		}
		float red[5] = { (float)st.loss, (float)st.nce, (float)st.acc, (float)(in.wait_s - w0), (float)(in.errors - e0) };
		if ((rc = comm_allreduce_f32(comm, red, 5, COMM_AVG)) < 0)
			log_fatalx("step %lld: ranks lost each other: %s", (long long)step, comm_error(comm));
		step++;
		double dt = now_s() - t0;
		if (mf) {
			TrainerMetrics tm = { .step = step, .epoch = epoch, .loss = red[0], .nce = red[1], .acc = red[2],
					      .tau = exp(-st.log_s), .lr = st.lr, .grad_norm = st.grad_norm, .step_s = dt,
					      .samples_per_s = (double)B * c.ranks / dt, .data_wait_s = red[3],
					      .error_slots = (double)red[4] * c.ranks, .comm_bytes = comm_bytes,
					      .allgather_bytes = cst.bytes[COMM_ALLGATHER],
					      .reduce_scatter_bytes = cst.bytes[COMM_REDUCE_SCATTER],
					      .allreduce_bytes = cst.bytes[COMM_ALLREDUCE],
					      .t_forward = st.t_forward, .t_exchange = st.t_exchange, .t_backward = st.t_backward,
					      .t_allreduce = st.t_allreduce, .t_update = st.t_update };
			if ((rc = trainer_metrics_write(mf, &tm)) < 0)
				log_fatalx("cannot write %s: %s", mpath, strerror(-rc));
		}
		if (c.rank == 0 && (step % c.log_every == 0 || step == c.steps))
			log_info("step %lld/%lld epoch %d loss %.4f nce %.4f acc %.2f tau %.4f lr %.3g | %.3f s (data wait %.3f s) %.1f samples/s",
				 (long long)step, (long long)c.steps, epoch, red[0], red[1], red[2], exp(-st.log_s), st.lr, dt, red[3],
				 (double)B * c.ranks / dt);
	}
	double total = now_s() - t_run;
	if (stopped)
		log_info("stopped by a signal at step %lld; %s", (long long)step,
			 c.rank ? "rank 0 writes the checkpoint" : save_failed ? "the checkpoint failed" : "checkpoint saved");
	else
		log_info("finished %lld steps (%lld this run) in %.1f s; %llu error slots skipped, %.1f s waiting for data",
			 (long long)step, (long long)(step - start), total, (unsigned long long)in.errors, in.wait_s);
	if (mf)
		fclose(mf);
	kern_free(ctx, &tv);
	kern_free(ctx, &tt);
	free(clips);
	free(video);
	free(text);
	free(ids);
	free(pos);
	free(positions);
	free(agree);
	trainer_eval_close(ev);
	train_step_destroy(ts);
	kern_ctx_destroy(ctx);
	comm_close(comm);
	trainer_ingest_close(&in);
	if (save_failed)
		log_fatalx("the last checkpoint could not be written (see above)");
	return 0;
}
