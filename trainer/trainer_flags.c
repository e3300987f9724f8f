// Trainer flag table (common/flags.h's engine): every entry names a TrainerConfig field with its
// type, bounds, default and help; what the table cannot say (flag combinations) is checked here.
#include "trainer_flags.h" // defines: TrainerConfig, ...

#include <errno.h>  // defines: EINVAL, ENOENT, ERANGE
#include <math.h>   // defines: ceil
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: free
#include <string.h> // defines: strcmp, strncmp, memset

#include "fastclip.h"      // defines: fastclip_flag_table, fastclip_config_describe, fastclip_kind_parse
#include "flags.h"         // defines: FlagSpec, flags_parse, flags_split_in, flags_help, flags_describe, ...
#include "trainer_best.h"  // defines: TRAINER_BEST_METRICS
#include "trainer_dist.h"  // defines: trainer_dist_resolve
#include "trainer_query.h" // defines: trainer_query_take, trainer_query_set, trainer_query_help

// Not clang-formatted: at this many entries clang-format 14 breaks the declaration over four lines
// and indents every entry three levels deeper; the layout below is the one smaller tables get.
// clang-format off
static const FlagSpec flags[] = {
	{"ring", FLAG_STRING, FLAG_AT(TrainerConfig, ring), 0, 0, "avclip",
	 .help = "name of the ring (shm segment) to consume"},
	{"rank", FLAG_INT, FLAG_AT(TrainerConfig, rank), -1, 4095, "-1",
	 .help = "this trainer's rank r: it consumes positions r, r+N, ... (-1: RANK or SLURM_PROCID, else 0)"},
	{"ranks", FLAG_INT, FLAG_AT(TrainerConfig, ranks), 0, 4096, "0",
	 .help = "number of trainer ranks N (must equal the ring's on one machine; 0: WORLD_SIZE or SLURM_NTASKS, else 1)"},
	{"backend", FLAG_CHOICE, FLAG_AT(TrainerConfig, backend), 0, 0, "cpu",
	 .help = "the kernels' backend; cuda runs this rank on GPU --device (default its local rank), bf16 only (exits with an error when the build has no CUDA backend or no GPU is visible)",
	 .choices = "cpu|cuda"},
	{"device", FLAG_INT, FLAG_AT(TrainerConfig, device), -1, 1023, "-1",
	 .help = "CUDA device of this rank (-1: its local rank)"},
	{"master", FLAG_STRING, FLAG_AT(TrainerConfig, master), 0, 0, "",
	 .help = "host[:port] of rank 0 for the NCCL id over TCP (default MASTER_ADDR:MASTER_PORT or Slurm's first host)"},
	{"rdv", FLAG_CHOICE, FLAG_AT(TrainerConfig, rdv), 0, 0, "auto",
	 .help = "how GPU ranks get the NCCL id (auto: file with --rdv-file, tcp across machines, the ring on one)",
	 .choices = "auto|tcp|file|ring"},
	{"rdv-file", FLAG_STRING, FLAG_AT(TrainerConfig, rdv_file), 0, 0, "",
	 .help = "a file on a filesystem every machine sees, for --rdv file"},
	{"grad-checkpoint", FLAG_SWITCH, FLAG_AT(TrainerConfig, grad_checkpoint), 0, 0, "0",
	 .help = "keep only each transformer block's input and recompute its activations in backward (same gradients, less memory, about a third more compute)"},
	{"cuda-graph", FLAG_SWITCH, FLAG_AT(TrainerConfig, cuda_graph), 0, 0, "1",
	 .help = "with --backend cuda and the clip objective: capture the step's forward, backward (in pieces between its gradient buckets' all-reduces) and update as CUDA graphs at the second step and replay them (vit-b16: ~700 launches a step become 30 graph launches and 20 eager ones); the augment, the loss's exchange and the collectives stay eager; the same bits as without; --no-cuda-graph runs every op eagerly (classify, mae, the CPU backend and KERN_CUDA_SYNC=1 always do)"},
	{"memory-limit", FLAG_DOUBLE, FLAG_AT(TrainerConfig, memory_limit_gb), 0, 1e6, "0",
	 .help = "GiB of device memory the run may use (0: the device's free memory); a batch that does not fit stops at start, naming one that does"},
	{"peak-tflops", FLAG_DOUBLE, FLAG_AT(TrainerConfig, peak_tflops), 0, 1e6, "0",
	 .help = "the device's peak TFLOP/s for the MFU column (0: no MFU; make bench-gpu measures the bf16 matmul peak)"},
	{"comm", FLAG_STRING, FLAG_AT(TrainerConfig, comm), 0, 0, "",
	 .help = "comm shm group name (required when --ranks > 1)"},
	{"self-check", FLAG_SWITCH, FLAG_AT(TrainerConfig, self_check), 0, 0, "0",
	 .help = "check the configured backend against the CPU backend (every op class of the model on small shapes and one tiny training step, the twin tests' tolerances), print each check, exit 0 when it passes and 1 naming the op when not; runs by itself before the first step on a device and build not yet checked (cached under $XDG_CACHE_HOME/avclip/)",
	 .attr = FLAG_NO_LOG},
	{"comm-timeout", FLAG_DOUBLE, FLAG_AT(TrainerConfig, comm_timeout), 1, 86400, "600",
	 .help = "seconds a collective waits for a silent peer"},
	{"model", FLAG_STRING, FLAG_AT(TrainerConfig, model_name), 0, 0, "tiny",
	 .help = "model preset: tiny | vit-s16 | vit-b16 | vit-l14"},
	{"loss", FLAG_CHOICE, FLAG_AT(TrainerConfig, loss_name), 0, 0, "fastclip-v3",
	 .help = "the contrastive loss: open_clip's, or a FastCLIP version",
	 .choices = "openclip|fastclip-v0|fastclip-v1|fastclip-v2|fastclip-v3"},
	{"objective", FLAG_CHOICE, FLAG_AT(TrainerConfig, objective), 0, 0, "clip",
	 .help = "clip: contrastive pretraining (--loss); classify: fine-tune the video tower with one linear head per label head of --manifest (its labels; the text tower is not trained); mae: VideoMAE pretraining of the video tower (tube masking, the encoder on the visible tokens, a light decoder, the normalized pixels of the masked tubelets; captions ignored), by default on 16 frames in tubelets of 2 (tiny: 4 frames) with AdamW betas 0.9/0.95, weight decay 0.05 and --mae-base-lr",
	 .choices = "clip|classify|mae"},
	{"mae-base-lr", FLAG_DOUBLE, FLAG_AT(TrainerConfig, mae_base_lr), 0, 1e3, "1.5e-4",
	 .help = "mae: without --lr the peak lr is this x global batch / 256 (VideoMAE's rule)"},
	{"mixup", FLAG_DOUBLE, FLAG_AT(TrainerConfig, mixup), 0, 1e3, "0.8",
	 .help = "classify: Beta(a, a) of mixup's weight (0: no mixup)"},
	{"cutmix", FLAG_DOUBLE, FLAG_AT(TrainerConfig, cutmix), 0, 1e3, "1.0",
	 .help = "classify: Beta(a, a) of cutmix's box (0: no cutmix; with mixup on, each step picks one at p = 1/2)"},
	{"label-smoothing", FLAG_DOUBLE, FLAG_AT(TrainerConfig, label_smoothing), 0, 0.999, "0.1",
	 .help = "classify: label smoothing of the cross-entropy's targets"},
	{"drop-path", FLAG_DOUBLE, FLAG_AT(TrainerConfig, drop_path), 0, 1, "0.1",
	 .help = "classify: drop path (stochastic depth) of the video tower's blocks while training: each block's attention and MLP branch dropped per sample at this rate (AVION 0.1; 0: off)"},
	{"drop-path-schedule", FLAG_CHOICE, FLAG_AT(TrainerConfig, drop_path_schedule), 0, 0, "uniform",
	 .help = "classify: uniform (every block at --drop-path, as AVION's CLIP ViT) or linear (block l of L at --drop-path x l/(L-1), timm's drop_path_rate)",
	 .choices = "uniform|linear"},
	{"head-dropout", FLAG_DOUBLE, FLAG_AT(TrainerConfig, head_dropout), 0, 1, "0.5",
	 .help = "classify: dropout before the linear heads while training (AVION's --dropout-rate 0.5; 0: off)"},
	{"layer-decay", FLAG_DOUBLE, FLAG_AT(TrainerConfig, layer_decay), 0, 1, "0",
	 .help = "layer-wise lr decay: block i of L gets lr x d^(L + 1 - i), the embeddings d^(L + 1); 1 = off, 0 = the objective's default (classify 0.75 as AVION, clip off)"},
	{"batch-size", FLAG_INT, FLAG_AT(TrainerConfig, batch_size), 1, 65536, "8",
	 .help = "samples per step on this rank (global batch = N x B)"},
	{"steps", FLAG_I64, FLAG_AT(TrainerConfig, steps), 1, 1e15, "100",
	 .help = "optimizer steps of the whole run (a resumed run continues to it; changed on resume, the cosine becomes this run's and the LR joins it linearly from the checkpoint's over --warmup-steps, else a tenth of the steps left)"},
	{"epochs", FLAG_DOUBLE, FLAG_AT(TrainerConfig, epochs), 0, 1e9, "0",
	 .help = "instead of --steps: steps = ceil(E x steps per epoch), FastCLIP's epoch of ceil(train-num-samples / (batch-size x ranks)) steps; 0 = use --steps"},
	{"stop-after-steps", FLAG_I64, FLAG_AT(TrainerConfig, stop_after_steps), 0, 1e15, "0",
	 .help = "end this run (with a checkpoint) after K steps, 0 = at --steps"},
	{"dataset-size", FLAG_I64, FLAG_AT(TrainerConfig, dataset_size), 0, 1e12, "0",
	 .help = "samples in the manifest: rows of the u/τ tables (FastCLIP: required)"},
	{"train-num-samples", FLAG_I64, FLAG_AT(TrainerConfig, train_num_samples), 0, 1e15, "0",
	 .help = "samples in one epoch: an epoch is ceil(N / (B x ranks)) steps (0: --dataset-size)"},
	{"wd-groups", FLAG_CHOICE, FLAG_AT(TrainerConfig, wd_groups), 0, 0, "open_clip",
	 .help = "open_clip (decay >= 2-D tensors without bn/ln/bias/logit_scale in the name) | avclip (also no decay on embeddings)",
	 .choices = "open_clip|avclip"},
	{"init-seed", FLAG_U64, FLAG_AT(TrainerConfig, seed), 0, 0, "0",
	 .help = "seed of the model's initial weights (--seed elsewhere is the data stream's: the ring carries it)"},
	{"init-from", FLAG_STRING, FLAG_AT(TrainerConfig, init_from), 0, 0, "",
	 .help = "start a fresh run from open_clip / OpenAI CLIP safetensors weights (temporal embedding zero)"},
	{"init-skip-mismatched", FLAG_SWITCH, FLAG_AT(TrainerConfig, init_skip_mismatched), 0, 0, "0",
	 .help = "with --init-from: keep projections whose widths differ from the file's at their initial values"},
	{"attention", FLAG_CHOICE, FLAG_AT(TrainerConfig, attention), 0, 0, "auto",
	 .help = "the CUDA backend's attention: own (the own FlashAttention-2-style kernels, bit-reproducible), cudnn (cuDNN's fused attention, its fastest backward: dQ by atomics, not bit-reproducible), auto (cuDNN where it accepts the shape, own elsewhere; its backward is cuDNN's deterministic graph on sm_90 and the own kernel on other GPUs, so runs stay bit-reproducible; it gives up cuDNN's faster atomic backward and spends B*H*T^2*2 bytes of workspace on the deterministic one); the CPU backend runs its reference and refuses cudnn",
	 .choices = "own|cudnn|auto"},
	{"precision", FLAG_CHOICE, FLAG_AT(TrainerConfig, precision), 0, 0, "auto",
	 .help = "activations and weight copies (master weights, moments and statistics stay f32); auto: bf16 on a GPU, fp32 on the CPU",
	 .choices = "auto|bf16|fp32"},
	{"threads", FLAG_INT, FLAG_AT(TrainerConfig, threads), 0, 1024, "0",
	 .help = "CPU threads of the kernels, 0 = this process's CPUs / --ranks (launch.sh passes its cores / ranks and runs the loaders at nice 10)"},
	{"flip", FLAG_SWITCH, FLAG_AT(TrainerConfig, flip), 0, 0, "1",
	 .help = "random horizontal flip per clip (p = 1/2) from the counter RNG keyed by (seed, g), on the device (--no-flip: none)"},
	{"bucket-mb", FLAG_DOUBLE, FLAG_AT(TrainerConfig, bucket_mb), 0.001, 4096, "4",
	 .help = "gradient all-reduce bucket size in MiB"},
	{"data-timeout", FLAG_DOUBLE, FLAG_AT(TrainerConfig, data_timeout), 0.1, 86400, "120",
	 .help = "seconds to wait for one READY slot before failing"},
	{"max-error-run", FLAG_I64, FLAG_AT(TrainerConfig, max_error_run), 0, 1e12, "1000",
	 .help = "stop when this many positions in a row are samples the loaders could not produce (the data gone under the job); 0: skip them forever"},
	{"run-dir", FLAG_STRING, FLAG_AT(TrainerConfig, run_dir), 0, 0, "",
	 .help = "run directory: metrics.jsonl, ckpt/ (required)"},
	{"resume", FLAG_SWITCH, FLAG_AT(TrainerConfig, resume), 0, 0, "0",
	 .help = "continue from RUN_DIR/ckpt (LATEST); a fresh start when none"},
	{"resume-on-new-data", FLAG_SWITCH, FLAG_AT(TrainerConfig, resume_on_new_data), 0, 0, "0",
	 .help = "with --resume: continue the checkpoint's weights and optimizer on another --manifest than the one it was trained on (its FastCLIP u estimators start over; refused without this flag)"},
	{"ckpt-every", FLAG_I64, FLAG_AT(TrainerConfig, ckpt_every), 0, 1e15, "0",
	 .help = "checkpoint every K steps (0: only at the end and on SIGTERM)"},
	{"manifest", FLAG_STRING, FLAG_AT(TrainerConfig, manifest), 0, 0, "",
	 .help = "the training manifest the ring's loaders read (tools/launch.sh passes it): the ring must serve its dataset; its vocabulary is checked against --eval-manifest and --init-from; checkpoints record both"},
	{"eval-manifest", FLAG_STRING, FLAG_AT(TrainerConfig, eval_manifest), 0, 0, "",
	 .help = "held-out manifest: rank 0 evaluates retrieval into RUN_DIR/eval.jsonl"},
	{"eval-ring", FLAG_STRING, FLAG_AT(TrainerConfig, eval_ring), 0, 0, "",
	 .help = "the evaluation ring loaderd --eval fills from --eval-manifest (default: RING-eval; tools/launch.sh makes it)"},
	{"eval-every", FLAG_I64, FLAG_AT(TrainerConfig, eval_every), 0, 1e15, "0",
	 .help = "evaluate every K steps (0: only at the end of the run)"},
	{"eval-match", FLAG_CHOICE, FLAG_AT(TrainerConfig, eval_match), 0, 0, "instance",
	 .help = "a retrieval hit: instance (the query's own sample) or caption (any sample with its caption)",
	 .choices = "instance|caption"},
	{"keep-last", FLAG_INT, FLAG_AT(TrainerConfig, keep_last), 0, 1000000, "3",
	 .help = "checkpoints kept in RUN_DIR/ckpt (0: all); the --keep-best one is apart, in RUN_DIR/ckpt/best, never removed by this"},
	{"keep-best", FLAG_CHOICE, FLAG_AT(TrainerConfig, keep_best), 0, 0, "none",
	 .help = "keep the checkpoint of the evaluation with the highest held-out score under this eval.jsonl key in RUN_DIR/ckpt/best (its LATEST, best.json: metric, score, step); tools/eval --ckpt RUN_DIR/ckpt/best scores it; needs --eval-manifest",
	 .choices = TRAINER_BEST_METRICS},
	{"log-every", FLAG_I64, FLAG_AT(TrainerConfig, log_every), 1, 1e15, "1",
	 .help = "steps between progress log lines"},
	{"metrics-every", FLAG_INT, FLAG_AT(TrainerConfig, metrics_every), 1, 100000, "1",
	 .help = "steps between read-backs of the logged scalars from the device, each read one interval late so the host "
		 "never waits for the step it has just queued: metrics.jsonl gets that many lines each time"},
	{"log-level", FLAG_CHOICE, FLAG_AT(TrainerConfig, log_level), 0, 0, "info",
	 .help = "the least severe log lines printed", .choices = "debug|info|warn|error"},
	{"config", FLAG_STRING, FLAG_AT(TrainerConfig, config), 0, 0, "",
	 .help = "file of 'name value' lines (these flag names); the command line wins"},
	{"help", FLAG_SWITCH, FLAG_AT(TrainerConfig, help), 0, 0, "0", .help = "this text", .alias = 'h',
	 .attr = FLAG_NO_LOG},
};
// clang-format on
enum { NFLAGS = sizeof(flags) / sizeof(flags[0]) };

