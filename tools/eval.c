// tools/eval: zero-shot text<->video retrieval (R@1/5/10, median rank, chance; EPIC-style mAP and
// nDCG with a relevance matrix) and zero-shot classification of a checkpoint on a held-out manifest,
// and the egocentric benchmarks from their own files (--task ek100-mir|ek100-cls|...).
#include "eval_model.h"     // defines: EvalModel, eval_model_load, eval_model_init, eval_model_free
#include "proc_time.h"      // defines: time_mono_s
#include "eval_run.h"       // defines: EvalOpts, EvalReport, eval_run, eval_report_table, eval_report_json
#include "eval_bench_run.h" // defines: EvalBenchOpts, EvalBenchReport, eval_bench_run, eval_bench_report_*
#include "eval_cls.h"       // defines: EvalClsOpts, EvalClsReport, eval_cls_run, eval_cls_report_*
#include "class_names.h"    // defines: ClassNames, class_names_read, class_names_free
#include "flags.h"          // defines: FlagSpec, FlagTable, FLAG_AT, FlagRest, flags_parse, flags_check_known, ...
#include "kern_ops.h"       // defines: kern_ctx_create_cpu, kern_ctx_destroy
#include "avlog.h"          // defines: avlog_install, avlog_summary
#include "log.h"            // defines: log_init, log_info, log_warnx, log_fatalx

#include <stdio.h>    // defines: printf, fopen
#include <stdlib.h>   // defines: strtol, strtoull
#include <string.h>   // defines: strcmp, strchr, strrchr, strncmp
#include <sys/stat.h> // defines: stat
#include <time.h>     // defines: clock_gettime

// the command line: EvalOpts' own fields and the program's; model sizes are flags the table
// does not name (model_config_set checks them)
typedef struct {
	const char *manifest, *ckpt, *weights, *append, *model;
	uint64_t init_seed;
	int init_given, json, batch, threads, quiet, libav_verbose, help;
	char match[16], task[16], frame_protocol[16];
	const char *bench_file, *bench_aux, *bench_relevance, *templates, *views;
	const char *train_manifest; // --task probe
	const char *heads, *save_heads;
	int clip_stride;
	EvalProbeOpts probe;
	EvalOpts o;
} EvalFlags;

