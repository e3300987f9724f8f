// The trainer's in-process evaluation: a thin wrapper over eval_run (tools/eval_run.h) so the
// trainer main stays free of manifest and decoder details; without libav it says so.
#include "trainer_eval.h" // defines: TrainerEval, ...

#include <errno.h>  // defines: ENOTSUP, ENOMEM, errno
#include <stdio.h>  // defines: snprintf, fopen
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: strerror

#if HAVE_LIBAV
#include <sys/stat.h> // defines: stat

#include "eval_run.h"        // defines: EvalOpts, EvalReport, eval_run, eval_report_json (tools/)
#include "eval_embed.h"      // defines: eval_check_manifest
#include "ld_decode.h"       // defines: ld_libav_quiet
#include "manifest_reader.h" // defines: manifest_open, manifest_close, manifest_resolve

struct TrainerEval {
	Manifest *man;
	char bpe[4096];
	EvalOpts opts;
	ClipModel *model; // batch EVAL_EMBED_BLOCK, its weights views of the training model's parameters
};

int trainer_eval_open(TrainerEval **out, const char *manifest, const ClipModel *m, int match_caption, char *err,
		      size_t errlen)
{
	TrainerEval *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	char why[1024];
	int rc = manifest_open(&e->man, manifest, why, sizeof why);
	if (rc) {
		snprintf(err, errlen, "--eval-manifest %s: %s", manifest, why);
		free(e);
		return rc < 0 ? rc : -EINVAL;
	}
	// evaluation runs fixed blocks (features independent of the training batch), on a model of
	// that batch whose weights are views into the training parameters: no copy per evaluation
	if ((rc = clip_model_create(&e->model, m->ctx, &m->cfg, EVAL_EMBED_BLOCK, KDT_F32)) ||
	    (model_weights_release(&e->model->w), rc = model_weights_bind(&e->model->w, &m->cfg, &m->params))) {
		snprintf(err, errlen, "--eval-manifest: cannot create the evaluation model: %s", strerror(-rc));
		trainer_eval_close(e);
		return rc;
	}
	if ((rc = eval_check_manifest(e->model, e->man, why, sizeof why))) {
		snprintf(err, errlen, "--eval-manifest %s: %s", manifest, why);
		trainer_eval_close(e);
		return rc < 0 ? rc : -EINVAL;
	}
	struct stat st;
	if (!manifest_resolve(e->man, "bpe_merges.txt", e->bpe, sizeof e->bpe) && !stat(e->bpe, &st))
		e->opts.bpe = e->bpe;
	e->opts.match_caption = match_caption;
	ld_libav_quiet();
	*out = e;
	return 0;
}

int trainer_eval_run(TrainerEval *e, ClipModel *m, int64_t step, const char *path, double *t2v_r1, double *v2t_r1,
		     double *chance_r1, char *err, size_t errlen)
{
	EvalReport r;
	int rc = eval_run(e->model, e->man, &e->opts, &r, err, errlen); // reads m's parameters through its views
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
	*t2v_r1 = 100.0 * r.t2v.r1;
	*v2t_r1 = 100.0 * r.v2t.r1;
	*chance_r1 = 100.0 * r.chance.r1;
	return 0;
}

void trainer_eval_close(TrainerEval *e)
{
	if (!e)
		return;
	if (e->man)
		manifest_close(e->man);
	clip_model_destroy(e->model);
	free(e);
}

#else

int trainer_eval_open(TrainerEval **out, const char *manifest, const ClipModel *m, int match_caption, char *err,
		      size_t errlen)
{
	snprintf(err, errlen, "--eval-manifest: this trainer was built without libav (FFmpeg), which decoding needs");
	return -ENOTSUP;
}

int trainer_eval_run(TrainerEval *e, ClipModel *m, int64_t step, const char *path, double *t2v_r1, double *v2t_r1,
		     double *chance_r1, char *err, size_t errlen)
{
	return -ENOTSUP;
}

void trainer_eval_close(TrainerEval *e)
{
}

#endif