// pass 2: the flags the table does not name are model sizes or FastCLIP hyper-parameters, read
// after pass 1 so --model and --loss pick the defaults they override
static int parse_model_loss(TrainerConfig *cfg, FastclipKind kind, int argc, char **argv, char *err, size_t errlen)
{
	if (model_config_preset(&cfg->model, cfg->model_name) < 0) {
		snprintf(err, errlen, "--model '%s' is not a preset (tiny, vit-s16, vit-b16, vit-l14)",
			 cfg->model_name);
		return -EINVAL;
	}
	fastclip_config_default(&cfg->loss, kind);
	optim_config_default(&cfg->opt);
	if ((cfg->mae = !strcmp(cfg->objective, "mae"))) { // the objective's defaults, under the flags
		mae_config_preset(&cfg->mae_cfg, &cfg->model, cfg->model_name);
		cfg->opt.beta2 = 0.95, cfg->opt.weight_decay = 0.05, cfg->opt.eps = 1e-8; // VideoMAE's AdamW
	}
	int nm, nf, no, na;
	const FlagSpec *mt = model_flag_table(&nm), *ft = fastclip_flag_table(&nf), *ot = optim_flag_table(&no),
		       *at = mae_flag_table(&na);
	const FlagTable tabs[] = {{flags, NFLAGS}, {mt, nm}, {ft, nf}, {ot, no}, {at, na}};
	enum { NTABS = sizeof tabs / sizeof tabs[0] };
	for (int i = 1; i < argc; i++) {
		char name[64];
		const char *v;
		// every table splits: a switch of any (or --no-NAME of one) takes no value, so the flag
		// after it is read, not taken as its value
		if (flags_split_in(tabs, NTABS, argc, argv, &i, name, sizeof name, &v, err, errlen) != 0 ||
		    flags_find(flags, NFLAGS, name) ||
		    (!strncmp(name, "no-", 3) && flags_find(flags, NFLAGS, name + 3)))
			continue; // pass 1 refused what does not split and took the table's own flags
		void *const dsts[] = {&cfg->model, &cfg->loss, &cfg->opt, &cfg->mae_cfg};
		const FlagSpec *f = NULL;
		int k, off = 0; // off 3: --no-NAME of the switch NAME
		for (k = 1; k < NTABS && !f; k++) {
			f = flags_find(tabs[k].t, tabs[k].n, name);
			if (!f && !strncmp(name, "no-", 3) && (f = flags_find(tabs[k].t, tabs[k].n, name + 3)) &&
			    f->type != FLAG_SWITCH)
				f = NULL;
			off = f && strcmp(f->name, name) ? 3 : 0;
		}
		if (!f) {
			snprintf(err, errlen, "unknown flag --%s (see --help)", name);
			return -EINVAL;
		}
		if (off && v) {
			snprintf(err, errlen, "--%s takes no value", name);
			return -EINVAL;
		}
		if (off)
			*(int *)((char *)dsts[k - 2] + f->off) = 0;
		else if (flags_set(f, dsts[k - 2], v, err, errlen) < 0)
			return -EINVAL;
	}
	char msg[200];
	if (model_config_check(&cfg->model, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "model: %s", msg);
		return -EINVAL;
	}
	if (cfg->mae && mae_config_check(&cfg->model, &cfg->mae_cfg, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "--objective mae: %s", msg);
		return -EINVAL;
	}
	if (fastclip_config_check(&cfg->loss) < 0) {
		snprintf(err, errlen, "the FastCLIP settings are inconsistent (see --help for bounds)");
		return -EINVAL;
	}
	return 0;
}

