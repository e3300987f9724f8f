// ringstat against known counters: a ring with 1 writing, 2 ready and 1 reading slot, 7
// published positions (2 with errors), 1 adopted, 3 released; its text, JSON and Prometheus
// outputs are parsed and compared, the ring's bytes are unchanged by it, and a missing ring or
// wrong ABI gives one line and exit status 1.
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ring_layout.h"
#include "ring_testutil.h"

static const char *ringstat = "tools/ringstat";

// runs ringstat with args; returns its exit status, output (stdout+stderr) in out
static int run(const char *args, char *out, size_t len)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s %s 2>&1", ringstat, args);
	FILE *f = popen(cmd, "r");
	CHECK(f);
	size_t n = fread(out, 1, len - 1, f);
	out[n] = 0;
	int st = pclose(f);
	printf("$ %s\n%s", cmd, out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static long long json_int(const char *s, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(s, pat);
	CHECK(p);
	return strtoll(p + strlen(pat), NULL, 10);
}

static double prom_value(const char *s, const char *metric)
{
	const char *p = s;
	size_t n = strlen(metric);
	while ((p = strstr(p, metric)) != NULL) {
		if ((p == s || p[-1] == '\n') && (p[n] == '{' || p[n] == ' '))
			return strtod(strchr(p, '}') + 1, NULL);
		p += n;
	}
	fprintf(stderr, "metric %s not found\n", metric);
	exit(1);
}

int main(void)
{
	if (access(ringstat, X_OK) != 0)
		test_skip("tools/ringstat not built");
	char name[64];
	snprintf(name, sizeof name, "%s", test_ring_name("stat"));
	Ring *r = test_ring_create(name, 8, 1);
	RingProducer *p, *q;
	RingConsumer *c;
	CHECK_OK(ring_producer_attach(r, 0, &p));
	CHECK_OK(ring_consumer_attach(r, 0, &c));
	RingSlot s;
	for (int i = 0; i < 6; i++) { // positions 0..5, 1 and 4 as errors
		CHECK_OK(ring_producer_claim(p, &s, 0));
		CHECK_OK(i == 1 || i == 4 ? ring_producer_publish_error(p, &s, 5) : ring_producer_publish(p, &s));
	}
	CHECK_OK(ring_producer_attach(r, 1, &q)); // claims 6 and leaves: adopted and published by p
	CHECK_OK(ring_producer_claim(q, &s, 0));
	ring_producer_detach(q);
	CHECK_OK(ring_producer_claim(p, &s, 1000));
	CHECK(s.flags & RING_SLOT_ADOPTED);
	CHECK_OK(ring_producer_publish(p, &s));
	CHECK_OK(ring_producer_claim(p, &s, 0)); // position 7 stays WRITING
	RingSlot a;
	for (int i = 0; i < 3; i++) {
		CHECK_OK(ring_consumer_acquire(c, &a, 0));
		CHECK_OK(ring_consumer_release(c, &a));
	}
	CHECK_OK(ring_consumer_acquire(c, &a, 0)); // position 3 stays READING
	// slots: 0,1,2 EMPTY (positions 8,9,10), 3 READING, 4,5,6 READY, 7 WRITING

	RingInfo info;
	ring_info(r, &info);
	void *before = malloc(info.segment_bytes);
	memcpy(before, ((struct Ring *)r)->base, info.segment_bytes);

	char out[16384], args[256];
	snprintf(args, sizeof args, "--ring %s --json", name);
	CHECK_EQ_INT(run(args, out, sizeof out), 0);
	CHECK_EQ_INT(json_int(out, "empty"), 3);
	CHECK_EQ_INT(json_int(out, "writing"), 1);
	CHECK_EQ_INT(json_int(out, "ready"), 3);
	CHECK_EQ_INT(json_int(out, "reading"), 1);
	CHECK_EQ_INT(json_int(out, "produced_total"), 7);
	CHECK_EQ_INT(json_int(out, "consumed_total"), 3);
	CHECK_EQ_INT(json_int(out, "errors_total"), 2);
	CHECK_EQ_INT(json_int(out, "adopted_total"), 1);
	CHECK_EQ_INT(json_int(out, "live_producers"), 1);
	CHECK_EQ_INT(json_int(out, "live_consumers"), 1);

	// text: a '#' header with the column names, then one line of numbers
	snprintf(args, sizeof args, "--ring %s -v", name);
	CHECK_EQ_INT(run(args, out, sizeof out), 0);
	CHECK(out[0] == '#' && strstr(out, "empty") && strstr(out, "occ%") && strstr(out, "prod/s") &&
	      strstr(out, "pstall%"));
	const char *line = out;
	while (line && *line == '#')
		line = strchr(line, '\n') + 1;
	unsigned e, w, rd, rr, lp, lc;
	double occ, prate, crate, cw, ps;
	unsigned long long errs, adopted;
	CHECK_EQ_INT(sscanf(line, "%u %u %u %u %lf %lf %lf %lf %lf %llu %llu %u %u", &e, &w, &rd, &rr, &occ, &prate,
			    &crate, &cw, &ps, &errs, &adopted, &lp, &lc),
		     13);
	CHECK(e == 3 && w == 1 && rd == 3 && rr == 1 && errs == 2 && adopted == 1 && lp == 1 && lc == 1);
	CHECK(occ > 37.4 && occ < 37.6); // 3 ready of 8
	CHECK(strstr(line, "producer") && strstr(line, "consumer rank  0"));

	// vmstat style: interval and count give count lines, the first since creation
	snprintf(args, sizeof args, "--ring %s -n --json 0.05 3", name);
	CHECK_EQ_INT(run(args, out, sizeof out), 0);
	int lines = 0;
	for (const char *t = out; (t = strchr(t, '\n')); t++)
		lines++;
	CHECK_EQ_INT(lines, 3);
	CHECK(strstr(out, "\"since_creation\":true") && strstr(out, "\"since_creation\":false"));

	char prom[128];
	snprintf(prom, sizeof prom, "/tmp/%s.prom", name);
	snprintf(args, sizeof args, "--ring %s --prom %s", name, prom);
	CHECK_EQ_INT(run(args, out, sizeof out), 0);
	FILE *f = fopen(prom, "r");
	CHECK(f);
	size_t n = fread(out, 1, sizeof out - 1, f);
	out[n] = 0;
	fclose(f);
	unlink(prom);
	CHECK(prom_value(out, "avclip_ring_produced_total") == 7);
	CHECK(prom_value(out, "avclip_ring_consumed_total") == 3);
	CHECK(prom_value(out, "avclip_ring_decode_errors_total") == 2);
	CHECK(prom_value(out, "avclip_ring_adopted_total") == 1);
	CHECK(strstr(out, "# TYPE avclip_ring_produced_total counter"));
	CHECK(strstr(out, "avclip_ring_slots{ring=\"") && strstr(out, "state=\"writing\"} 1"));

	// it only reads: the segment is byte for byte what it was
	CHECK(memcmp(before, ((struct Ring *)r)->base, info.segment_bytes) == 0);

	// missing ring, bad arguments, wrong ABI: one line, exit 1 (2 for usage)
	CHECK_EQ_INT(run("--ring t-no-such-ring", out, sizeof out), 1);
	CHECK(strstr(out, "not found") && strchr(out, '\n') == out + strlen(out) - 1);
	CHECK_EQ_INT(run("--ring x 0", out, sizeof out), 2);
	int fd = open(info.path, O_RDWR);
	uint32_t abi = RING_ABI_VERSION + 1;
	CHECK(pwrite(fd, &abi, 4, offsetof(RingControl, abi_version)) == 4);
	snprintf(args, sizeof args, "--ring %s", name);
	CHECK_EQ_INT(run(args, out, sizeof out), 1);
	CHECK(strstr(out, "ABI version") && strchr(out, '\n') == out + strlen(out) - 1);
	abi = RING_ABI_VERSION;
	CHECK(pwrite(fd, &abi, 4, offsetof(RingControl, abi_version)) == 4);
	close(fd);
	free(before);
	ring_consumer_release(c, &a);
	ring_consumer_detach(c);
	ring_producer_detach(p);
	ring_close(r);
	return 0;
}
