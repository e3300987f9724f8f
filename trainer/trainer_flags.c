// Trainer flag table: every entry names a TrainerConfig field with its type, bounds, default
// and help; defaults are parsed through the same setter as user values, so they obey the bounds.
#include "trainer_flags.h" // defines: TrainerConfig, ...

#include <errno.h>  // defines: EINVAL, ENOENT, ERANGE, errno
#include <math.h>   // defines: isfinite, ceil
#include <stddef.h> // defines: offsetof
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: strtod, strtoull, malloc, realloc, free
#include <string.h> // defines: strcmp, strchr, strncmp, strspn, strcspn, strerror

#include "fastclip.h" // defines: fastclip_flag_set, fastclip_flags_help, fastclip_config_describe
#include "log.h"            // defines: log_parse_level
#include "trainer_dist.h"   // defines: trainer_dist_resolve

typedef enum { T_STR, T_INT, T_I64, T_U64, T_DBL, T_BOOL } FlagType;

typedef struct {
	const char *name;
	FlagType type;
	size_t off, size; // size: string capacity
	double lo, hi;
	const char *def;
	const char *help;
} Flag;

#define S(f) offsetof(TrainerConfig, f), sizeof(((TrainerConfig *)0)->f)
#define N(f) offsetof(TrainerConfig, f), 0

