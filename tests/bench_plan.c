// make bench-plan: the kernels of one training step as a roofline plan, no GPU needed. The step is
// the trainer's own (TrainStep: augment, forward, FastCLIP-v3 exchange on one rank, backward with
// the bucketed all-reduce, AdamW, temperature), run once with a plan recorder in the op layer
// (kern_ctx_set_plan: every op reports its name, sizes, FLOPs and bytes), on the CPU backend and
// dry at vit-b16 (recorded, not computed: the op list comes from the real code, the arithmetic
// would take hours here). Per op: FLOPs, bytes, the floor time on an H200's datasheet figures
// (matrix products at the bf16 dense peak, other arithmetic at the FP32 peak, bytes at the HBM3e
// bandwidth) and what bounds it; per step: op calls, the predicted time (the sum of each op's
// max(FLOP floor, byte floor)) and the MFU it implies. --smoke (make test): the tiny model computed
// and dry must record the same ops; the model's matrix-product FLOPs must be 3 x
// model_flops_per_sample x B; on a build whose CUDA backend runs (the shim, or a GPU) every device
// launch of the step must fall inside a recorded op, and the step through CUDA graphs (--cuda-graph)
// must launch less than eagerly.
// --launches: the step's device launches per step on the CUDA backend (the shim without a GPU),
// eager and through CUDA graphs, at the preset's structure (layers, frames, batch, vocabulary, MLP
// ratio) with its widths shrunk to one attention head of 64 and its patches per frame and context to
// the fewest that keep every column sum's rows on the same side of the 256 above which it takes a
// second pass (kc_col_slices): what a launch count depends on (the ops each layer queues, those
// passes) is kept, the arithmetic the shim would take hours over is not. Own attention kernels
// (cuDNN's, --attention auto on sm_90, launch kernels of their own that the count does not see).
// Usage: bench_plan [--smoke] [--model NAME --frames T --batch-size B] [--all] [--launches]
#include "flags.h"             // defines: FlagSpec, FLAG_AT, flags_parse, flags_help
#include "test_trainer_util.h" // defines: tt_upload
#include "trainer_graph.h"     // defines: train_graph_note
#include "trainer_step.h"      // defines: TrainStep, train_step_*, comm_local_open, model_flops_per_sample

#include <errno.h>  // defines: ENODEV, ENOTSUP
#include <math.h>   // defines: fabs, fmax
#include <stdio.h>  // defines: printf
#include <stdlib.h> // defines: calloc, realloc, free
#include <string.h> // defines: strcmp, snprintf

// H200 SXM datasheet: bf16 dense tensor 989 TFLOP/s, FP32 67 TFLOP/s, HBM3e 4.8 TB/s
#define PEAK_BF16 989e12
#define PEAK_FP32 67e12
#define PEAK_HBM 4.8e12
// the model's matrix-product FLOPs recorded in a step against 3 x model_flops_per_sample x B: the
// model counts backward as 2x forward everywhere, but the patch embedding's backward has no input
// gradient (pixels) and the text tower's causal attention is counted as half by both
#define GEMM_TOL 0.03

typedef struct {
	char op[24], shape[64];
	int gemm;
	long calls;
	double flops, bytes, recompute, floor_s;
	int64_t launches;
} Row;

typedef struct {
	Row *rows;
	int n, cap, all; // all: a row per call, else one per (op, sizes)
	long calls;
	int64_t launches;
	double flops, bytes, model_gemm, floor_s, flop_s, byte_s;
} Plan;

static double floor_of(const KPlanOp *o, double *ft, double *bt)
{
	*ft = o->flops / (o->gemm ? PEAK_BF16 : PEAK_FP32);
	*bt = o->bytes / PEAK_HBM;
	return fmax(*ft, *bt);
}