// --epochs into --steps, the optimizer's schedule over them, and the decay groups
static int resolve_schedule(TrainerConfig *cfg, int steps_given, char *err, size_t errlen)
{
	if (cfg->epochs > 0) {
		if (steps_given) {
			snprintf(err, errlen, "give --steps or --epochs, not both");
			return -EINVAL;
		}
		int64_t per = trainer_steps_per_epoch(cfg);
		if (per < 1) {
			snprintf(
				err, errlen,
				"--epochs needs --dataset-size or --train-num-samples (tools/launch.sh passes the manifest's size)");
			return -EINVAL;
		}
		double s = ceil(cfg->epochs * (double)per);
		cfg->steps = s < 1 ? 1 : (int64_t)s;
	}
	cfg->opt.total_steps = cfg->steps; // the optimizer's own flags went into cfg->opt (pass 2)
	if (wd_groups_parse(cfg->wd_groups, &cfg->wd) < 0) {
		snprintf(err, errlen, "--wd-groups '%s' is not open_clip or avclip", cfg->wd_groups);
		return -EINVAL;
	}
	return 0;
}

// --objective: classify's combinations, and the layer decay it defaults
static int check_classify(TrainerConfig *cfg, char *err, size_t errlen)
{
	cfg->classify = !strcmp(cfg->objective, "classify");
	cfg->opt.layer_decay = cfg->layer_decay > 0 ? cfg->layer_decay : cfg->classify ? 0.75 : 1;
	if (!cfg->classify)
		return 0;
	if (cfg->eval_manifest[0]) {
		snprintf(
			err, errlen,
			"--objective classify does not take --eval-manifest (classification evaluation in the trainer is "
			"not implemented yet)");
		return -EINVAL;
	}
	return 0;
}

