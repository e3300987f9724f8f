// tools/prep's flag table and its parsing: every option with its bounds, default and help;
// --fps N/D, the even short side and the defaults that depend on the machine are checked here.
#include "prep_opts.h" // defines: PrepOpts, prep_opts_parse, prep_opts_usage

#include <stdlib.h> // defines: exit, strtol
#include <string.h> // defines: strcmp
#include <unistd.h> // defines: sysconf

#include "bpe.h"           // defines: BPE_CONTEXT
#include "flags.h"         // defines: FlagSpec, FLAG_AT, flags_parse, flags_renamed_used, flags_help
#include "log.h"           // defines: log_error, log_warnx, log_fatalx
#include "prep_defaults.h" // defines: PREP_DEFAULT_*

#define STR_(x) #x
#define STR(x) STR_(x)
#define O(f) FLAG_AT(PrepOpts, f)
static const FlagSpec flag_table[] = {
	{"annotations", FLAG_STRPTR, O(annotations), 0, 0, NULL,
	 .help = "annotation file: clips as video, start, end, caption"},
	{"format", FLAG_CHOICE, O(format), 0, 0, "auto",
	 .help = "the annotation file's format; ek100-mir, ek100-cls, charades-ego, egtea, egomcq: a benchmark's "
		 "test list (EPIC_100_retrieval_test.csv, EPIC_100_validation.csv, CharadesEgo_v1_test_only1st.csv, an "
		 "EGTEA split file, egomcq.json), "
		 "every clip in file order for tools/eval --task; ek100-train, labels-csv, kinetics: clips with class labels "
		 "for fine-tuning (EPIC_100_train.csv or _validation.csv: verb_class and noun_class; video,start,end,label"
		 "[,label2]; label,youtube_id,time_start,time_end,split), any bad record an error naming its line",
	 .choices =
		 "auto|csv|tsv|epic|ego4d|ek100-mir|ek100-cls|charades-ego|egtea|egomcq|ek100-train|labels-csv|kinetics"},
	{"classes", FLAG_STRPTR, O(classes), 0, 0, NULL,
	 .help = "labelled formats: FILE[,FILE2], each label head's class names, one per line (line 1: class 0) or "
		 "EPIC-KITCHENS-100's EPIC_100_verb_classes.csv / EPIC_100_noun_classes.csv (the key of each id); "
		 "labels-csv and kinetics labels are then names, ek100-train's ids get the names (default: labels-csv "
		 "labels are integer ids, kinetics classes are its label names sorted)"},
	{"num-classes", FLAG_STRPTR, O(num_classes), 0, 0, NULL,
	 .help = "labelled formats: N[,N2], each label head's class count, ids past it are errors (default: "
		 "ek100-train 97,300; the --classes lists; else the largest id + 1)"},
	{"split", FLAG_STRPTR, O(split), 0, 0, NULL,
	 .help = "kinetics: keep only rows whose split column is this (train, val, ...; default: every row)"},
	{"video-root", FLAG_STRPTR, O(video_root), 0, 0, NULL, .help = "directory of the source videos"},
	{"shards", FLAG_STRPTR, O(shards), 0, 0, NULL,
	 .help = "directory of webdataset tar shards (instead of videos)"},
	{"out", FLAG_STRPTR, O(out), 0, 0, NULL, .help = "output ROOT: chunks, manifest, vocabulary (required)"},
	{"manifest-out", FLAG_STRPTR, O(manifest), 0, 0, NULL,
	 .help = "the manifest to write (default ROOT/manifest; --manifest is what other programs read)"},
	{"manifest", FLAG_STRPTR, O(manifest), 0, 0, NULL, .renamed = "manifest-out"},
	{"chunk-sec", FLAG_INT, O(chunk.chunk_sec), 1, 3600, STR(PREP_DEFAULT_CHUNK_SEC),
	 .help = "chunk length in seconds"},
	{"short-side", FLAG_INT, O(chunk.short_side), 16, 4096, STR(PREP_DEFAULT_SHORT_SIDE),
	 .help = "short side of the chunks in pixels, even"},
	{"fps", FLAG_STRPTR, O(fps), 0, 0, NULL, .help = "output frame rate N or N/D (default: the source's, rounded)"},
	{"gop", FLAG_INT, O(chunk.gop), 1, 100000, STR(PREP_DEFAULT_GOP), .help = "keyframe interval in frames"},
	{"crf", FLAG_INT, O(chunk.crf), 0, 51, STR(PREP_DEFAULT_CRF), .help = "x264 quality"},
	{"preset", FLAG_STRPTR, O(chunk.preset), 0, 0, PREP_DEFAULT_PRESET, .help = "x264 preset"},
	{"bframes", FLAG_INT, O(chunk.bframes), 0, 16, STR(PREP_DEFAULT_BFRAMES),
	 .help = "most B-frames in a row (never references, so the loader skips the ones a clip does not need; 0: decode "
		 "order is display order)"},
	{"b-runs", FLAG_CHOICE, O(b_runs), 0, 0, PREP_DEFAULT_B_FIXED ? "fixed" : "adaptive",
	 .help = "B-frames between references: fixed (every run --bframes long: fewer references for a needed frame to "
		 "wait on) or adaptive (x264 picks each run's length)",
	 .choices = "fixed|adaptive"},
	{"deblock", FLAG_CHOICE, O(deblock), 0, 0, PREP_DEFAULT_NO_DEBLOCK ? "off" : "on",
	 .help = "H.264 in-loop deblocking: off decodes a fifth cheaper, for a few tenths of a dB (make bench-prep-gop)",
	 .choices = "on|off"},
	{"entropy", FLAG_CHOICE, O(entropy), 0, 0, PREP_DEFAULT_CAVLC ? "cavlc" : "cabac",
	 .help = "entropy coding: cavlc is cheaper to decode, about 5% larger", .choices = "cavlc|cabac"},
	{"jobs", FLAG_INT, O(jobs), 1, 4096, NULL, .help = "videos prepared in parallel (default: CPUs)", .alias = 'j'},
	{"bpe", FLAG_STRPTR, O(bpe), 0, 0, NULL, .help = "OpenAI-CLIP merges file (bpe_simple_vocab_16e6.txt)"},
	{"train-bpe", FLAG_INT, O(train_bpe), 515, 65536, NULL,
	 .help = "without --bpe: train a vocabulary of N tokens (default 49408) from the captions, saved as "
		 "ROOT/bpe_merges.txt; without either, an existing ROOT/bpe_merges.txt is used (a second manifest in "
		 "ROOT). The vocabulary is also copied next to the manifest (for eval)."},
	{"context", FLAG_INT, O(context), 2, BPE_CONTEXT, STR(BPE_CONTEXT),
	 .help = "caption tokens per sample, start and end token included (a longer caption is cut, its end token "
		 "kept): the model's --ctx-len, which eval and the trainer's evaluation require the manifest to equal"},
	{"special-tokens", FLAG_ENUM, O(special_tokens), 0, 0, "openclip",
	 .help = "which caption text is the start and end token: openclip (<start_of_text>, <end_of_text>: open_clip's, whose ids its weights were trained with) or openai (<|startoftext|>, <|endoftext|>: OpenAI CLIP's); the ids are the same, the other spelling is ordinary words",
	 .choices = "openclip|openai"},
	{"report", FLAG_STRPTR, O(report), 0, 0, NULL,
	 .help = "problems, one line each (default ROOT/prep-report.txt, or with --manifest-out DIR/NAME[.manifest]: "
		 "DIR/NAME-report.txt)"},
	{"no-check-images", FLAG_SWITCH, O(no_check_images), 0, 0, "0",
	 .help = "--shards: index images without decoding each (default: one that does not decode is dropped and "
		 "reported)"},
	{"ego4d-window", FLAG_DOUBLE, O(ego4d_window), 0.001, 3600, "1.0",
	 .help = "seconds either side of an Ego4D narration"},
	{"info", FLAG_STRPTR, O(info), 0, 0, NULL, .help = "print what this manifest holds, exit"},
	{"verify", FLAG_STRPTR, O(verify), 0, 0, NULL, .help = "check this manifest's chunks and shards, exit"},
	{"deep", FLAG_SWITCH, O(deep), 0, 0, "0",
	 .help = "with --verify: decode every frame and check each chunk's CRC"},
	{"upgrade", FLAG_STRPTR, O(upgrade), 0, 0, NULL,
	 .help = "convert a version 1 manifest in place (chunks indexed, not re-encoded; the old file kept as MANIFEST.v1), "
		 "exit"},
	{"progress-every", FLAG_DOUBLE, O(progress_every), 0, 86400, "0",
	 .help = "seconds between progress lines (0: 1 on a terminal, 10 otherwise)"},
	{"libav-verbose", FLAG_SWITCH, O(libav_verbose), 0, 0, "0",
	 .help = "every message of libav as it says it (default: each kind once, with a count at the end; AVCLIP_AV_LOG=1 "
		 "does the same)"},
	{"help", FLAG_SWITCH, O(help), 0, 0, "0", .help = "this text", .alias = 'h'},
};
enum { N_FLAGS = sizeof flag_table / sizeof flag_table[0] };

