// Batched embedding: decode a round of clips in parallel (one loader decoder per thread), then
// per fixed block of EVAL_EMBED_BLOCK: upload the u8 clips, normalize on the device (kern_augment,
// no flip), one forward of both towers, copy out the features.
#include "eval_embed.h" // defines: eval_embed_manifest, eval_embed_texts, eval_check_manifest

#include "eval.h" // defines: eval_block_forward

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: calloc, malloc, free
#include <string.h> // defines: memcpy, strerror
#ifdef _OPENMP
#include <omp.h> // defines: omp_get_max_threads, omp_get_thread_num
#endif

#include "loader.h" // defines: ld_sample_load, LdFiles, ld_files_free, ld_error_name, LdParams, LdPlan, ld_params_default

// what the video tower alone needs: the fixed block and a sample
static int check_block(const ClipModel *m, const Manifest *man, char *err, size_t errlen)
{
	if (m->B != EVAL_EMBED_BLOCK) {
		snprintf(err, errlen, "the evaluation model has batch %d, not the fixed block %d", m->B,
			 EVAL_EMBED_BLOCK);
		return -EINVAL;
	}
	if (!manifest_header(man)->n_samples) {
		snprintf(err, errlen, "the manifest has no samples");
		return -EINVAL;
	}
	return 0;
}

int eval_check_manifest(const ClipModel *m, const Manifest *man, char *err, size_t errlen)
{
	const ManifestHeader *h = manifest_header(man);
	int rc = check_block(m, man, err, errlen);
	if (rc)
		return rc;
	if ((int)h->context != m->cfg.ctx_len) {
		snprintf(err, errlen, "the manifest's captions have context %u, the model's text tower %d", h->context,
			 m->cfg.ctx_len);
		return -EINVAL;
	}
	if ((int64_t)h->vocab_size > m->cfg.vocab) {
		snprintf(err, errlen, "the manifest's vocabulary has %u tokens, the model's embedding only %d",
			 h->vocab_size, m->cfg.vocab);
		return -EINVAL;
	}
	return 0;
}

typedef struct {
	KTensor clips, pos, text; // (B, T, S, S, 3) u8, (B) i64 positions (no flip: unused), (B, ctx) i32
	int32_t *tin;             // host (B, ctx)
	uint8_t *round;           // host (R, T, S, S, 3): a decoding round
} Batch;

// the block of B clips at cin (host) and b->tin through both towers (visual: the video tower alone)
static int forward(ClipModel *m, Batch *b, const uint8_t *cin, int visual, char *err, size_t errlen)
{
	int rc = kern_upload(m->ctx, &b->clips, cin, kern_nbytes(&b->clips));
	if (!rc && !visual)
		rc = kern_upload(m->ctx, &b->text, b->tin, kern_nbytes(&b->text));
	if (!rc)
		rc = visual ? eval_block_forward_visual(m, &b->clips, &b->pos)
			    : eval_block_forward(m, &b->clips, &b->pos, &b->text);
	if (rc)
		snprintf(err, errlen, "model forward: %s", strerror(-rc));
	return rc;
}

static int batch_new(ClipModel *m, Batch *b, int R)
{
	const ModelConfig *c = &m->cfg;
	const int64_t B = m->B, S = c->image_size;
	memset(b, 0, sizeof *b);
	int rc = kern_alloc(m->ctx, &b->clips, KDT_U8, 5, (const int64_t[]){B, c->frames, S, S, 3});
	if (!rc)
		rc = kern_alloc(m->ctx, &b->pos, KDT_I64, 1, &B);
	if (!rc)
		rc = kern_alloc(m->ctx, &b->text, KDT_I32, 2, (const int64_t[]){B, c->ctx_len});
	b->tin = calloc((size_t)B * c->ctx_len, sizeof *b->tin);
	b->round = calloc((size_t)c->frames * S * S * 3 * (size_t)(R > B ? R : B), 1);
	return rc ? rc : (!b->tin || !b->round) ? -ENOMEM : 0;
}

static void batch_free(ClipModel *m, Batch *b)
{
	kern_free(m->ctx, &b->clips);
	kern_free(m->ctx, &b->pos);
	kern_free(m->ctx, &b->text);
	free(b->tin);
	free(b->round);
}

// the block's first n rows' features: video rows to vfeat (row by row; visual: the pre-projection
// feature, vis_width wide), text to tfeat for the rows that are a sample's first view (row0: the
// block's first row, V views a sample)
static int copy_out(ClipModel *m, int64_t row0, int n, int V, int visual, float *vfeat, float *tfeat)
{
	const size_t E = (size_t)m->cfg.embed_dim, W = (size_t)m->cfg.vis_width,
		     all = sizeof(float) * (size_t)m->B * (E > W ? E : W);
	float *tmp = malloc(all);
	if (!tmp)
		return -ENOMEM;
	int rc = 0;
	const KTensor *vt = visual ? &m->vln : &m->vfeat;
	const size_t vw = visual ? W : E;
	if (vfeat && !(rc = kern_download(m->ctx, tmp, sizeof(float) * (size_t)m->B * vw, vt)))
		memcpy(vfeat, tmp, sizeof(float) * (size_t)n * vw);
	if (!rc && tfeat && !(rc = kern_download(m->ctx, tmp, sizeof(float) * (size_t)m->B * E, &m->tfeat)))
		for (int k = 0; k < n; k++)
			if ((row0 + k) % V == 0)
				memcpy(tfeat + (size_t)((row0 + k) / V) * E, tmp + (size_t)k * E, sizeof(float) * E);
	free(tmp);
	return rc;
}