#define E(f) FLAG_AT(EvalFlags, f)
static const FlagSpec flag_table[] = {
	{"manifest", FLAG_STRPTR, E(manifest), 0, 0, NULL, .help = "the held-out manifest to read (required)"},
	{"task", FLAG_CHOICE, E(task), 0, 0, "retrieval",
	 .help = "retrieval (R@K both ways; --relevance/--classes add mAP/nDCG and zero-shot classification); classify "
		 "(the classification heads of a trainer --objective classify checkpoint, or --heads, on the manifest's "
		 "labels); probe (a linear probe on the frozen video features: heads fitted on --train-manifest's labels); "
		 "or a benchmark on the manifest tools/prep --format TASK made from its test list: ek100-mir, "
		 "ek100-cls, charades-ego, egtea, egomcq (docs/eval.md: Egocentric zero-shot benchmarks)",
	 .choices = "retrieval|classify|probe|ek100-mir|ek100-cls|charades-ego|egtea|egomcq"},
	{"heads", FLAG_STRPTR, E(heads), 0, 0, NULL,
	 .help = "--task classify: the classification heads from this file (what --save-heads writes) instead of the "
		 "checkpoint's"},
	{"save-heads", FLAG_STRPTR, E(save_heads), 0, 0, NULL,
	 .help = "--task probe: also write the fitted heads to this file (safetensors; --task classify --heads reads "
		 "it)"},
	{"train-manifest", FLAG_STRPTR, E(train_manifest), 0, 0, NULL,
	 .help = "--task probe: the labelled manifest whose clips' frozen features the probe is fitted on (the same label "
		 "heads and classes as --manifest)"},
	{"probe-l2", FLAG_DOUBLE, E(probe.l2), 0, 1e6, "1e-3",
	 .help = "--task probe: the L2 penalty (l2/2)|W|^2 on the standardised features' weights (scikit-learn's C = "
		 "1 / (l2 x train clips))"},
	{"probe-iters", FLAG_INT, E(probe.max_iter), 1, 1000000, "1000",
	 .help = "--task probe: L-BFGS iterations at most (the fit stops earlier once every gradient component is "
		 "<= 1e-6; the report says whether it did)"},
	{"clip-stride", FLAG_INT, E(clip_stride), 0, 1024, "0",
	 .help = "--task classify and probe: with --views CxS of C > 1 temporal clips, the frames of a clip are this "
		 "many decoded frames apart (0: 2, AVION's --clip-stride); given with C = 1, the one clip is dense too "
		 "(default: segment midpoints, as the trainer samples)"},
	{"bench-file", FLAG_STRPTR, E(bench_file), 0, 0, NULL,
	 .help = "the benchmark's test list: EPIC_100_retrieval_test.csv, EPIC_100_validation.csv, "
		 "CharadesEgo_v1_test_only1st.csv, an EGTEA split file, egomcq.json (the file the manifest was prepared from)"},
	{"bench-aux", FLAG_STRPTR, E(bench_aux), 0, 0, NULL,
	 .help = "its second file: EPIC_100_retrieval_test_sentence.csv, EPIC_100_train.csv (ek100-cls: the pairs of "
		 "the label space), Charades_v1_classes.txt, EGTEA's action_idx.txt (EgoMCQ has none)"},
	{"templates", FLAG_STRPTR, E(templates), 0, 0, "lavila",
	 .help = "class prompts of ek100-cls, charades-ego and egtea: lavila (\"#C C {}|#C {}\", their embeddings averaged, as "
		 "LaViLa), none (\"{}\"), or your own, '|'-separated"},
	{"frame-protocol", FLAG_CHOICE, E(frame_protocol), 0, 0, "benchmark",
	 .help = "benchmark: the benchmark's frames per clip or an error where the model or the embed path cannot take "
		 "them; midpoints: the model's frames at segment midpoints, centre crop, marked as not the benchmark's",
	 .choices = "benchmark|midpoints"},
	{"views", FLAG_STRPTR, E(views), 0, 0, NULL,
	 .help = "egtea: C temporal clips spread over the video x S spatial crops (1: centre, 3: both ends and the centre "
		 "of the long side), the class scores the max over them as LaViLa (default 10x3, EGTEA's protocol; 1x1 "
		 "with --frame-protocol midpoints and the other tasks); classify and probe: the held-out clips' views, the logits averaged "
		 "over them as AVION (default 1x1: segment midpoints, centre crop; 1xS: S crops of it; C > 1: dense "
		 "clips, --clip-stride)"},
	{"ckpt", FLAG_STRPTR, E(ckpt), 0, 0, NULL,
	 .help = "a run directory (its ckpt/LATEST), a checkpoint directory (LATEST; RUN_DIR/ckpt/best holds the trainer's "
		 "--keep-best one) or a ckpt-*.safetensors file; the "
		 "model configuration comes from the checkpoint"},
	{"weights", FLAG_STRPTR, E(weights), 0, 0, NULL,
	 .help = "open_clip-named safetensors weights; tools/export's record their sizes and --act, which the size flags "
		 "may only repeat; for others (open_clip's own) give --model and sizes"},
	{"init-seed", FLAG_U64, E(init_seed), 0, 0, NULL,
	 .help = "an untrained model whose weights come from this seed, as the trainer's --init-seed (the chance baseline)"},
	{"model", FLAG_STRPTR, E(model), 0, 0, NULL,
	 .help = "model preset: tiny | vit-s16 | vit-b16 | vit-l14 (default tiny); with --ckpt it must match the checkpoint"},
	{"match", FLAG_CHOICE, E(match), 0, 0, "instance",
	 .help = "a retrieval hit is the query's own sample, or any sample with the same caption (datasets that repeat "
		 "captions)",
	 .choices = "instance|caption"},
	{"round-size", FLAG_INT, E(batch), 1, 65536, "16",
	 .help = "clips decoded per round; the model runs fixed blocks of 8, so the features and every figure are the same "
		 "for any size"},
	{"batch-size", FLAG_INT, E(batch), 1, 65536, NULL, .renamed = "round-size"},
	{"threads", FLAG_INT, E(threads), 0, 1024, "0", .help = "CPU threads of the kernels, 0 = all cores"},
	{"decoders", FLAG_INT, E(o.embed.decoders), 0, 1024, "0",
	 .help = "clips decoded at once (0: as many as threads)"},
	{"relevance", FLAG_STRPTR, E(o.relevance), 0, 0, NULL,
	 .help = "EPIC-style mAP and nDCG against a relevance matrix (format in docs/eval.md); --task ek100-mir: clips x "
		 "sentences, from tools/ek100_relevancy.py"},
	{"relevance-from-captions", FLAG_SWITCH, E(o.relevance_from_captions), 0, 0, "0",
	 .help = "the same with relevance from synth captions 'a <colour> <shape> <action>': 1/2 same object + 1/2 same "
		 "action"},
	{"classes", FLAG_STRPTR, E(o.classes), 0, 0, NULL,
	 .help = "zero-shot classification: class names, one a line, or EPIC-KITCHENS-100's "
		 "EPIC_100_{verb,noun}_classes.csv (with --labels); --task classify and probe: FILE[,FILE2], each head's "
		 "class names for the report (one a line or EPIC's CSV, as many as the head's classes)"},
	{"labels", FLAG_STRPTR, E(o.labels), 0, 0, NULL, .help = "one class label per sample"},
	{"classes-from", FLAG_STRPTR, E(o.classes_from), 0, 0, NULL,
	 .help = "action | object | caption: classes and labels from synth captions"},
	{"prompt", FLAG_STRPTR, E(o.prompt), 0, 0, NULL,
	 .help = "class prompt, {} = class name (default \"a video of {}\")"},
	{"bpe", FLAG_STRPTR, E(o.bpe), 0, 0, NULL,
	 .help = "merges file of the manifest's captions (default: bpe_merges.txt next to the manifest, if there is one); "
		 "needed for prompts and caption classes"},
	{"special-tokens", FLAG_ENUM, E(o.special_tokens), 0, 0, "openclip",
	 .help = "which caption text is the start and end token: openclip (<start_of_text>, <end_of_text>: open_clip's, whose ids its weights were trained with) or openai (<|startoftext|>, <|endoftext|>: OpenAI CLIP's); the ids are the same, the other spelling is ordinary words",
	 .choices = "openclip|openai"},
	{"json", FLAG_SWITCH, E(json), 0, 0, "0", .help = "print one JSON line instead of the table"},
	{"append", FLAG_STRPTR, E(append), 0, 0, NULL,
	 .help = "also append the JSON line to this file (e.g. RUN_DIR/eval.jsonl for tools/plot)"},
	{"quiet", FLAG_SWITCH, E(quiet), 0, 0, "0", .help = "no progress lines"},
	{"libav-verbose", FLAG_SWITCH, E(libav_verbose), 0, 0, "0",
	 .help = "every message of libav as it says it (default: each kind once, with a count at the end; AVCLIP_AV_LOG=1 "
		 "does the same)"},
	{"strict", FLAG_SWITCH, E(o.strict), 0, 0, "0",
	 .help = "a sample that cannot be decoded ends the evaluation (default: it is left out of every figure, counted "
		 "and named in the report)"},
	{"help", FLAG_SWITCH, E(help), 0, 0, "0", .help = "this text", .alias = 'h'},
};
enum { N_FLAGS = sizeof flag_table / sizeof flag_table[0] };

