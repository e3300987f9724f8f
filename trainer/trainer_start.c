// The trainer's checks at start (trainer_start.h): vocabularies, --init-from, a resume's batch and
// LR schedule, alone in trainer query check-start. The vocabulary rule: the captions' token ids mean words
// only under the merges that made them, so the training manifest, the held-out one and the
// weights a run starts from must share one vocabulary; where the weights record none (open_clip's
// files) a 49408-token embedding is OpenAI CLIP's (bpe_simple_vocab_16e6.txt.gz).
#include "trainer_start.h" // defines: TrainerVocab, trainer_start_vocab, ...

#include <errno.h>  // defines: EINVAL, ENOENT, ENOMEM
#include <stdio.h>  // defines: snprintf, sscanf
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: strcmp, strerror

#include "bpe.h" // defines: BPE_OPENAI_VOCAB_HASH
#include "log.h" // defines: log_info, log_warnx, log_fatalx
#include "manifest.h" // defines: Manifest, manifest_open, manifest_vocab, manifest_vocab_check, manifest_identity, manifest_close
#include "shell_quote.h" // defines: shell_quoted
#include "trainer_mae.h" // defines: train_mae_resume_check

#define OPENAI_VOCAB 49408

int trainer_start_vocab(const TrainerConfig *c, TrainerVocab *v, char *err, size_t errlen)
{
	memset(v, 0, sizeof *v);
	Manifest *m;
	char why[1024], who[1200];
	int rc;
	if (c->manifest[0]) {
		if ((rc = manifest_open(&m, c->manifest, why, sizeof why)) < 0) {
			snprintf(err, errlen, "--manifest %s: %s", c->manifest, why);
			return rc;
		}
		manifest_vocab(m, &v->hash, v->merges, sizeof v->merges);
		v->data_id = manifest_identity(m);
		snprintf(v->data_hex, sizeof v->data_hex, "%016llx", (unsigned long long)v->data_id);
		v->label_heads = (int)manifest_label_heads(m);
		for (int k = 0; k < v->label_heads && k < 2; k++)
			v->label_classes[k] = (int)manifest_label_classes(m, (uint32_t)k);
		manifest_close(m);
		if (v->hash)
			snprintf(v->hex, sizeof v->hex, "%016llx", (unsigned long long)v->hash);
	}
	if (c->classify && (!c->manifest[0] || v->label_heads < 1 || v->label_heads > 2)) {
		snprintf(
			err, errlen,
			"--objective classify needs a --manifest with class labels (1 or 2 heads: tools/prep --format labels-csv): %s",
			!c->manifest[0]  ? "no --manifest given"
			: v->label_heads ? "it has more than 2 heads"
					 : "it has none");
		return -EINVAL;
	}
	if (!c->eval_manifest[0])
		return 0;
	if ((rc = manifest_open(&m, c->eval_manifest, why, sizeof why)) < 0) {
		snprintf(err, errlen, "--eval-manifest %s: %s", c->eval_manifest, why);
		return rc;
	}
	char path[1100];
	snprintf(path, sizeof path, "--eval-manifest %s", c->eval_manifest);
	snprintf(who, sizeof who, "the training manifest %s", c->manifest);
	rc = manifest_vocab_check(m, path, v->hash, who, v->merges, err, errlen);
	manifest_close(m);
	return rc;
}

int trainer_start_init_report(const TrainerConfig *c, const TrainerVocab *v, const StInitOpts *io, char *err,
			      size_t errlen)
{
	log_info("weights from %s (--init-from): loaded %s", c->init_from, io->loaded);
	if (io->note[0])
		log_info("--init-from: %s", io->note);
	if (c->classify) // no text tower read, no temperature: the file's vocabulary does not matter
		return 0;
	log_info("--init-from: τ reset to %g, the loss's --temperature (%s): the file's temperature was learned "
		 "for its own loss and batch, and --loss %s starts its own from --temperature",
		 c->loss.tau_init, io->tau, c->loss_name);
	const int openai = !io->vocab_hash && io->file_vocab == OPENAI_VOCAB;
	const uint64_t want = io->vocab_hash ? io->vocab_hash : openai ? BPE_OPENAI_VOCAB_HASH : 0;
	const char *merges = openai ? "bpe_simple_vocab_16e6.txt.gz (OpenAI CLIP's merges, as open_clip ships them)"
				    : "FILE (the merges file these weights were trained with)";
	if (!want)
		log_warnx(
			"--init-from %s records no vocabulary: the captions must be prepared with the merges file these "
			"weights were trained with (tools/prep --bpe FILE), or the text tower reads other words",
			c->init_from);
	else if (!v->hash)
		log_info("--init-from: the weights' vocabulary is bpe %016llx%s; the captions must be prepared with "
			 "its merges file (tools/prep --bpe %s); without --manifest this is not checked",
			 (unsigned long long)want, openai ? " (OpenAI's, a 49408-token embedding)" : "", merges);
	if (!want || !v->hash || want == v->hash) {
		if (want && v->hash)
			log_info("--init-from: the weights' vocabulary (bpe %016llx) is the training manifest's",
				 (unsigned long long)want);
		return 0;
	}
	snprintf(err, errlen,
		 "--init-from %s: the weights read captions of vocabulary bpe %016llx%s, the training manifest %s was "
		 "tokenized with bpe %016llx: its captions would read as other words; prepare the data with the "
		 "weights' merges file (the same tools/prep command plus --bpe %s)",
		 c->init_from, (unsigned long long)want, openai ? " (OpenAI CLIP's: a 49408-token embedding)" : "",
		 c->manifest, (unsigned long long)v->hash, merges);
	return -EINVAL;
}