static const Flag flags[] = {
	{ "ring", T_STR, S(ring), 0, 0, "avclip", "name of the ring (shm segment) to consume" },
	{ "rank", T_INT, N(rank), -1, 4095, "-1", "this trainer's rank r: it consumes positions r, r+N, ... (-1: RANK or SLURM_PROCID, else 0)" },
	{ "ranks", T_INT, N(ranks), 0, 4096, "0", "number of trainer ranks N (must equal the ring's on one machine; 0: WORLD_SIZE or SLURM_NTASKS, else 1)" },
	{ "backend", T_STR, S(backend), 0, 0, "cpu", "cpu | cuda: the kernels' backend; cuda runs this rank on GPU --device (default its local rank), bf16 only (exits with an error when the build has no CUDA backend or no GPU is visible)" },
	{ "device", T_INT, N(device), -1, 1023, "-1", "CUDA device of this rank (-1: its local rank)" },
	{ "master", T_STR, S(master), 0, 0, "", "host[:port] of rank 0 for the NCCL id over TCP (default MASTER_ADDR:MASTER_PORT or Slurm's first host)" },
	{ "rdv", T_STR, S(rdv), 0, 0, "auto", "how GPU ranks get the NCCL id: auto | tcp | file | ring (auto: file with --rdv-file, tcp across machines, the ring on one)" },
	{ "rdv-file", T_STR, S(rdv_file), 0, 0, "", "a file on a filesystem every machine sees, for --rdv file" },
	{ "grad-checkpoint", T_BOOL, N(grad_checkpoint), 0, 1, "0", "keep only each transformer block's input and recompute its activations in backward (same gradients, less memory, about a third more compute)" },
	{ "memory-limit", T_DBL, N(memory_limit_gb), 0, 1e6, "0", "GiB of device memory the run may use (0: the device's free memory); a batch that does not fit stops at start, naming one that does" },
	{ "peak-tflops", T_DBL, N(peak_tflops), 0, 1e6, "0", "the device's peak TFLOP/s for the MFU column (0: no MFU; make bench-gpu measures the bf16 matmul peak)" },
	{ "comm", T_STR, S(comm), 0, 0, "", "comm shm group name (required when --ranks > 1)" },
	{ "comm-create", T_BOOL, N(comm_create), 0, 1, "0", "launcher mode: (re)create the --comm group for --ranks before every start of the ranks, exit" },
	{ "comm-unlink", T_BOOL, N(comm_unlink), 0, 1, "0", "launcher mode: remove the --comm group, exit" },
	{ "resume-position", T_BOOL, N(resume_position), 0, 1, "0", "launcher mode: print the ring --first-position resuming --run-dir needs (0: fresh), exit" },
	{ "print-geometry", T_BOOL, N(print_geometry), 0, 1, "0", "launcher mode: print the ring geometry the model flags need as ringctl flags (--frames T --height H --width W --text-len L), exit" },
	{ "fit-batch", T_BOOL, N(fit_batch), 0, 1, "0", "open the device, print the largest --batch-size (at most the one given) whose step fits its free memory (or --memory-limit), exit" },
	{ "print-params", T_BOOL, N(print_params), 0, 1, "0", "print the parameter counts of the model the flags describe as one JSON line (total, visual, text), exit" },
	{ "print-steps", T_BOOL, N(print_steps), 0, 1, "0", "launcher mode: print 'steps S steps-per-epoch E' of this run (--steps or --epochs, --dataset-size, --batch-size, --ranks), exit" },
	{ "comm-timeout", T_DBL, N(comm_timeout), 1, 86400, "600", "seconds a collective waits for a silent peer" },
	{ "model", T_STR, S(model_name), 0, 0, "tiny", "model preset: tiny | vit-s16 | vit-b16 | vit-l14" },
	{ "loss", T_STR, S(loss_name), 0, 0, "fastclip-v3", "openclip | fastclip-v0 | fastclip-v1 | fastclip-v2 | fastclip-v3" },
	{ "batch-size", T_INT, N(batch_size), 1, 65536, "8", "samples per step on this rank (global batch = N x B)" },
	{ "steps", T_I64, N(steps), 1, 1e15, "100", "optimizer steps of the whole run (a resumed run continues to it)" },
	{ "epochs", T_DBL, N(epochs), 0, 1e9, "0", "instead of --steps: steps = ceil(E x steps per epoch), FastCLIP's epoch of ceil(train-num-samples / (batch-size x ranks)) steps; 0 = use --steps" },
	{ "stop-after-steps", T_I64, N(stop_after_steps), 0, 1e15, "0", "end this run (with a checkpoint) after K steps, 0 = at --steps" },
	{ "dataset-size", T_I64, N(dataset_size), 0, 1e12, "0", "samples in the manifest: rows of the u/τ tables (FastCLIP: required)" },
	{ "train-num-samples", T_I64, N(train_num_samples), 0, 1e15, "0", "samples in one epoch: an epoch is ceil(N / (B x ranks)) steps (0: --dataset-size)" },
	{ "optimizer", T_STR, S(optimizer), 0, 0, "adamw", "adamw | lamb" },
	{ "lr", T_DBL, N(lr), 0, 10, "5e-4", "peak learning rate" },
	{ "lr-min", T_DBL, N(lr_min), 0, 10, "0", "learning rate at the end of the cosine" },
	{ "warmup-steps", T_I64, N(warmup_steps), 0, 1e15, "0", "linear warmup steps" },
	{ "weight-decay", T_DBL, N(weight_decay), 0, 10, "0.1", "decoupled weight decay of the tensors --wd-groups decays" },
	{ "wd-groups", T_STR, S(wd_groups), 0, 0, "open_clip", "open_clip (decay >= 2-D tensors without bn/ln/bias/logit_scale in the name) | avclip (also no decay on embeddings)" },
	{ "beta1", T_DBL, N(beta1), 0, 0.999999, "0.9", "optimizer β1" },
	{ "beta2", T_DBL, N(beta2), 0, 0.999999, "0.98", "optimizer β2" },
	{ "adam-eps", T_DBL, N(adam_eps), 1e-12, 1, "1e-6", "optimizer ε" },
	{ "clip-norm", T_DBL, N(clip_norm), 0, 1e9, "0", "gradient-norm clipping over every parameter (logit_scale too when τ is learned), 0 = off" },
	{ "seed", T_U64, N(seed), 0, 1.8e19, "0", "model initialisation seed" },
	{ "init-from", T_STR, S(init_from), 0, 0, "", "start a fresh run from open_clip / OpenAI CLIP safetensors weights (temporal embedding zero)" },
	{ "init-skip-mismatched", T_BOOL, N(init_skip_mismatched), 0, 1, "0", "with --init-from: keep projections whose widths differ from the file's at their initial values" },
	{ "attention", T_STR, S(attention), 0, 0, "auto", "own | cudnn | auto: the CUDA backend's attention (the own FlashAttention-2-style kernel, cuDNN's fused attention, or cuDNN where it accepts the shape); the CPU backend runs its reference and refuses cudnn" },
	{ "precision", T_STR, S(precision), 0, 0, "auto", "bf16 | fp32: activations and weight copies (master weights, moments and statistics stay f32); auto: bf16 on a GPU, fp32 on the CPU" },
	{ "threads", T_INT, N(threads), 0, 1024, "0", "CPU threads of the kernels, 0 = this process's CPUs / --ranks (launch.sh passes the cores left after the loaders)" },
	{ "flip", T_INT, N(flip), 0, 1, "1", "1: horizontal flip per clip from the counter RNG keyed by (seed, g)" },
	{ "bucket-mb", T_DBL, N(bucket_mb), 0.001, 4096, "4", "gradient all-reduce bucket size in MiB" },
	{ "data-timeout", T_DBL, N(data_timeout), 0.1, 86400, "120", "seconds to wait for one READY slot before failing" },
	{ "run-dir", T_STR, S(run_dir), 0, 0, "", "run directory: metrics.jsonl, ckpt/ (required)" },
	{ "resume", T_BOOL, N(resume), 0, 1, "0", "continue from RUN_DIR/ckpt (LATEST); a fresh start when none" },
	{ "ckpt-every", T_I64, N(ckpt_every), 0, 1e15, "0", "checkpoint every K steps (0: only at the end and on SIGTERM)" },
	{ "eval-manifest", T_STR, S(eval_manifest), 0, 0, "", "held-out manifest: rank 0 evaluates retrieval into RUN_DIR/eval.jsonl" },
	{ "eval-ring", T_STR, S(eval_ring), 0, 0, "", "the evaluation ring loaderd --eval fills from --eval-manifest (default: RING-eval; tools/launch.sh makes it)" },
	{ "eval-every", T_I64, N(eval_every), 0, 1e15, "0", "evaluate every K steps (0: only at the end of the run)" },
	{ "eval-match", T_STR, S(eval_match), 0, 0, "instance", "a retrieval hit: instance (the query's own sample) | caption (any sample with its caption)" },
	{ "keep-last", T_INT, N(keep_last), 0, 1000000, "3", "checkpoints kept (0: all)" },
	{ "log-every", T_I64, N(log_every), 1, 1e15, "1", "steps between progress log lines" },
	{ "metrics-every", T_INT, N(metrics_every), 1, 100000, "1", "steps between read-backs of the logged scalars from the device: metrics.jsonl gets that many lines each time" },
	{ "log-level", T_STR, S(log_level), 0, 0, "info", "debug | info | warn | error" },
	{ "config", T_STR, S(config), 0, 0, "", "file of 'name value' lines (these flag names); the command line wins" },
	{ "help", T_BOOL, N(help), 0, 1, "0", "this text" },
};
enum { NFLAGS = sizeof(flags) / sizeof(flags[0]) };