static void usage(void)
{
	static char flags[16384], sizes[4096];
	int nm;
	const FlagSpec *mt = model_flag_table(&nm);
	flags_help(flag_table, N_FLAGS, flags, sizeof flags);
	flags_help(mt, nm, sizes, sizeof sizes);
	printf("usage: eval --manifest HELDOUT (--ckpt RUN_DIR|CKPT_DIR|FILE | --weights FILE | --init-seed SEED) [flags]\n"
	       "Embeds every sample of the manifest (clip: video tower, caption: text tower) and reports\n"
	       "text->video and video->text R@1/R@5/R@10, median and mean rank next to chance; --task names a\n"
	       "benchmark instead (--bench-file, docs/eval.md: Egocentric zero-shot benchmarks).\n\n%s"
	       "\nmodel sizes over the --model preset's (--init-seed, weights without sizes; a --ckpt or exported\n"
	       "weights record theirs, which these must match):\n%s",
	       flags, sizes);
}

typedef struct {
	double t0, last;
	int quiet;
	int views; // per sample (EGTEA's multi-view protocol): the progress counts views
} Progress;

static void progress(void *arg, int64_t done, int64_t total)
{
	Progress *p = arg;
	double t = time_mono_s();
	if (p->quiet || (done < total && t - p->last < 5))
		return;
	p->last = t;
	double rate = (double)done / (t - p->t0 + 1e-9), eta = rate > 0 ? (double)(total - done) / rate : 0;
	const char *unit = p->views > 1 ? "views" : "samples";
	char per[32] = "";
	if (p->views > 1)
		snprintf(per, sizeof per, " (%d a clip)", p->views);
	log_info("embedded %lld/%lld %s%s (%.0f%%), %.1f %s/s, ETA %d:%02d", (long long)done, (long long)total, unit,
		 per, 100.0 * (double)done / (double)total, rate, unit, (int)eta / 60, (int)eta % 60);
}

