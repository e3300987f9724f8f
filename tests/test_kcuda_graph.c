// Graphs on the op contract (kern_graph_*) on the CUDA backend, in the shim (make test) and on a
// device (test_kcuda_graph_gpu): a small training step (linear, layernorm, their backward, gradient
// norm, fused optimizer, temperature step, a metrics row) run N times eagerly and N times as a
// graph captured at the second step and replayed, its input uploaded and its per-step values
// (learning rate, bias corrections: KOptHyper.live, KTempStep.live) written to device memory
// before each launch, in f32 and bf16: the same bits. The planted bug (the step captured with the
// per-step values as host arguments) differs. A graph launch counts one launch and holds the
// step's; a host wait, an allocation or a synchronous copy inside a capture spoils it with
// -EPERM, naming the call, and leaves the context usable; a workspace moved since a capture makes
// its launch -ESTALE; the CPU backend has no graphs (-ENOTSUP).
#include "kcu_twin.h" // defines: KtEnv, SH, NSH, kt_*

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 24, IC = 32, OC = 40, STEPS = 5, CAPTURE_AT = 2 };
enum { NP = OC * IC + 3 * OC }; // W, b, ln w, ln b

typedef enum { EAGER, GRAPH, PLANTED } Mode;

typedef struct {
	KernCtx *c;
	KTensor P, Wt, G, m, v, nc, x, y, z, mean, rstd, dy, ls, mv, row, olive, tlive;
	KTensor W, b, lnw, lnb, dW, db, dlnw, dlnb, dls; // views
	KOptPlan *plan;
	float *xin;   // pinned: each step's input (STEPS, N, IC)
	double *lin;  // pinned: each step's live values (STEPS, KOPT_LIVE_N + KTEMP_LIVE_N)
	float *rows;  // host: each step's metrics row (STEPS, 4)
	float *final; // host: P, m, v, log s, (m, v) of τ after the last step
	int64_t step_launches, graph_nodes, graph_launch_count;
} Net;