static int set(TrainerConfig *cfg, const Flag *f, const char *v, char *err, size_t errlen)
{
	char *p = (char *)cfg + f->off;
	if (f->type == T_STR) {
		if (strlen(v) >= f->size) {
			snprintf(err, errlen, "--%s: value longer than %zu characters", f->name, f->size - 1);
			return -EINVAL;
		}
		snprintf(p, f->size, "%s", v);
		return 0;
	}
	char *end;
	double d = strtod(v, &end);
	int whole = f->type != T_DBL;
	if (end == v || *end || !isfinite(d) || (whole && d != (double)(long long)d && f->type != T_U64)) {
		snprintf(err, errlen, "--%s: '%s' is not %s", f->name, v, whole ? "an integer" : "a number");
		return -EINVAL;
	}
	if (d < f->lo || d > f->hi) {
		snprintf(err, errlen, "--%s %s is outside [%g, %g]", f->name, v, f->lo, f->hi);
		return -EINVAL;
	}
	switch (f->type) {
	case T_INT:
	case T_BOOL: *(int *)p = (int)d; break;
	case T_I64: *(int64_t *)p = (int64_t)d; break;
	case T_U64: *(uint64_t *)p = strtoull(v, NULL, 10); break;
	default: *(double *)p = d; break;
	}
	return 0;
}

static const Flag *find(const char *name)
{
	for (int i = 0; i < NFLAGS; i++)
		if (!strcmp(flags[i].name, name))
			return &flags[i];
	return NULL;
}