int trainer_start_resume(const TrainerConfig *c, TrainerVocab *v, OptConfig *opt, int64_t *step, char *note,
			 size_t notelen, char *err, size_t errlen)
{
	note[0] = 0;
	*step = -1;
	if (!c->resume)
		return 0;
	char dir[1100], path[4400], why[512];
	snprintf(dir, sizeof dir, "%s/ckpt", c->run_dir);
	if (ckpt_latest_path(dir, path, sizeof path, why, sizeof why) < 0)
		return 0; // no checkpoint: a fresh start (load_or_init says so); a bad marker: its load does
	StFile *f;
	if (st_open_as(&f, path, "not a valid checkpoint file", why, sizeof why) < 0)
		return 0; // its load names the problem
	const StTensor *st = st_find(f, "state.step");
	int64_t s = 0;
	if (st && st->nbytes == 8)
		memcpy(&s, st->data, 8);
	*step = s;
	const char *b = st_meta(f, "avclip.batch"), *sc = st_meta(f, "avclip.schedule");
	int rc = train_mae_resume_check(c->mae, &c->mae_cfg, f, path, (long long)s, err, errlen);
	if (!rc && b && atoi(b) != c->batch_size) {
		snprintf(
			err, errlen,
			"cannot resume with --batch-size %d: the checkpoint of step %lld (%s) was trained with "
			"--batch-size %s, and the epoch, FastCLIP's γ schedule and the data stream count its steps of %s "
			"x %d samples (another batch would recompute them as if the whole run had used it); resume with "
			"--batch-size %s, or start a new run from its weights (tools/export, then --init-from)",
			c->batch_size, (long long)s, path, b, b, c->ranks, b);
		rc = -EINVAL;
	}
	const char *cv = st_meta(f, "avclip.vocab"), *cm = st_meta(f, "avclip.merges");
	if (!rc && cv && *cv && v->hash && strtoull(cv, NULL, 16) != v->hash) {
		snprintf(err, errlen,
			 "cannot resume on --manifest %s: the checkpoint of step %lld (%s) was trained on captions of "
			 "vocabulary bpe %s, this manifest's is bpe %s; resume with the run's own manifest, or prepare "
			 "this data again with the same tools/prep command plus --bpe %s",
			 c->manifest, (long long)s, path, cv, v->hex,
			 cm && *cm ? shell_quoted(cm) : "FILE (the run's merges file)");
		rc = -EINVAL;
	}
	// the dataset after the vocabulary: --resume-on-new-data cannot help with another vocabulary
	char newdata[1600] = "";
	const char *cd = st_meta(f, "avclip.data"), *cn = st_meta(f, "avclip.data_name");
	if (!rc && cd && *cd && v->data_id && strtoull(cd, NULL, 16) != v->data_id) {
		if (!c->resume_on_new_data) {
			snprintf(
				err, errlen,
				"cannot resume on --manifest %s (dataset %s): the checkpoint of step %lld (%s) was trained "
				"on %s (dataset %s); resume with that manifest, or pass --resume-on-new-data to go on "
				"from its weights and optimizer on this dataset (the FastCLIP u estimators start over)",
				c->manifest, v->data_hex, (long long)s, path, cn && *cn ? cn : "another manifest", cd);
			rc = -EINVAL;
		} else {
			v->new_data = 1;
			snprintf(
				newdata, sizeof newdata,
				"plan: --resume-on-new-data: the checkpoint of step %lld was trained on %s (dataset %s); "
				"its weights, optimizer and τ go on over --manifest %s (dataset %s), whose FastCLIP u "
				"estimators start over",
				(long long)s, cn && *cn ? cn : "another manifest", cd, c->manifest, v->data_hex);
		}
	}
	long long total, warm, js, jl;
	double jlr;
	if (!rc && sc && sscanf(sc, "%lld %lld %lld %lld %lg", &total, &warm, &js, &jl, &jlr) == 5) {
		OptConfig old = *opt;
		old.total_steps = total, old.warmup_steps = warm, old.join_step = js, old.join_len = jl,
		old.join_lr = jlr;
		if (total == opt->total_steps && warm == opt->warmup_steps) {
			opt->join_step = js, opt->join_len = jl, opt->join_lr = jlr; // the schedule goes on
		} else if (s >= opt->total_steps) {
			snprintf(
				note, notelen,
				"plan: resume at step %lld with --steps %lld: nothing left to train (the checkpoint's run "
				"had --steps %lld); raise --steps to go further",
				(long long)s, (long long)opt->total_steps, total);
		} else {
			optim_join_schedule(opt, &old, s);
			snprintf(
				note, notelen,
				"plan: --steps changed from %lld to %lld at step %lld: the cosine is now the one of a "
				"%lld-step run (lr-min at step %lld); the LR goes linearly from the checkpoint's %.3g to "
				"that cosine's %.3g over %lld steps (--warmup-steps, else a tenth of the steps left), then "
				"follows it",
				total, (long long)opt->total_steps, (long long)s, (long long)opt->total_steps,
				(long long)opt->total_steps, optim_lr(&old, s > 0 ? s - 1 : 0),
				optim_lr(opt, opt->join_step + opt->join_len - 1), (long long)opt->join_len);
		}
	} else if (!rc && !sc) {
		snprintf(
			note, notelen,
			"plan: the checkpoint of step %lld records no LR schedule (an older build): the LR follows the "
			"cosine of --steps %lld from there, without a join",
			(long long)s, (long long)opt->total_steps);
	}
	if (newdata[0]) { // besides what the schedule says
		size_t k = strlen(note);
		snprintf(note + k, notelen - k, "%s%s", k ? "; " : "", newdata);
	}
	st_close(f);
	return rc;
}