// the flags the table does not name: model sizes and --act over the preset in want; 1 when any
static int model_sizes(ModelConfig *want, int argc, char **argv)
{
	int sized = 0;
	for (int i = 1; i < argc; i++) {
		char name[64], err[200];
		const char *v;
		if (flags_split(flag_table, N_FLAGS, argc, argv, &i, name, sizeof name, &v, err, sizeof err) != 0 ||
		    flags_find(flag_table, N_FLAGS, name) ||
		    (!strncmp(name, "no-", 3) && flags_find(flag_table, N_FLAGS, name + 3)))
			continue;
		int nm;
		const FlagSpec *mt = model_flag_table(&nm), *f = flags_find(mt, nm, name);
		if (!f)
			log_fatalx("unknown flag --%s (see --help)", name);
		if (flags_set(f, want, v, err, sizeof err) < 0)
			log_fatalx("%s", err);
		sized = 1;
	}
	return sized;
}

// The model the command line asks for, over the sizes and --act the file at path records (a
// checkpoint, tools/export's weights) or, for a file that records none (open_clip's own) and for
// --init-seed, over the tiny preset: then --model's sizes (not its activation), then the size
// flags. 1 when anything was asked for or the file records nothing (the request is all there is),
// 0 when the file's own configuration is to be used as it is.
static int requested_config(ModelConfig *want, const char *path, const char *model, int argc, char **argv)
{
	char err[1024], msg[200];
	// a path that cannot be read is named by eval_model_load, after the manifest's checks
	int recorded = path && eval_model_file_config(path, want, err, sizeof err) > 0;
	if (!recorded)
		model_config_preset(want, "tiny");
	if (model) {
		ModelConfig p;
		if (model_config_preset(&p, model))
			log_fatalx("--model '%s' is not a preset (tiny, vit-s16, vit-b16, vit-l14)", model);
		p.act = want->act;
		*want = p;
	}
	int sized = model_sizes(want, argc, argv);
	if (model_config_check(want, msg, sizeof msg))
		log_fatalx("model: %s", msg);
	return model || sized || (path && !recorded);
}

// the held-out captions must be tokenized with the model's vocabulary (a split prepared with its
// own scored R@1 16.7% where 100% was right): the one the file records, OpenAI's for an open_clip
// file of 49408 tokens; a model that records none is said to be unchecked
static void check_vocab(const Manifest *man, const char *path, const EvalModel *em, int quiet)
{
	char err[2048], who[1200];
	if (!strncmp(em->source, "init:", 5))
		return; // an untrained model reads every vocabulary equally badly
	if (em->mae) {  // the same for an untrained text tower
		if (!quiet)
			log_warnx(
				"%s is a masked autoencoder's checkpoint (--objective mae): its text tower is an untrained "
				"initialisation, so scores that read captions are chance level; its video encoder is what "
				"it learned",
				em->source);
		return;
	}
	if (!em->vocab[0]) {
		if (!quiet)
			log_warnx(
				"%s records no vocabulary (written before checkpoints did): the captions of %s must be "
				"tokenized with the merges it was trained with (tools/prep --bpe FILE); not checked",
				em->source, path);
		return;
	}
	snprintf(who, sizeof who, "%s %s%s", em->step >= 0 ? "the checkpoint" : "the weights", em->source,
		 em->vocab_assumed ? " (no vocabulary recorded: a 49408-token open_clip file reads OpenAI CLIP's)"
				   : "");
	if (manifest_vocab_check(man, path, strtoull(em->vocab, NULL, 16), who, em->merges, err, sizeof err) < 0)
		log_fatalx("%s", err);
}

