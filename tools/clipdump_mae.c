// clipdump --mae (clipdump_mae.h): the masked autoencoder on clips decoded in-process, one batch of
// one clip at a time on the CPU backend; the pictures map VideoMAE's normalized pixels back with each
// tubelet's own mean and deviation, as VideoMAE's visualisation does.
#include "clipdump_mae.h"   // defines: ClipdumpMae, clipdump_mae
#include "clipdump_sheet.h" // defines: Sheet, sheet_new, sheet_put_frames, sheet_text, sheet_write_png
#include "kern_ops.h"       // defines: kern_ctx_create_cpu, kern_alloc, kern_upload, kern_download
#include "log.h"            // defines: log_info, log_warnx, log_fatalx
#include "model.h"          // defines: MaeModel, mae_file_config, mae_model_*, st_open_as, st_find

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 5 }; // input, mask, reconstruction, target, prediction

// the run's masked autoencoder from its checkpoint, batch 1, f32
static MaeModel *load(KernCtx *ctx, const char *path, int64_t *step)
{
	char err[600];
	StFile *f;
	if (st_open_as(&f, path, "not a valid checkpoint file", err, sizeof err) < 0)
		log_fatalx("--mae: %s", err);
	ModelConfig cfg;
	MaeConfig mc;
	int rc = mae_file_config(f, &cfg, &mc);
	if (rc <= 0)
		log_fatalx("--mae: %s %s", path,
			   rc ? "records a masked autoencoder's configuration that does not parse"
			      : "is not a masked autoencoder's checkpoint (trainer --objective mae)");
	MaeModel *m;
	if ((rc = mae_model_create(&m, ctx, &cfg, &mc, 1, KDT_F32, NULL)) < 0)
		log_fatalx("--mae: cannot build the model of %s: %s", path, strerror(-rc));
	const StTensor *p = st_find(f, "model.params"), *s = st_find(f, "state.step");
	const size_t bytes = kern_nbytes(&m->params);
	if (!p || p->dtype != ST_F32 || p->nbytes != bytes)
		log_fatalx("--mae: %s: model.params is not f32 of %zu bytes", path, bytes);
	if (model_params_check_finite(m->specs, m->n_specs, p->data, m->n_params, path, err, sizeof err) < 0)
		log_fatalx("--mae: %s", err);
	if ((rc = kern_upload(ctx, &m->params, p->data, bytes)) < 0)
		log_fatalx("--mae: uploading the weights: %s", strerror(-rc));
	*step = s && s->nbytes == 8 ? *(const int64_t *)s->data : -1;
	st_close(f);
	return m;
}

// what one clip gives: the masked rows, the prediction and the target (host copies)
typedef struct {
	int32_t *masked; // (Nm) token indices
	float *pred, *target;
	double loss, baseline; // the clip's MSE, and that of predicting every tubelet's mean (0)
} Result;

// pixel (frame, y, x) and channel of element e of tubelet n (no flip: the sheets show the clip as decoded)
static size_t pixel_of(const MaeModel *m, int n, int e, int *c)
{
	const ModelConfig *cf = &m->cfg;
	const int p = cf->patch, tt = cf->tubelet, S = cf->image_size, Ns = m->tok.Ns, per = S / p;
	const int tp = n / Ns, q = n % Ns, dt = e / 3 / (p * p), i = e / 3 / p % p, j = e / 3 % p;
	*c = e % 3;
	const int t = tp * tt + dt, y = q / per * p + i, x = q % per * p + j;
	return (((size_t)t * S + y) * S + x) * 3;
}

// mean and unbiased deviation of channel c over tubelet n, on the 0..1 scale (kern_mae_target's)
static void stats(const MaeModel *m, const uint8_t *clip, int n, int c, double *mean, double *sd)
{
	const int K = m->K3 / 3;
	double s = 0, s2 = 0;
	for (int k = 0; k < K; k++) {
		int cc;
		const double v = clip[pixel_of(m, n, 3 * k + c, &cc) + c];
		s += v, s2 += v * v;
	}
	*mean = s / (255.0 * K);
	*sd = sqrt(fmax(0, (K * s2 - s * s) / ((double)K * (K - 1) * 255.0 * 255.0)));
}

static uint8_t clamp8(double v)
{
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lrint(v));
}