// splits argv[*i] into name and value (consuming argv[*i+1] when needed); NULL value: boolean
static int next_arg(int argc, char **argv, int *i, char *name, size_t nlen, const char **value, char *err,
		    size_t errlen)
{
	const char *a = argv[*i];
	if (strncmp(a, "--", 2) || !a[2]) {
		snprintf(err, errlen, "unexpected argument '%s' (flags are --name value; see --help)", a);
		return -EINVAL;
	}
	a += 2;
	const char *eq = strchr(a, '=');
	size_t n = eq ? (size_t)(eq - a) : strlen(a);
	if (n >= nlen)
		n = nlen - 1;
	memcpy(name, a, n);
	name[n] = 0;
	const Flag *f = find(name);
	if (eq) {
		*value = eq + 1;
	} else if (f && f->type == T_BOOL) {
		*value = NULL;
	} else if (*i + 1 < argc) {
		*value = argv[++*i];
	} else {
		snprintf(err, errlen, "--%s needs a value", name);
		return -EINVAL;
	}
	return 0;
}

// A config file's settings as "--name=value" arguments placed before the command line's, so
// the command line wins: one "name value" or "name = value" per line, '#' comments, a name
// alone sets a boolean. *out (argc entries) is malloc'ed, its strings in one block *mem. The
// --config flag itself stays, so the configuration names the file it came from.
static int with_config(int argc, char **argv, int *oargc, char ***oargv, char **mem, char *err, size_t errlen)
{
	const char *path = NULL;
	for (int i = 1; i < argc && !path; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			path = argv[i + 1];
		else if (!strncmp(argv[i], "--config=", 9))
			path = argv[i] + 9;
	}
	*mem = NULL;
	*oargv = NULL;
	if (!path)
		return 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "--config %s: %s", path, strerror(errno));
		return -EINVAL;
	}
	size_t cap = 4096, used = 0;
	char *buf = malloc(cap), line[1024];
	int n = 0, lineno = 0;
	while (buf && fgets(line, sizeof line, f)) {
		lineno++;
		char *h = strchr(line, '#');
		if (h)
			*h = 0;
		char *k = line + strspn(line, " \t\r\n");
		if (!*k)
			continue;
		size_t kl = strcspn(k, " \t\r\n=");
		char *v = k + kl;
		v += strspn(v, " \t=");
		v[strcspn(v, "\r\n")] = 0;
		for (size_t e = strlen(v); e > 0 && (v[e - 1] == ' ' || v[e - 1] == '\t'); e--)
			v[e - 1] = 0;
		k[kl] = 0;
		if (!strncmp(k, "--", 2))
			k += 2;
		if (!*k || !strcmp(k, "config")) {
			snprintf(err, errlen, "--config %s line %d: expected 'name value'", path, lineno);
			fclose(f);
			free(buf);
			return -EINVAL;
		}
		size_t need = strlen(k) + strlen(v) + 4;
		if (used + need > cap) {
			char *nb = realloc(buf, cap = 2 * (cap + need));
			if (!nb)
				break;
			buf = nb;
		}
		used += (size_t)snprintf(buf + used, cap - used, *v ? "--%s=%s" : "--%s", k, v) + 1;
		n++;
	}
	fclose(f);
	char **av = buf ? malloc(sizeof(char *) * (size_t)(argc + n)) : NULL;
	if (!av) {
		free(buf);
		snprintf(err, errlen, "--config %s: out of memory", path);
		return -EINVAL;
	}
	int j = 0;
	av[j++] = argv[0];
	for (size_t off = 0; off < used; off += strlen(buf + off) + 1)
		av[j++] = buf + off;
	for (int i = 1; i < argc; i++)
		av[j++] = argv[i];
	*oargc = j;
	*oargv = av;
	*mem = buf;
	return 0;
}

static int parse(TrainerConfig *cfg, int argc, char **argv, char *err, size_t errlen);

int trainer_flags_parse(TrainerConfig *cfg, int argc, char **argv, char *err, size_t errlen)
{
	char **av, *mem;
	int ac = argc;
	if (with_config(argc, argv, &ac, &av, &mem, err, errlen) < 0)
		return -EINVAL;
	int rc = parse(cfg, av ? ac : argc, av ? av : argv, err, errlen);
	free(av);
	free(mem);
	return rc;
}