// the flags a --task needs and the ones it cannot take, before any work
static void check_task(const EvalFlags *fl)
{
	const char *t = fl->task;
	const int probe = !strcmp(t, "probe"), cls = probe || !strcmp(t, "classify"),
		  bench = strcmp(t, "retrieval") && !cls;
	if (probe && !fl->train_manifest)
		log_fatalx("--task probe needs --train-manifest TRAIN (the labelled clips the probe is fitted on)");
	if (!probe && fl->train_manifest)
		log_fatalx("--train-manifest belongs to --task probe");
	if (!probe && fl->save_heads)
		log_fatalx("--save-heads belongs to --task probe (it writes the fitted heads)");
	if (strcmp(t, "classify") && fl->heads)
		log_fatalx("--heads belongs to --task classify");
	if (!strcmp(t, "classify") && !fl->heads && !fl->ckpt)
		log_fatalx("--task classify needs heads: --ckpt of a trainer --objective classify run, or --heads FILE "
			   "(tools/eval --task probe --save-heads writes one)");
	if (cls && (fl->o.labels || fl->o.classes_from || fl->o.relevance || fl->o.relevance_from_captions ||
		    fl->bench_file || fl->bench_aux))
		log_fatalx(
			"--task %s reads its labels from the manifests (tools/prep --format ek100-train, labels-csv or "
			"kinetics): no --labels, --classes-from, --relevance, --bench-file (--classes only names the "
			"classes in the report)",
			t);
	if (bench && !fl->bench_file)
		log_fatalx("--task %s needs --bench-file (the benchmark's test list the manifest was prepared from)",
			   t);
	if (!bench && (fl->bench_file || fl->bench_aux))
		log_fatalx("--bench-file and --bench-aux belong to the benchmark tasks (--task ek100-mir, ...)");
	if (bench && (fl->o.classes || fl->o.labels || fl->o.classes_from || fl->o.relevance_from_captions))
		log_fatalx("--task %s reads its classes and labels from its own files: no --classes, --labels, "
			   "--classes-from, --relevance-from-captions",
			   t);
	if (bench && strcmp(t, "ek100-mir") && fl->o.relevance)
		log_fatalx("--relevance belongs to --task ek100-mir");
}

// "CxS" -> C, S (1..64 each); none given: EGTEA's protocol 10x3, else one view
static void parse_views(const EvalFlags *fl, int *c, int *s)
{
	const char *v = fl->views;
	char x;
	int used = 0;
	if (!v) { // the probe's default is 1x1, as the other tasks'
		const int egtea = !strcmp(fl->task, "egtea") && strcmp(fl->frame_protocol, "midpoints");
		*c = egtea ? 10 : 1;
		*s = egtea ? 3 : 1;
	} else if (sscanf(v, "%d%c%d%n", c, &x, s, &used) != 3 || (x != 'x' && x != 'X') || v[used] || *c < 1 ||
		   *s < 1 || *c > 64 || *s > 64)
		log_fatalx("--views '%s': expected CxS, C temporal clips x S spatial crops (1-64 each)", v);
}

static void run_bench(const EvalFlags *fl, const EvalOpts *o, const EvalModel *em, const Manifest *man, int json,
		      const char *append)
{
	EvalBenchOpts b = {.file = fl->bench_file,
			   .aux = fl->bench_aux,
			   .relevance = o->relevance,
			   .templates = fl->templates,
			   .midpoints = !strcmp(fl->frame_protocol, "midpoints")};
	if (bench_kind_parse(fl->task, &b.kind))
		log_fatalx("--task %s: not a benchmark", fl->task);
	parse_views(fl, &b.views_clips, &b.views_crops);
	EvalBenchReport r;
	char err[2048];
	if (eval_bench_run(em->model, man, o, &b, &r, err, sizeof err))
		log_fatalx("%s", err);
	if (!r.benchmark_frames)
		log_warnx("%s: %s", fl->task, r.protocol);
	if (json)
		eval_bench_report_json(stdout, &r, em->step, em->source);
	else
		eval_bench_report_table(stdout, &r);
	if (append) {
		FILE *f = fopen(append, "a");
		if (!f)
			log_fatal("cannot append to %s", append);
		eval_bench_report_json(f, &r, em->step, em->source);
		if (fclose(f))
			log_fatal("writing %s", append);
	}
}