int eval_embed_views(const EvalEmbedOpts *o)
{
	return o && o->stride > 0
		       ? (o->views_clips > 0 ? o->views_clips : 1) * (o->views_crops > 0 ? o->views_crops : 1)
		       : 1;
}

// the loader's parameters of view v of a sample (eval_embed.h: EvalEmbedOpts' views)
static void view_params(const LdParams *base, const EvalEmbedOpts *o, int v, LdParams *p)
{
	*p = *base;
	if (!o || o->stride <= 0)
		return;
	const int S = o->views_crops > 0 ? o->views_crops : 1;
	p->stride = o->stride;
	p->view_clips = o->views_clips > 0 ? o->views_clips : 1;
	p->view_clip = v / S;
	p->crop_pos = S == 1 ? LD_CROP_CENTRE : (LdCropPos[]){LD_CROP_START, LD_CROP_CENTRE, LD_CROP_END}[v % S];
}

static int check_views(const EvalEmbedOpts *o, char *err, size_t errlen)
{
	if (!o || o->stride <= 0)
		return 0;
	if (o->damaged) {
		snprintf(err, errlen, "multi-view embedding counts every clip: no damaged-sample list");
		return -EINVAL;
	}
	if (o->views_crops > 1 && o->views_crops != 3) {
		snprintf(err, errlen, "%d spatial crops: 1 (centre) or 3 (start, centre, end of the long side)",
			 o->views_crops);
		return -EINVAL;
	}
	return 0;
}

// " (view c.s)" of a multi-view sample's view v, "" otherwise
static const char *view_name(const EvalEmbedOpts *o, int v)
{
	static _Thread_local char buf[48];
	if (eval_embed_views(o) == 1)
		return "";
	const int S = o->views_crops > 0 ? o->views_crops : 1;
	snprintf(buf, sizeof buf, " (temporal clip %d, crop %d)", v / S, v % S);
	return buf;
}

