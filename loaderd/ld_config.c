// The config table and what is generated from it (getopt_long options, --help, the effective
// configuration line). Adding an option is one table row and one LdConfig field.
#include "ld_config.h" // defines: ld_config_parse, ld_config_help, ld_config_format

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

typedef enum { CF_INT, CF_I64, CF_STR, CF_SET } CfType; // CF_SET: a flag storing `lo` into an int

typedef struct {
	const char *name;
	CfType type;
	size_t off, size;
	long long lo, hi;    // bounds (CF_INT/CF_I64), value stored (CF_SET)
	const char *def;     // default as text (NULL for flags)
	const char *help;
} CfEntry;

#define F(field) offsetof(LdConfig, field), sizeof(((LdConfig *)0)->field)
static const CfEntry table[] = {
	{"ring", CF_STR, F(ring), 0, 0, "avclip", "shared-memory ring to fill (created by ringctl/launch)"},
	{"manifest", CF_STR, F(manifest), 0, 0, "", "dataset manifest (required)"},
	{"numa-node", CF_INT, F(numa_node), -1, 1023, "-1", "pin threads and buffers to this NUMA node (-1: none)"},
	{"threads", CF_INT, F(threads), 1, 256, "1", "decode threads, each one ring producer"},
	{"node", CF_INT, F(node), 0, 4095, "0", "this machine's index in a job of --nodes machines (each with its own ring)"},
	{"nodes", CF_INT, F(nodes), 1, 4096, "1", "machines of the job: ring position p is global position (p/N)*N*nodes + node*N + p%N (N: the ring's ranks)"},
	{"queue-depth", CF_INT, F(queue_depth), 1, 64, "4", "samples in flight per thread (reads ahead of decoding)"},
	{"seed", CF_I64, F(seed), -1, INT64_MAX, "-1", "data stream seed (-1: the ring's seed)"},
	{"train", CF_SET, F(train), 1, 0, NULL, "training: shuffled epochs, jittered frames, random-resized-crop (default)"},
	{"eval", CF_SET, F(train), 0, 0, NULL, "evaluation: dataset order, segment midpoints, centre crop"},
	{"flip", CF_SET, F(flip), 1, 0, NULL, "random horizontal flip (p=1/2) in training"},
	{"timeout-ms", CF_INT, F(timeout_ms), 0, 600000, "10000", "per-sample decode watchdog (0: none)"},
	{"decoder-threads", CF_INT, F(decoder_threads), 1, 16, "1", "libavcodec threads per decoder"},
	{"io", CF_STR, F(io), 0, 0, "auto", "auto (io_uring, pread if refused) | pread"},
	{"loop-filter", CF_STR, F(loop_filter), 0, 0, "ref",
	 "H.264 deblocking: ref (skipped on needed frames nothing references; PSNR-tested) | all | none (faster, drifts)"},
	{"bench", CF_INT, F(bench), 0, 3600, "0",
	 "no ring: make clips for N seconds and print clips/s per core and the cost per clip"},
	{"bench-clip", CF_STR, F(bench_clip), 0, 0, "4x224x224", "TxHxW of the clips --bench makes"},
	{"log-level", CF_STR, F(log_level), 0, 0, "info", "debug | info | warn | error"},
};
#define N_ENTRIES (sizeof(table) / sizeof(table[0]))

static int set_value(LdConfig *c, const CfEntry *e, const char *v, char *err, size_t errlen)
{
	char *p = (char *)c + e->off, *end;
	if (e->type == CF_SET) {
		*(int *)p = (int)e->lo;
		return 0;
	}
	if (e->type == CF_STR) {
		if (strlen(v) >= e->size) {
			snprintf(err, errlen, "--%s: longer than %zu characters", e->name, e->size - 1);
			return -1;
		}
		strcpy(p, v);
		return 0;
	}
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < e->lo || x > e->hi) {
		snprintf(err, errlen, "--%s: '%s' is not an integer in [%lld, %lld]", e->name, v, e->lo, e->hi);
		return -1;
	}
	if (e->type == CF_INT)
		*(int *)p = (int)x;
	else
		*(int64_t *)p = x;
	return 0;
}