static void record(void *arg, const KPlanOp *o)
{
	Plan *p = arg;
	double ft, bt, f = floor_of(o, &ft, &bt);
	p->calls++;
	p->launches += o->launches;
	p->flops += o->flops;
	p->bytes += o->bytes;
	p->floor_s += f;
	p->flop_s += ft;
	p->byte_s += bt;
	if (o->gemm == 1)
		p->model_gemm += o->flops - o->recompute;
	int i = 0;
	while (!p->all && i < p->n && (strcmp(p->rows[i].op, o->op) || strcmp(p->rows[i].shape, o->shape)))
		i++;
	if (p->all || i == p->n) {
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 64;
			Row *r = realloc(p->rows, (size_t)p->cap * sizeof *r);
			if (!r) {
				fprintf(stderr, "bench-plan: out of memory\n");
				exit(1);
			}
			p->rows = r;
		}
		i = p->n++;
		memset(&p->rows[i], 0, sizeof p->rows[i]);
		snprintf(p->rows[i].op, sizeof p->rows[i].op, "%s", o->op);
		snprintf(p->rows[i].shape, sizeof p->rows[i].shape, "%s", o->shape);
		p->rows[i].gemm = o->gemm;
	}
	Row *r = &p->rows[i];
	r->calls++;
	r->flops += o->flops;
	r->bytes += o->bytes;
	r->recompute += o->recompute;
	r->floor_s += f;
	r->launches += o->launches;
}

typedef struct {
	const char *model;
	int frames, batch;
	KBackendKind backend;
	int dry;
} StepSpec;

// one step of the trainer's code with the recorder set around train_step_run only (setup and the
// batch upload are not the step's device work); *step_launches: the backend's count across it
static int plan_step(const StepSpec *sp, Plan *p, int64_t *step_launches, ModelConfig *mc)
{
	KernCtx *c = NULL;
	Comm *comm = NULL;
	KCtxOptions ko = {.backend = sp->backend};
	int rc = kern_ctx_create(&c, &ko);
	if (rc < 0)
		return rc;
	if ((rc = comm_local_open(&comm)) < 0) {
		kern_ctx_destroy(c);
		return rc;
	}
	// the trainer's defaults (trainer_flags.c): FastCLIP-v3, AdamW, 4 MiB buckets, bf16 activations
	// (--precision auto on a GPU), no gradient checkpointing
	TrainStepConfig cfg = {.act = KDT_BF16,
			       .batch = sp->batch,
			       .dataset_size = 4096,
			       .bucket_bytes = 4u << 20,
			       .data_seed = 1,
			       .flip = 1,
			       .log_every = 1};
	model_config_preset(&cfg.model, sp->model);
	cfg.model.frames = sp->frames;
	optim_config_default(&cfg.opt);
	fastclip_config_default(&cfg.loss, FASTCLIP_V3);
	*mc = cfg.model;
	TrainStep *s = NULL;
	kern_ctx_set_plan(c, sp->dry ? record : NULL, p, sp->dry); // dry: no zero-filled tensors either
	rc = train_step_create(&s, c, comm, &cfg);
	kern_ctx_set_plan(c, NULL, NULL, 0);
	if (!rc && !sp->dry)
		rc = train_step_init(s, 1);
	if (!rc) // a synthetic batch as the trainer tests stage one (the plan depends on its shapes only)
		rc = tt_upload(s, 1, 0, 0);
	if (!rc)
		rc = kern_sync(c);
	TrainStepTimes tt;
	if (!rc) {
		kern_ctx_set_plan(c, record, p, sp->dry);
		const int64_t l0 = kern_ctx_launches(c);
		rc = train_step_run(s, 0, &tt);
		*step_launches = kern_ctx_launches(c) - l0;
		kern_ctx_set_plan(c, NULL, NULL, 0);
	}
	if (!rc)
		rc = kern_sync(c);
	if (rc < 0)
		fprintf(stderr, "bench-plan: %s T=%d B=%d on %s: %s\n", sp->model, sp->frames, sp->batch,
			kern_ctx_backend_name(c), kern_error_message(c));
	train_step_destroy(s);
	comm_close(comm);
	kern_ctx_destroy(c);
	return rc;
}

static void human(double x, const char *unit, char *buf, size_t n)
{
	const char *pre[] = {"", "k", "M", "G", "T", "P"};
	int k = 0;
	while (fabs(x) >= 1000 && k < 5)
		x /= 1000, k++;
	snprintf(buf, n, "%.3g %s%s", x, pre[k], unit);
}