static int parse(TrainerConfig *cfg, int argc, char **argv, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	for (int i = 0; i < NFLAGS; i++)
		if (set(cfg, &flags[i], flags[i].def, err, errlen) < 0)
			return -EINVAL;
	// pass 1: the trainer's own flags (so --model and --loss pick the defaults of pass 2)
	int steps_given = 0;
	for (int i = 1; i < argc; i++) {
		char name[64];
		const char *v;
		if (next_arg(argc, argv, &i, name, sizeof name, &v, err, errlen) < 0)
			return -EINVAL;
		const Flag *f = find(name);
		if (!f)
			continue;
		steps_given |= !strcmp(name, "steps");
		if (f->type == T_BOOL && v) {
			if (set(cfg, f, v, err, errlen) < 0)
				return -EINVAL;
		} else if (f->type == T_BOOL) {
			*(int *)((char *)cfg + f->off) = 1;
		} else if (set(cfg, f, v, err, errlen) < 0) {
			return -EINVAL;
		}
	}
	if (cfg->help)
		return 0;
	if (model_config_preset(&cfg->model, cfg->model_name) < 0) {
		snprintf(err, errlen, "--model '%s' is not a preset (tiny, vit-s16, vit-b16, vit-l14)", cfg->model_name);
		return -EINVAL;
	}
	FastclipKind kind;
	if (fastclip_kind_parse(cfg->loss_name, &kind) < 0) {
		snprintf(err, errlen, "--loss '%s' is not one of openclip, fastclip-v0, fastclip-v1, fastclip-v2, fastclip-v3",
			 cfg->loss_name);
		return -EINVAL;
	}
	fastclip_config_default(&cfg->loss, kind);
	// pass 2: model sizes and FastCLIP hyper-parameters
	for (int i = 1; i < argc; i++) {
		char name[64];
		const char *v;
		next_arg(argc, argv, &i, name, sizeof name, &v, err, errlen);
		if (find(name))
			continue;
		int rc = model_config_set(&cfg->model, name, v ? v : "");
		if (rc == -ENOENT)
			rc = fastclip_flag_set(&cfg->loss, name, v ? v : "");
		if (rc == -ENOENT) {
			snprintf(err, errlen, "unknown flag --%s (see --help)", name);
			return -EINVAL;
		}
		if (rc < 0) {
			snprintf(err, errlen, "--%s '%s': %s", name, v ? v : "", rc == -ERANGE ? "out of range" : "not a valid value");
			return -EINVAL;
		}
	}
	char msg[200];
	if (model_config_check(&cfg->model, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "model: %s", msg);
		return -EINVAL;
	}
	if (fastclip_config_check(&cfg->loss) < 0) {
		snprintf(err, errlen, "the FastCLIP settings are inconsistent (see --help for bounds)");
		return -EINVAL;
	}
	int rc = trainer_dist_resolve(cfg, err, errlen); // --ranks, before anything counts with it
	if (rc < 0)
		return rc;
	if (cfg->epochs > 0) {
		if (steps_given) {
			snprintf(err, errlen, "give --steps or --epochs, not both");
			return -EINVAL;
		}
		int64_t per = trainer_steps_per_epoch(cfg);
		if (per < 1) {
			snprintf(err, errlen, "--epochs needs --dataset-size or --train-num-samples (tools/launch.sh passes the manifest's size)");
			return -EINVAL;
		}
		double s = ceil(cfg->epochs * (double)per);
		cfg->steps = s < 1 ? 1 : (int64_t)s;
	}
	optim_config_default(&cfg->opt);
	if (!strcmp(cfg->optimizer, "adamw"))
		cfg->opt.kind = OPT_ADAMW;
	else if (!strcmp(cfg->optimizer, "lamb"))
		cfg->opt.kind = OPT_LAMB;
	else {
		snprintf(err, errlen, "--optimizer '%s' is not adamw or lamb", cfg->optimizer);
		return -EINVAL;
	}
	cfg->opt.lr = cfg->lr;
	cfg->opt.lr_min = cfg->lr_min;
	cfg->opt.warmup_steps = cfg->warmup_steps;
	cfg->opt.total_steps = cfg->steps;
	cfg->opt.beta1 = cfg->beta1;
	cfg->opt.beta2 = cfg->beta2;
	cfg->opt.eps = cfg->adam_eps;
	cfg->opt.weight_decay = cfg->weight_decay;
	cfg->opt.clip_norm = cfg->clip_norm;
	if (wd_groups_parse(cfg->wd_groups, &cfg->wd) < 0) {
		snprintf(err, errlen, "--wd-groups '%s' is not open_clip or avclip", cfg->wd_groups);
		return -EINVAL;
	}
	static const char *const attn[] = {[KERN_ATTN_AUTO] = "auto", [KERN_ATTN_OWN] = "own", [KERN_ATTN_CUDNN] = "cudnn"};
	int ai = 0;
	while (ai < 3 && strcmp(cfg->attention, attn[ai]))
		ai++;
	if (ai == 3) {
		snprintf(err, errlen, "--attention '%s' is not own, cudnn or auto", cfg->attention);
		return -EINVAL;
	}
	cfg->attention_impl = (KAttention)ai;
	if (strcmp(cfg->backend, "cpu") && strcmp(cfg->backend, "cuda")) {
		snprintf(err, errlen, "--backend '%s' is not cpu or cuda", cfg->backend);
		return -EINVAL;
	}
	cfg->backend_kind = strcmp(cfg->backend, "cuda") ? KERN_BACKEND_CPU : KERN_BACKEND_CUDA;
	if (cfg->backend_kind == KERN_BACKEND_CUDA && !strcmp(cfg->precision, "fp32")) {
		snprintf(err, errlen, "--precision fp32 with --backend cuda: the CUDA backend's attention computes in bf16 only");
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
		snprintf(err, errlen, "--comm NAME is required with --ranks %d (create it with --comm-create before starting the ranks)", cfg->ranks);
		return -EINVAL;
	}
	if (cfg->comm_create || cfg->comm_unlink || launcher_print)
		return 0;
	if (!cfg->run_dir[0]) {
		snprintf(err, errlen, "--run-dir DIR is required");
		return -EINVAL;
	}
	if (cfg->resume_position)
		return 0;
	if (kind != FASTCLIP_OPENCLIP && cfg->dataset_size < 1) {
		snprintf(err, errlen, "--dataset-size N is required by --loss %s (rows of its u tables)", cfg->loss_name);
		return -EINVAL;
	}
	if (strcmp(cfg->precision, "auto") && strcmp(cfg->precision, "bf16") && strcmp(cfg->precision, "fp32")) {
		snprintf(err, errlen, "--precision '%s' is not bf16, fp32 or auto", cfg->precision);
		return -EINVAL;
	}
	if (cfg->eval_manifest[0] && !cfg->eval_ring[0] &&
	    (size_t)snprintf(cfg->eval_ring, sizeof cfg->eval_ring, "%s-eval", cfg->ring) >= sizeof cfg->eval_ring) {
		snprintf(err, errlen, "--ring '%s' is too long to name its evaluation ring (give --eval-ring)", cfg->ring);
		return -EINVAL;
	}
	if (strcmp(cfg->eval_match, "instance") && strcmp(cfg->eval_match, "caption")) {
		snprintf(err, errlen, "--eval-match '%s' is not instance or caption", cfg->eval_match);
		return -EINVAL;
	}
	if (log_parse_level(cfg->log_level) < 0) {
		snprintf(err, errlen, "--log-level '%s' is not debug, info, warn or error", cfg->log_level);
		return -EINVAL;
	}
	return 0;
}

