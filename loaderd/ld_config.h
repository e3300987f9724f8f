// loaderd's configuration as a table (name, type, bounds, default, help): the command line
// parser, the generated --help and the effective-configuration log line all come from it.
#ifndef LOADERD_LD_CONFIG_H
#define LOADERD_LD_CONFIG_H
// defines: LdConfig, ld_config_parse, ld_config_help, ld_config_format

#include "ld_cores.h" // defines: LdFor

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
	char ring[64];
	char manifest[512];
	int numa_node;        // -1: no pinning
	int node, nodes;      // this machine of a multi-machine job: its share of the global stream
	int threads;          // --workers: decode threads = ring producers
	int queue_depth;      // samples in flight per thread (reads ahead of the decoder)
	int64_t seed;         // -1: the ring's seed
	int train;            // 1 train, 0 eval
	int flip;             // random horizontal flip in training (in the loader; the trainer has its own)
	int timeout_ms;       // per-sample watchdog
	int decoder_threads;  // libavcodec threads per decoder
	int clip_decoders;    // 2: a clip's later GOPs on a second thread (LdParams.clip_decoders)
	char io[16];          // "auto" (io_uring, pread if refused) or "pread"
	char loop_filter[16]; // "ref" (skip on needed non-reference frames), "all", "none"
	char log_level[16];
	int bench;           // seconds of --bench (0: serve a ring)
	char bench_clip[32]; // TxHxW of the clips --bench makes
	char bench_for[64];  // --for MODEL@MFU: also print the cores per GPU ("": not asked)
	int help;
	int bench_t, bench_h, bench_w; // parsed from bench_clip
	LdFor bench_model;             // parsed from bench_for with the bench_clip geometry
	char renamed_note[160];        // a flag given by its old name: the warning to log, else ""
} LdConfig;

// Parses argv into c (defaults first). 0 ok, 1 --help asked for, -1 error (reason in err).
int ld_config_parse(LdConfig *c, int argc, char **argv, char *err, size_t errlen);
// the --help text into buf; the characters it needs (as snprintf)
int ld_config_help(char *buf, size_t len);
// "ring=avclip manifest=... workers=2 ..." for the start-up log
void ld_config_format(const LdConfig *c, char *buf, size_t len);

#endif
