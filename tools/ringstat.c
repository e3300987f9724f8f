// ringstat: vmstat-style view of a running ring (slots by state, rates, waits, errors,
// adoptions, live processes), as text, JSON lines or a Prometheus textfile. Only ever reads.
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flags.h"  // defines: FlagSpec, FLAG_AT, FlagRest, flags_parse, flags_help
#include "fs_dir.h" // defines: fs_fopen_new
#include "ring.h"
#include "proc_time.h" // defines: time_real_s
#include "run_conf.h"

#define MAX_ROWS (RING_MAX_PRODUCERS + RING_MAX_CONSUMERS)

typedef struct {
	const char *ring;
	const char *run_dir;
	int header_once; // -n
	int verbose;     // -v
	int json, help;
	const char *prom;
	double interval; // 0: one line and exit
	long count;      // lines to print (0: forever when an interval is given)
} Options;

static const FlagSpec flag_table[] = {
	{"ring", FLAG_STRPTR, FLAG_AT(Options, ring), 0, 0, NULL,
	 .help = "ring to watch (default: $AVCLIP_RING or '" RING_DEFAULT_NAME "')"},
	{"run-dir", FLAG_STRPTR, FLAG_AT(Options, run_dir), 0, 0, NULL,
	 .help = "the ring of the job tools/launch.sh runs in this directory (from its launch.conf)"},
	{"header-once", FLAG_SWITCH, FLAG_AT(Options, header_once), 0, 0, "0", .help = "print the header once only",
	 .alias = 'n'},
	{"verbose", FLAG_SWITCH, FLAG_AT(Options, verbose), 0, 0, "0",
	 .help = "add one row per producer and per consumer", .alias = 'v'},
	{"json", FLAG_SWITCH, FLAG_AT(Options, json), 0, 0, "0", .help = "one JSON object per line instead of columns"},
	{"prom", FLAG_STRPTR, FLAG_AT(Options, prom), 0, 0, NULL,
	 .help = "also write the Prometheus text format to this file (atomically) each line"},
	{"help", FLAG_SWITCH, FLAG_AT(Options, help), 0, 0, "0", .help = "this text", .alias = 'h'},
};
enum { N_FLAGS = sizeof flag_table / sizeof flag_table[0] };

typedef struct {
	RingStats st;
	RingProcStats rows[MAX_ROWS];
	int n_rows, n_producers;
} Sample;

static void usage(FILE *f)
{
	char flags[4096];
	flags_help(flag_table, N_FLAGS, flags, sizeof flags);
	fprintf(f,
		"usage: ringstat [--ring NAME | --run-dir DIR] [-n] [-v] [--json] [--prom FILE] [interval [count]]\n"
		"\n"
		"Shows a running ring like vmstat: the first line covers the time since the ring was\n"
		"created, then one line per interval. It only reads the ring and never disturbs it.\n"
		"\n"
		"%s"
		"\n"
		"  interval  seconds between lines (fractions allowed); without it, one line\n"
		"  count     number of lines (default: until interrupted)\n"
		"\n"
		"columns: slots by state (empty, writing, ready, reading); occ%% = ready slots / slots;\n"
		"prod/s, cons/s = positions published / released per second; cwait%% = share of time\n"
		"consumers waited for data; pstall%% = share of time producers waited for a free slot;\n"
		"errors = positions published as undecodable; adopted = positions redone after a\n"
		"producer died (both counted in the interval, since creation on the first line);\n"
		"prod, cons = live producers and consumers.\n",
		flags);
}

// the ring of the job tools/launch.sh runs in dir; 0, or -1 with a message on stderr
static int ring_of_run(const char *dir, char *name, size_t len)
{
	int rc = run_conf_get(dir, "RING", name, len);
	if (rc == 0)
		return 0;
	if (rc == -ENOENT)
		fprintf(stderr, "ringstat: %s has no launch.conf (is it a run directory of tools/launch.sh?)\n", dir);
	else
		fprintf(stderr, "ringstat: %s/launch.conf names no ring: %s\n", dir, strerror(-rc));
	return -1;
}

