// A checkpoint with a NaN or an infinity in any tensor it holds is refused at resume, naming the
// file and the tensor: the weights and moments, the τ optimizer state (extra/trainer.temp_mv, which
// used to be accepted, and the next step died with "the gradient is not finite"), a u table, a
// bf16 tensor and one the loader does not even read; an extra whose shape differs is refused too.
// The same checkpoint without the planted value loads.
#include "model.h" // defines: ckpt_save, ckpt_load_latest, ClipModel, Optimizer

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static KernCtx *c;
static ModelConfig cfg;
static ClipModel *m;
static Optimizer *o;
static char dir[] = "/tmp/test_ckpt_nonfinite_XXXXXX";
static float temp_mv[2] = {0.01f, 0.002f}, table[64];
static uint16_t half[8]; // bf16 values
static int64_t temp_steps = 3;
static StTensor ex[4];
static int bad;

static void set_extras(void)
{
	ex[0] = (StTensor){.name = "trainer.temp_mv",
			   .dtype = ST_F32,
			   .ndim = 1,
			   .shape = {2},
			   .data = temp_mv,
			   .nbytes = sizeof temp_mv};
	ex[1] = (StTensor){.name = "trainer.temp_steps",
			   .dtype = ST_I64,
			   .ndim = 1,
			   .shape = {1},
			   .data = &temp_steps,
			   .nbytes = 8};
	ex[2] = (StTensor){.name = "fastclip.table",
			   .dtype = ST_F32,
			   .ndim = 1,
			   .shape = {64},
			   .data = table,
			   .nbytes = sizeof table};
	ex[3] = (StTensor){
		.name = "trainer.half", .dtype = ST_BF16, .ndim = 1, .shape = {8}, .data = half, .nbytes = sizeof half};
}

static CkptTarget target(int n_extra)
{
	return (CkptTarget){.ctx = c,
			    .cfg = &cfg,
			    .specs = m->specs,
			    .n_specs = m->n_specs,
			    .params = &m->params,
			    .opt = o,
			    .extra = ex,
			    .n_extra = n_extra};
}

static int save(int64_t step)
{
	CkptState st = {.step = step};
	CkptTarget t = target(4);
	char err[512];
	if (ckpt_save(dir, &t, &st, 0, err, sizeof err)) {
		printf("FAIL save: %s\n", err);
		exit(1);
	}
	return 0;
}

// loads with n_extra of the extras (fewer: the file holds tensors the loader does not read)
static void expect_refused(const char *what, const char *tensor, int n_extra)
{
	CkptState st;
	CkptTarget t = target(n_extra);
	char err[1024] = "";
	int rc = ckpt_load_latest(dir, &t, &st, err, sizeof err);
	int ok = rc == -EINVAL && strstr(err, dir) && strstr(err, tensor) &&
		 (strstr(err, "non-finite") || strstr(err, "shape"));
	printf("%-4s %s: rc %d: %s\n", ok ? "ok" : "FAIL", what, rc, err);
	bad |= !ok;
}

static void expect_loads(const char *what)
{
	CkptState st;
	CkptTarget t = target(4);
	char err[1024] = "";
	int rc = ckpt_load_latest(dir, &t, &st, err, sizeof err);
	printf("%-4s %s: rc %d: %s\n", rc == 0 ? "ok" : "FAIL", what, rc, err);
	bad |= rc != 0;
}

// element i of a device tensor set to v (through the host)
static void poke(KTensor *x, int64_t i, float v)
{
	size_t nb = kern_nbytes(x);
	float *h = malloc(nb);
	kern_download(c, h, nb, x);
	h[i] = v;
	kern_upload(c, x, h, nb);
	free(h);
}

static float peek(KTensor *x, int64_t i)
{
	size_t nb = kern_nbytes(x);
	float *h = malloc(nb), v;
	kern_download(c, h, nb, x);
	v = h[i];
	free(h);
	return v;
}

int main(void)
{
	if (kern_ctx_create_cpu(&c, 2) || model_config_preset(&cfg, "tiny"))
		return 1;
	cfg.vocab = 300;
	OptConfig oc;
	optim_config_default(&oc);
	if (clip_model_create(&m, c, &cfg, 1, KDT_F32) || model_init_params(c, &cfg, &m->params, 5) ||
	    optim_create(&o, c, &oc, m->specs, m->n_specs, m->n_params) || !mkdtemp(dir))
		return 1;
	set_extras();
	for (int i = 0; i < 64; i++)
		table[i] = 1.0f + (float)i;
	for (int i = 0; i < 8; i++)
		half[i] = 0x3f80; // 1.0
	save(1);
	expect_loads("clean checkpoint");

	int64_t mid = m->n_params / 2;
	float keep = peek(&m->params, mid);
	poke(&m->params, mid, NAN);
	save(2);
	poke(&m->params, mid, keep);
	expect_refused("NaN in a weight", "model.params", 4);
	poke(&o->m, 7, INFINITY);
	save(3);
	poke(&o->m, 7, 0.0f);
	expect_refused("inf in optim.m", "optim.m", 4);
	poke(&o->v, m->n_params - 1, NAN);
	save(4);
	poke(&o->v, m->n_params - 1, 0.0f);
	expect_refused("NaN in optim.v", "optim.v", 4);

	temp_mv[1] = NAN;
	save(5);
	temp_mv[1] = 0.002f;
	expect_refused("NaN in extra/trainer.temp_mv", "extra/trainer.temp_mv", 4);
	table[40] = -INFINITY;
	save(6);
	table[40] = 41.0f;
	expect_refused("-inf in extra/fastclip.table", "extra/fastclip.table", 4);
	half[3] = 0x7fc0; // bf16 NaN
	save(7);
	expect_refused("NaN in a bf16 tensor", "extra/trainer.half", 4);
	expect_refused("NaN in a tensor the loader does not read", "extra/trainer.half", 3);
	half[3] = 0x3f80;

	save(8);
	expect_loads("clean again");
	ex[2].ndim = 2, ex[2].shape[0] = 8, ex[2].shape[1] = 8; // same bytes, another shape
	expect_refused("extra of another shape", "extra/fastclip.table", 4);

	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		bad = 1;
	optim_destroy(o);
	clip_model_destroy(m);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL a checkpoint with a non-finite tensor was accepted"
			   : "ok: a non-finite value in any checkpoint tensor is refused at load, naming it");
	return bad;
}