static void print_plan(const Plan *p, const StepSpec *sp, const ModelConfig *mc)
{
	const double model = 3.0 * model_flops_per_sample(mc) * sp->batch;
	printf("\n== plan: %s T=%d B=%d, one training step (forward, FastCLIP-v3 loss, backward, AdamW) ==\n",
	       sp->model, sp->frames, sp->batch);
	const int show_l = p->launches > 0; // a backend that counts launches (CUDA) ran the ops
	printf("%-16s %-34s %6s %10s %10s %10s %6s%s\n", "op", "sizes", "calls", "FLOPs", "bytes", "floor", "bound",
	       show_l ? " launches" : "");
	for (int i = 0; i < p->n; i++) {
		const Row *r = &p->rows[i];
		char f[32], b[32], t[32];
		human(r->flops, "", f, sizeof f);
		human(r->bytes, "B", b, sizeof b);
		human(r->floor_s, "s", t, sizeof t);
		const double ft = r->flops / (r->gemm ? PEAK_BF16 : PEAK_FP32), bt = r->bytes / PEAK_HBM;
		printf("%-16s %-34s %6ld %10s %10s %10s %6s", r->op, r->shape, r->calls, f, b, t,
		       ft >= bt ? "FLOPs" : "bytes");
		if (show_l)
			printf(" %8lld", (long long)r->launches);
		printf("\n");
	}
	char f[32], b[32], m[32];
	human(p->flops, "FLOP", f, sizeof f);
	human(p->bytes, "B", b, sizeof b);
	human(model, "FLOP", m, sizeof m);
	printf("H200 datasheet: bf16 dense %.0f TFLOP/s (matrix products), FP32 %.0f TFLOP/s (other arithmetic), "
	       "HBM3e %.1f TB/s\n",
	       PEAK_BF16 / 1e12, PEAK_FP32 / 1e12, PEAK_HBM / 1e12);
	printf("step: %ld op calls (the launch count's floor: one launch each), %s, %s; floors: FLOPs alone %.2f ms, "
	       "bytes alone %.2f ms\n",
	       p->calls, f, b, 1e3 * p->flop_s, 1e3 * p->byte_s);
	if (show_l)
		printf("launches the backend counted in the recorded ops: %lld\n", (long long)p->launches);
	printf("predicted step time (sum of per-op max(FLOP floor, byte floor)): %.2f ms = %.1f clips/s\n",
	       1e3 * p->floor_s, sp->batch / p->floor_s);
	printf("model FLOPs of the step (3 x model_flops_per_sample x B) %s: MFU at the predicted time %.1f%% of the "
	       "bf16 datasheet peak\n",
	       m, 100 * model / p->floor_s / PEAK_BF16);
}

// the model's matrix products recorded against its FLOP count
static int check_gemm(const Plan *p, const StepSpec *sp, const ModelConfig *mc)
{
	const double want = 3.0 * model_flops_per_sample(mc) * sp->batch, rel = p->model_gemm / want - 1;
	printf("check: the model's matrix-product FLOPs recorded %.6g vs 3 x model_flops_per_sample x B %.6g: %+.2f%% "
	       "(tolerance %.0f%%)\n",
	       p->model_gemm, want, 100 * rel, 100 * GEMM_TOL);
	return fabs(rel) <= GEMM_TOL ? 0 : 1;
}

// the dry run's ops are the computed run's: same calls, sizes, FLOPs and bytes in the same order
static int same_ops(const Plan *a, const Plan *b, const char *what)
{
	int bad = a->n != b->n;
	for (int i = 0; i < a->n && !bad; i++)
		bad = strcmp(a->rows[i].op, b->rows[i].op) || strcmp(a->rows[i].shape, b->rows[i].shape) ||
		      a->rows[i].flops != b->rows[i].flops || a->rows[i].bytes != b->rows[i].bytes;
	printf("check: %s: %d and %d op calls, %s\n", what, a->n, b->n, bad ? "they DIFFER" : "identical");
	return bad;
}