static void die(KtEnv *e, Net *n, const char *what, int rc)
{
	fprintf(stderr, "%s: %d (%s)\n", what, rc, kern_error_message(n->c));
	kt_check(e, 0, "%s failed", what);
	exit(1);
}
#define TRY(x)                                                                                                         \
	do {                                                                                                           \
		int rc_ = (x);                                                                                         \
		if (rc_)                                                                                               \
			die(e, n, #x, rc_);                                                                            \
	} while (0)

static void view(KtEnv *e, Net *n, KTensor *v, KTensor *flat, int64_t off, int ndim, const int64_t *shape)
{
	TRY(kern_view(v, flat, off, ndim, shape));
}

static void net_open(KtEnv *e, Net *n, KDtype dt, uint64_t seed)
{
	memset(n, 0, sizeof *n);
	n->c = e->dev;
	KernCtx *c = n->c;
	TRY(kern_alloc(c, &n->P, KDT_F32, NSH(NP)));
	TRY(kern_alloc(c, &n->Wt, dt, NSH(NP)));
	TRY(kern_alloc(c, &n->G, KDT_F32, NSH(NP)));
	TRY(kern_alloc(c, &n->m, KDT_F32, NSH(NP)));
	TRY(kern_alloc(c, &n->v, KDT_F32, NSH(NP)));
	TRY(kern_alloc(c, &n->nc, KDT_F32, NSH(2)));
	TRY(kern_alloc(c, &n->x, KDT_F32, NSH(N, IC)));
	TRY(kern_alloc(c, &n->y, dt, NSH(N, OC)));
	TRY(kern_alloc(c, &n->z, dt, NSH(N, OC)));
	TRY(kern_alloc(c, &n->dy, dt, NSH(N, OC)));
	TRY(kern_alloc(c, &n->mean, KDT_F32, NSH(N)));
	TRY(kern_alloc(c, &n->rstd, KDT_F32, NSH(N)));
	TRY(kern_alloc(c, &n->ls, KDT_F32, NSH(1)));
	TRY(kern_alloc(c, &n->mv, KDT_F32, NSH(2)));
	TRY(kern_alloc(c, &n->row, KDT_F32, NSH(4)));
	TRY(kern_alloc(c, &n->olive, KDT_F64, NSH(KOPT_LIVE_N)));
	TRY(kern_alloc(c, &n->tlive, KDT_F64, NSH(KTEMP_LIVE_N)));
	view(e, n, &n->W, &n->Wt, 0, NSH(OC, IC));
	view(e, n, &n->b, &n->Wt, OC * IC, NSH(OC));
	view(e, n, &n->lnw, &n->Wt, OC * IC + OC, NSH(OC));
	view(e, n, &n->lnb, &n->Wt, OC * IC + 2 * OC, NSH(OC));
	view(e, n, &n->dW, &n->G, 0, NSH(OC, IC));
	view(e, n, &n->db, &n->G, OC * IC, NSH(OC));
	view(e, n, &n->dlnw, &n->G, OC * IC + OC, NSH(OC));
	view(e, n, &n->dlnb, &n->G, OC * IC + 2 * OC, NSH(OC));
	view(e, n, &n->dls, &n->G, OC * IC + 2 * OC, NSH(1));
	const KOptSegment segs[] = {{0, OC * IC, KSEG_DECAY | KSEG_LAMB, 0, 0, 0},
				    {OC * IC, OC, 0, 0, 0, 0},
				    {OC * IC + OC, 2 * OC, KSEG_LR_SCALE, 0, 0, 0.5}};
	TRY(kern_opt_plan_create(c, &n->plan, segs, 3, NP));
	TRY(kern_host_alloc(c, (void **)&n->xin, sizeof(float) * STEPS * N * IC));
	TRY(kern_host_alloc(c, (void **)&n->lin, sizeof(double) * STEPS * (KOPT_LIVE_N + KTEMP_LIVE_N)));
	n->rows = calloc(STEPS * 4, sizeof(float));
	n->final = calloc(3 * NP + 3, sizeof(float));
	// the same parameters and inputs in every mode
	uint64_t r = seed;
	float *p = malloc(sizeof(float) * NP);
	for (int i = 0; i < NP; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = (float)((double)(r >> 11) / 9007199254740992.0 - 0.5) * (i >= OC * IC + OC ? 0.2f : 0.4f);
		if (i >= OC * IC + OC && i < OC * IC + 2 * OC)
			p[i] += 1.0f; // ln weights near 1
	}
	for (int i = 0; i < STEPS * N * IC; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		n->xin[i] = (float)((double)(r >> 11) / 9007199254740992.0 * 2 - 1);
	}
	TRY(kern_upload(c, &n->P, p, sizeof(float) * NP));
	TRY(dt == KDT_F32 ? kern_copy(c, &n->Wt, &n->P) : kern_convert(c, &n->Wt, &n->P));
	const float ls0 = 3.0f;
	TRY(kern_upload(c, &n->ls, &ls0, sizeof ls0));
	free(p);
}

static void net_close(Net *n)
{
	kern_opt_plan_destroy(n->plan);
	KTensor *t[] = {&n->P,  &n->Wt,   &n->G,    &n->m,  &n->v,  &n->nc,  &n->x,     &n->y,    &n->z,
			&n->dy, &n->mean, &n->rstd, &n->ls, &n->mv, &n->row, &n->olive, &n->tlive};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		kern_free(n->c, t[i]);
	kern_host_free(n->c, n->xin);
	kern_host_free(n->c, n->lin);
	free(n->rows);
	free(n->final);
}

static KOptHyper opt_hyper(int step, const KTensor *live)
{
	return (KOptHyper){.lr = 1e-2 * (1.0 + step) / (2.0 + step), // a warmup: changes every step
			   .beta1 = 0.9,
			   .beta2 = 0.98,
			   .eps = 1e-6,
			   .weight_decay = 0.1,
			   .step = step,
			   .live = live};
}

static KTempStep temp_hyper(int step, const KTensor *live)
{
	return (KTempStep){.lr = 0.03 * step,
			   .lr_low = 0.01 * step,
			   .tau_low = 0.05,
			   .beta1 = 0.9,
			   .beta2 = 0.999,
			   .eps = 1e-8,
			   .step = step,
			   .lo = 0.0,
			   .hi = 4.6,
			   .live = live};
}

// the step's device work; live: the per-step values come from the device tensors
static int step_ops(Net *n, int step, int live)
{
	KernCtx *c = n->c;
	int rc = kern_linear(c, &(KLinear){.out = &n->y, .in = &n->x, .w = &n->W, .trans_w = 1, .bias = &n->b});
	rc = rc ? rc : kern_layernorm_fwd(c, &n->z, &n->mean, &n->rstd, &n->y, &n->lnw, &n->lnb);
	// the loss ½‖z‖²: dz = z
	rc = rc ? rc
		: kern_layernorm_bwd(c, KG_SET(&n->dy), KG_SET(&n->dlnw), KG_SET(&n->dlnb), &n->z, &n->y, &n->lnw,
				     &n->mean, &n->rstd);
	rc = rc ? rc
		: kern_linear_bwd(c, &(KLinearBwd){.dw = KG_SET(&n->dW),
						   .dbias = KG_SET(&n->db),
						   .dout = &n->dy,
						   .in = &n->x,
						   .w = &n->W,
						   .trans_w = 1});
	rc = rc ? rc : kern_grad_norm(c, n->plan, &n->nc, &n->G, 5.0);
	const KOptHyper h = opt_hyper(step, live ? &n->olive : NULL);
	rc = rc ? rc : kern_optimizer(c, n->plan, &h, &n->P, &n->Wt, &n->G, &n->m, &n->v, &n->nc);
	const KTempStep th = temp_hyper(step, live ? &n->tlive : NULL);
	rc = rc ? rc : kern_temp_step(c, &n->ls, &n->mv, &n->dls, &n->nc, NULL, &th);
	KTensor pair, one;
	rc = rc ? rc : kern_view(&pair, &n->row, 0, 1, SH(2));
	rc = rc ? rc : kern_copy(c, &pair, &n->nc);
	rc = rc ? rc : kern_view(&one, &n->row, 2, 1, SH(1));
	rc = rc ? rc : kern_copy(c, &one, &n->ls);
	KTensor mean0;
	rc = rc ? rc : kern_view(&one, &n->row, 3, 1, SH(1));
	rc = rc ? rc : kern_view(&mean0, &n->mean, 0, 1, SH(1));
	return rc ? rc : kern_copy(c, &one, &mean0);
}

// N steps in one mode: the input uploaded before each, the live values written before each
static void run(KtEnv *e, Net *n, Mode mode)
{
	KernCtx *c = n->c;
	KGraph *g = NULL;
	const int W = KOPT_LIVE_N + KTEMP_LIVE_N;
	for (int s = 1; s <= STEPS; s++) {
		TRY(kern_upload_async(c, &n->x, n->xin + (size_t)(s - 1) * N * IC, sizeof(float) * N * IC));
		const int64_t l0 = kern_ctx_launches(c);
		if (mode == EAGER || s < CAPTURE_AT) { // the first step of a graphed run is eager (a warm-up)
			TRY(step_ops(n, s, 0));
		} else {
			double *lv = n->lin + (size_t)(s - 1) * W; // a slot per step: earlier copies may be queued
			const KOptHyper h = opt_hyper(s, NULL);
			const KTempStep th = temp_hyper(s, NULL);
			kern_opt_live(&h, lv);
			kern_temp_live(&th, lv + KOPT_LIVE_N);
			TRY(kern_upload_async(c, &n->olive, lv, sizeof(double) * KOPT_LIVE_N));
			TRY(kern_upload_async(c, &n->tlive, lv + KOPT_LIVE_N, sizeof(double) * KTEMP_LIVE_N));
			if (s == CAPTURE_AT) {
				char why[256] = "";
				TRY(kern_graph_begin(c, why, sizeof why));
				TRY(step_ops(n, s, mode == GRAPH)); // the planted bug: host values in the arguments
				int rc = kern_graph_end(c, &g, why, sizeof why);
				if (rc)
					fprintf(stderr, "capture: %s\n", why);
				TRY(rc);
				n->graph_nodes = kern_graph_nodes(g);
			}
			const int64_t g0 = kern_ctx_launches(c);
			TRY(kern_graph_launch(c, g));
			n->graph_launch_count = kern_ctx_launches(c) - g0;
		}
		if (mode == EAGER && s == 1)
			n->step_launches = kern_ctx_launches(c) - l0;
		TRY(kern_download(c, n->rows + 4 * (s - 1), sizeof(float) * 4, &n->row));
	}
	kern_graph_destroy(g);
	TRY(kern_download(c, n->final, sizeof(float) * NP, &n->P));
	TRY(kern_download(c, n->final + NP, sizeof(float) * NP, &n->m));
	TRY(kern_download(c, n->final + 2 * NP, sizeof(float) * NP, &n->v));
	TRY(kern_download(c, n->final + 3 * NP, sizeof(float), &n->ls));
	TRY(kern_download(c, n->final + 3 * NP + 1, sizeof(float) * 2, &n->mv));
}

static void modes(KtEnv *e, KDtype dt, uint64_t seed)
{
	printf("-- %d steps, %s activations: eager, graph (captured at step %d), planted (host values captured)\n",
	       STEPS, kern_dtype_name(dt), CAPTURE_AT);
	Net a, b, p;
	net_open(e, &a, dt, seed), net_open(e, &b, dt, seed), net_open(e, &p, dt, seed);
	run(e, &a, EAGER);
	run(e, &b, GRAPH);
	run(e, &p, PLANTED);
	const size_t fb = sizeof(float) * (3 * NP + 3), rb = sizeof(float) * STEPS * 4;
	kt_check(e, !memcmp(a.final, b.final, fb) && !memcmp(a.rows, b.rows, rb),
		 "graph = eager, bit for bit: parameters, moments, log s and its moments, every step's row");
	kt_check(e, memcmp(a.final, p.final, fb) != 0,
		 "the planted bug (lr and step captured as host values) changes the result");
	kt_check(e, a.rows[0] > 0 && isfinite(a.final[3 * NP]), "the step trains: norm %g, log s %g", (double)a.rows[0],
		 (double)a.final[3 * NP]);
	kt_check(e, b.graph_launch_count == 1 && b.graph_nodes == a.step_launches && a.step_launches > 8,
		 "a graph launch counts 1 and holds the step's %lld launches (captured %lld, counted %lld)",
		 (long long)a.step_launches, (long long)b.graph_nodes, (long long)b.graph_launch_count);
	net_close(&a), net_close(&b), net_close(&p);
}

// a capture spoiled by one refused call: the error names it, the context goes on
static void spoiled(KtEnv *e, Net *n, const char *what, int (*call)(Net *n))
{
	KernCtx *c = n->c;
	char why[256] = "";
	TRY(kern_graph_begin(c, why, sizeof why));
	TRY(kern_copy(c, &n->y, &n->z));
	int rc = call(n);
	kt_check(e, rc < 0, "%s inside a capture fails: %d", what, rc);
	KGraph *g = NULL;
	rc = kern_graph_end(c, &g, why, sizeof why);
	kt_check(e, rc == -EPERM && !g && strstr(why, "Capture") != NULL, "%s: the capture fails with -EPERM: %d, %s",
		 what, rc, why);
	kt_check(e, !kern_error_message(c)[0] && kern_stream_sync(c) == 0, "%s: the context goes on (latch clear)",
		 what);
}

static int c_stream_sync(Net *n)
{
	return kern_stream_sync(n->c);
}
static int c_sync_upload(Net *n)
{
	float one = 1;
	return kern_upload(n->c, &n->ls, &one, sizeof one);
}
static int c_alloc(Net *n)
{
	KTensor t;
	int rc = kern_alloc(n->c, &t, KDT_F32, 1, SH(64));
	if (!rc)
		kern_free(n->c, &t);
	return rc ? rc : 0;
}

static void refusals(KtEnv *e)
{
	printf("-- refused inside a capture; a stale graph; the CPU backend\n");
	Net nn, *n = &nn;
	net_open(e, n, KDT_F32, 7);
	spoiled(e, n, "kern_stream_sync", c_stream_sync);
	spoiled(e, n, "kern_upload (synchronous)", c_sync_upload);
	spoiled(e, n, "kern_alloc", c_alloc);
	char why[256] = "";
	KGraph *g = NULL;
	TRY(kern_graph_begin(n->c, why, sizeof why));
	kt_check(e, kern_graph_begin(n->c, why, sizeof why) == -EBUSY, "a second begin: -EBUSY");
	kt_check(e, kern_ctx_reserve_workspace(n->c, kern_ctx_workspace_bytes(n->c) + 4096) == -EPERM,
		 "the workspace cannot move inside a capture: -EPERM");
	TRY(kern_layernorm_fwd(n->c, &n->z, &n->mean, &n->rstd, &n->y, &n->lnw, &n->lnb));
	TRY(kern_graph_end(n->c, &g, why, sizeof why));
	kt_check(e, kern_graph_nodes(g) == 1, "one kernel captured: %lld", (long long)kern_graph_nodes(g));
	TRY(kern_graph_launch(n->c, g));
	TRY(kern_ctx_reserve_workspace(n->c, kern_ctx_workspace_bytes(n->c) + 4096));
	kt_check(e, kern_graph_launch(n->c, g) == -ESTALE, "after the workspace moved the graph is stale: -ESTALE");
	kern_graph_destroy(g);
	kt_check(e, kern_graph_supported(e->dev) == 1 && kern_graph_supported(e->cpu) == 0,
		 "graphs on CUDA, none on the CPU");
	kt_check(e, kern_graph_begin(e->cpu, why, sizeof why) == -ENOTSUP && why[0], "CPU: -ENOTSUP (%s)", why);
	net_close(n);
}

int main(void)
{
	KtEnv env, *e = &env;
	kt_setup(e, "test_kcuda_graph");
	const uint64_t seed = kt_rand(e);
	modes(e, KDT_F32, seed);
	modes(e, KDT_BF16, seed);
	refusals(e);
	kt_sync(e, "graphs");
	return kt_finish(e);
}