// --init-from loaded into this model on the CPU: the whole load the run will do, before it starts
static int check_init_from(const TrainerConfig *c, const TrainerVocab *v, char *err, size_t errlen)
{
	KernCtx *ctx;
	int n, rc;
	int64_t floats;
	model_layout(&c->model, NULL, &n, &floats);
	ParamSpec *specs = calloc((size_t)n, sizeof *specs);
	if (!specs)
		return -ENOMEM;
	model_layout(&c->model, specs, &n, &floats);
	if ((rc = kern_ctx_create_cpu(&ctx, 1)) < 0) {
		free(specs);
		snprintf(err, errlen, "cannot create a CPU context to check --init-from: %s", strerror(-rc));
		return rc;
	}
	KTensor p;
	StInitOpts io = {.skip_mismatched = c->init_skip_mismatched, .visual_only = c->classify};
	rc = kern_alloc(ctx, &p, KDT_F32, 1, &floats);
	if (rc == 0 && (rc = kern_zero(ctx, &p)) == 0 &&
	    (rc = st_openclip_init(c->init_from, ctx, &c->model, specs, n, &p, &io, err, errlen)) == 0)
		rc = trainer_start_init_report(c, v, &io, err, errlen);
	else if (rc < 0 && !err[0])
		snprintf(err, errlen, "--init-from %s: %s", c->init_from, strerror(-rc));
	kern_free(ctx, &p);
	kern_ctx_destroy(ctx);
	free(specs);
	return rc;
}

int trainer_check_start(const TrainerConfig *c)
{
	static TrainerVocab v;
	char err[2048] = "", note[1024];
	int64_t step;
	OptConfig opt = c->opt;
	if (trainer_start_vocab(c, &v, err, sizeof err) < 0 ||
	    trainer_start_resume(c, &v, &opt, &step, note, sizeof note, err, sizeof err) < 0)
		log_fatalx("%s", err);
	if (note[0])
		log_info("%s", note);
	if (c->init_from[0] && step < 0 && check_init_from(c, &v, err, sizeof err) < 0)
		log_fatalx("--init-from: %s", err);
	log_info("check-start: the run can start (vocabulary %s%s%s)", v.hex[0] ? "bpe " : "unknown: no --manifest",
		 v.hex, c->eval_manifest[0] && v.hex[0] ? ", --eval-manifest agrees" : "");
	return 0;
}