int trainer_flags_help(char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len,
				    "usage: trainer --ring NAME --rank R --ranks N [--comm NAME] --model tiny --loss fastclip-v3\n"
				    "               --batch-size B --steps S --dataset-size D --run-dir DIR [--resume] [flags]\n"
				    "       trainer --comm-create --comm NAME --ranks N    (launcher: make the rank group)\n"
				    "       trainer --comm-unlink --comm NAME              (launcher: remove it)\n"
				    "       trainer --resume-position --run-dir DIR        (launcher: ring --first-position to resume)\n"
				    "       trainer --print-geometry [model flags]         (launcher: ringctl --frames --height --width --text-len)\n"
				    "       trainer --print-params [model flags]           (parameter counts, one JSON line)\n"
				    "       trainer --print-steps [run flags]              (launcher: total steps, steps per epoch)\n\n");
	for (int i = 0; i < NFLAGS && n < len; i++) {
		const Flag *f = &flags[i];
		const char *arg = f->type == T_BOOL ? "" : f->type == T_STR ? " S" : " X";
		if (f->type == T_STR || f->type == T_BOOL)
			n += (size_t)snprintf(buf + n, len - n, "  --%s%s  %s%s%s%s\n", f->name, arg, f->help,
					      f->type == T_STR && f->def[0] ? " (default " : "", f->type == T_STR ? f->def : "",
					      f->type == T_STR && f->def[0] ? ")" : "");
		else
			n += (size_t)snprintf(buf + n, len - n, "  --%s%s  %s [%g, %g] (default %s)\n", f->name, arg, f->help,
					      f->lo, f->hi, f->def);
	}
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "\nmodel sizes (positive integers overriding the preset):\n ");
	char keys[512];
	snprintf(keys, sizeof keys, "%s", model_config_keys());
	for (char *save = NULL, *k = strtok_r(keys, " ", &save); k && n < len; k = strtok_r(NULL, " ", &save))
		n += (size_t)snprintf(buf + n, len - n, " --%s N", k);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "\n  --act gelu|quickgelu  MLP activation (default gelu; quickgelu for OpenAI CLIP weights)");
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "\n\nFastCLIP:\n");
	if (n < len) { // its first line repeats --loss, which the table above already has
		int k = fastclip_flags_help(buf + n, len - n);
		char *nl = k > 0 ? strchr(buf + n, '\n') : NULL;
		if (nl) {
			size_t drop = (size_t)(nl + 1 - (buf + n));
			memmove(buf + n, nl + 1, strlen(nl + 1) + 1);
			k -= (int)drop;
		}
		n += (size_t)(k > 0 ? k : 0);
	}
	return (int)n;
}

