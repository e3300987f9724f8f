// The trainer's in-process evaluation on an evaluation ring: one pass of the held-out manifest
// (the ring's consumer positions in order: loaderd --eval maps position g to sample g mod n),
// clips normalized on the device by the augment op without flip, forward in fixed blocks of
// EVAL_EMBED_BLOCK (features as tools/eval computes them) on a model whose weights are views of
// the training model's, features placed by sample id.
#include "trainer_eval.h" // defines: TrainerEval, ...

#include <errno.h>  // defines: EINVAL, ENOMEM, EIO, errno
#include <stdio.h>  // defines: snprintf, fopen, fclose
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memset, strerror

#include "eval.h" // defines: EVAL_EMBED_BLOCK, eval_block_forward, EvalReport, eval_score_retrieval, eval_report_json
#include "manifest.h" // defines: Manifest, manifest_open_verified, manifest_header, manifest_identity, manifest_close
#include "ring.h"     // defines: RingDataId, ring_data_set, ring_check_data
#include "trainer_ingest.h" // defines: TrainerIngest, trainer_ingest_open, trainer_ingest_batch

struct TrainerEval {
	KernCtx *ctx;
	ClipModel *model; // batch EVAL_EMBED_BLOCK; weights: views of the training model's
	Manifest *man;
	int64_t n;
	int match_caption, opened;
	double timeout_s;
	TrainerIngest in;
	KTensor clips, text, pos; // the batch on the device: (B, T, S, S, 3) u8, (B, ctx) i32, (B) i64 zeros
	KTensor feat;             // (B, E) f32: features widened for the read-back
	int64_t *ids, *gpos;      // (B) host
	float *vfeat, *tfeat;     // (n, E) in manifest order
	unsigned char *seen;      // (n)
	float *sim;               // (n, n)
};

void trainer_eval_close(TrainerEval *e)
{
	if (!e)
		return;
	if (e->opened)
		trainer_ingest_close(&e->in);
	KTensor *t[] = {&e->clips, &e->text, &e->pos, &e->feat};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		kern_free(e->ctx, t[i]);
	if (e->man)
		manifest_close(e->man);
	clip_model_destroy(e->model);
	free(e->ids);
	free(e->gpos);
	free(e->vfeat);
	free(e->tfeat);
	free(e->seen);
	free(e->sim);
	free(e);
}

// whether the model reads the manifest's captions: context and vocabulary
static int check_manifest(const ClipModel *m, const Manifest *man, const char *path, char *err, size_t errlen)
{
	const ManifestHeader *h = manifest_header(man);
	if (!h->n_samples)
		snprintf(err, errlen, "--eval-manifest %s has no samples", path);
	else if ((int)h->context != m->cfg.ctx_len)
		snprintf(err, errlen, "--eval-manifest %s: captions of context %u, the model's text tower %d", path,
			 h->context, m->cfg.ctx_len);
	else if ((int64_t)h->vocab_size > m->cfg.vocab)
		snprintf(err, errlen, "--eval-manifest %s: a vocabulary of %u tokens, the model's embedding only %d",
			 path, h->vocab_size, m->cfg.vocab);
	else
		return 0;
	return -EINVAL;
}

static int alloc(TrainerEval *e, const ClipModel *m)
{
	const ModelConfig *c = &m->cfg;
	const int64_t B = m->B, S = c->image_size, n = e->n;
	int rc = kern_alloc(e->ctx, &e->clips, KDT_U8, 5, (const int64_t[]){B, c->frames, S, S, 3});
	if (!rc)
		rc = kern_alloc(e->ctx, &e->text, KDT_I32, 2, (const int64_t[]){B, c->ctx_len});
	if (!rc)
		rc = kern_alloc(e->ctx, &e->pos, KDT_I64, 1, &B);
	if (!rc)
		rc = kern_alloc(e->ctx, &e->feat, KDT_F32, 2, (const int64_t[]){B, c->embed_dim});
	e->ids = calloc((size_t)B, sizeof(int64_t));
	e->gpos = calloc((size_t)B, sizeof(int64_t));
	e->vfeat = calloc((size_t)(n * c->embed_dim), sizeof(float));
	e->tfeat = calloc((size_t)(n * c->embed_dim), sizeof(float));
	e->seen = calloc((size_t)n, 1);
	e->sim = calloc((size_t)(n * n), sizeof(float));
	return rc ? rc : e->ids && e->gpos && e->vfeat && e->tfeat && e->seen && e->sim ? 0 : -ENOMEM;
}

