// tools/prep's command line: its options, the flag table (common/flags) they are parsed with,
// and the checks the table cannot make.
#ifndef TOOLS_PREP_OPTS_H
#define TOOLS_PREP_OPTS_H
// defines: PrepOpts, prep_opts_parse, prep_opts_usage

#include <stdio.h> // defines: FILE

#include "prep_chunk.h" // defines: PrepChunkOpts

typedef struct {
	const char *annotations, *video_root, *out, *manifest, *bpe, *report, *shards, *fps, *info, *verify, *upgrade;
	const char *classes, *num_classes, *split; // labelled formats (prep_labels.h)
	char format[16], entropy[8], b_runs[12], deblock[8];
	int train_bpe, train_bpe_set, special_tokens, jobs, deep, libav_verbose, no_check_images, help;
	int context;           // caption tokens per sample (--context)
	double progress_every; // seconds between progress lines (0: 1 on a terminal, else 10)
	double ego4d_window;
	PrepChunkOpts chunk;
} PrepOpts;

// argv into o, the defaults first; a bad flag is a one-line error and exit 1, --help exits 0
void prep_opts_parse(PrepOpts *o, int argc, char **argv);
void prep_opts_usage(FILE *f);

#endif
