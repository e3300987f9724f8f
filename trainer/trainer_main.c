// trainer: one rank. Consumes rank r's positions of the ring into the device, runs the training
// step on the op contract with the other ranks over comm, logs metrics and checkpoints. This file
// sets up and tears down; the loop is trainer_run.c.
//
// Stopping: SIGTERM, SIGINT and SIGHUP only set a flag; a later signal changes nothing (a
// terminal's Ctrl-C reaches the trainers and then launch.sh's SIGTERM follows), so every stop
// request ends in a checkpoint; SIGKILL is the way to exit without one (trainer_run.c says how
// the ranks agree on the step).
#define _GNU_SOURCE   // sched_getaffinity, CPU_COUNT
#include <errno.h>    // defines: errno, ENOENT, EEXIST
#include <sched.h>    // defines: sched_getaffinity, CPU_COUNT
#include <signal.h>   // defines: sigaction, SIGTERM, SIGINT
#include <stdio.h>    // defines: snprintf, fputs
#include <stdlib.h>   // defines: malloc, free, exit
#include <string.h>   // defines: strerror, memset
#include <sys/stat.h> // defines: mkdir, stat
#include <unistd.h>   // defines: write, _exit, access

#include "comm.h"            // defines: comm_shm_create, comm_shm_unlink, rdv_describe
#include "fs_dir.h"          // defines: fs_mkdir_p, fs_dir_own, fs_fopen_read
#include "log.h"             // defines: log_init, log_info, log_fatalx
#include "model.h"           // defines: ParamSpec, model_layout
#include "ring.h"            // defines: RingDataId, ring_data_set, ring_check_data
#include "trainer_dist.h"    // defines: trainer_dist_open_device, trainer_dist_open_comm
#include "trainer_best.h"    // defines: TrainerBest, trainer_best_open, trainer_best_describe
#include "trainer_ckpt.h"    // defines: trainer_ckpt_load, trainer_ckpt_first_position
#include "trainer_eval.h"    // defines: TrainerEval, trainer_eval_open, trainer_eval_close
#include "trainer_flags.h"   // defines: TrainerConfig, trainer_flags_parse, ...
#include "trainer_gpu.h"     // defines: trainer_gpu_selfcheck, trainer_self_check_mode
#include "trainer_ingest.h"  // defines: TrainerIngest, ...
#include "trainer_memory.h"  // defines: trainer_memory_plan, trainer_memory_fit
#include "trainer_metrics.h" // defines: trainer_metrics_open
#include "trainer_run.h"     // defines: TrainerRun, trainer_run
#include "trainer_start.h"   // defines: TrainerVocab, trainer_start_vocab, trainer_start_resume, trainer_check_start
#include "trainer_step.h"    // defines: TrainStep, ...

#define COMM_SLOT_BYTES (4u << 20)

static volatile sig_atomic_t g_stop; // the signal of the first stop request
static TrainerVocab g_vocab;         // the training manifest's vocabulary (--manifest)

// a run directory this process made is removed again when the start is refused before the model
// has its weights (nothing in it yet; rmdir leaves anything that is)
static char g_made_ckdir[1100], g_made_run_dir[1100];
static void remove_unused_run_dir(void)
{
	if (g_made_ckdir[0] && rmdir(g_made_ckdir) == 0 && g_made_run_dir[0])
		rmdir(g_made_run_dir);
}

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

// the --config file as it was read, so a run's log shows what it ran with even after the
// file changes
static void log_config_file(const char *path)
{
	FILE *f = fs_fopen_read(path, "r");
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
			 (long long)step, (long long)c->steps, (long long)per_epoch, (long long)samples,
			 (long long)per_step, (double)c->steps / (double)per_epoch);
	const int fastclip = !c->mae && !c->classify && fastclip_uses_table(c->loss.kind);
	if (fastclip)
		log_info(
			"note: with --loss %s the loss column is FastCLIP's surrogate, whose gradient is the estimator; "
			"it stays nearly flat (fastclip-v1: about 2.0 by construction). Learning shows as nce falling "
			"and acc rising",
			c->loss_name);
	if (samples > 0 && per_step > samples)
		log_warnx(
			"one step takes %lld samples (--batch-size %d x %d ranks), more than an epoch's %lld: every "
			"step is a new epoch%s",
			(long long)per_step, c->batch_size, c->ranks, (long long)samples,
			fastclip
				? ", so FastCLIP's γ schedule (per epoch, --gamma-decay-epochs) is used up within a few "
				  "steps; use a smaller batch or more data"
				: "");
}