int ld_config_parse(LdConfig *c, int argc, char **argv, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->train = 1;
	for (size_t i = 0; i < N_ENTRIES; i++)
		if (table[i].def && set_value(c, &table[i], table[i].def, err, errlen))
			return -1;
	struct option opts[N_ENTRIES + 2];
	for (size_t i = 0; i < N_ENTRIES; i++)
		opts[i] = (struct option){table[i].name, table[i].type == CF_SET ? no_argument : required_argument, NULL,
					  (int)(256 + i)};
	opts[N_ENTRIES] = (struct option){"help", no_argument, NULL, 'h'};
	opts[N_ENTRIES + 1] = (struct option){0};
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (ch == 'h')
			return 1;
		if (ch < 256) {
			snprintf(err, errlen, "unknown option or missing value: %s (see --help)", argv[optind - 1]);
			return -1;
		}
		if (set_value(c, &table[ch - 256], optarg, err, errlen))
			return -1;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (strcmp(c->loop_filter, "ref") && strcmp(c->loop_filter, "all") && strcmp(c->loop_filter, "none")) {
		snprintf(err, errlen, "--loop-filter: '%s' is not ref, all or none", c->loop_filter);
		return -1;
	}
	char tail;
	if (sscanf(c->bench_clip, "%dx%dx%d%c", &c->bench_t, &c->bench_h, &c->bench_w, &tail) != 3 || c->bench_t < 1 ||
	    c->bench_t > 64 || c->bench_h < 2 || c->bench_h > 4096 || c->bench_w < 2 || c->bench_w > 4096) {
		snprintf(err, errlen, "--bench-clip: '%s' is not TxHxW with T in 1..64 and sides in 2..4096", c->bench_clip);
		return -1;
	}
	if (!c->manifest[0]) {
		snprintf(err, errlen, "--manifest FILE is required");
		return -1;
	}
	if (strcmp(c->io, "auto") && strcmp(c->io, "pread")) {
		snprintf(err, errlen, "--io: '%s' is neither auto nor pread", c->io);
		return -1;
	}
	return 0;
}

void ld_config_help(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s --manifest FILE [options]\n"
		   "Fills a shared-memory ring with decoded, cropped clips (one ring producer per thread).\n",
		prog);
	for (size_t i = 0; i < N_ENTRIES; i++) {
		const CfEntry *e = &table[i];
		char left[64], range[64] = "";
		snprintf(left, sizeof(left), "--%s%s", e->name, e->type == CF_SET ? "" : e->type == CF_STR ? " S" : " N");
		if (e->type == CF_INT || e->type == CF_I64)
			snprintf(range, sizeof(range), " [%lld..%s]", e->lo, e->hi == INT64_MAX ? "" : "");
		if (e->type == CF_INT)
			snprintf(range, sizeof(range), " [%lld..%lld]", e->lo, e->hi);
		fprintf(f, "  %-20s %s%s%s%s\n", left, e->help, range, e->def && e->def[0] ? " default " : "",
			e->def && e->def[0] ? e->def : "");
	}
	fprintf(f, "  %-20s %s\n", "--help", "this text");
}

void ld_config_format(const LdConfig *c, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < N_ENTRIES && n < len; i++) {
		const CfEntry *e = &table[i];
		const char *p = (const char *)c + e->off;
		if (e->type == CF_SET) {
			if (*(const int *)p != (int)e->lo)
				continue;
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", e->name);
		} else if (e->type == CF_STR)
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "", e->name, p);
		else if (e->type == CF_INT)
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%d", n ? " " : "", e->name, *(const int *)p);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%lld", n ? " " : "", e->name,
					      (long long)*(const int64_t *)p);
	}
}
