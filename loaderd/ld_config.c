// The config table (common/flags.h's engine) and what the table cannot check: the combinations
// and the --bench-clip geometry (with --for, the model it feeds). Adding an option is one table row and one LdConfig field.
#include "ld_config.h" // defines: ld_config_parse, ld_config_help, ld_config_format

#include <stdint.h> // defines: INT64_MAX
#include <stdio.h>  // defines: snprintf, sscanf
#include <string.h> // defines: memset

#include "flags.h" // defines: FlagSpec, FLAG_AT, flags_parse, flags_renamed_used, flags_help, flags_describe

#define F(field) FLAG_AT(LdConfig, field)
static const FlagSpec table[] = {
	{"ring", FLAG_STRING, F(ring), 0, 0, "avclip",
	 .help = "shared-memory ring to fill (created by ringctl/launch)"},
	{"manifest", FLAG_STRING, F(manifest), 0, 0, "", .help = "the dataset manifest to read (required)"},
	{"numa-node", FLAG_INT, F(numa_node), -1, 1023, "-1",
	 .help = "pin threads and buffers to this NUMA node (-1: none)"},
	{"workers", FLAG_INT, F(threads), 1, 256, "1",
	 .help = "decode workers (one thread each), each one ring producer (--threads of the trainer and eval are compute threads)"},
	{"threads", FLAG_INT, F(threads), 1, 256, NULL, .renamed = "workers"},
	{"node", FLAG_INT, F(node), 0, 4095, "0",
	 .help = "this machine's index in a job of --nodes machines (each with its own ring)"},
	{"nodes", FLAG_INT, F(nodes), 1, 4096, "1",
	 .help = "machines of the job: ring position p is global position (p/N)*N*nodes + node*N + p%N (N: the ring's ranks)"},
	{"queue-depth", FLAG_INT, F(queue_depth), 1, 64, "4",
	 .help = "samples in flight per thread (reads ahead of decoding)"},
	{"seed", FLAG_I64, F(seed), -1, (double)INT64_MAX, "-1", .help = "data stream seed (-1: the ring's seed)"},
	{"train", FLAG_SET, F(train), 1, 0, NULL,
	 .help = "training: shuffled epochs, jittered frames, random-resized-crop (default)"},
	{"eval", FLAG_SET, F(train), 0, 0, NULL, .help = "evaluation: dataset order, segment midpoints, centre crop"},
	{"flip", FLAG_SWITCH, F(flip), 0, 0, "0",
	 .help = "random horizontal flip per clip (p = 1/2) in training, in the loader (the trainer flips on the device by default)"},
	{"timeout-ms", FLAG_INT, F(timeout_ms), 0, 600000, "10000", .help = "per-sample decode watchdog (0: none)"},
	{"decoder-threads", FLAG_INT, F(decoder_threads), 1, 16, "1", .help = "libavcodec threads per decoder"},
	{"clip-decoders", FLAG_INT, F(clip_decoders), 1, 2, "1",
	 .help = "2: a second thread per worker decodes the later half of a clip's GOPs (the same bytes; a clip sooner, "
		 "not cheaper: its CPU time counts)"},
	{"io", FLAG_CHOICE, F(io), 0, 0, "auto", .help = "how chunks are read: io_uring (pread if refused) or pread",
	 .choices = "auto|pread"},
	{"loop-filter", FLAG_CHOICE, F(loop_filter), 0, 0, "ref",
	 .help = "H.264 deblocking: ref (skipped on needed frames nothing references; PSNR-tested), all, none (faster, drifts)",
	 .choices = "ref|all|none"},
	{"bench", FLAG_INT, F(bench), 0, 3600, "0",
	 .help = "no ring: make clips for N seconds and print clips/s per core and the cost per clip"},
	{"bench-clip", FLAG_STRING, F(bench_clip), 0, 0, "4x224x224", .help = "TxHxW of the clips --bench makes"},
	{"for", FLAG_STRING, F(bench_for), 0, 0, "",
	 .help = "with --bench: MODEL@MFU (e.g. vit-b16@0.4): also print the loader cores an H200, H100 and A100 need to train that trainer --model preset at that MFU on --bench-clip clips"},
	{"log-level", FLAG_CHOICE, F(log_level), 0, 0, "info", .help = "the least severe log lines printed",
	 .choices = "debug|info|warn|error"},
	{"help", FLAG_SWITCH, F(help), 0, 0, "0", .help = "this text", .alias = 'h', .attr = FLAG_NO_LOG},
};
enum { N_ENTRIES = sizeof(table) / sizeof(table[0]) };

int ld_config_parse(LdConfig *c, int argc, char **argv, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->train = 1;
	if (flags_parse(table, N_ENTRIES, c, argc, argv, NULL, err, errlen) < 0)
		return -1;
	if (c->help)
		return 1;
	if (!flags_renamed_used(table, N_ENTRIES, argc, argv, c->renamed_note, sizeof c->renamed_note))
		c->renamed_note[0] = 0;
	char tail;
	if (sscanf(c->bench_clip, "%dx%dx%d%c", &c->bench_t, &c->bench_h, &c->bench_w, &tail) != 3 || c->bench_t < 1 ||
	    c->bench_t > 64 || c->bench_h < 2 || c->bench_h > 4096 || c->bench_w < 2 || c->bench_w > 4096) {
		snprintf(err, errlen, "--bench-clip: '%s' is not TxHxW with T in 1..64 and sides in 2..4096",
			 c->bench_clip);
		return -1;
	}
	if (c->bench_for[0]) {
		if (!c->bench) {
			snprintf(err, errlen,
				 "--for %s needs --bench SECONDS (the cores come from the rate it measures)",
				 c->bench_for);
			return -1;
		}
		if (ld_for_parse(c->bench_for, c->bench_t, c->bench_h, c->bench_w, &c->bench_model, err, errlen) != 0)
			return -1;
	}
	if (!c->manifest[0]) {
		snprintf(err, errlen, "--manifest FILE is required");
		return -1;
	}
	return 0;
}

int ld_config_help(char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "usage: loaderd --manifest FILE [flags]\n"
			 "Fills a shared-memory ring with decoded, cropped clips (one ring producer per worker).\n\n");
	return n +
	       flags_help(table, N_ENTRIES, (size_t)n < len ? buf + n : NULL, (size_t)n < len ? len - (size_t)n : 0);
}

void ld_config_format(const LdConfig *c, char *buf, size_t len)
{
	flags_describe(table, N_ENTRIES, c, buf, len);
}