static int parse_args(int argc, char **argv, Options *o)
{
	static char run_ring[256];
	const char *env = getenv("AVCLIP_RING");
	const char *pos[3];
	FlagRest rest = {.pos = pos, .max_pos = 2};
	char err[300];
	*o = (Options){.ring = env && *env ? env : RING_DEFAULT_NAME};
	if (flags_parse(flag_table, N_FLAGS, o, argc, argv, &rest, err, sizeof err) < 0) {
		fprintf(stderr, "ringstat: %s\n", err);
		return -1;
	}
	if (o->help) {
		usage(stdout);
		exit(0);
	}
	if (o->run_dir) {
		if (ring_of_run(o->run_dir, run_ring, sizeof run_ring) < 0)
			return -1;
		o->ring = run_ring;
	}
	char *end;
	if (rest.n_pos > 0) {
		o->interval = strtod(pos[0], &end);
		if (*end || !(o->interval > 0) || !isfinite(o->interval)) {
			fprintf(stderr, "ringstat: interval must be a positive number of seconds, got '%s'\n", pos[0]);
			return -1;
		}
	}
	if (rest.n_pos > 1) {
		o->count = strtol(pos[1], &end, 10);
		if (*end || o->count < 1) {
			fprintf(stderr, "ringstat: count must be a positive integer, got '%s'\n", pos[1]);
			return -1;
		}
	}
	if (o->interval == 0)
		o->count = 1;
	return 0;
}

static void take(const Ring *r, Sample *s)
{
	s->n_rows = ring_stats(r, &s->st, s->rows, MAX_ROWS, &s->n_producers);
}

// Derived figures of one line: over [prev, cur], or since creation when prev is NULL.
typedef struct {
	double secs, prod_rate, cons_rate, cwait_pct, pstall_pct, occ_pct;
	uint64_t errors, adopted;
} Line;

static double pct(uint64_t wait_ns, double secs, uint32_t procs)
{
	if (secs <= 0 || procs == 0)
		return 0;
	double v = 100.0 * (double)wait_ns / 1e9 / (secs * procs);
	return v > 100 ? 100 : v;
}

static Line derive(const RingInfo *info, const Sample *prev, const Sample *cur)
{
	const RingStats *a = prev ? &prev->st : NULL, *b = &cur->st;
	Line l = {0};
	l.secs = a ? (double)(b->now_ns - a->now_ns) / 1e9 : (double)b->age_ns / 1e9;
	if (l.secs <= 0)
		l.secs = 1e-9;
	uint64_t prod = b->produced - (a ? a->produced : 0), cons = b->consumed - (a ? a->consumed : 0);
	l.prod_rate = (double)prod / l.secs;
	l.cons_rate = (double)cons / l.secs;
	l.cwait_pct = pct(b->consumer_wait_ns - (a ? a->consumer_wait_ns : 0), l.secs,
			  b->live_consumers ? b->live_consumers : info->ranks);
	l.pstall_pct = pct(b->producer_wait_ns - (a ? a->producer_wait_ns : 0), l.secs, b->live_producers);
	l.occ_pct = 100.0 * b->ready / info->slots;
	l.errors = b->errors - (a ? a->errors : 0);
	l.adopted = b->adopted - (a ? a->adopted : 0);
	return l;
}

static void print_header(const RingInfo *info, const Options *o)
{
	char geom[96], when[64];
	ring_geometry_format(&info->geometry, geom, sizeof geom);
	time_t created = (time_t)(info->created_unix_ns / 1000000000ull);
	struct tm tm;
	localtime_r(&created, &tm);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
	printf("# ring %s: %u slots x %" PRIu64 " B, %u ranks, %s, seed %" PRIu64 ", created %s%s\n", o->ring,
	       info->slots, info->slot_stride, info->ranks, geom, info->seed, when, info->closed ? " (closed)" : "");
	printf("# %6s %6s %6s %6s %5s %10s %10s %6s %7s %8s %8s %4s %4s\n", "empty", "write", "ready", "read", "occ%",
	       "prod/s", "cons/s", "cwait%", "pstall%", "errors", "adopted", "prod", "cons");
}

