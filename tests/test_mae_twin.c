// The masked autoencoder (f32 and bf16 on the CPU backend) against a small VideoMAE written in
// PyTorch (tests/ref/mae_twin.py, float64: Conv3d tubelet embedding, VideoMAE's sinusoid table and
// norm_pix_loss) on the same weights, clips and masks: the loss and every parameter gradient, each
// held to a tolerance looked up by its name. Skips (77) without a Python that has torch, fails
// instead under AVCLIP_REQUIRE_INTEROP=1 (tests/python_env.sh).
#include "model.h" // defines: MaeModel, mae_*, st_write, st_open, st_find

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { B = 2 };

// relative L2 (‖c − ref‖ / ‖ref‖) by name and precision: the first matching pattern wins. f32: a
// chain of ~30 ops in f32 against float64; bf16: activations and weight copies stored in bf16
// (one tensor to 4x all gradients', as test_kcuda_model holds them)
static const struct {
	const char *pattern;
	double f32, bf16;
} tols[] = {
	{"loss", 1e-5, 2e-3},
	{"all gradients", 1e-4, 1.5e-2},
	{"grad/", 1e-4, 6e-2},
};

static double tol_for(const char *name, int bf16)
{
	for (size_t i = 0; i < sizeof tols / sizeof tols[0]; i++)
		if (strstr(name, tols[i].pattern))
			return bf16 ? tols[i].bf16 : tols[i].f32;
	return 0; // a name without a tolerance fails: add it to the table
}

// the C model's step on the batch; the weights from the twin's input file
static int step(KernCtx *c, const ModelConfig *cfg, const MaeConfig *mc, KDtype dt, const float *w,
		const KTensor *clips, const KTensor *pos, const int32_t *masked, MaeModel **out)
{
	MaeModel *m;
	int rc = mae_model_create(&m, c, cfg, mc, B, dt, NULL);
	if (rc)
		return rc;
	*out = m;
	if ((rc = kern_upload(c, &m->params, w, sizeof(float) * (size_t)m->n_params)) ||
	    (rc = mae_model_sync_weights(m)) || (rc = mae_model_set_mask_rows(m, masked)))
		return rc;
	if ((rc = mae_model_forward(m, clips, pos, 0, 0, 1.0)) || (rc = mae_model_backward(m)))
		return rc;
	return kern_sync(c);
}

static int write_inputs(const char *path, const ModelConfig *cfg, const MaeConfig *mc, MaeModel *m, const float *w,
			const uint8_t *px, const int32_t *masked)
{
	StTensor *t = calloc((size_t)m->n_specs + 2, sizeof *t);
	if (!t)
		return -1;
	int n = st_model_tensors(t, m->specs, m->n_specs, w, NULL);
	t[n] = (StTensor){.name = "input.clips",
			  .dtype = ST_U8,
			  .ndim = 5,
			  .shape = {B, cfg->frames, cfg->image_size, cfg->image_size, 3},
			  .data = px};
	t[n].nbytes = (size_t)B * cfg->frames * cfg->image_size * cfg->image_size * 3;
	n++;
	t[n] = (StTensor){.name = "input.masked", .dtype = ST_I32, .ndim = 2, .shape = {B, m->tok.Nm}, .data = masked};
	t[n].nbytes = sizeof(int32_t) * (size_t)B * m->tok.Nm;
	n++;
	char v[12][24];
	const int vals[] = {cfg->image_size, cfg->patch,      cfg->frames,    cfg->tubelet,
			    cfg->vis_width,  cfg->vis_layers, cfg->vis_heads, cfg->mlp_ratio,
			    mc->dec_width,   mc->dec_layers,  mc->dec_heads};
	const char *keys[] = {"image_size", "patch",     "frames",    "tubelet",    "vis_width", "vis_layers",
			      "vis_heads",  "mlp_ratio", "dec_width", "dec_layers", "dec_heads"};
	const char *meta[2 * 11];
	for (int i = 0; i < 11; i++) {
		snprintf(v[i], sizeof v[i], "%d", vals[i]);
		meta[2 * i] = keys[i], meta[2 * i + 1] = v[i];
	}
	int rc = st_write(path, t, n, meta, 11);
	free(t);
	return rc;
}