int64_t trainer_steps_per_epoch(const TrainerConfig *cfg)
{
	const int64_t samples = cfg->train_num_samples > 0 ? cfg->train_num_samples : cfg->dataset_size;
	return fastclip_steps_per_epoch(samples, (int64_t)cfg->batch_size * cfg->ranks);
}

int trainer_flags_describe(const TrainerConfig *cfg, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (int i = 0; i < NFLAGS && n < len; i++) {
		const Flag *f = &flags[i];
		const char *p = (const char *)cfg + f->off;
		if (f->type == T_BOOL && (!strcmp(f->name, "help") || !strncmp(f->name, "comm-", 5) ||
					  !strcmp(f->name, "resume-position") || !strncmp(f->name, "print-", 6)))
			continue;
		switch (f->type) {
		case T_STR: n += (size_t)snprintf(buf + n, len - n, "%s=%s ", f->name, p); break;
		case T_INT:
		case T_BOOL: n += (size_t)snprintf(buf + n, len - n, "%s=%d ", f->name, *(const int *)p); break;
		case T_I64: n += (size_t)snprintf(buf + n, len - n, "%s=%lld ", f->name, (long long)*(const int64_t *)p); break;
		case T_U64: n += (size_t)snprintf(buf + n, len - n, "%s=%llu ", f->name, (unsigned long long)*(const uint64_t *)p); break;
		default: n += (size_t)snprintf(buf + n, len - n, "%s=%g ", f->name, *(const double *)p); break;
		}
	}
	const ModelConfig *m = &cfg->model;
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n,
				      "| image-size=%d patch=%d frames=%d vis-width=%d vis-layers=%d vis-heads=%d vocab=%d "
				      "ctx-len=%d txt-width=%d txt-layers=%d txt-heads=%d embed-dim=%d mlp-ratio=%d act=%s | ",
				      m->image_size, m->patch, m->frames, m->vis_width, m->vis_layers, m->vis_heads, m->vocab,
				      m->ctx_len, m->txt_width, m->txt_layers, m->txt_heads, m->embed_dim, m->mlp_ratio,
				      model_act_name(m->act));
	if (n < len)
		n += (size_t)fastclip_config_describe(&cfg->loss, buf + n, len - n);
	return (int)n;
}