// the five rows' frames (each T x S x S x 3)
static void pictures(const MaeModel *m, const uint8_t *clip, const Result *r, uint8_t *rows[ROWS])
{
	const size_t n = (size_t)m->cfg.frames * m->cfg.image_size * m->cfg.image_size * 3;
	memcpy(rows[0], clip, n);
	memcpy(rows[1], clip, n);
	memcpy(rows[2], clip, n);
	memset(rows[3], 40, n); // visible tubelets dark: only the masked ones are predicted
	memset(rows[4], 40, n);
	for (int j = 0; j < m->tok.Nm; j++) {
		const int tok = r->masked[j];
		double mean[3], sd[3];
		for (int c = 0; c < 3; c++)
			stats(m, clip, tok, c, &mean[c], &sd[c]);
		for (int e = 0; e < m->K3; e++) {
			int c;
			const size_t px = pixel_of(m, tok, e, &c) + (size_t)c;
			const double pv = r->pred[(size_t)j * m->K3 + e], tv = r->target[(size_t)j * m->K3 + e];
			rows[1][px] = clamp8(0.3 * clip[px] + 0.7 * 128); // hidden: greyed
			rows[2][px] = clamp8(255 * (pv * (sd[c] + 1e-6) + mean[c]));
			rows[3][px] = clamp8(128 + 48 * tv); // normalized units: 128 ± 48 per unit
			rows[4][px] = clamp8(128 + 48 * pv);
		}
	}
}

static void sheet(const ClipdumpMae *a, const MaeModel *m, uint64_t g, const uint8_t *clip, const Result *r)
{
	const int T = m->cfg.frames, S = m->cfg.image_size;
	const int scale = a->scale ? a->scale : S >= 128 ? 1 : (127 + S) / S > 8 ? 8 : (127 + S) / S;
	uint8_t *rows[ROWS];
	Sheet s;
	for (int k = 0; k < ROWS; k++)
		if (!(rows[k] = malloc((size_t)T * S * S * 3)))
			log_fatalx("out of memory");
	if (sheet_new(&s, ROWS, T, S * scale, S * scale, 2, a->font) < 0)
		log_fatalx("out of memory for a sheet");
	pictures(m, clip, r, rows);
	char text[ROWS][320];
	snprintf(text[0], sizeof text[0], "position %llu: the clip (%d frames, tubelets of %dx%dx%d)",
		 (unsigned long long)g, T, m->cfg.tubelet, m->cfg.patch, m->cfg.patch);
	snprintf(text[1], sizeof text[1], "the tube mask: %d of %d tubelets hidden (greyed), the same in every slice",
		 m->tok.Nm, m->tok.N);
	snprintf(text[2], sizeof text[2],
		 "reconstruction: hidden tubelets = prediction x the tubelet's own deviation + mean; MSE %.4f",
		 r->loss);
	snprintf(text[3], sizeof text[3],
		 "target: hidden tubelets' pixels normalized per tubelet (128 +- 48 per unit)");
	snprintf(text[4], sizeof text[4], "prediction, same scale; the per-patch mean (0) would score %.4f",
		 r->baseline);
	for (int k = 0; k < ROWS; k++) {
		sheet_put_frames(&s, k, rows[k], T, S, S, scale);
		sheet_text(&s, k, 0, text[k]);
	}
	char path[1200];
	snprintf(path, sizeof path, "%s/mae-pos%llu.png", a->out, (unsigned long long)g);
	int rc = sheet_write_png(&s, path);
	if (rc < 0)
		log_fatalx("%s: %s", path, strerror(-rc));
	sheet_free(&s);
	for (int k = 0; k < ROWS; k++)
		free(rows[k]);
}

// the model on one decoded clip at position g
static void run_clip(MaeModel *m, KTensor *clips, KTensor *pos, const uint8_t *clip, uint64_t g, uint64_t seed,
		     Result *r)
{
	KernCtx *c = m->ctx;
	const int64_t gi = (int64_t)g;
	int rc = kern_upload(c, clips, clip, kern_nbytes(clips));
	if (!rc)
		rc = kern_upload(c, pos, &gi, sizeof gi);
	if (!rc)
		rc = mae_model_set_masks(m, &gi, seed);
	if (!rc)
		rc = mae_model_forward(m, clips, pos, seed, 0, 1.0);
	float loss;
	if (!rc)
		rc = kern_download(c, &loss, sizeof loss, &m->loss);
	if (!rc)
		rc = kern_download(c, r->pred, kern_nbytes(&m->pred), &m->pred);
	if (!rc)
		rc = kern_download(c, r->target, kern_nbytes(&m->target), &m->target);
	if (rc < 0)
		log_fatalx("--mae: position %llu: %s", (unsigned long long)g,
			   kern_error_message(c)[0] ? kern_error_message(c) : strerror(-rc));
	memcpy(r->masked, m->host_idx + (1 + m->tok.Nv + m->tok.Nm), sizeof(int32_t) * (size_t)m->tok.Nm);
	double b = 0;
	const int64_t n = kern_numel(&m->target);
	for (int64_t i = 0; i < n; i++)
		b += (double)r->target[i] * r->target[i];
	r->loss = loss;
	r->baseline = b / (double)n;
}