static double rel(const float *c, const double *r, int64_t n)
{
	double num = 0, den = 0;
	for (int64_t i = 0; i < n; i++)
		num += (c[i] - r[i]) * (c[i] - r[i]), den += r[i] * r[i];
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

static int check(const char *what, const char *name, double err, int bf16, int print)
{
	const double tol = tol_for(name, bf16);
	const int ok = err <= tol;
	if (!ok || print)
		printf("%-4s %-5s %-56s %.2e (tolerance %.1e)\n", ok ? "ok" : "FAIL", what, name, err, tol);
	return !ok;
}

// the C model's loss and gradients against the reference file, by name
static int compare(MaeModel *m, const StFile *ref, const char *what, int bf16)
{
	const StTensor *rl = st_find(ref, "loss");
	float loss;
	kern_download(m->ctx, &loss, sizeof loss, &m->loss);
	if (!rl || rl->dtype != ST_F64 || rl->nbytes != 8) {
		printf("FAIL the reference has no f64 loss\n");
		return 1;
	}
	const double lr = *(const double *)rl->data;
	int bad = check(what, "loss", fabs(loss - lr) / fabs(lr), bf16, 1);
	double worst = -1, werr = 0;
	char wname[128] = "";
	float *g = malloc(sizeof(float) * (size_t)m->n_params);
	double *all = malloc(sizeof(double) * (size_t)m->n_params);
	kern_download(m->ctx, g, sizeof(float) * (size_t)m->n_params, &m->grads);
	for (int i = 0; i < m->n_specs; i++) {
		const ParamSpec *s = &m->specs[i];
		char name[128];
		snprintf(name, sizeof name, "grad/%s", s->name);
		const StTensor *r = st_find(ref, name);
		if (!r || r->dtype != ST_F64 || r->nbytes != sizeof(double) * (size_t)s->numel) {
			printf("FAIL %-62s no reference gradient of its size\n", name);
			bad = 1;
			continue;
		}
		memcpy(all + s->offset, r->data, r->nbytes);
		const double e = rel(g + s->offset, all + s->offset, s->numel);
		bad |= check(what, name, e, bf16, 0);
		if (e / tol_for(name, bf16) > worst) {
			worst = e / tol_for(name, bf16);
			snprintf(wname, sizeof wname, "%s", name);
			werr = e;
		}
	}
	check(what, wname, werr, bf16, 1); // the tensor nearest its tolerance
	bad |= check(what, "all gradients", rel(g, all, m->n_params), bf16, 1);
	free(g);
	free(all);
	return bad;
}

int main(void)
{
	ModelConfig cfg;
	MaeConfig mc;
	model_config_preset(&cfg, "tiny");
	mae_config_preset(&mc, &cfg, "tiny"); // 4 frames in tubelets of 2 of 8x8 patches, 32x32 pixels
	cfg.vis_width = 32, cfg.vis_heads = 2, cfg.vis_layers = 2;
	mc.dec_width = 16, mc.dec_heads = 2, mc.dec_layers = 2, mc.mask_ratio = 0.75;
	KernCtx *c;
	MaeModel *m32 = NULL, *m16 = NULL;
	if (kern_ctx_create_cpu(&c, 1))
		return 1;
	// the weights: our initialisation, perturbed so that zero-initialised tensors are checked away
	// from their special point; the masks: the counter RNG's for two stream positions
	int n;
	int64_t nf;
	mae_layout(&cfg, &mc, NULL, &n, &nf, NULL);
	ParamSpec *specs = calloc((size_t)n, sizeof *specs);
	float *w = malloc(sizeof(float) * (size_t)nf);
	mae_layout(&cfg, &mc, specs, &n, &nf, NULL);
	mae_init_host(&cfg, &mc, specs, n, w, 5);
	for (int64_t i = 0; i < nf; i++)
		w[i] += 0.02f * (float)(((i * 2654435761u) >> 8 & 1023) / 511.5 - 1);
	const int64_t sc[] = {B, cfg.frames, cfg.image_size, cfg.image_size, 3}, sp[] = {B}, g[B] = {12, 3001};
	KTensor clips, pos;
	kern_alloc(c, &clips, KDT_U8, 5, sc);
	kern_alloc(c, &pos, KDT_I64, 1, sp);
	uint8_t *px = clips.data;
	for (int64_t i = 0; i < kern_numel(&clips); i++) // smooth in x with noise: per-patch variance of all sizes
		px[i] = (uint8_t)(((i / 3) % cfg.image_size) * 6 + ((i * 2246822519u) >> 27));
	memcpy(pos.data, g, sizeof g);
	MaeTokens tk;
	mae_tokens(&cfg, &mc, &tk);
	int32_t *vis = malloc(sizeof(int32_t) * B * (size_t)tk.Nv),
		*masked = malloc(sizeof(int32_t) * B * (size_t)tk.Nm);
	kern_mae_tube_mask_batch(9, g, B, tk.Ns, tk.Tp, mc.mask_ratio, vis, masked);
	int rc = step(c, &cfg, &mc, KDT_F32, w, &clips, &pos, masked, &m32);
	rc = rc ? rc : step(c, &cfg, &mc, KDT_BF16, w, &clips, &pos, masked, &m16);
	if (rc) {
		printf("FAIL the C steps: %d (%s)\n", rc, kern_error_message(c));
		return 1;
	}
	char dir[] = "/tmp/test_mae_twin_XXXXXX", in[64], out[64], cmd[512];
	if (!mkdtemp(dir))
		return 1;
	snprintf(in, sizeof in, "%s/in.safetensors", dir);
	snprintf(out, sizeof out, "%s/ref.safetensors", dir);
	if (write_inputs(in, &cfg, &mc, m32, w, px, masked)) {
		printf("FAIL cannot write %s\n", in);
		return 1;
	}
	snprintf(
		cmd, sizeof cmd,
		"bash -c '. tests/python_env.sh && need_python torch numpy && exec \"$py\" tests/ref/mae_twin.py %s %s'",
		in, out);
	int st = system(cmd), code = WIFEXITED(st) ? WEXITSTATUS(st) : 1, bad = 1;
	StFile *ref = NULL;
	if (code == 0 && st_open(&ref, out) == 0) {
		printf("-- the loss and each gradient against the float64 twin (relative L2; every tensor is checked, "
		       "failures and totals printed)\n");
		bad = compare(m32, ref, "f32", 0) | compare(m16, ref, "bf16", 1);
		st_close(ref);
	} else if (code != 77) {
		printf("FAIL the PyTorch twin exited %d\n", code);
	}
	unlink(in), unlink(out), rmdir(dir);
	mae_model_destroy(m32), mae_model_destroy(m16);
	kern_free(c, &clips), kern_free(c, &pos);
	kern_ctx_destroy(c);
	free(specs), free(w), free(vis), free(masked);
	if (code == 77)
		return 77;
	printf("%s\n", bad ? "FAIL the masked autoencoder against its PyTorch twin"
			   : "PASS the masked autoencoder (f32, bf16) matches its PyTorch twin");
	return bad;
}
