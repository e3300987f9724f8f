// Checks bit-identical resume on the CPU: N training steps straight give byte-equal weights,
// optimizer moments, extra tables and trainer state to N/2 steps + checkpoint + a fresh
// process-like restart (new model, optimizer, other init) + load + N/2 steps; AdamW and LAMB.
#include "model.h" // defines: ckpt_save, ckpt_load_latest, ClipModel, model_synth_batch

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { B = 4, NSTEPS = 6, NU = 16 };

typedef struct {
	ClipModel *m;
	Optimizer *o;
	KTensor video, text;
	float u[NU]; // stands in for a FastCLIP u table
	CkptState st;
} Run;

static int start(Run *r, KernCtx *c, const ModelConfig *cfg, OptKind kind, uint64_t seed)
{
	memset(r, 0, sizeof *r);
	OptConfig oc;
	optim_config_default(&oc);
	oc.kind = kind, oc.lr = 1e-3, oc.warmup_steps = 2, oc.total_steps = NSTEPS, oc.clip_norm = 1.0;
	const int64_t sv[] = {B, cfg->frames, cfg->image_size, cfg->image_size, 3}, st[] = {B, cfg->ctx_len};
	if (clip_model_create(&r->m, c, cfg, B, KDT_F32) || model_init_params(c, cfg, &r->m->params, seed) ||
	    optim_create(&r->o, c, &oc, r->m->specs, r->m->n_specs, r->m->n_params) ||
	    kern_alloc(c, &r->video, KDT_F32, 5, sv) || kern_alloc(c, &r->text, KDT_I32, 2, st))
		return 1;
	r->st.rng[0] = seed;
	return 0;
}

static int step(Run *r, KernCtx *c, const ModelConfig *cfg)
{
	double loss;
	if (model_synth_batch(c, cfg, 42, r->st.stream_pos, 64, &r->video, &r->text) ||
	    clip_model_infonce_step(r->m, &r->video, &r->text, &loss) ||
	    optim_step(r->o, &r->m->params, NULL, &r->m->grads))
		return 1;
	for (int i = 0; i < NU; i++)
		r->u[i] = 0.9f * r->u[i] + (float)(loss * (i + 1));
	r->st.step++;
	r->st.stream_pos += B;
	r->st.rng[1] = r->st.rng[1] * 6364136223846793005ull + 1442695040888963407ull;
	return 0;
}

static CkptTarget target(Run *r, KernCtx *c, const ModelConfig *cfg, StTensor *ex)
{
	*ex = (StTensor){.name = "u1", .dtype = ST_F32, .ndim = 1, .shape = {NU}, .data = r->u, .nbytes = sizeof r->u};
	return (CkptTarget){.ctx = c,
			    .cfg = cfg,
			    .specs = r->m->specs,
			    .n_specs = r->m->n_specs,
			    .params = &r->m->params,
			    .opt = r->o,
			    .extra = ex,
			    .n_extra = 1};
}

static void stop(Run *r, KernCtx *c)
{
	clip_model_destroy(r->m);
	optim_destroy(r->o);
	kern_free(c, &r->video);
	kern_free(c, &r->text);
}

static int same(KernCtx *c, const char *what, const KTensor *a, const KTensor *b)
{
	size_t n = kern_nbytes(a);
	char *x = malloc(n), *y = malloc(n);
	kern_download(c, x, n, a);
	kern_download(c, y, n, b);
	int eq = !memcmp(x, y, n);
	free(x);
	free(y);
	printf("%-4s %s byte-equal\n", eq ? "ok" : "FAIL", what);
	return !eq;
}

static int run(KernCtx *c, const ModelConfig *cfg, OptKind kind)
{
	char dir[] = "/tmp/test_ckpt_resume_XXXXXX", err[512];
	if (!mkdtemp(dir))
		return 1;
	Run a, b;
	StTensor ex;
	if (start(&a, c, cfg, kind, 1))
		return 1;
	for (int i = 0; i < NSTEPS; i++)
		if (step(&a, c, cfg))
			return 1;
	// the same run cut in two
	if (start(&b, c, cfg, kind, 1))
		return 1;
	for (int i = 0; i < NSTEPS / 2; i++)
		if (step(&b, c, cfg))
			return 1;
	CkptTarget tb = target(&b, c, cfg, &ex);
	if (ckpt_save(dir, &tb, &b.st, 2, err, sizeof err)) {
		printf("FAIL save: %s\n", err);
		return 1;
	}
	stop(&b, c);
	if (start(&b, c, cfg, kind, 999)) // different init: the load must overwrite everything
		return 1;
	tb = target(&b, c, cfg, &ex);
	if (ckpt_load_latest(dir, &tb, &b.st, err, sizeof err)) {
		printf("FAIL load: %s\n", err);
		return 1;
	}
	printf("     %s, step %lld\n", err, (long long)b.st.step);
	for (int i = NSTEPS / 2; i < NSTEPS; i++)
		if (step(&b, c, cfg))
			return 1;
	printf("%s:\n", kind == OPT_LAMB ? "lamb" : "adamw");
	int bad = same(c, "weights", &a.m->params, &b.m->params) | same(c, "adam m", &a.o->m, &b.o->m) |
		  same(c, "adam v", &a.o->v, &b.o->v);
	if (memcmp(&a.st, &b.st, sizeof a.st) || memcmp(a.u, b.u, sizeof a.u) || a.o->step != b.o->step) {
		printf("FAIL trainer state / extra table / optimizer step differ\n");
		bad = 1;
	}
	stop(&a, c);
	stop(&b, c);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return bad;
}

int main(void)
{
	KernCtx *c;
	ModelConfig cfg;
	if (kern_ctx_create_cpu(&c, 2) || model_config_preset(&cfg, "tiny"))
		return 1;
	cfg.vocab = 1000;
	int bad = run(c, &cfg, OPT_ADAMW) | run(c, &cfg, OPT_LAMB);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL resume is not bit-identical" : "PASS N steps == N/2 + resume + N/2, byte-equal");
	return bad;
}
