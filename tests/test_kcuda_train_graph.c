// The trainer's step through CUDA graphs (trainer/trainer_graph.c, --cuda-graph) on the CUDA
// backend in the shim: four steps of FastCLIP v3 (τ learned, the gradient clipped, the rate in its
// warmup, so lr, the step counts and γ's epoch values all change per step) with graphs give the
// same bits as four eager steps (the first is eager in both, the second captures, the others
// replay): every logged scalar, the master weights, the optimizer's moments, τ's moments and the u
// table. So do two graphed steps, a checkpoint, a fresh process's state loaded from it and two more
// graphed steps (a resume: the first eager, the graphs captured again at the second). The planted
// bug, the update captured with lr and the step as host arguments, must differ at its first replay
// (three steps); a host wait planted inside the capture is refused by the runtime, and the steps go
// on eagerly with the same bits and a note saying why. The graphed steps launch
// a few dozen times where the eager step launches hundreds (printed, the figures of the note).
// bf16 only: the CUDA attention computes in bf16, so an f32 trainer step is refused on this backend
// (test_kcuda_graph holds graphs in f32 and bf16 on a smaller step of the same ops).
#include "kcu_twin.h"          // defines: KtEnv, kt_*
#include "test_trainer_util.h" // defines: tt_step_config, tt_upload, comm_local_open
#include "trainer_ckpt.h"      // defines: trainer_ckpt_save, trainer_ckpt_load
#include "trainer_graph.h"     // defines: train_graph_note

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { STEPS = 4, B = 4, RESUME_AT = 2, PLANT_STEPS = 3, N_TABLE = 16 };

typedef struct {
	float rows[STEPS][TS_NSCALARS];
	float *state; // master, m, v (3 n), τ's (m, v), the u table
	size_t bytes;
	int64_t launches[STEPS];
	char note[400];
} Run;

typedef struct {
	Comm *comm;
	KernCtx *ctx;
	TrainStep *ts;
} Rig;

static int rig_open(Rig *r, int graph, int plant, uint64_t seed, int init)
{
	TrainStepConfig cfg;
	tt_step_config(&cfg, FASTCLIP_V3, B, N_TABLE);
	cfg.model.vis_width = cfg.model.txt_width = 64; // one head of 64: the CUDA attention's head dim
	cfg.model.vis_heads = cfg.model.txt_heads = 1;
	cfg.model.embed_dim = 32;
	cfg.opt.clip_norm = 1.0;
	cfg.opt.warmup_steps = 8; // lr changes every step
	cfg.act = KDT_BF16;
	cfg.cuda_graph = graph;
	cfg.graph_plant = plant;
	KCtxOptions o = {.backend = KERN_BACKEND_CUDA, .threads = 1, .attention = KERN_ATTN_OWN};
	*r = (Rig){0};
	int rc = comm_local_open(&r->comm);
	rc = rc ? rc : kern_ctx_create(&r->ctx, &o);
	rc = rc ? rc : train_step_create(&r->ts, r->ctx, r->comm, &cfg);
	return rc ? rc : init ? train_step_init(r->ts, seed) : 0;
}

static void rig_close(Rig *r)
{
	if (r->ts)
		train_step_destroy(r->ts);
	if (r->ctx)
		kern_ctx_destroy(r->ctx);
	if (r->comm)
		comm_close(r->comm);
}

static int steps(Rig *r, uint64_t seed, int from, int to, Run *out)
{
	int rc = 0;
	for (int s = from; s < to && !rc; s++) {
		TrainStepTimes t;
		int rows;
		rc = tt_upload(r->ts, seed, s, 0);
		const int64_t l0 = kern_ctx_launches(r->ctx);
		rc = rc ? rc : train_step_run(r->ts, s / 2, &t); // the epoch (γ) changes too
		out->launches[s] = kern_ctx_launches(r->ctx) - l0;
		rc = rc ? rc : train_step_read_metrics(r->ts, out->rows[s], &rows);
		char note[400];
		if (!rc && train_graph_note(r->ts, note, sizeof note))
			snprintf(out->note, sizeof out->note, "%s", note);
	}
	return rc;
}

// everything a step changes, in one host buffer
static int state(Rig *r, Run *out)
{
	TrainStep *ts = r->ts;
	const KTensor *t[] = {&ts->model->params, &ts->opt->m, &ts->opt->v, &ts->temp_mv,
			      fastclip_exchange_table(ts->xchg)};
	size_t n = 0;
	for (size_t i = 0; i < 5; i++)
		n += kern_nbytes(t[i]);
	out->state = malloc(n);
	out->bytes = n;
	int rc = out->state ? 0 : -ENOMEM;
	for (size_t i = 0, o = 0; i < 5 && !rc; o += kern_nbytes(t[i]), i++)
		rc = kern_download(r->ctx, (char *)out->state + o, kern_nbytes(t[i]), t[i]);
	return rc;
}