int eval_embed_manifest(ClipModel *m, const Manifest *man, float *vfeat, float *tfeat, const EvalEmbedOpts *o,
			char *err, size_t errlen)
{
	const int visual = o && o->visual;
	int rc = visual ? check_block(m, man, err, errlen) : eval_check_manifest(m, man, err, errlen);
	if (!rc)
		rc = check_views(o, err, errlen);
	if (rc)
		return rc;
	const ModelConfig *c = &m->cfg;
	const int B = m->B, ctx = c->ctx_len, V = eval_embed_views(o), width = visual ? c->vis_width : c->embed_dim;
	const int64_t n = (int64_t)manifest_header(man)->n_samples * V; // rows: sample views
	const size_t clip_bytes = (size_t)c->frames * c->image_size * c->image_size * 3;
	int nd = o && o->decoders > 0 ? o->decoders : 1;
#ifdef _OPENMP
	if (!(o && o->decoders > 0))
		nd = omp_get_max_threads();
#endif
	// a round is whole blocks; a sample's block and place in it depend only on its index
	int R = o && o->round > B ? (o->round + B - 1) / B * B : B;
	if (nd > R)
		nd = R;
	LdParams p;
	ld_params_default(&p);
	p.train = 0;
	p.flip = 0;
	p.frames = c->frames;
	p.out_w = p.out_h = c->image_size;
	Batch b;
	LdDecoder **dec = calloc((size_t)nd, sizeof *dec);
	LdFiles *files = calloc((size_t)nd, sizeof *files);
	rc = batch_new(m, &b, R);
	if (!rc && (!dec || !files))
		rc = -ENOMEM;
	for (int t = 0; t < nd && !rc; t++)
		if (ld_decoder_new(&dec[t]))
			rc = -ENOMEM;
	if (rc)
		snprintf(err, errlen, "out of memory for a round of %d", R);
	for (int64_t r0 = 0; r0 < n && !rc; r0 += R) {
		int valid = (int)(n - r0 < R ? n - r0 : R);
		int bad = -1, bad_rc = 0;
		char bad_err[256] = "";
#ifdef _OPENMP
#pragma omp parallel for num_threads(nd) schedule(dynamic, 1)
#endif
		for (int k = 0; k < valid; k++) {
			int t = 0;
#ifdef _OPENMP
			t = omp_get_thread_num();
#endif
			uint64_t i = (uint64_t)(r0 + k) / (uint64_t)V;
			if (o && o->damaged)
				o->damaged[i] = 0;
			LdPlan plan;
			LdParams pv;
			view_params(&p, o, (int)((r0 + k) % V), &pv);
			char e[256];
			int r = ld_sample_load(dec[t], &files[t], man, i, &pv, &plan, b.round + (size_t)k * clip_bytes,
					       e, sizeof e);
			if (!r && plan.sample != i) {
				r = -EINVAL;
				snprintf(e, sizeof e, "eval-mode position %llu planned sample %llu",
					 (unsigned long long)i, (unsigned long long)plan.sample);
			}
			if (r && o && o->damaged) { // left out by the caller: a black clip keeps the blocks' shape
				memset(b.round + (size_t)k * clip_bytes, 0, clip_bytes);
				o->damaged[i] = 1;
			}
			if (r) {
#ifdef _OPENMP
#pragma omp critical(eval_embed_err)
#endif
				if (bad < 0 || k < bad) {
					bad = k;
					bad_rc = r;
					snprintf(bad_err, sizeof bad_err, "%s", e);
				}
			}
		}
		if (bad >= 0 && o && o->damaged) {
			if (o->damaged_why && !o->damaged_why[0])
				snprintf(o->damaged_why, o->damaged_why_len, "sample %lld: %s (%s)",
					 (long long)(r0 + bad), bad_err,
					 bad_rc == -EINVAL ? "plan" : ld_error_name(-bad_rc));
		} else if (bad >= 0) {
			snprintf(err, errlen, "sample %lld%s: %s (%s)", (long long)((r0 + bad) / V),
				 view_name(o, (int)((r0 + bad) % V)), bad_err,
				 bad_rc == -EINVAL ? "plan" : ld_error_name(-bad_rc));
			rc = bad_rc;
			break;
		}
		for (int k = valid; k < R; k++) // padding: the last sample again
			memcpy(b.round + (size_t)k * clip_bytes, b.round + (size_t)(valid - 1) * clip_bytes,
			       clip_bytes);
		for (int k0 = 0; k0 < valid && !rc; k0 += B) {
			int in_block = valid - k0 < B ? valid - k0 : B;
			int64_t b0 = r0 + k0;
			for (int k = 0; k < B && !rc && !visual; k++) { // the captions (not read by the video tower)
				int64_t i = (b0 + (k < in_block ? k : in_block - 1)) / V;
				const uint16_t *tok = manifest_tokens(man, (uint64_t)i);
				for (int j = 0; j < ctx && !rc; j++) {
					if (tok[j] >= m->cfg.vocab) { // the embedding would be read out of range
						snprintf(
							err, errlen,
							"sample %lld: caption token %d is id %u, outside the model's vocabulary (%d)",
							(long long)i, j, tok[j], m->cfg.vocab);
						rc = -EINVAL;
					}
					b.tin[(size_t)k * ctx + j] = tok[j];
				}
			}
			if (rc || (rc = forward(m, &b, b.round + (size_t)k0 * clip_bytes, visual, err, errlen)))
				break;
			if ((rc = copy_out(m, b0, in_block, V, visual, vfeat + b0 * width, visual ? NULL : tfeat)))
				snprintf(err, errlen, "reading features back: %s", strerror(-rc));
		}
		if (!rc && o && o->progress)
			o->progress(o->progress_arg, r0 + valid, n);
	}
	for (int t = 0; t < nd && dec; t++) {
		ld_decoder_free(dec[t]);
		if (files)
			ld_files_free(&files[t]);
	}
	free(dec);
	free(files);
	batch_free(m, &b);
	return rc;
}

int eval_embed_texts(ClipModel *m, const int32_t *ids, int64_t n, float *tfeat, char *err, size_t errlen)
{
	const int B = m->B, ctx = m->cfg.ctx_len;
	if (B != EVAL_EMBED_BLOCK) {
		snprintf(err, errlen, "the evaluation model has batch %d, not the fixed block %d", B, EVAL_EMBED_BLOCK);
		return -EINVAL;
	}
	Batch b;
	int rc = batch_new(m, &b, B);
	if (rc)
		snprintf(err, errlen, "out of memory for a batch of %d", B);
	for (int64_t b0 = 0; b0 < n && !rc; b0 += B) {
		int valid = (int)(n - b0 < B ? n - b0 : B);
		for (int k = 0; k < B; k++)
			memcpy(b.tin + (size_t)k * ctx, ids + (size_t)(b0 + (k < valid ? k : valid - 1)) * ctx,
			       sizeof(int32_t) * (size_t)ctx);
		for (int64_t k = 0; k < (int64_t)B * ctx; k++)
			if (b.tin[k] < 0 || b.tin[k] >= m->cfg.vocab) {
				snprintf(err, errlen, "prompt %lld has token id %d outside the vocabulary (%d)",
					 (long long)(b0 + k / ctx), b.tin[k], m->cfg.vocab);
				rc = -EINVAL;
				break;
			}
		if (!rc)
			rc = forward(m, &b, b.round, 0, err, errlen);
		if (!rc && (rc = copy_out(m, 0, valid, 1, 0, NULL, tfeat + b0 * m->cfg.embed_dim)))
			snprintf(err, errlen, "reading features back: %s", strerror(-rc));
	}
	batch_free(m, &b);
	return rc;
}
