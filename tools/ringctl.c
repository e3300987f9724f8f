// ringctl: create, list, describe and remove a job's ring from the shell (launch.sh and the ring
// systemd unit use it). Creation logs where the segment lives and why hugepages were not used.
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flags.h" // defines: FlagSpec, FLAG_AT, FlagTool, flags_tool, flags_tool_usage
#include "log.h"
#include "manifest.h" // defines: manifest_open, manifest_identity, manifest_header, manifest_close
#include "ring.h"

// the data stream seed a ring gets unless told: the same as tools/launch.sh's --seed default,
// so a ring made by hand serves the same stream as a launched job's
#define RINGCTL_DEFAULT_SEED "1"

// the flags of every command; a command uses those it needs (create: all)
typedef struct {
	const char *ring, *manifest;
	int64_t frames, height, width, channels, text_len, slots, ranks, adopt_timeout_ms;
	int numa_node, hugepages, replace, help;
	uint64_t seed, first_position;
} CtlFlags;

#define U32 4294967295.0 // the library checks every geometry bound and names it
static const FlagSpec flag_table[] = {
	{"ring", FLAG_STRPTR, FLAG_AT(CtlFlags, ring), 0, 0, NULL,
	 .help = "ring name (default: $AVCLIP_RING or '" RING_DEFAULT_NAME "')"},
	{"manifest", FLAG_STRPTR, FLAG_AT(CtlFlags, manifest), 0, 0, NULL,
	 .help = "the job's manifest, read for its dataset identity: the ring records it, and loaders or trainers given another are refused"},
	{"frames", FLAG_I64, FLAG_AT(CtlFlags, frames), 0, U32, "16", .help = "frames per clip"},
	{"height", FLAG_I64, FLAG_AT(CtlFlags, height), 0, U32, "224", .help = "clip height in pixels"},
	{"width", FLAG_I64, FLAG_AT(CtlFlags, width), 0, U32, "224", .help = "clip width in pixels"},
	{"channels", FLAG_I64, FLAG_AT(CtlFlags, channels), 0, U32, "3", .help = "bytes per pixel"},
	{"text-len", FLAG_I64, FLAG_AT(CtlFlags, text_len), 0, U32, "77", .help = "caption tokens per slot"},
	{"slots", FLAG_I64, FLAG_AT(CtlFlags, slots), 0, U32, "64", .help = "slots (cover prefetch depth x ranks)"},
	{"ranks", FLAG_I64, FLAG_AT(CtlFlags, ranks), 0, U32, "1", .help = "trainer ranks"},
	{"seed", FLAG_U64, FLAG_AT(CtlFlags, seed), 0, 0, RINGCTL_DEFAULT_SEED,
	 .help = "data stream seed recorded in the ring (as launch.sh)"},
	{"first-position", FLAG_U64, FLAG_AT(CtlFlags, first_position), 0, 0, "0",
	 .help = "stream starts at position G (resume)"},
	{"adopt-timeout-ms", FLAG_I64, FLAG_AT(CtlFlags, adopt_timeout_ms), 0, 3600000, "200",
	 .help = "how often producers look for dead peers"},
	{"numa-node", FLAG_INT, FLAG_AT(CtlFlags, numa_node), -1, 1023, "-1",
	 .help = "bind the ring's memory to this NUMA node (-1: none)"},
	{"hugepages", FLAG_SWITCH, FLAG_AT(CtlFlags, hugepages), 0, 0, "0",
	 .help = "back the ring with hugetlbfs pages when available"},
	{"replace", FLAG_SWITCH, FLAG_AT(CtlFlags, replace), 0, 0, "0",
	 .help = "replace an existing ring of the same name"},
	{"help", FLAG_SWITCH, FLAG_AT(CtlFlags, help), 0, 0, "0", .help = "this text", .alias = 'h'},
};
enum { N_FLAGS = sizeof flag_table / sizeof flag_table[0] };

static const FlagTool tool = {
	"ringctl",
	"usage: ringctl create [flags]       create a ring (fails if it exists, unless --replace)\n"
	"       ringctl list                 the rings in /dev/shm: name, geometry, live processes\n"
	"       ringctl info   [--ring NAME] print its geometry, size and identity\n"
	"       ringctl destroy [--ring NAME] wake everyone attached and remove it\n",
	flag_table, N_FLAGS};

// the ring's creation time, local
static void created(const RingInfo *in, char *when, size_t len)
{
	time_t t = (time_t)(in->created_unix_ns / 1000000000ull);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(when, len, "%Y-%m-%d %H:%M:%S", &tm);
}

