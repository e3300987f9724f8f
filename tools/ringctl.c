// ringctl: create, list, describe and remove a job's ring from the shell (launch.sh and the ring
// systemd unit use it). Creation logs where the segment lives and why hugepages were not used.
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "ring.h"

// the data stream seed a ring gets unless told: the same as tools/launch.sh's --seed default,
// so a ring made by hand serves the same stream as a launched job's
#define RINGCTL_DEFAULT_SEED 1

static void usage(FILE *f) {
    fprintf(f,
            "usage: ringctl create [options]    create a ring (fails if it exists, unless --replace)\n"
            "       ringctl list                 the rings in /dev/shm: name, geometry, live processes\n"
            "       ringctl info   [--ring NAME] print its geometry, size and identity\n"
            "       ringctl destroy [--ring NAME] wake everyone attached and remove it\n"
            "\n"
            "  --ring NAME          ring name (default: $AVCLIP_RING or '%s')\n"
            "  --frames T           frames per clip (default 16)\n"
            "  --height H --width W clip size in pixels (default 224 224)\n"
            "  --channels C         bytes per pixel (default 3)\n"
            "  --text-len L         caption tokens per slot (default 77)\n"
            "  --slots S            slots (default 64; cover prefetch depth x ranks)\n"
            "  --ranks N            trainer ranks (default 1)\n"
            "  --seed X             data stream seed recorded in the ring (default %d, as launch.sh)\n"
            "  --first-position G   stream starts at position G (resume; default 0)\n"
            "  --adopt-timeout-ms M how often producers look for dead peers (default 200)\n"
            "  --numa-node K        bind the ring's memory to NUMA node K\n"
            "  --hugepages          back the ring with hugetlbfs pages when available\n"
            "  --replace            replace an existing ring of the same name\n",
            RING_DEFAULT_NAME, RINGCTL_DEFAULT_SEED);
}

// the ring's creation time, local
static void created(const RingInfo *in, char *when, size_t len) {
    time_t t = (time_t)(in->created_unix_ns / 1000000000ull);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(when, len, "%Y-%m-%d %H:%M:%S", &tm);
}

// every ring in /dev/shm (segments that open as a ring; others, e.g. comm groups, are skipped)
static int list_rings(void) {
    DIR *d = opendir("/dev/shm");
    if (!d) log_fatal("/dev/shm");
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        Ring *r;
        char err[256];
        RingOpenOptions ro = {.read_only = 1};
        if (ring_open(&r, e->d_name, &ro, err, sizeof err) != 0) continue;
        RingInfo in;
        RingStats st;
        ring_info(r, &in);
        ring_stats(r, &st, NULL, 0, NULL);
        char geom[96], when[64];
        ring_geometry_format(&in.geometry, geom, sizeof geom);
        created(&in, when, sizeof when);
        if (n++ == 0) printf("%-40s %-28s %6s %5s %5s %5s  %s\n", "# ring", "geometry", "slots", "ranks", "prod", "cons", "created");
        printf("%-40s %-28s %6u %5u %5u %5u  %s%s\n", e->d_name, geom, in.slots, in.ranks, st.live_producers, st.live_consumers, when,
               in.closed ? " CLOSED" : "");
        ring_close(r);
    }
    closedir(d);
    if (n == 0) printf("no rings in /dev/shm\n");
    return 0;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || !*s || v > max || s[0] == '-') return -1;
    *out = v;
    return 0;
}

static void print_info(const Ring *r, const char *name) {
    RingInfo in;
    ring_info(r, &in);
    char geom[96], when[64];
    ring_geometry_format(&in.geometry, geom, sizeof geom);
    created(&in, when, sizeof when);
    printf("ring %s\n  path %s (%" PRIu64 " bytes%s)\n  geometry %s\n  slots %u x %" PRIu64 " B, ranks %u\n"
           "  seed %" PRIu64 ", first position %" PRIu64 ", instance %016" PRIx64 "\n  created %s, adopt timeout %u ms, numa node %d%s\n",
           name, in.path, in.segment_bytes, in.hugepages ? ", hugepages" : "", geom, in.slots, in.slot_stride, in.ranks, in.seed, in.first_position,
           in.instance_id, when, in.adopt_timeout_ms, in.numa_node, in.closed ? "\n  CLOSED" : "");
}