// --classes FILE[,FILE2] of --task classify|probe: each label head's class names (strict, as prep reads
// them), as many as the head's classes
static void report_names(const char *spec, const Manifest *man, ClassNames *names)
{
	char buf[8192], err[1024];
	snprintf(buf, sizeof buf, "%s", spec);
	const int heads = (int)manifest_label_heads(man);
	int k = 0;
	for (char *f = buf, *next; f; f = next, k++) {
		if ((next = strchr(f, ',')))
			*next++ = 0;
		if (k >= heads)
			log_fatalx("--classes %s: more lists than the manifest's %d label head%s", spec, heads,
				   heads == 1 ? "" : "s");
		if (class_names_read(&names[k], f, 1, err, sizeof err))
			log_fatalx("--classes: %s", err);
		const int want = (int)manifest_label_classes(man, (uint32_t)k);
		if (names[k].n != want)
			log_fatalx("--classes: %s names %d classes, head %d (%s) of the manifest has %d", f, names[k].n,
				   k, manifest_label_head_name(man, (uint32_t)k), want);
	}
}

// --task classify: the checkpoint's heads or --heads; --task probe: the train manifest's labelled
// clips fit them; the held-out's are scored
static void run_cls(const EvalFlags *fl, const EvalOpts *o, const EvalModel *em, const Manifest *man, int json,
		    const char *append)
{
	EvalClsOpts c = {.train_path = fl->train_manifest, .heldout_path = fl->manifest, .probe = fl->probe};
	c.probe.tol = EVAL_PROBE_TOL;
	parse_views(fl, &c.views_clips, &c.views_crops);
	if (c.views_crops != 1 && c.views_crops != 3)
		log_fatalx(
			"--views %s: the spatial crops are 1 (centre) or 3 (both ends and the centre of the long side)",
			fl->views);
	// C > 1 temporal clips are dense (frames --clip-stride apart, EGTEA's); one clip is the model's
	// frames at segment midpoints, as the trainer samples them, unless --clip-stride asks otherwise
	c.stride = c.views_clips > 1 || fl->clip_stride ? (fl->clip_stride ? fl->clip_stride : 2) : 0;
	Manifest *train = NULL;
	char err[2048];
	if (fl->train_manifest && manifest_open_verified(&train, fl->train_manifest, err, sizeof err))
		log_fatalx("--train-manifest %s: %s", fl->train_manifest, err);
	c.train = train;
	EvalHeads heads = {0}, fitted = {0};
	const int probe = !strcmp(fl->task, "probe");
	if (!probe && (fl->heads ? eval_heads_load(&heads, fl->heads, err, sizeof err)
				 : eval_heads_from_ckpt(&heads, em->source, em->cfg.vis_width, man, err, sizeof err)))
		log_fatalx("%s", err);
	ClassNames names[EVAL_CLS_HEADS] = {0};
	if (o->classes) // before minutes of embedding
		report_names(o->classes, man, names);
	EvalClsReport r;
	if (eval_cls_run(em->model, man, o, &c, probe ? NULL : &heads, &fitted, &r, err, sizeof err))
		log_fatalx("%s", err);
	for (int k = 0; k < EVAL_CLS_HEADS; k++)
		r.names[k] = names[k].n ? names[k].names : NULL;
	if (fl->save_heads) {
		if (eval_heads_save(&fitted, fl->save_heads, err, sizeof err))
			log_fatalx("%s", err);
		log_info("wrote the probe's heads to %s (--task classify --heads reads them)", fl->save_heads);
	}
	if (json)
		eval_cls_report_json(stdout, &r, em->step, em->source);
	else
		eval_cls_report_table(stdout, &r, man);
	if (append) {
		FILE *f = fopen(append, "a");
		if (!f)
			log_fatal("cannot append to %s", append);
		eval_cls_report_json(f, &r, em->step, em->source);
		if (fclose(f))
			log_fatal("writing %s", append);
	}
	eval_heads_free(&heads);
	eval_heads_free(&fitted);
	for (int k = 0; k < EVAL_CLS_HEADS; k++)
		class_names_free(&names[k]);
	if (train)
		manifest_close(train);
}