static void print_rows(const Sample *s)
{
	for (int i = 0; i < s->n_rows; i++) {
		const RingProcStats *p = &s->rows[i];
		uint64_t now_unix = (uint64_t)time(NULL) * 1000000000ull;
		double alive = now_unix > p->attach_unix_ns ? (double)(now_unix - p->attach_unix_ns) / 1e9 : 0;
		const char *state = p->state == 1 ? "alive" : "dead";
		if (i < s->n_producers)
			printf("#   producer %3d pid %7d node %2d %-5s items %10" PRIu64 " errors %6" PRIu64
			       " adopted %5" PRIu64 " stall%% %5.1f heartbeat %.0f ms ago\n",
			       p->index, p->pid, p->numa_node, state, p->items, p->errors, p->adopted,
			       pct(p->wait_ns, alive, 1), (double)p->heartbeat_age_ns / 1e6);
		else
			printf("#   consumer rank %2d pid %7d %-5s position %10" PRIu64 " items %10" PRIu64
			       " errors %6" PRIu64 " redelivered %4" PRIu64
			       " wait%% %5.1f max wait %.1f ms heartbeat %.0f ms ago\n",
			       p->index, p->pid, state, p->position, p->items, p->errors, p->adopted,
			       pct(p->wait_ns, alive, 1), (double)p->max_wait_ns / 1e6,
			       (double)p->heartbeat_age_ns / 1e6);
	}
}

static void print_json(const Options *o, const RingInfo *info, const Sample *s, const Line *l, int first)
{
	const RingStats *t = &s->st;
	printf("{\"ring\":\"%s\",\"time\":%.3f,\"since_creation\":%s,\"seconds\":%.3f,"
	       "\"slots\":{\"total\":%u,\"empty\":%u,\"writing\":%u,\"ready\":%u,\"reading\":%u},\"occupancy_pct\":%.1f,"
	       "\"produced_per_s\":%.1f,\"consumed_per_s\":%.1f,\"consumer_wait_pct\":%.2f,\"producer_stall_pct\":%.2f,"
	       "\"errors\":%" PRIu64 ",\"adopted\":%" PRIu64 ",\"produced_total\":%" PRIu64
	       ",\"consumed_total\":%" PRIu64 ",\"errors_total\":%" PRIu64 ",\"adopted_total\":%" PRIu64
	       ",\"redelivered_total\":%" PRIu64 ",\"live_producers\":%u,\"live_consumers\":%u,\"dead_producers\":%u",
	       o->ring, time_real_s(), first ? "true" : "false", l->secs, info->slots, t->empty, t->writing, t->ready,
	       t->reading, l->occ_pct, l->prod_rate, l->cons_rate, l->cwait_pct, l->pstall_pct, l->errors, l->adopted,
	       t->produced, t->consumed, t->errors, t->adopted, t->redelivered, t->live_producers, t->live_consumers,
	       t->dead_producers);
	if (o->verbose) {
		printf(",\"procs\":[");
		for (int i = 0; i < s->n_rows; i++) {
			const RingProcStats *p = &s->rows[i];
			printf("%s{\"role\":\"%s\",\"index\":%d,\"pid\":%d,\"alive\":%s,\"items\":%" PRIu64
			       ",\"errors\":%" PRIu64 ",\"adopted\":%" PRIu64 ",\"wait_s\":%.3f,\"position\":%" PRIu64
			       "}",
			       i ? "," : "", i < s->n_producers ? "producer" : "consumer", p->index, p->pid,
			       p->state == 1 ? "true" : "false", p->items, p->errors, p->adopted,
			       (double)p->wait_ns / 1e9, p->position);
		}
		printf("]");
	}
	printf("}\n");
}