static int run(uint64_t seed, int graph, int plant, Run *out)
{
	Rig r;
	int rc = rig_open(&r, graph, plant, seed, 1);
	rc = rc ? rc : steps(&r, seed, 0, plant ? PLANT_STEPS : STEPS, out);
	rc = rc ? rc : state(&r, out);
	if (rc)
		printf("     run (graph %d, plant %d): %d (%s)\n", graph, plant, rc,
		       r.ctx ? kern_error_message(r.ctx) : "no context");
	rig_close(&r);
	return rc;
}

// RESUME_AT graphed steps, a checkpoint, a new step's state from it, the rest graphed
static int resumed(uint64_t seed, const char *dir, Run *out)
{
	Rig r;
	char err[512] = "";
	uint64_t pos = 0;
	int64_t at = 0;
	int rc = rig_open(&r, 1, 0, seed, 1);
	rc = rc ? rc : steps(&r, seed, 0, RESUME_AT, out);
	rc = rc ? rc : trainer_ckpt_save(dir, r.ts, RESUME_AT, &pos, 1, 77, 1, err, sizeof err);
	rig_close(&r);
	rc = rc ? rc : rig_open(&r, 1, 0, seed, 0);
	rc = rc ? rc : trainer_ckpt_load(dir, r.ts, &at, &pos, 1, 77, err, sizeof err);
	rc = rc ? rc : at == RESUME_AT ? 0 : -EINVAL;
	rc = rc ? rc : steps(&r, seed, RESUME_AT, STEPS, out);
	rc = rc ? rc : state(&r, out);
	if (rc)
		printf("     resumed run: %d (%s %s)\n", rc, err, r.ctx ? kern_error_message(r.ctx) : "");
	rig_close(&r);
	return rc;
}

int main(void)
{
	KtEnv e;
	kt_setup(&e, "test_kcuda_train_graph");
	const uint64_t seed = kt_rand(&e) % 1000000;
	char dir[] = "/tmp/test_kcuda_train_graph.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	Run eager = {0}, graph = {0}, res = {0}, plant = {0}, wait = {0};
	int r0 = run(seed, 0, 0, &eager), r1 = run(seed, 1, 0, &graph), r2 = resumed(seed, dir, &res);
	int r3 = run(seed, 1, TS_PLANT_BAKED, &plant), r4 = run(seed, 1, TS_PLANT_WAIT, &wait);
	kt_check(&e, !r0 && !r1 && !r2 && !r3 && !r4, "the runs: eager %d, graphs %d, resumed %d, planted %d %d", r0,
		 r1, r2, r3, r4);
	if (!r0 && !r1 && !r2 && !r3 && !r4) {
		printf("-- %d steps of FastCLIP v3, B=%d, bf16: %s\n", STEPS, B, graph.note);
		kt_check(&e, strstr(graph.note, "captured") != NULL, "the graphs were captured: \"%s\"", graph.note);
		kt_check(
			&e,
			!memcmp(eager.rows, graph.rows, sizeof eager.rows) && eager.bytes == graph.bytes &&
				!memcmp(eager.state, graph.state, eager.bytes),
			"graphs = eager, bit for bit: every logged scalar, the weights, the moments, τ's, the u table");
		kt_check(&e,
			 !memcmp(eager.rows, res.rows, sizeof eager.rows) && eager.bytes == res.bytes &&
				 !memcmp(eager.state, res.state, eager.bytes),
			 "a resume at step %d (graphs captured again) = eager, bit for bit", RESUME_AT);
		kt_check(&e,
			 memcmp(eager.rows, plant.rows, 2 * sizeof eager.rows[0]) == 0 &&
				 memcmp(eager.rows[2], plant.rows[2], sizeof eager.rows[2]) != 0,
			 "the planted bug (lr and step captured as host arguments): the capture step as eager, its "
			 "first replay differs");
		kt_check(
			&e,
			strstr(wait.note, "capture failed") && strstr(wait.note, "StreamCapture") &&
				!memcmp(eager.rows, wait.rows, PLANT_STEPS * sizeof eager.rows[0]),
			"a host wait planted in the capture: refused, the steps run eagerly with the same bits (\"%s\")",
			wait.note);
		printf("   launches per step (kern_ctx_launches), eager:");
		for (int s = 0; s < STEPS; s++)
			printf(" %lld", (long long)eager.launches[s]);
		printf("; graphs:");
		for (int s = 0; s < STEPS; s++)
			printf(" %lld", (long long)graph.launches[s]);
		printf(" (step 1 eager, step 2 captures)\n");
		kt_check(&e, graph.launches[0] == eager.launches[0] && 3 * graph.launches[2] < eager.launches[2],
			 "the replayed steps launch a third or less of the eager step's: %lld of %lld",
			 (long long)graph.launches[2], (long long)eager.launches[2]);
	}
	char cmd[sizeof dir + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(eager.state), free(graph.state), free(res.state), free(plant.state), free(wait.state);
	return kt_finish(&e);
}