// the parameter counts of the model the flags describe, for tools that rebuild it elsewhere
// (tools/bench/torch_clip.py checks its PyTorch twin against this)
static int print_params(const TrainerConfig *c)
{
	int n;
	int64_t total, vis = 0;
	if (c->mae) { // the masked autoencoder: its encoder (the video tower's visual.* but visual.proj) and decoder
		mae_layout(&c->model, &c->mae_cfg, NULL, &n, &total, &vis);
		printf("{\"model\":\"%s\",\"objective\":\"mae\",\"params\":%lld,\"encoder\":%lld,\"decoder\":%lld,"
		       "\"tensors\":%d}\n",
		       c->model_name, (long long)total, (long long)vis, (long long)(total - vis), n);
		return 0;
	}
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

static int fit_batch(const TrainerConfig *c);

// the launcher modes: each does one thing and exits; returns -1 when none was asked for
static int launcher_mode(const TrainerConfig *c)
{
	char err[512];
	if (c->comm_create) {
		int rc = comm_shm_create(c->comm, c->ranks, COMM_SLOT_BYTES);
		if (rc < 0)
			log_fatalx("cannot create comm group '%s' for %d ranks: %s", c->comm, c->ranks, strerror(-rc));
		log_info("comm group '%s' created for %d ranks", c->comm, c->ranks);
		return 0;
	}
	if (c->print_geometry) { // the ring a launcher creates for this model, as ringctl flags
		printf("--frames %d --height %d --width %d --text-len %d\n", c->model.frames, c->model.image_size,
		       c->model.image_size, c->model.ctx_len);
		return 0;
	}
	if (c->print_steps) {
		printf("steps %lld steps-per-epoch %lld\n", (long long)c->steps, (long long)trainer_steps_per_epoch(c));
		return 0;
	}
	if (c->print_params)
		return print_params(c);
	if (c->fit_batch)
		return fit_batch(c);
	if (c->resume_position) {
		char dir[1100];
		int64_t step;
		uint64_t first;
		snprintf(dir, sizeof dir, "%s/ckpt", c->run_dir);
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
	if (c->check_start)
		return trainer_check_start(c);
	if (c->comm_unlink) {
		int rc = comm_shm_unlink(c->comm);
		if (rc < 0 && rc != -ENOENT)
			log_fatalx("cannot remove comm group '%s': %s", c->comm, strerror(-rc));
		return 0;
	}
	return -1;
}

// the NCCL watchdog's verdict (its thread): this rank cannot go on, and says why
static void comm_fatal(void *arg, const char *msg)
{
	(void)arg;
	log_fatalx("%s", msg);
}

// --precision auto: bf16 where a device computes in it natively, fp32 on the CPU backend (whose
// bf16 is storage by rounding: slower than fp32 there, and kept for testing mixed precision)
static KDtype precision(const TrainerConfig *c, KernCtx *ctx, char *why, size_t len)
{
	const int cpu = !strcmp(kern_ctx_backend_name(ctx), "cpu");
	if (!strcmp(c->precision, "auto")) {
		snprintf(why, len, "%s (auto: %s backend)", cpu ? "fp32" : "bf16", kern_ctx_backend_name(ctx));
		return cpu ? KDT_F32 : KDT_BF16;
	}
	snprintf(why, len, "%s (--precision)", c->precision);
	return strcmp(c->precision, "bf16") ? KDT_F32 : KDT_BF16;
}

// the step's device memory before it is allocated: a line for the log (in line), and a batch that does not fit
// stops here with the batch that would (rather than an out-of-memory error inside a step)
// "1.25 GiB" or "12.3 MiB"
static const char *human(size_t b, char *buf, size_t len)
{
	if (b >= (size_t)1 << 30)
		snprintf(buf, len, "%.2f GiB", (double)b / 1073741824.0);
	else
		snprintf(buf, len, "%.1f MiB", (double)b / 1048576.0);
	return buf;
}

static void plan_memory(const TrainerConfig *c, KernCtx *ctx, const TrainStepConfig *tc, char *line, size_t len)
{
	TrainerMemory m;
	int rc = trainer_memory_plan(ctx, tc, c->ranks, &m);
	if (rc < 0)
		log_fatalx("cannot plan the step's memory: %s", strerror(-rc));
	KMemInfo mi;
	const int known = kern_ctx_memory(ctx, &mi) == 0;
	const size_t budget = c->memory_limit_gb > 0 ? (size_t)(c->memory_limit_gb * 1073741824.0)
			      : known                ? mi.device_free
						     : 0;
	char avail[96] = "unknown (the backend does not say; --memory-limit sets it)", h[6][32];
	if (budget)
		snprintf(avail, sizeof avail, "%s %s", human(budget, h[0], 32),
			 c->memory_limit_gb > 0 ? "(--memory-limit)" : "free");
	if (!budget || m.total <= budget) {
		snprintf(line, len,
			 "device memory of batch %d%s: parameters %s, optimizer %s, activations %s, workspace %s, "
			 "batch and loss %s; total %s of %s",
			 tc->batch, tc->grad_checkpoint ? " (--grad-checkpoint)" : "", human(m.params, h[0], 32),
			 human(m.optimizer, h[1], 32), human(m.activations, h[2], 32), human(m.workspace, h[3], 32),
			 human(m.data, h[4], 32), human(m.total, h[5], 32), avail);
		return;
	}
	int fit = 0, fit_ckpt = 0;
	trainer_memory_fit(ctx, tc, c->ranks, budget, &fit);
	TrainStepConfig ck = *tc;
	ck.grad_checkpoint = 1;
	if (!tc->grad_checkpoint)
		trainer_memory_fit(ctx, &ck, c->ranks, budget, &fit_ckpt);
	char hint[128] = "";
	if (fit_ckpt > fit)
		snprintf(hint, sizeof hint, "; with --grad-checkpoint --batch-size %d does", fit_ckpt);
	if (fit > 0)
		log_fatalx(
			"--batch-size %d needs %s of device memory (activations %s), more than the %s: --batch-size %d "
			"fits%s",
			tc->batch, human(m.total, h[1], 32), human(m.activations, h[2], 32), avail, fit, hint);
	log_fatalx("--batch-size %d needs %s of device memory, more than the %s: not even batch 1 fits (parameters and "
		   "optimizer alone take %s)%s",
		   tc->batch, human(m.total, h[1], 32), avail, human(m.params + m.optimizer, h[2], 32), hint);
}

static TrainStepConfig step_config(const TrainerConfig *c, KernCtx *ctx, uint64_t seed, char *prec, size_t len)
{
	return (TrainStepConfig){.model = c->model,
				 .opt = c->opt,
				 .loss = c->loss,
				 .act = precision(c, ctx, prec, len),
				 .batch = c->batch_size,
				 .dataset_size = c->dataset_size,
				 .wd_groups = c->wd,
				 .bucket_bytes = (size_t)(c->bucket_mb * 1048576.0),
				 .data_seed = seed,
				 .flip = c->flip,
				 .log_every = c->metrics_every,
				 .grad_checkpoint = c->grad_checkpoint,
				 .cuda_graph = c->cuda_graph,
				 .classify = c->classify,
				 .mae = c->mae,
				 .mae_cfg = c->mae_cfg,
				 .cls = {.n_heads = g_vocab.label_heads,
					 .classes = {g_vocab.label_classes[0], g_vocab.label_classes[1]},
					 .mixup = c->mixup,
					 .cutmix = c->cutmix,
					 .smoothing = c->label_smoothing,
					 .dropout = c->head_dropout,
					 .drop_path = c->drop_path,
					 .drop_path_linear = !strcmp(c->drop_path_schedule, "linear")}};
}

// query fit-batch: the largest batch whose step fits this rank's device (benchmarks and launchers)
static int fit_batch(const TrainerConfig *c)
{
	char why[96], err[512], prec[64], th[96];
	KernCtx *ctx;
	if (trainer_dist_open_device(c, pick_threads(c, th, sizeof th), &ctx, why, sizeof why, err, sizeof err) < 0)
		log_fatalx("%s", err);
	TrainStepConfig tc = step_config(c, ctx, 0, prec, sizeof prec);
	KMemInfo mi;
	size_t budget = c->memory_limit_gb > 0           ? (size_t)(c->memory_limit_gb * 1073741824.0)
			: kern_ctx_memory(ctx, &mi) == 0 ? mi.device_free
							 : 0;
	if (!budget)
		log_fatalx("the %s backend does not tell its free memory: give --memory-limit GIB",
			   kern_ctx_backend_name(ctx));
	int fit;
	int rc = trainer_memory_fit(ctx, &tc, c->ranks, budget, &fit);
	if (rc < 0)
		log_fatalx("cannot plan the step's memory: %s", strerror(-rc));
	printf("%d\n", fit);
	kern_ctx_destroy(ctx);
	return fit > 0 ? 0 : 1;
}

// the model's state: a checkpoint when resuming (and there is one), else a fresh initialisation
static void load_or_init(const TrainerConfig *c, TrainerRun *r, TrainerIngest *in)
{
	char err[512];
	int rc;
	if (c->resume) { // a clearer message than a tensor-size mismatch when the rank count changed
		int64_t cs;
		int nr;
		uint64_t first;
		if (trainer_ckpt_first_position(r->ckdir, &cs, &nr, &first, err, sizeof err) == 0 && nr != c->ranks)
			log_fatalx(
				"cannot resume: the checkpoint of step %lld was written by %d ranks, this run has --ranks %d",
				(long long)cs, nr, c->ranks);
	}
	rc = c->resume ? trainer_ckpt_load(r->ckdir, r->ts, &r->step, r->positions, c->ranks, in->seed, err, sizeof err)
		       : -ENOENT;
	if (rc == 0) {
		r->last_ckpt = r->step;
		log_info("resumed from %s at step %lld, stream position %llu", r->ckdir, (long long)r->step,
			 (unsigned long long)r->positions[c->rank]);
		// a stop request here leaves nothing new to save: the loop's first boundary sees it
		if ((rc = trainer_ingest_skip_to(in, r->positions[c->rank], c->data_timeout, err, sizeof err)) < 0 &&
		    rc != -ECANCELED)
			log_fatalx("%s", err);
	} else if (rc == -ENOENT) {
		if (c->resume)
			log_warnx("--resume: %s holds no checkpoint, so this run starts from scratch at step 0",
				  r->ckdir);
		if ((rc = train_step_init(r->ts, c->seed)) < 0)
			log_fatalx("cannot initialise the parameters: %s", strerror(-rc));
		if (c->init_from[0]) {
			StInitOpts io = {.skip_mismatched = c->init_skip_mismatched, .visual_only = c->classify};
			if ((rc = train_step_init_from(r->ts, c->init_from, &io, err, sizeof err)) < 0)
				log_fatalx("--init-from: %s", err);
			if (trainer_start_init_report(c, &g_vocab, &io, err, sizeof err) < 0)
				log_fatalx("%s", err);
		}
	} else {
		log_fatalx("cannot resume: %s", err);
	}
}

// the startup lines every run logs: the effective config, rendezvous and device, memory plan,
// model and backend, epoch and the run's plan; why: the device, threads and memory lines and the
// precision, as the setup worded them
static void log_start(const TrainerConfig *c, const TrainerIngest *in, const TrainStep *ts, KernCtx *ctx,
		      const char *const why[4], int64_t step)
{
	static char desc[8192];
	trainer_flags_describe(c, desc, sizeof desc);
	log_info("effective config: %s", desc);
	char rdv[512];
	rdv_describe(&c->rdv_info, rdv, sizeof rdv);
	log_info("%s; device: %s", rdv, why[0]);
	log_info("%s", why[2]);
	if (in->note[0])
		log_warnx("%s", in->note);
	log_info("model %s%s: %lld parameters, backend %s with %d threads (%s), precision %s, ring '%s' seed %llu",
		 c->model_name, c->mae ? " (masked autoencoder: the video encoder and its decoder)" : "",
		 (long long)(ts->mae ? ts->mae->n_params : ts->model->n_params), kern_ctx_backend_name(ctx),
		 kern_ctx_threads(ctx), why[1], why[3], c->ring, (unsigned long long)in->seed);
	if (ts->mae)
		log_info(
			"mae: %d tokens per clip (%d slices of %d tubelets of %dx%dx%d), mask ratio %g: the encoder sees "
			"%d and the class token, the decoder all %d; lr %.3g (%s)",
			ts->mae->tok.N, ts->mae->tok.Tp, ts->mae->tok.Ns, c->model.tubelet, c->model.patch,
			c->model.patch, c->mae_cfg.mask_ratio, ts->mae->tok.Nv, ts->mae->tok.N, c->opt.lr,
			c->opt.lr == c->mae_base_lr * c->batch_size * c->ranks / 256.0
				? "--mae-base-lr x global batch / 256"
				: "--lr");
	log_info("attention (--attention %s): %s", c->attention, kern_ctx_attention(ctx));
	log_info("cuda graph (--cuda-graph): %s", ts->graph_state);
	// FastCLIP's epoch (γ schedule, v2's τ betas) counts --train-num-samples; the u tables have
	// --dataset-size rows. Both are logged because they may differ (a subset per epoch).
	log_info(
		"epoch: %lld samples (--train-num-samples) = %lld steps of %d x %d; u tables: %lld rows (--dataset-size)",
		(long long)c->train_num_samples, (long long)trainer_steps_per_epoch(c), c->batch_size, c->ranks,
		(long long)c->dataset_size);
	log_plan(c, step);
}

// the last line of a run: why it ended and, when stopped by a signal, whether its checkpoint exists
static void log_end(const TrainerConfig *c, const TrainerRun *r, const TrainerIngest *in)
{
	if (r->stopped) // a checkpoint is said to be saved only when rank 0's save of this step succeeded
		log_info("stopped by a signal at step %lld; %s", (long long)r->step,
			 c->rank != 0 ? "rank 0 writes the checkpoint"
			 : r->last_ckpt == r->step && !r->save_failed
				 ? "checkpoint saved"
				 : "the checkpoint of this step was NOT saved (see above)");
	else
		log_info(
			"finished %lld steps (%lld this run) in %.1f s; %llu error slots skipped, %.1f s waiting for data",
			(long long)r->step, (long long)(r->step - r->start), r->total_s, (unsigned long long)in->errors,
			in->wait_s);
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
	int rc = launcher_mode(&c);
	if (rc >= 0)
		return rc;
	if (c.self_check)
		return trainer_self_check_mode(&c);
	catch_stop_signals();
	if (c.config[0])
		log_config_file(c.config);
	// what the start would refuse, before anything is opened or created
	char note[1024];
	int64_t ck_step;
	if (trainer_start_vocab(&c, &g_vocab, err, sizeof err) < 0 ||
	    trainer_start_resume(&c, &g_vocab, &c.opt, &ck_step, note, sizeof note, err, sizeof err) < 0)
		log_fatalx("%s", err);
	if (note[0])
		log_info("%s", note);

	char why_threads[96], why_dev[96];
	KernCtx *ctx;
	if ((rc = trainer_dist_open_device(&c, pick_threads(&c, why_threads, sizeof why_threads), &ctx, why_dev,
					   sizeof why_dev, err, sizeof err)) < 0)
		log_fatalx("%s", err);
	// a device and build pair checks itself against the CPU backend once, before its first step
	if (!strcmp(c.backend, "cuda") && trainer_gpu_selfcheck(&c, ctx, 0, err, sizeof err) < 0)
		log_fatalx("%s", err);
	TrainerIngest in;
	int ring_rank, ring_ranks;
	trainer_dist_ring_rank(&c, &ring_rank, &ring_ranks);
	if ((rc = trainer_ingest_open(&in, ctx, c.ring, ring_rank, ring_ranks, &c.model, 0, err, sizeof err)) < 0)
		log_fatalx("%s", err);
	RingDataId mine; // the ring must serve --manifest's dataset
	ring_data_set(&mine, g_vocab.data_id, g_vocab.hash, c.manifest);
	if (ring_check_data(in.ring, c.ring, &mine, c.manifest[0] ? "this trainer" : "this trainer (no --manifest)",
			    err, sizeof err) < 0)
		log_fatalx("%s", err);
	trainer_ingest_set_node(&in, c.node, c.nodes);
	if (c.classify) // labels outside the manifest's heads are refused as they arrive
		trainer_ingest_set_classes(&in, g_vocab.label_heads, g_vocab.label_classes);
	in.cancel = &g_stop;
	in.max_error_run = (uint64_t)c.max_error_run;
	Comm *comm;
	if ((rc = trainer_dist_open_comm(&c, ctx, in.ring, comm_fatal, &comm, err, sizeof err)) < 0)
		log_fatalx("%s", err);
	char ckdir[1100], mpath[1100], epath[1100], marker[1200], prec[64];
	snprintf(ckdir, sizeof ckdir, "%s/ckpt", c.run_dir);
	snprintf(mpath, sizeof mpath, "%s/metrics.jsonl", c.run_dir);
	snprintf(epath, sizeof epath, "%s/eval.jsonl", c.run_dir);
	struct stat rst;
	const int made_run_dir = stat(c.run_dir, &rst) != 0, made_ckdir = made_run_dir || stat(ckdir, &rst) != 0;
	if ((rc = fs_mkdir_p(ckdir, 0755)) < 0)
		log_fatalx("cannot create run directory %s: %s", ckdir, strerror(-rc));
	// metrics, evaluations and checkpoints are written there by name: no other user may plant them
	if (fs_dir_own(c.run_dir, "--run-dir", err, sizeof err) < 0 ||
	    fs_dir_own(ckdir, "the checkpoint folder", err, sizeof err) < 0)
		log_fatalx("%s", err);
	if (made_ckdir) {
		snprintf(g_made_ckdir, sizeof g_made_ckdir, "%s", ckdir);
		snprintf(g_made_run_dir, sizeof g_made_run_dir, "%s", made_run_dir ? c.run_dir : "");
		atexit(remove_unused_run_dir);
	}
	snprintf(marker, sizeof marker, "%s/LATEST", ckdir);
	if (!c.resume && access(marker, F_OK) == 0)
		log_fatalx("%s already holds a checkpoint: pass --resume to continue it, or use a new --run-dir",
			   c.run_dir);

	TrainStepConfig tc = step_config(&c, ctx, in.seed, prec, sizeof prec);
	tc.vocab = g_vocab.hex;
	tc.vocab_merges = g_vocab.merges;
	tc.data_id = g_vocab.data_id ? g_vocab.data_hex : "";
	tc.data_name = c.manifest;
	tc.fresh_table = g_vocab.new_data;
	char memline[512];
	plan_memory(&c, ctx, &tc, memline, sizeof memline);
	TrainStep *ts;
	if ((rc = train_step_create(&ts, ctx, comm, &tc)) < 0)
		log_fatalx("cannot build the model and step (batch %d x %d ranks): %s", c.batch_size, c.ranks,
			   strerror(-rc));
	TrainerEval *ev = NULL;
	if (c.rank == 0 && c.eval_manifest[0] &&
	    (rc = trainer_eval_open(&ev, ctx, c.eval_ring, c.eval_manifest, ts->model, !strcmp(c.eval_match, "caption"),
				    c.data_timeout, err, sizeof err)) < 0)
		log_fatalx("%s", err);
	TrainerRun r = {.c = &c,
			.ctx = ctx,
			.comm = comm,
			.ts = ts,
			.in = &in,
			.ev = ev,
			.ckdir = ckdir,
			.mpath = mpath,
			.epath = epath,
			.stop = &g_stop,
			.last_ckpt = -1,
			.positions = calloc((size_t)c.ranks, sizeof(uint64_t))};
	if (!r.positions)
		log_fatalx("out of memory");
	load_or_init(&c, &r, &in);
	g_made_ckdir[0] = 0; // the weights are there: a later failure keeps the directory and its log
	TrainerBest best;
	if (ev && strcmp(c.keep_best, "none")) {
		if (trainer_best_open(&best, ckdir, c.keep_best, r.last_ckpt >= 0, err, sizeof err) < 0)
			log_fatalx("%s", err);
		r.best = &best;
	}
	log_start(&c, &in, ts, ctx, (const char *[]){why_dev, why_threads, memline, prec}, r.step);
	if (c.rank == 0 && !(r.mf = trainer_metrics_open(mpath, r.last_ckpt >= 0 ? r.step : -1)))
		log_fatalx("cannot open %s: %s", mpath, strerror(errno));

	trainer_run(&r);

	log_end(&c, &r, &in);
	if (r.best) {
		char line[1400];
		trainer_best_describe(r.best, line, sizeof line);
		log_info("%s", line);
	}
	if (r.mf)
		fclose(r.mf);
	free(r.positions);
	trainer_eval_close(ev);
	train_step_destroy(ts);
	comm_close(comm);
	trainer_ingest_close(&in);
	kern_ctx_destroy(ctx);
	if (r.save_failed)
		log_fatalx("the last checkpoint could not be written (see above)");
	return 0;
}
