// make bench-cpu: training-step time of the tiny and vit-s16 models on the CPU backend, and the
// GFLOP/s of the model's linear layers as a ratio to raw cblas_sgemm on the same shapes.
// Usage: bench_model_cpu [--threads N] [--vits-batch B] [--vits-frames T] [--steps N]
#include "model.h" // defines: ClipModel, model_synth_batch, Optimizer

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

// median seconds per training step (forward, InfoNCE, backward, AdamW)
static int bench_step(KernCtx *c, const char *preset, int B, int frames, int steps)
{
	ModelConfig cfg;
	model_config_preset(&cfg, preset);
	cfg.frames = frames;
	ClipModel *m;
	Optimizer *o;
	OptConfig oc;
	optim_config_default(&oc);
	oc.total_steps = steps + 1;
	KTensor video, text;
	const int64_t sv[] = {B, frames, cfg.image_size, cfg.image_size, 3}, st[] = {B, cfg.ctx_len};
	if (clip_model_create(&m, c, &cfg, B, KDT_F32) || model_init_params(c, &cfg, &m->params, 1) ||
	    optim_create(&o, c, &oc, m->specs, m->n_specs, m->n_params) ||
	    kern_alloc(c, &video, KDT_F32, 5, sv) || kern_alloc(c, &text, KDT_I32, 2, st)) {
		fprintf(stderr, "bench: cannot set up %s\n", preset);
		return 1;
	}
	double t[64], loss = 0;
	for (int i = 0; i <= steps && i < 64; i++) {
		model_synth_batch(c, &cfg, 1, (uint64_t)i, 64, &video, &text);
		double t0 = now();
		if (clip_model_infonce_step(m, &video, &text, &loss) || optim_step(o, &m->params, NULL, &m->grads))
			return 1;
		t[i] = now() - t0;
	}
	qsort(t + 1, (size_t)steps, sizeof t[0], cmp_d); // step 0 is warm-up
	int P = (cfg.image_size / cfg.patch) * (cfg.image_size / cfg.patch);
	printf("step %-8s B=%d T=%d %dpx (%d tokens) vis %dx%d txt %dx%d, %.1fM params: %8.1f ms/step (median of %d), "
	       "loss %.4f\n",
	       preset, B, frames, cfg.image_size, 1 + frames * P, cfg.vis_width, cfg.vis_layers, cfg.txt_width,
	       cfg.txt_layers, (double)m->n_params / 1e6, 1e3 * t[1 + steps / 2], steps, loss);
	clip_model_destroy(m);
	optim_destroy(o);
	kern_free(c, &video);
	kern_free(c, &text);
	return 0;
}

// the linear layers of one vit-s16 block over N tokens: forward + backward via the op
// interface vs the same three sgemm calls made directly
static int bench_matmul(KernCtx *c, int N, int reps, double *ours, double *blas)
{
	const int W = 384, shapes[4][2] = {{W, 3 * W}, {W, W}, {W, 4 * W}, {4 * W, W}}; // (IC, OC)
	double flops = 0, t_ours = 0, t_blas = 0;
	for (int s = 0; s < 4; s++) {
		int IC = shapes[s][0], OC = shapes[s][1];
		KTensor in, w, b, out, din, dw, db;
		const int64_t si[] = {N, IC}, sw[] = {OC, IC}, sb[] = {OC}, so[] = {N, OC};
		if (kern_alloc(c, &in, KDT_F32, 2, si) || kern_alloc(c, &w, KDT_F32, 2, sw) ||
		    kern_alloc(c, &b, KDT_F32, 1, sb) || kern_alloc(c, &out, KDT_F32, 2, so) ||
		    kern_alloc(c, &din, KDT_F32, 2, si) || kern_alloc(c, &dw, KDT_F32, 2, sw) ||
		    kern_alloc(c, &db, KDT_F32, 1, sb))
			return 1;
		double best_ours = 1e30, best_blas = 1e30; // minimum over reps: robust to other load
		for (int r = 0; r <= reps; r++) {
			double t0 = now();
			kern_linear(c, &(KLinear){.out = &out, .in = &in, .w = &w, .trans_w = 1, .bias = &b});
			kern_linear_bwd(c, &(KLinearBwd){.din = KG_ADD(&din), .dw = KG_ADD(&dw), .dbias = KG_ADD(&db),
							 .dout = &out, .in = &in, .w = &w, .trans_w = 1});
			double t1 = now();
			const float *X = in.data, *Wm = w.data;
			float *O = out.data, *dI = din.data, *dW = dw.data;
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, IC, 1, X, IC, Wm, IC, 0, O, OC);
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, IC, OC, 1, O, OC, Wm, IC, 1, dI, IC);
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, N, 1, O, OC, X, IC, 1, dW, IC);
			double t2 = now();
			if (r) { // first round warms caches and thread pools
				best_ours = t1 - t0 < best_ours ? t1 - t0 : best_ours;
				best_blas = t2 - t1 < best_blas ? t2 - t1 : best_blas;
			}
			kern_zero(c, &din);
			kern_zero(c, &dw);
		}
		t_ours += best_ours;
		t_blas += best_blas;
		flops += 6.0 * N * IC * OC;
		KTensor *all[] = {&in, &w, &b, &out, &din, &dw, &db};
		for (int i = 0; i < 7; i++)
			kern_free(c, all[i]);
	}
	*ours = flops / t_ours / 1e9;
	*blas = flops / t_blas / 1e9;
	return 0;
}

int main(int argc, char **argv)
{
	int threads = 0, vb = 2, vt = 1, steps = 5;
	for (int i = 1; i + 1 < argc; i += 2) {
		int v = atoi(argv[i + 1]);
		if (!strcmp(argv[i], "--threads"))
			threads = v;
		else if (!strcmp(argv[i], "--vits-batch"))
			vb = v;
		else if (!strcmp(argv[i], "--vits-frames"))
			vt = v;
		else if (!strcmp(argv[i], "--steps"))
			steps = v;
		else {
			fprintf(stderr, "usage: %s [--threads N] [--vits-batch B] [--vits-frames T] [--steps N]\n", argv[0]);
			return 2;
		}
	}
	if (steps < 1 || steps > 63 || vb < 1 || vt < 1) {
		fprintf(stderr, "bench: --steps must be 1..63, batch and frames positive\n");
		return 2;
	}
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, threads))
		return 1;
	printf("bench-cpu: backend %s, %d threads\n", kern_ctx_backend_name(c), kern_ctx_threads(c));
	if (bench_step(c, "tiny", 8, 2, steps) || bench_step(c, "vit-s16", vb, vt, steps))
		return 1;
	double ours, blas;
	const int N = vb * (1 + vt * 196);
	if (bench_matmul(c, N, 10, &ours, &blas))
		return 1;
	printf("matmul vit-s16 block linears fwd+bwd (+bias), %d tokens, best of 10: op interface %.1f GFLOP/s, "
	       "cblas_sgemm %.1f GFLOP/s\n",
	       N, ours, blas);
	printf("ratio linear/sgemm: %.3f\n", ours / blas);
	kern_ctx_destroy(c);
	return 0;
}