// --objective mae: what it does not take, and VideoMAE's lr rule without --lr
static int check_mae(TrainerConfig *cfg, int lr_given, char *err, size_t errlen)
{
	if (!cfg->mae)
		return 0;
	const char *why = cfg->eval_manifest[0] ? "--eval-manifest (retrieval needs the text tower; tools/eval --task "
						  "probe scores the encoder)"
			  : cfg->init_from[0]
				  ? "--init-from (VideoMAE pretrains from scratch; starting from weights is not "
				    "implemented)"
				  : NULL;
	if (why) {
		snprintf(err, errlen, "--objective mae does not take %s", why);
		return -EINVAL;
	}
	if (!lr_given)
		cfg->opt.lr = cfg->mae_base_lr * cfg->batch_size * cfg->ranks / 256.0;
	return 0;
}

// what one run needs beyond the table's bounds: combinations, and what launcher modes skip
static int check_run(TrainerConfig *cfg, FastclipKind kind, char *err, size_t errlen)
{
	static const char *const attn[] = {
		[KERN_ATTN_AUTO] = "auto", [KERN_ATTN_OWN] = "own", [KERN_ATTN_CUDNN] = "cudnn"};
	for (int a = 0; a < 3; a++)
		if (!strcmp(cfg->attention, attn[a]))
			cfg->attention_impl = (KAttention)a;
	cfg->backend_kind = strcmp(cfg->backend, "cuda") ? KERN_BACKEND_CPU : KERN_BACKEND_CUDA;
	if (cfg->backend_kind == KERN_BACKEND_CUDA && !strcmp(cfg->precision, "fp32")) {
		snprintf(err, errlen,
			 "--precision fp32 with --backend cuda: the CUDA backend's attention computes in bf16 only");
		return -EINVAL;
	}
	if (cfg->train_num_samples == 0)
		cfg->train_num_samples = cfg->dataset_size;
	if (cfg->rank >= cfg->ranks) {
		snprintf(err, errlen, "--rank %d must be below --ranks %d", cfg->rank, cfg->ranks);
		return -EINVAL;
	}
	const int launcher_print = cfg->print_geometry || cfg->print_steps || cfg->print_params || cfg->fit_batch;
	const int cpu_ranks = cfg->ranks > 1 && !launcher_print && !strcmp(cfg->backend, "cpu"); // GPU ranks: NCCL
	if ((cpu_ranks || cfg->comm_create || cfg->comm_unlink) && !cfg->comm[0]) {
		snprintf(
			err, errlen,
			"--comm NAME is required with --ranks %d (create it with trainer query comm-create before starting the ranks)",
			cfg->ranks);
		return -EINVAL;
	}
	if (check_classify(cfg, err, errlen) < 0)
		return -EINVAL;
	if (cfg->comm_create || cfg->comm_unlink || launcher_print || cfg->self_check)
		return 0;
	if (!cfg->run_dir[0]) {
		snprintf(err, errlen, "--run-dir DIR is required");
		return -EINVAL;
	}
	if (cfg->resume_position)
		return 0;
	if (!cfg->mae && fastclip_uses_table(kind) && cfg->dataset_size < 1) {
		snprintf(err, errlen, "--dataset-size N is required by --loss %s (rows of its u tables)",
			 cfg->loss_name);
		return -EINVAL;
	}
	if (strcmp(cfg->keep_best, "none") && !cfg->eval_manifest[0]) {
		snprintf(err, errlen, "--keep-best %s needs --eval-manifest: the held-out score it keeps the best of",
			 cfg->keep_best);
		return -EINVAL;
	}
	if (cfg->eval_manifest[0] && !cfg->eval_ring[0] &&
	    (size_t)snprintf(cfg->eval_ring, sizeof cfg->eval_ring, "%s-eval", cfg->ring) >= sizeof cfg->eval_ring) {
		snprintf(err, errlen, "--ring '%s' is too long to name its evaluation ring (give --eval-ring)",
			 cfg->ring);
		return -EINVAL;
	}
	return 0;
}