int clipdump_mae(const ClipdumpMae *a)
{
	KernCtx *ctx;
	if (kern_ctx_create_cpu(&ctx, a->threads) < 0)
		log_fatalx("cannot create the CPU compute context");
	int64_t step;
	MaeModel *m = load(ctx, a->ckpt, &step);
	const ModelConfig *cf = &m->cfg;
	if (a->p.frames != cf->frames || a->p.out_w != cf->image_size || a->p.out_h != cf->image_size)
		log_fatalx("--mae: the model reads %d frames of %dx%d; --frames %d --image-size %d asked for others",
			   cf->frames, cf->image_size, cf->image_size, a->p.frames, a->p.out_w);
	KTensor clips, pos;
	const int64_t sc[] = {1, cf->frames, cf->image_size, cf->image_size, 3}, sp[] = {1};
	Result r = {.masked = malloc(sizeof(int32_t) * (size_t)m->tok.Nm),
		    .pred = malloc(kern_nbytes(&m->pred)),
		    .target = malloc(kern_nbytes(&m->target))};
	uint8_t *clip = malloc((size_t)cf->frames * cf->image_size * cf->image_size * 3);
	LdDecoder *d;
	if (!r.masked || !r.pred || !r.target || !clip || kern_alloc(ctx, &clips, KDT_U8, 5, sc) ||
	    kern_alloc(ctx, &pos, KDT_I64, 1, sp) || ld_decoder_new(&d))
		log_fatalx("out of memory");
	LdFiles files = {0};
	double se = 0, sb = 0;
	uint64_t done = 0, errors = 0;
	int written = 0;
	for (uint64_t g = a->first; g <= a->last; g++) {
		LdPlan plan;
		char err[512];
		if (ld_sample_load(d, &files, a->m, g, &a->p, &plan, clip, err, sizeof err) != 0) {
			log_warnx("position %llu: skipped (an error slot): %s", (unsigned long long)g, err);
			errors++;
			continue;
		}
		run_clip(m, &clips, &pos, clip, g, a->seed, &r);
		se += r.loss, sb += r.baseline, done++;
		if (written < a->sheets) {
			sheet(a, m, g, clip, &r);
			written++;
		}
	}
	if (!done)
		log_fatalx("--mae: no clip of positions %llu-%llu could be decoded", (unsigned long long)a->first,
			   (unsigned long long)a->last);
	char path[1200];
	snprintf(path, sizeof path, "%s/mae.json", a->out);
	FILE *f = fopen(path, "w");
	if (!f)
		log_fatal("cannot write %s", path);
	const double mse = se / (double)done, base = sb / (double)done; // every clip has Nm·3K values
	fprintf(f,
		"{\"clips\":%llu,\"error_slots\":%llu,\"step\":%lld,\"mask_ratio\":%.9g,\"recon_mse\":%.9g,"
		"\"baseline_mse\":%.9g,\"ratio\":%.9g}\n",
		(unsigned long long)done, (unsigned long long)errors, (long long)step, m->mae.mask_ratio, mse, base,
		mse / base);
	if (fclose(f))
		log_fatal("writing %s", path);
	log_info("--mae: %llu clips (step %lld, %d of %d tubelets hidden): reconstruction MSE %.4f, per-patch-mean "
		 "baseline %.4f (ratio %.3f); %d sheets and mae.json in %s",
		 (unsigned long long)done, (long long)step, m->tok.Nm, m->tok.N, mse, base, mse / base, written,
		 a->out);
	ld_files_free(&files);
	ld_decoder_free(d);
	kern_free(ctx, &clips);
	kern_free(ctx, &pos);
	free(clip), free(r.masked), free(r.pred), free(r.target);
	mae_model_destroy(m);
	kern_ctx_destroy(ctx);
	return 0;
}
