// tools/eval: zero-shot text<->video retrieval (R@1/5/10, median rank, chance; EPIC-style mAP and
// nDCG with a relevance matrix) and zero-shot classification of a checkpoint on a held-out manifest.
#include "eval_model.h" // defines: EvalModel, eval_model_load, eval_model_init, eval_model_free
#include "eval_run.h"   // defines: EvalOpts, EvalReport, eval_run, eval_report_table, eval_report_json
#include "kern_ops.h"   // defines: kern_ctx_create_cpu, kern_ctx_destroy
#include "ld_decode.h"  // defines: ld_libav_quiet
#include "log.h"        // defines: log_init, log_info, log_fatalx

#include <errno.h>    // defines: errno
#include <stdio.h>    // defines: printf, fopen
#include <stdlib.h>   // defines: strtol, strtoull
#include <string.h>   // defines: strcmp, strchr, strrchr, strncmp
#include <sys/stat.h> // defines: stat
#include <time.h>     // defines: clock_gettime

static void usage(void)
{
	printf("usage: eval --manifest HELDOUT (--ckpt RUN_DIR|CKPT_DIR|FILE | --weights FILE | --init SEED) [options]\n"
	       "Embeds every sample of the manifest (clip: video tower, caption: text tower) and reports\n"
	       "text->video and video->text R@1/R@5/R@10, median and mean rank next to chance.\n"
	       "  --ckpt PATH         a run directory (its ckpt/LATEST), a checkpoint directory (LATEST) or a\n"
	       "                      ckpt-*.safetensors file; the model configuration comes from the checkpoint\n"
	       "  --weights FILE      open_clip-named safetensors weights (give --model and sizes)\n"
	       "  --init SEED         an untrained model initialised from SEED (the chance baseline)\n"
	       "  --model PRESET      tiny | vit-s16 | vit-b16 | vit-l14; with --ckpt it must match the checkpoint\n"
	       "  --SIZE N            model size overrides: %s\n"
	       "  --act gelu|quickgelu   MLP activation of --weights / --init (quickgelu: OpenAI CLIP weights)\n"
	       "  --match instance|caption   a retrieval hit is the query's own sample (default), or any\n"
	       "                      sample with the same caption (datasets that repeat captions)\n"
	       "  --batch-size B      clips decoded per round (default 16); the model runs fixed blocks of 8,\n"
	       "                      so the features and every figure are the same for any B\n"
	       "  --threads N         compute threads (default: all cores); --decoders N clips decoded at once\n"
	       "  --relevance FILE    EPIC-style mAP and nDCG against a relevance matrix (format in the README)\n"
	       "  --relevance-from-captions   the same with relevance from synth captions 'a <colour> <shape>\n"
	       "                      <action>': 1/2 same object + 1/2 same action\n"
	       "  --classes FILE --labels FILE   zero-shot classification: class names, one label per sample\n"
	       "  --classes-from action|object|caption   classes and labels from synth captions instead\n"
	       "  --prompt TEMPLATE   class prompt, {} = class name (default \"a video of {}\")\n"
	       "  --bpe FILE          merges file of the manifest's captions (default: bpe_merges.txt next to\n"
	       "                      the manifest, if there is one); needed for prompts and caption classes\n"
	       "  --json              print one JSON line instead of the table\n"
	       "  --append FILE       also append the JSON line to FILE (e.g. RUN_DIR/eval.jsonl for tools/plot)\n"
	       "  --quiet             no progress lines\n",
	       model_config_keys());
}

typedef struct {
	double t0, last;
	int quiet;
} Progress;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress(void *arg, int64_t done, int64_t total)
{
	Progress *p = arg;
	double t = now_s();
	if (p->quiet || (done < total && t - p->last < 5))
		return;
	p->last = t;
	double rate = (double)done / (t - p->t0 + 1e-9), eta = rate > 0 ? (double)(total - done) / rate : 0;
	log_info("embedded %lld/%lld samples (%.0f%%), %.1f samples/s, ETA %d:%02d", (long long)done, (long long)total,
		 100.0 * (double)done / (double)total, rate, (int)eta / 60, (int)eta % 60);
}