// cfg: zero but for a query's switch
static int parse(TrainerConfig *cfg, int argc, char **argv, char *err, size_t errlen)
{
	// pass 1: the table's own flags; the others (a switch of theirs takes no value) wait for pass 2
	int nm, nf, no, na;
	const FlagSpec *mt = model_flag_table(&nm), *ft = fastclip_flag_table(&nf), *ot = optim_flag_table(&no),
		       *at = mae_flag_table(&na);
	const FlagTable tabs[] = {{flags, NFLAGS}, {mt, nm}, {ft, nf}, {ot, no}, {at, na}};
	enum { NTABS = sizeof tabs / sizeof tabs[0] };
	FlagRest rest = {.keep_unknown = 1, .also = tabs + 1, .n_also = NTABS - 1};
	if (flags_parse(flags, NFLAGS, cfg, argc, argv, &rest, err, errlen) < 0)
		return -EINVAL;
	if (cfg->help)
		return 0;
	if (flags_check_known(tabs, NTABS, argc, argv, err, errlen) < 0)
		return -EINVAL; // a misspelt flag is named as such, before any check of what is required
	int steps_given = 0, lr_given = 0;
	for (int i = 1; i < argc; i++) {
		steps_given |= !strcmp(argv[i], "--steps") || !strncmp(argv[i], "--steps=", 8);
		lr_given |= !strcmp(argv[i], "--lr") || !strncmp(argv[i], "--lr=", 5);
	}
	FastclipKind kind;
	fastclip_kind_parse(cfg->loss_name, &kind); // the table's choices are the kinds
	int rc = parse_model_loss(cfg, kind, argc, argv, err, errlen);
	if (rc == 0)
		rc = trainer_dist_resolve(cfg, err, errlen); // --ranks, before anything counts with it
	if (rc == 0)
		rc = resolve_schedule(cfg, steps_given, err, errlen);
	if (rc == 0)
		rc = check_run(cfg, kind, err, errlen);
	if (rc == 0)
		rc = check_mae(cfg, lr_given, err, errlen);
	return rc;
}