int main(int argc, char **argv) {
    log_init("ringctl", LOG_INFO);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    const char *env = getenv("AVCLIP_RING");
    const char *name = env && *env ? env : RING_DEFAULT_NAME;
    RingCreateOptions o;
    ring_create_options_default(&o);
    o.seed = RINGCTL_DEFAULT_SEED;
    static const struct option opts[] = {
        {"ring", 1, 0, 'r'},     {"frames", 1, 0, 'T'},    {"height", 1, 0, 'H'},          {"width", 1, 0, 'W'},
        {"channels", 1, 0, 'C'}, {"text-len", 1, 0, 'L'},  {"slots", 1, 0, 'S'},           {"ranks", 1, 0, 'N'},
        {"seed", 1, 0, 's'},     {"first-position", 1, 0, 'g'}, {"adopt-timeout-ms", 1, 0, 'a'}, {"numa-node", 1, 0, 'k'},
        {"hugepages", 0, 0, 'u'}, {"replace", 0, 0, 'x'},  {"help", 0, 0, 'h'},            {0, 0, 0, 0}};
    optind = 2;
    int ch, li = 0;
    while ((ch = getopt_long(argc, argv, "", opts, &li)) != -1) {
        uint64_t v = 0;
        const uint64_t u32 = UINT32_MAX;
        int bad = 0;
        switch (ch) {
        case 'r': name = optarg; break;
        case 'T': bad = parse_u64(optarg, u32, &v), o.geometry.frames = (uint32_t)v; break;
        case 'H': bad = parse_u64(optarg, u32, &v), o.geometry.height = (uint32_t)v; break;
        case 'W': bad = parse_u64(optarg, u32, &v), o.geometry.width = (uint32_t)v; break;
        case 'C': bad = parse_u64(optarg, u32, &v), o.geometry.channels = (uint32_t)v; break;
        case 'L': bad = parse_u64(optarg, u32, &v), o.geometry.text_len = (uint32_t)v; break;
        case 'S': bad = parse_u64(optarg, u32, &v), o.slots = (uint32_t)v; break;
        case 'N': bad = parse_u64(optarg, u32, &v), o.ranks = (uint32_t)v; break;
        case 's': bad = parse_u64(optarg, UINT64_MAX, &o.seed); break;
        case 'g': bad = parse_u64(optarg, UINT64_MAX, &o.first_position); break;
        case 'a': bad = parse_u64(optarg, 3600000, &v), o.adopt_timeout_ms = (uint32_t)v; break;
        case 'k': bad = parse_u64(optarg, 1023, &v), o.numa_node = (int)v; break;
        case 'u': o.hugepages = 1; break;
        case 'x': o.replace = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (bad) log_fatalx("--%s: '%s' is not a whole number in range", opts[li].name, optarg);
    }
    // the library checks every bound and names it; a job's slots also carry caption tokens
    if (strcmp(cmd, "create") == 0 && o.geometry.text_len == 0)
        log_fatalx("--text-len must be 1..65536, got 0 (every slot carries the caption's token ids)");
    if (optind < argc) log_fatalx("unexpected argument '%s' (see ringctl --help)", argv[optind]);

    char err[512] = "";
    Ring *r = NULL;
    int e;
    if (strcmp(cmd, "list") == 0) return list_rings();
    if (strcmp(cmd, "create") == 0) {
        if ((e = ring_create(&r, name, &o, err, sizeof err)) != 0) log_fatalx("%s", err);
        RingInfo in;
        ring_info(r, &in);
        if (o.hugepages && !in.hugepages) log_info("hugepages not used: %s", in.hugepage_note);
        log_info("created ring %s at %s: %u slots x %" PRIu64 " B, %u ranks (%.1f MiB)", name, in.path, in.slots, in.slot_stride, in.ranks,
                 (double)in.segment_bytes / (1 << 20));
        ring_close(r);
        return 0;
    }
    if (strcmp(cmd, "info") == 0) {
        RingOpenOptions ro = {.read_only = 1};
        if ((e = ring_open(&r, name, &ro, err, sizeof err)) != 0) log_fatalx("%s", err);
        print_info(r, name);
        ring_close(r);
        return 0;
    }
    if (strcmp(cmd, "destroy") == 0) {
        if ((e = ring_destroy(name)) != 0) log_fatalx("cannot remove ring '%s': %s", name, strerror(-e));
        log_info("removed ring %s", name);
        return 0;
    }
    log_fatalx("unknown command '%s' (create, list, info, destroy)", cmd);
}