// every ring in /dev/shm (segments that open as a ring; others, e.g. comm groups, are skipped)
static int list_rings(void)
{
	DIR *d = opendir("/dev/shm");
	if (!d)
		log_fatal("/dev/shm");
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		Ring *r;
		char err[256];
		RingOpenOptions ro = {.read_only = 1};
		if (ring_open(&r, e->d_name, &ro, err, sizeof err) != 0)
			continue;
		RingInfo in;
		RingStats st;
		ring_info(r, &in);
		ring_stats(r, &st, NULL, 0, NULL);
		char geom[96], when[64];
		ring_geometry_format(&in.geometry, geom, sizeof geom);
		created(&in, when, sizeof when);
		if (n++ == 0)
			printf("%-40s %-28s %6s %5s %5s %5s  %s\n", "# ring", "geometry", "slots", "ranks", "prod",
			       "cons", "created");
		printf("%-40s %-28s %6u %5u %5u %5u  %s%s\n", e->d_name, geom, in.slots, in.ranks, st.live_producers,
		       st.live_consumers, when, in.closed ? " CLOSED" : "");
		ring_close(r);
	}
	closedir(d);
	if (n == 0)
		printf("no rings in /dev/shm\n");
	return 0;
}

static void print_info(const Ring *r, const char *name)
{
	RingInfo in;
	ring_info(r, &in);
	char geom[96], when[64];
	ring_geometry_format(&in.geometry, geom, sizeof geom);
	created(&in, when, sizeof when);
	printf("ring %s\n  path %s (%" PRIu64 " bytes%s)\n  geometry %s\n  slots %u x %" PRIu64 " B, ranks %u\n"
	       "  seed %" PRIu64 ", first position %" PRIu64 ", instance %016" PRIx64
	       "\n  created %s, adopt timeout %u ms, numa node %d%s\n",
	       name, in.path, in.segment_bytes, in.hugepages ? ", hugepages" : "", geom, in.slots, in.slot_stride,
	       in.ranks, in.seed, in.first_position, in.instance_id, when, in.adopt_timeout_ms, in.numa_node,
	       in.closed ? "\n  CLOSED" : "");
	if (in.data.id)
		printf("  dataset %s (id %016" PRIx64 ", vocabulary bpe %016" PRIx64 ")\n", in.data.name, in.data.id,
		       in.data.vocab_hash);
	else
		printf("  dataset not recorded (made without --manifest): loaders and trainers are not checked\n");
}

// the dataset of --manifest, as the ring records it
static void data_of(const char *path, RingDataId *d)
{
	Manifest *m;
	char err[512];
	if (manifest_open(&m, path, err, sizeof err) != 0)
		log_fatalx("--manifest %s: %s", path, err);
	ring_data_set(d, manifest_identity(m), manifest_header(m)->vocab_hash, path);
	manifest_close(m);
}

int main(int argc, char **argv)
{
	log_init("ringctl", LOG_INFO);
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		flags_tool_usage(&tool, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	const char *env = getenv("AVCLIP_RING");
	CtlFlags fl = {.ring = env && *env ? env : RING_DEFAULT_NAME};
	char err[512] = "";
	flags_tool(&tool, &fl, argc - 1, argv + 1, NULL);
	// the library checks every bound and names it; a job's slots also carry caption tokens
	if (strcmp(cmd, "create") == 0 && fl.text_len == 0)
		log_fatalx("--text-len must be 1..65536, got 0 (every slot carries the caption's token ids)");
	const char *name = fl.ring;
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = (uint32_t)fl.frames,
				    .height = (uint32_t)fl.height,
				    .width = (uint32_t)fl.width,
				    .channels = (uint32_t)fl.channels,
				    .text_len = (uint32_t)fl.text_len};
	o.slots = (uint32_t)fl.slots;
	o.ranks = (uint32_t)fl.ranks;
	o.seed = fl.seed;
	o.first_position = fl.first_position;
	o.adopt_timeout_ms = (uint32_t)fl.adopt_timeout_ms;
	o.numa_node = fl.numa_node;
	o.hugepages = fl.hugepages;
	o.replace = fl.replace;
	if (strcmp(cmd, "create") == 0 && fl.manifest)
		data_of(fl.manifest, &o.data);

	Ring *r = NULL;
	int e;
	if (strcmp(cmd, "list") == 0)
		return list_rings();
	if (strcmp(cmd, "create") == 0) {
		if ((e = ring_create(&r, name, &o, err, sizeof err)) != 0)
			log_fatalx("%s", err);
		RingInfo in;
		ring_info(r, &in);
		if (o.hugepages && !in.hugepages)
			log_info("hugepages not used: %s", in.hugepage_note);
		log_info("created ring %s at %s: %u slots x %" PRIu64 " B, %u ranks (%.1f MiB)", name, in.path,
			 in.slots, in.slot_stride, in.ranks, (double)in.segment_bytes / (1 << 20));
		ring_close(r);
		return 0;
	}
	if (strcmp(cmd, "info") == 0) {
		RingOpenOptions ro = {.read_only = 1};
		if ((e = ring_open(&r, name, &ro, err, sizeof err)) != 0)
			log_fatalx("%s", err);
		print_info(r, name);
		ring_close(r);
		return 0;
	}
	if (strcmp(cmd, "destroy") == 0) {
		if ((e = ring_destroy(name)) != 0)
			log_fatalx("cannot remove ring '%s': %s", name, strerror(-e));
		log_info("removed ring %s", name);
		return 0;
	}
	log_fatalx("unknown command '%s' (create, list, info, destroy)", cmd);
}