int trainer_eval_open(TrainerEval **out, KernCtx *ctx, const char *ring, const char *manifest, const ClipModel *m,
		      int match_caption, double timeout_s, char *err, size_t errlen)
{
	TrainerEval *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->ctx = ctx;
	e->match_caption = match_caption;
	e->timeout_s = timeout_s;
	char why[1024];
	int rc = manifest_open_verified(&e->man, manifest, why, sizeof why);
	if (rc) {
		snprintf(err, errlen, "--eval-manifest %s: %s", manifest, why);
		e->man = NULL;
		trainer_eval_close(e);
		return rc < 0 ? rc : -EINVAL;
	}
	e->n = (int64_t)manifest_header(e->man)->n_samples;
	if ((rc = check_manifest(m, e->man, manifest, err, errlen)) == 0 &&
	    (rc = trainer_ingest_open(&e->in, ctx, ring, 0, 1, &m->cfg, 0, why, sizeof why)) < 0)
		snprintf(err, errlen, "evaluation: %s%s", why,
			 rc == -ENOENT ? "; it is filled by: loaderd --eval --ring <it> --manifest <--eval-manifest>"
				       : "");
	if (!rc) { // the evaluation ring must serve --eval-manifest's samples
		RingDataId mine;
		ring_data_set(&mine, manifest_identity(e->man), manifest_header(e->man)->vocab_hash, manifest);
		if ((rc = ring_check_data(e->in.ring, ring, &mine, "this trainer's --eval-manifest", why, sizeof why)) <
		    0) {
			snprintf(err, errlen, "evaluation: %s", why);
			trainer_ingest_close(&e->in);
		}
	}
	e->opened = rc == 0;
	// its own activations, the training model's weights (bf16 copies or the f32 master) in place
	if (!rc && ((rc = clip_model_create(&e->model, ctx, &m->cfg, EVAL_EMBED_BLOCK, m->dt)) ||
		    (model_weights_release(&e->model->w), rc = model_weights_bind(&e->model->w, &m->cfg, &m->weights))))
		snprintf(err, errlen, "evaluation: cannot create the evaluation model: %s", strerror(-rc));
	if (!rc && (rc = alloc(e, e->model)) < 0)
		snprintf(err, errlen, "evaluation: out of memory for %lld held-out samples", (long long)e->n);
	if (rc) {
		trainer_eval_close(e);
		return rc;
	}
	*out = e;
	return 0;
}

// the first `valid` rows of feat (B, E) in dtype of src, widened, into dst rows by sample id
static int place(TrainerEval *e, const KTensor *src, float *dst, int valid, int E)
{
	int rc = src->dtype == KDT_F32 ? kern_copy(e->ctx, &e->feat, src) : kern_convert(e->ctx, &e->feat, src);
	float *host = malloc(kern_nbytes(&e->feat));
	if (!host)
		return -ENOMEM;
	if (!rc)
		rc = kern_download(e->ctx, host, kern_nbytes(&e->feat), &e->feat);
	for (int k = 0; !rc && k < valid; k++)
		memcpy(dst + e->ids[k] * E, host + (size_t)k * E, sizeof(float) * (size_t)E);
	free(host);
	return rc;
}

// one batch of `valid` samples from the ring through both towers
static int embed_batch(TrainerEval *e, ClipModel *m, int valid, char *err, size_t errlen)
{
	const ModelConfig *c = &m->cfg;
	KTensor cv, tv;
	int rc = kern_view(&cv, &e->clips, 0, 5, (const int64_t[]){valid, c->frames, c->image_size, c->image_size, 3});
	if (!rc)
		rc = kern_view(&tv, &e->text, 0, 2, (const int64_t[]){valid, c->ctx_len});
	IngestBatch b = {.batch = valid, .clips = &cv, .text = &tv, .ids = e->ids, .pos = e->gpos};
	const uint64_t errors = e->in.errors;
	char why[512];
	if (!rc && (rc = trainer_ingest_batch(&e->in, &b, e->n, e->timeout_s, why, sizeof why)) < 0) {
		snprintf(err, errlen, "evaluation ring: %s", why);
		return rc;
	}
	if (e->in.errors != errors) {
		snprintf(err, errlen,
			 "the evaluation ring delivered %llu sample(s) the loaders could not decode (see the "
			 "loaderd --eval log)",
			 (unsigned long long)(e->in.errors - errors));
		return -EIO;
	}
	for (int k = 0; k < valid; k++) {
		if (e->seen[e->ids[k]]++) {
			snprintf(err, errlen,
				 "the evaluation ring delivered sample %lld twice in one pass (is it the eval ring "
				 "of this manifest?)",
				 (long long)e->ids[k]);
			return -EINVAL;
		}
	}
	if (!rc)
		rc = eval_block_forward(m, &e->clips, &e->pos, &e->text);
	if (!rc)
		rc = place(e, &m->vfeat, e->vfeat, valid, c->embed_dim);
	if (!rc)
		rc = place(e, &m->tfeat, e->tfeat, valid, c->embed_dim);
	if (rc)
		snprintf(err, errlen, "evaluation forward: %s (%s)", strerror(-rc), kern_error_message(e->ctx));
	return rc;
}

int trainer_eval_run(TrainerEval *e, ClipModel *m, int64_t step, const char *path, EvalReport *out, char *err,
		     size_t errlen)
{
	memset(e->seen, 0, (size_t)e->n);
	int rc = 0;
	(void)m; // its weights are read in place through e->model
	for (int64_t done = 0; done < e->n && !rc; done += EVAL_EMBED_BLOCK) {
		int valid = (int)(e->n - done < EVAL_EMBED_BLOCK ? e->n - done : EVAL_EMBED_BLOCK);
		rc = embed_batch(e, e->model, valid, err, errlen);
	}
	EvalReport r;
	memset(&r, 0, sizeof r);
	if (!rc)
		rc = eval_score_retrieval(e->man, e->vfeat, e->tfeat, e->n, e->model->cfg.embed_dim, e->match_caption,
					  e->sim, &r, err, errlen);
	if (rc)
		return rc < 0 ? rc : -EINVAL;
	FILE *f = fopen(path, "a");
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "cannot append to %s: %s", path, strerror(-rc));
		return rc;
	}
	eval_report_json(f, &r, step, "trainer");
	if (fclose(f)) {
		rc = -errno;
		snprintf(err, errlen, "writing %s: %s", path, strerror(-rc));
		return rc;
	}
	*out = r;
	return 0;
}