static int is_key(const char *k)
{
	const char *keys = model_config_keys();
	size_t l = strlen(k);
	for (const char *s = keys; (s = strstr(s, k)); s += l)
		if ((s == keys || s[-1] == ' ') && (s[l] == ' ' || !s[l]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	log_init("eval", LOG_INFO);
	const char *manifest = NULL, *ckpt = NULL, *weights = NULL, *append = NULL, *model = NULL;
	const char *init = NULL;
	int json = 0, batch = 16, threads = 0, quiet = 0, sized = 0;
	EvalOpts o = { 0 };
	ModelConfig want;
	model_config_preset(&want, "tiny");
	char sizes[64][2][64];
	int n_sizes = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage();
			return 0;
		}
		if (strncmp(a, "--", 2))
			log_fatalx("unexpected argument '%s' (see --help)", a);
		const char *name = a + 2;
		// flags without a value
		if (!strcmp(name, "json")) {
			json = 1;
			continue;
		} else if (!strcmp(name, "quiet")) {
			quiet = 1;
			continue;
		} else if (!strcmp(name, "relevance-from-captions")) {
			o.relevance_from_captions = 1;
			continue;
		}
		if (i + 1 >= argc)
			log_fatalx("%s needs a value (see --help)", a);
		const char *v = argv[++i];
		if (!strcmp(name, "manifest"))
			manifest = v;
		else if (!strcmp(name, "ckpt"))
			ckpt = v;
		else if (!strcmp(name, "weights"))
			weights = v;
		else if (!strcmp(name, "init"))
			init = v;
		else if (!strcmp(name, "model"))
			model = v;
		else if (!strcmp(name, "append"))
			append = v;
		else if (!strcmp(name, "relevance"))
			o.relevance = v;
		else if (!strcmp(name, "classes"))
			o.classes = v;
		else if (!strcmp(name, "labels"))
			o.labels = v;
		else if (!strcmp(name, "classes-from"))
			o.classes_from = v;
		else if (!strcmp(name, "prompt"))
			o.prompt = v;
		else if (!strcmp(name, "bpe"))
			o.bpe = v;
		else if (!strcmp(name, "match")) {
			if (strcmp(v, "instance") && strcmp(v, "caption"))
				log_fatalx("--match '%s' is neither instance nor caption", v);
			o.match_caption = !strcmp(v, "caption");
		}
		else if (!strcmp(name, "batch-size") || !strcmp(name, "threads") || !strcmp(name, "decoders")) {
			char *end;
			long x = strtol(v, &end, 10);
			if (*end || end == v || x < 1 || x > 65536)
				log_fatalx("--%s '%s' is not a positive integer", name, v);
			*(!strcmp(name, "batch-size") ? &batch : !strcmp(name, "threads") ? &threads : &o.embed.decoders) =
				(int)x;
		} else if ((is_key(name) || !strcmp(name, "act")) && n_sizes < 64) {
			snprintf(sizes[n_sizes][0], 64, "%s", name);
			snprintf(sizes[n_sizes++][1], 64, "%s", v);
			sized = 1;
		} else
			log_fatalx("unknown option %s (see --help)", a);
	}
	if (!manifest)
		log_fatalx("--manifest HELDOUT is required (see --help)");
	if (!!ckpt + !!weights + !!init != 1)
		log_fatalx("give exactly one of --ckpt, --weights, --init (see --help)");
	if (model && model_config_preset(&want, model))
		log_fatalx("--model '%s' is not a preset (tiny, vit-s16, vit-b16, vit-l14)", model);
	for (int k = 0; k < n_sizes; k++)
		if (model_config_set(&want, sizes[k][0], sizes[k][1]))
			log_fatalx("--%s '%s' is not a positive integer", sizes[k][0], sizes[k][1]);
	char msg[200];
	if (model_config_check(&want, msg, sizeof msg))
		log_fatalx("model: %s", msg);

	// the manifest first: its errors are cheaper than loading a model
	Manifest *man;
	char err[1024];
	if (manifest_open_verified(&man, manifest, err, sizeof err))
		log_fatalx("manifest %s: %s", manifest, err);
	char bpe_default[4096];
	struct stat st;
	if (!o.bpe && !manifest_resolve(man, "bpe_merges.txt", bpe_default, sizeof bpe_default) &&
	    !stat(bpe_default, &st))
		o.bpe = bpe_default;

	KernCtx *ctx;
	if (kern_ctx_create_cpu(&ctx, threads) < 0)
		log_fatalx("cannot create the CPU compute context");
	EvalModel em;
	int rc;
	if (init) {
		char *end;
		unsigned long long seed = strtoull(init, &end, 10);
		if (*end || end == init)
			log_fatalx("--init '%s' is not a seed (an integer)", init);
		rc = eval_model_init(&em, ctx, &want, seed, EVAL_EMBED_BLOCK, err, sizeof err);
	} else {
		rc = eval_model_load(&em, ctx, ckpt ? ckpt : weights, (model || sized || weights) ? &want : NULL, EVAL_EMBED_BLOCK,
				     err, sizeof err);
	}
	if (rc)
		log_fatalx("%s", err);
	char cfgs[200];
	eval_config_str(&em.cfg, cfgs, sizeof cfgs);
	ld_libav_quiet();
	const ManifestHeader *h = manifest_header(man);
	if (!quiet)
		log_info("model [%s] from %s (step %lld); %llu samples of %s, batch %d, %d threads", cfgs, em.source,
			 (long long)em.step, (unsigned long long)h->n_samples, manifest, batch, kern_ctx_threads(ctx));
	Progress pr = { .t0 = now_s(), .last = now_s(), .quiet = quiet };
	o.embed.round = batch;
	o.embed.progress = progress;
	o.embed.progress_arg = &pr;
	EvalReport r;
	if ((rc = eval_run(em.model, man, &o, &r, err, sizeof err)))
		log_fatalx("%s", err);
	if (json)
		eval_report_json(stdout, &r, em.step, em.source);
	else
		eval_report_table(stdout, &r);
	if (append) {
		FILE *f = fopen(append, "a");
		if (!f)
			log_fatal("cannot append to %s", append);
		eval_report_json(f, &r, em.step, em.source);
		if (fclose(f))
			log_fatal("writing %s", append);
	}
	eval_model_free(&em);
	kern_ctx_destroy(ctx);
	manifest_close(man);
	return 0;
}