void prep_opts_usage(FILE *f)
{
	char flags[8192];
	flags_help(flag_table, N_FLAGS, flags, sizeof flags);
	fprintf(f,
		"usage: prep --annotations FILE --video-root DIR --out ROOT [flags]\n"
		"       prep --shards DIR --out ROOT [flags]\n"
		"       prep --info MANIFEST | --verify MANIFEST [--deep] | --upgrade MANIFEST [-j N]\n"
		"Cuts videos into ROOT/<video-id>/<start-sec>.mp4 chunks (or indexes tar shards) and\n"
		"writes ROOT/manifest. Exit status: 0 all prepared, 3 some input dropped (see the\n"
		"report), 1 failure.\n\n%s",
		flags);
}

// argv into o; the checks the table cannot make (combinations, --fps N/D, even sides)
void prep_opts_parse(PrepOpts *o, int argc, char **argv)
{
	char err[400];
	o->chunk.cavlc = PREP_DEFAULT_CAVLC;
	if (flags_parse(flag_table, N_FLAGS, o, argc, argv, NULL, err, sizeof err) < 0) {
		log_error("%s", err);
		exit(1);
	}
	if (o->help) {
		prep_opts_usage(stdout);
		exit(0);
	}
	if (flags_renamed_used(flag_table, N_FLAGS, argc, argv, err, sizeof err))
		log_warnx("%s", err);
	o->chunk.cavlc = !strcmp(o->entropy, "cavlc");
	o->chunk.b_fixed = !strcmp(o->b_runs, "fixed");
	o->chunk.no_deblock = !strcmp(o->deblock, "off");
	o->train_bpe_set = o->train_bpe != 0;
	if (!o->train_bpe_set)
		o->train_bpe = 49408;
	if (!o->jobs)
		o->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (o->fps) {
		char *end;
		o->chunk.fps_num = (int)strtol(o->fps, &end, 10), o->chunk.fps_den = 1;
		if (*end == '/')
			o->chunk.fps_den = (int)strtol(end + 1, &end, 10);
		if (*end || o->chunk.fps_num < 1 || o->chunk.fps_den < 1)
			log_fatalx("--fps wants N or N/D with positive integers, got '%s'", o->fps);
	}
	if (o->chunk.short_side % 2)
		log_fatalx("--short-side %d: want an even number of pixels", o->chunk.short_side);
}