// Launches per step of the trainer's step on the CUDA backend: one eager step (*eager), and the
// third step with graphs (*graphed: the first is eager, the second captures); note: the capture's
// line. cfg's model as given.
static int step_launches(const ModelConfig *mc, int batch, int64_t *eager, int64_t *graphed, char *note, size_t len)
{
	for (int graph = 0; graph < 2; graph++) {
		KernCtx *c = NULL;
		Comm *comm = NULL;
		TrainStep *s = NULL;
		KCtxOptions ko = {.backend = KERN_BACKEND_CUDA, .attention = KERN_ATTN_OWN};
		TrainStepConfig cfg = {.model = *mc,
				       .act = KDT_BF16,
				       .batch = batch,
				       .dataset_size = 4096,
				       .bucket_bytes = 4u << 20,
				       .data_seed = 1,
				       .flip = 1,
				       .log_every = 1,
				       .cuda_graph = graph};
		optim_config_default(&cfg.opt);
		fastclip_config_default(&cfg.loss, FASTCLIP_V3);
		int rc = kern_ctx_create(&c, &ko);
		rc = rc ? rc : comm_local_open(&comm);
		rc = rc ? rc : train_step_create(&s, c, comm, &cfg);
		rc = rc ? rc : train_step_init(s, 1);
		for (int k = 0; k < (graph ? 3 : 1) && !rc; k++) {
			TrainStepTimes tt;
			float row[TS_NSCALARS];
			int rows;
			rc = tt_upload(s, 1, k, 0);
			const int64_t l0 = kern_ctx_launches(c);
			rc = rc ? rc : train_step_run(s, 0, &tt);
			*(graph ? graphed : eager) = kern_ctx_launches(c) - l0;
			rc = rc ? rc : train_step_read_metrics(s, row, &rows);
			if (!rc && graph)
				train_graph_note(s, note, len);
		}
		if (rc < 0)
			fprintf(stderr, "bench-plan: launches on %s: %s\n", c ? kern_ctx_backend_name(c) : "cuda",
				c ? kern_error_message(c) : strerror(-rc));
		train_step_destroy(s);
		if (comm)
			comm_close(comm);
		kern_ctx_destroy(c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

// --launches: the preset's structure, widths and frames shrunk (see the top of the file)
static int launches(const char *model, int frames, int batch)
{
	ModelConfig mc;
	model_config_preset(&mc, model);
	mc.frames = frames;
	mc.vis_width = mc.txt_width = 64, mc.vis_heads = mc.txt_heads = 1, mc.embed_dim = 64;
	// the sums over B·P rows (temporal embedding) and B·ctx rows (text tokens) above 256 where the
	// preset's are (the others, B·T, B·(T·P + 1), B, keep theirs: B and T are the preset's)
	const int need = 256 / batch + 1, full_p = (mc.image_size / mc.patch) * (mc.image_size / mc.patch);
	int side = 2;
	while (side * side < need && side * side < full_p)
		side++;
	mc.image_size = side * mc.patch;
	const int ctx = need > 8 ? need : 8;
	mc.ctx_len = ctx < mc.ctx_len ? ctx : mc.ctx_len;
	int64_t e = 0, g = 0;
	char note[400] = "";
	int rc = step_launches(&mc, batch, &e, &g, note, sizeof note);
	if (rc == -ENODEV || rc == -ENOTSUP) {
		printf("bench-plan --launches: no CUDA backend in this build\n");
		return 77;
	}
	if (rc < 0)
		return 1;
	printf("%s T=%d B=%d (%d + %d layers, MLP x%d; run at width 64, %d patches a frame, context %d): %s\n", model,
	       frames, batch, mc.vis_layers, mc.txt_layers, mc.mlp_ratio, side * side, mc.ctx_len, note);
	printf("launches per step: eager %lld, through CUDA graphs %lld: %.1fx fewer\n", (long long)e, (long long)g,
	       (double)e / (double)g);
	return 0;
}

static int smoke(void)
{
	const StepSpec cpu = {"tiny", 2, 8, KERN_BACKEND_CPU, 0}, dry = {"tiny", 2, 8, KERN_BACKEND_CPU, 1};
	Plan run = {.all = 1}, plan = {.all = 1};
	int64_t l_run = 0, l_dry = 0;
	ModelConfig mc;
	if (plan_step(&cpu, &run, &l_run, &mc) < 0 || plan_step(&dry, &plan, &l_dry, &mc) < 0)
		return 1;
	int fails = same_ops(&run, &plan, "tiny computed vs dry on the CPU backend");
	fails += check_gemm(&run, &cpu, &mc);
	fails += run.calls < 10;
	const StepSpec cu = {"tiny", 2, 8, KERN_BACKEND_CUDA, 0};
	Plan cplan = {.all = 1};
	int64_t l_cu = 0;
	int rc = plan_step(&cu, &cplan, &l_cu, &mc);
	if (rc == -ENODEV || rc == -ENOTSUP) {
		printf("check: launches inside ops: skipped (no CUDA backend in this build)\n");
	} else if (rc < 0) {
		fails++;
	} else {
		fails += same_ops(&run, &cplan, "tiny on the CPU backend vs the CUDA backend");
		printf("check: the CUDA backend queued %lld launches in the step, %lld inside recorded ops (%ld op calls)\n",
		       (long long)l_cu, (long long)cplan.launches, cplan.calls);
		fails += l_cu != cplan.launches || l_cu < cplan.calls / 2;
		// the graphed count on the tiny model cut to one block a tower, a short context and a small
		// vocabulary: what graphs change (the launches) is kept, the shim's arithmetic (make test-san
		// runs it under ASan) is not
		ModelConfig lm = mc;
		lm.vis_layers = lm.txt_layers = 1, lm.vocab = 1024, lm.ctx_len = 16;
		int64_t e = 0, g = 0;
		char note[400] = "";
		fails += step_launches(&lm, 4, &e, &g, note, sizeof note) < 0;
		printf("check: launches per step on the CUDA backend (tiny, 1 + 1 blocks), eager %lld, through CUDA graphs "
		       "%lld (%s)\n",
		       (long long)e, (long long)g, note);
		fails += !(g > 0 && 2 * g < e && strstr(note, "captured"));
	}
	print_plan(cplan.n ? &cplan : &run, &cpu, &mc);
	free(run.rows);
	free(plan.rows);
	free(cplan.rows);
	printf("%s\n", fails ? "bench-plan smoke: FAIL" : "bench-plan smoke: ok");
	return fails ? 1 : 0;
}

typedef struct {
	int smoke, all, help, frames, batch, launches;
	char model[32];
} PlanFlags;

static const FlagSpec flag_table[] = {
	{"smoke", FLAG_SWITCH, FLAG_AT(PlanFlags, smoke), 0, 0, "0",
	 .help = "the tiny model's checks (make test): computed vs dry ops, FLOPs vs the model, launches in ops"},
	{"model", FLAG_STRING, FLAG_AT(PlanFlags, model), 0, 0, "",
	 .help = "one plan of this preset (with --frames, --batch-size); default: vit-b16 at T=4 B=128 and T=16 B=32"},
	{"frames", FLAG_INT, FLAG_AT(PlanFlags, frames), 1, 64, "4", .help = "frames per clip of --model"},
	{"batch-size", FLAG_INT, FLAG_AT(PlanFlags, batch), 1, 65536, "128", .help = "clips per step of --model"},
	{"all", FLAG_SWITCH, FLAG_AT(PlanFlags, all), 0, 0, "0",
	 .help = "a row per op call, in the step's order (default: one per op and sizes)"},
	{"launches", FLAG_SWITCH, FLAG_AT(PlanFlags, launches), 0, 0, "0",
	 .help = "the step's launches per step on the CUDA backend (the shim without a GPU), eager and through CUDA "
		 "graphs, at the model's structure with its widths shrunk (see the file's head)"},
	{"help", FLAG_SWITCH, FLAG_AT(PlanFlags, help), 0, 0, "0", .help = "this text", .alias = 'h'},
};
enum { N_FLAGS = sizeof flag_table / sizeof flag_table[0] };

static int one_plan(const char *model, int frames, int batch, int all)
{
	const StepSpec sp = {model, frames, batch, KERN_BACKEND_CPU, 1};
	Plan p = {.all = all};
	int64_t l = 0;
	ModelConfig mc;
	if (plan_step(&sp, &p, &l, &mc) < 0)
		return 1;
	print_plan(&p, &sp, &mc);
	int rc = check_gemm(&p, &sp, &mc);
	free(p.rows);
	return rc;
}

int main(int argc, char **argv)
{
	PlanFlags fl = {0};
	char err[300], help[2048];
	if (flags_parse(flag_table, N_FLAGS, &fl, argc, argv, NULL, err, sizeof err) < 0 || fl.help) {
		flags_help(flag_table, N_FLAGS, help, sizeof help);
		fprintf(fl.help ? stdout : stderr, "%s%susage: %s [flags]\n%s", fl.help ? "" : err, fl.help ? "" : "\n",
			argv[0], help);
		return fl.help ? 0 : 2;
	}
	if (fl.smoke)
		return smoke();
	if (fl.model[0]) {
		ModelConfig probe;
		if (model_config_preset(&probe, fl.model) < 0) {
			fprintf(stderr, "bench-plan: --model %s is not a preset\n", fl.model);
			return 2;
		}
		return fl.launches ? launches(fl.model, fl.frames, fl.batch)
				   : one_plan(fl.model, fl.frames, fl.batch, fl.all);
	}
	if (fl.launches)
		return launches("vit-b16", 4, 128) | launches("vit-b16", 16, 32);
	return one_plan("vit-b16", 4, 128, fl.all) | one_plan("vit-b16", 16, 32, fl.all);
}