// Prometheus textfile: written to a temporary file and renamed, so a scraper never reads half.
static int write_prom(const Options *o, const RingInfo *info, const Sample *s)
{
	char tmp[4096 + 32];
	snprintf(tmp, sizeof tmp, "%s.tmp.%d", o->prom, (int)getpid());
	FILE *f = fs_fopen_new(tmp, 0644); // the textfile folder may be shared: never through a planted link
	if (!f)
		return -errno;
	const RingStats *t = &s->st;
	const char *n = o->ring;
	fprintf(f, "# HELP avclip_ring_slots Ring slots by state.\n# TYPE avclip_ring_slots gauge\n");
	const char *states[] = {"empty", "writing", "ready", "reading"};
	uint32_t counts[] = {t->empty, t->writing, t->ready, t->reading};
	for (int i = 0; i < 4; i++)
		fprintf(f, "avclip_ring_slots{ring=\"%s\",state=\"%s\"} %u\n", n, states[i], counts[i]);
	struct {
		const char *name, *help, *type;
		double v;
	} m[] = {
		{"avclip_ring_occupancy_ratio", "Ready slots over all slots.", "gauge", (double)t->ready / info->slots},
		{"avclip_ring_produced_total", "Positions published by producers.", "counter", (double)t->produced},
		{"avclip_ring_consumed_total", "Positions released by consumers.", "counter", (double)t->consumed},
		{"avclip_ring_decode_errors_total", "Positions published with an error flag.", "counter",
		 (double)t->errors},
		{"avclip_ring_adopted_total", "Positions redone after their producer died.", "counter",
		 (double)t->adopted},
		{"avclip_ring_redelivered_total", "Positions delivered again after a consumer died or detached.",
		 "counter", (double)t->redelivered},
		{"avclip_ring_producer_wait_seconds_total", "Time producers waited for a free slot.", "counter",
		 (double)t->producer_wait_ns / 1e9},
		{"avclip_ring_consumer_wait_seconds_total", "Time consumers waited for data.", "counter",
		 (double)t->consumer_wait_ns / 1e9},
		{"avclip_ring_live_producers", "Producers attached and alive.", "gauge", (double)t->live_producers},
		{"avclip_ring_live_consumers", "Consumers attached and alive.", "gauge", (double)t->live_consumers},
		{"avclip_ring_dead_producers", "Dead producers not yet reaped.", "gauge", (double)t->dead_producers},
	};
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s{ring=\"%s\"} %.9g\n", m[i].name, m[i].help, m[i].name,
			m[i].type, m[i].name, n, m[i].v);
	int err = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && !err)
		err = -errno;
	if (!err && rename(tmp, o->prom) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static Ring *open_ring(const Options *o, RingInfo *info)
{
	RingOpenOptions ro = {.read_only = 1};
	Ring *r = NULL;
	char err[512];
	if (ring_open(&r, o->ring, &ro, err, sizeof err) != 0) {
		fprintf(stderr, "ringstat: %s\n", err);
		return NULL;
	}
	ring_info(r, info);
	return r;
}

int main(int argc, char **argv)
{
	Options o;
	if (parse_args(argc, argv, &o) < 0)
		return 2;
	signal(SIGPIPE, SIG_DFL);
	RingInfo info;
	Ring *r = open_ring(&o, &info);
	if (!r)
		return 1;
	int tty = isatty(STDOUT_FILENO);
	Sample samples[2], *prev = NULL, *cur = &samples[0];
	for (long line = 0; o.count == 0 || line < o.count; line++) {
		if (line > 0) {
			struct timespec ts = {.tv_sec = (time_t)o.interval,
					      .tv_nsec = (long)((o.interval - (double)(time_t)o.interval) * 1e9)};
			nanosleep(&ts, NULL);
			int inst = ring_check_instance(r);
			if (inst == -ENOENT) {
				fprintf(stderr, "ringstat: ring '%s' is gone\n", o.ring);
				ring_close(r);
				return 1;
			}
			if (inst == -ESTALE) { // recreated: start over on the new one
				ring_close(r);
				if (!(r = open_ring(&o, &info)))
					return 1;
				printf("# ring '%s' was recreated\n", o.ring);
				prev = NULL;
			}
		}
		take(r, cur);
		Line l = derive(&info, prev, cur);
		if (o.json) {
			print_json(&o, &info, cur, &l, prev == NULL);
		} else {
			if (line == 0 || prev == NULL || (!o.header_once && tty && line % 20 == 0))
				print_header(&info, &o);
			printf("  %6u %6u %6u %6u %5.1f %10.0f %10.0f %6.1f %7.1f %8" PRIu64 " %8" PRIu64 " %4u %4u\n",
			       cur->st.empty, cur->st.writing, cur->st.ready, cur->st.reading, l.occ_pct, l.prod_rate,
			       l.cons_rate, l.cwait_pct, l.pstall_pct, l.errors, l.adopted, cur->st.live_producers,
			       cur->st.live_consumers);
			if (o.verbose)
				print_rows(cur);
		}
		fflush(stdout);
		if (o.prom) {
			int e = write_prom(&o, &info, cur);
			if (e) {
				fprintf(stderr, "ringstat: cannot write %s: %s\n", o.prom, strerror(-e));
				ring_close(r);
				return 1;
			}
		}
		prev = cur;
		cur = cur == &samples[0] ? &samples[1] : &samples[0];
	}
	ring_close(r);
	return 0;
}