int trainer_flags_parse(TrainerConfig *cfg, int argc, char **argv, char *err, size_t errlen)
{
	char **own = malloc(sizeof(char *) * (size_t)(argc + 1)), **av, *mem;
	if (!own) {
		snprintf(err, errlen, "out of memory for the command line");
		return -ENOMEM;
	}
	memcpy(own, argv, sizeof(char *) * (size_t)argc);
	own[argc] = NULL;
	int ac = argc, q = trainer_query_take(&argc, own, err, errlen); // argc: without "query NAME"
	if (q < -1 || flags_config_argv("config", argc, own, &ac, &av, &mem, err, errlen) < 0) {
		free(own);
		return -EINVAL;
	}
	memset(cfg, 0, sizeof(*cfg));
	trainer_query_set(cfg, q); // before the checks, which ask less of a query
	int rc = parse(cfg, av ? ac : argc, av ? av : own, err, errlen);
	free(av);
	free(mem);
	free(own);
	return rc;
}

int trainer_flags_help(char *buf, size_t len)
{
	size_t n = (size_t)snprintf(
		buf, len,
		"usage: trainer --ring NAME --rank R --ranks N [--comm NAME] --model tiny --loss fastclip-v3\n"
		"               --batch-size B --steps S --dataset-size D --run-dir DIR [--resume] [flags]\n"
		"       trainer --self-check [run flags]\n"
		"queries (one answer, then exit; launchers and benchmarks ask them):\n");
	if (n < len)
		n += (size_t)trainer_query_help(buf + n, len - n);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "\n");
	if (n < len)
		n += (size_t)flags_help(flags, NFLAGS, buf + n, len - n);
	int nm, nf, no;
	const FlagSpec *mt = model_flag_table(&nm), *ft = fastclip_flag_table(&nf), *ot = optim_flag_table(&no);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "\noptimizer:\n");
	if (n < len)
		n += (size_t)flags_help(ot, no, buf + n, len - n);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "\nmodel sizes (over the --model preset's):\n");
	if (n < len)
		n += (size_t)flags_help(mt, nm, buf + n, len - n);
	int na;
	const FlagSpec *at = mae_flag_table(&na);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n,
				      "\nVideoMAE (--objective mae; defaults of the --model preset's size):\n");
	if (n < len)
		n += (size_t)flags_help(at, na, buf + n, len - n);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "\nFastCLIP (defaults of fastclip-v3):\n");
	if (n < len)
		n += (size_t)flags_help(ft, nf, buf + n, len - n);
	return (int)n;
}