int main(int argc, char **argv)
{
	log_init("eval", LOG_INFO);
	static EvalFlags fl; // its EvalOpts is large
	char err[1024];
	FlagRest rest = {.keep_unknown = 1};
	if (flags_parse(flag_table, N_FLAGS, &fl, argc, argv, &rest, err, sizeof err) < 0)
		log_fatalx("%s", err);
	if (fl.help) {
		usage();
		return 0;
	}
	int nm;
	const FlagSpec *mt = model_flag_table(&nm);
	const FlagTable tabs[] = {{flag_table, N_FLAGS}, {mt, nm}};
	if (flags_check_known(tabs, 2, argc, argv, err, sizeof err) < 0)
		log_fatalx("%s", err); // before the checks of required flags: a misspelt one is named as such
	if (flags_renamed_used(flag_table, N_FLAGS, argc, argv, err, sizeof err))
		log_warnx("%s", err);
	for (int i = 1; i < argc; i++)
		fl.init_given |= !strcmp(argv[i], "--init-seed") || !strncmp(argv[i], "--init-seed=", 12);
	EvalOpts o = fl.o;
	o.match_caption = !strcmp(fl.match, "caption");
	const char *manifest = fl.manifest, *ckpt = fl.ckpt, *weights = fl.weights, *append = fl.append,
		   *model = fl.model;
	int json = fl.json, batch = fl.batch, threads = fl.threads, quiet = fl.quiet;
	if (!manifest)
		log_fatalx("--manifest HELDOUT is required (see --help)");
	if (!!ckpt + !!weights + fl.init_given != 1)
		log_fatalx("give exactly one of --ckpt, --weights, --init-seed (see --help)");
	check_task(&fl);
	ModelConfig want;
	int sized = requested_config(&want, ckpt ? ckpt : weights, model, argc, argv);

	// the manifest first: its errors are cheaper than loading a model
	Manifest *man;
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
	if (fl.init_given) {
		rc = eval_model_init(&em, ctx, &want, fl.init_seed, EVAL_EMBED_BLOCK, err, sizeof err);
	} else {
		rc = eval_model_load(&em, ctx, ckpt ? ckpt : weights, sized ? &want : NULL, EVAL_EMBED_BLOCK, err,
				     sizeof err);
	}
	if (rc)
		log_fatalx("%s", err);
	if (strcmp(fl.task, "probe") && strcmp(fl.task, "classify")) // these read no captions
		check_vocab(man, manifest, &em, quiet);
	char cfgs[200];
	eval_config_str(&em.cfg, cfgs, sizeof cfgs);
	avlog_install(fl.libav_verbose);
	atexit(avlog_summary); // damaged samples: libav's messages once per kind, counted at the end
	const ManifestHeader *h = manifest_header(man);
	if (!quiet)
		log_info("model [%s] from %s (step %lld); %llu samples of %s, batch %d, %d threads", cfgs, em.source,
			 (long long)em.step, (unsigned long long)h->n_samples, manifest, batch, kern_ctx_threads(ctx));
	Progress pr = {.t0 = time_mono_s(), .last = time_mono_s(), .quiet = quiet};
	o.embed.round = batch;
	o.embed.progress = progress;
	o.embed.progress_arg = &pr;
	if (!strcmp(fl.task, "probe") || !strcmp(fl.task, "classify")) {
		int vc, vs;
		parse_views(&fl, &vc, &vs);
		pr.views = vc * vs;
		run_cls(&fl, &o, &em, man, json, append);
		eval_model_free(&em);
		kern_ctx_destroy(ctx);
		manifest_close(man);
		return 0;
	}
	if (strcmp(fl.task, "retrieval")) {
		int vc, vs;
		parse_views(&fl, &vc, &vs);
		pr.views = strcmp(fl.frame_protocol, "midpoints") ? vc * vs : 1;
		run_bench(&fl, &o, &em, man, json, append);
		eval_model_free(&em);
		kern_ctx_destroy(ctx);
		manifest_close(man);
		return 0;
	}
	EvalReport r;
	if ((rc = eval_run(em.model, man, &o, &r, err, sizeof err)))
		log_fatalx("%s%s", err, o.strict ? " (--strict: without it damaged samples are skipped)" : "");
	if (r.skipped)
		log_warnx("%lld of %llu samples could not be decoded and are left out of every figure (the first: %s; "
			  "--strict stops at one)",
			  (long long)r.skipped, (unsigned long long)h->n_samples, r.skipped_first);
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