int64_t trainer_steps_per_epoch(const TrainerConfig *cfg)
{
	const int64_t samples = cfg->train_num_samples > 0 ? cfg->train_num_samples : cfg->dataset_size;
	return fastclip_steps_per_epoch(samples, (int64_t)cfg->batch_size * cfg->ranks);
}

int trainer_flags_describe(const TrainerConfig *cfg, char *buf, size_t len)
{
	size_t n = (size_t)flags_describe(flags, NFLAGS, cfg, buf, len);
	if (n + 1 < len) {
		buf[n++] = ' ', buf[n] = 0;
		n += (size_t)optim_config_describe(&cfg->opt, buf + n, len - n);
	}
	const ModelConfig *m = &cfg->model;
	if (n < len)
		n += (size_t)snprintf(
			buf + n, len - n,
			" | image-size=%d patch=%d frames=%d vis-width=%d vis-layers=%d vis-heads=%d vocab=%d "
			"ctx-len=%d txt-width=%d txt-layers=%d txt-heads=%d embed-dim=%d mlp-ratio=%d act=%s tubelet=%d | ",
			m->image_size, m->patch, m->frames, m->vis_width, m->vis_layers, m->vis_heads, m->vocab,
			m->ctx_len, m->txt_width, m->txt_layers, m->txt_heads, m->embed_dim, m->mlp_ratio,
			model_act_name(m->act), m->tubelet);
	if (cfg->mae && n < len)
		n += (size_t)snprintf(buf + n, len - n,
				      "mask-ratio=%g mae-decoder-width=%d mae-decoder-layers=%d "
				      "mae-decoder-heads=%d | ",
				      cfg->mae_cfg.mask_ratio, cfg->mae_cfg.dec_width, cfg->mae_cfg.dec_layers,
				      cfg->mae_cfg.dec_heads);
	if (n < len)
		n += (size_t)fastclip_config_describe(&cfg->loss, buf + n, len - n);
	return (int)n;
}
