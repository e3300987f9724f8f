// Benchmark runner over the loader library: the same plan / read / decode calls the daemon's
// threads make, with the reads of a sample all in flight at once (as its queue does), timed by
// thread CPU so other work on a shared machine does not count.
#include "bench_run.h" // defines: bench_run_clips, bench_run_rate, bench_run_print_budget
#include "proc_time.h" // defines: time_thread_cpu_ns

#include <string.h>

static uint64_t lap(uint64_t *t)
{
	uint64_t now = time_thread_cpu_ns(), d = now - *t;
	*t = now;
	return d;
}

static int read_ranges(LdReader *rd, const LdPlan *plan, LdRead *reads, LdBuffer *bufs, BenchRun *out, char *err,
		       size_t errlen)
{
	for (int k = 0; k < plan->n_sources; k++)
		for (int i = plan->src[k].first_range; i < plan->src[k].first_range + plan->src[k].n_ranges; i++) {
			LdRead *r = &reads[i];
			r->path = plan->src[k].path;
			r->offset = plan->ranges[i].offset, r->length = plan->ranges[i].length;
			r->expect_size = plan->src[k].file_size;
			if (ld_reader_submit(rd, r) != 0) {
				snprintf(err, errlen, "reader queue full");
				return -1;
			}
		}
	int rc = 0;
	for (int i = 0; i < plan->n_ranges; i++) {
		LdRead *r;
		if (ld_reader_wait(rd, &r) != 0)
			return -1;
		if (r->error && !rc) {
			snprintf(err, errlen, "%s", r->reason);
			rc = r->error;
		}
	}
	for (int i = 0; i < plan->n_ranges; i++) {
		bufs[i] = (LdBuffer){reads[i].buf, reads[i].size, plan->ranges[i].offset};
		out->bytes_read += reads[i].size;
	}
	out->reads += (uint64_t)plan->n_ranges;
	return rc;
}

int bench_run_clips(const Manifest *m, LdDecoder *d, LdReader *rd, const LdParams *p, uint64_t g0, int n, uint8_t *dst,
		    BenchRun *out, char *err, size_t errlen)
{
	static LdRead reads[LD_MAX_RANGES]; // buffers kept between calls, as the daemon's items keep theirs
	LdCost c0 = *ld_decoder_cost(d);
	ld_decoder_timing(d, 1);
	int rc = 0;
	uint64_t t = time_thread_cpu_ns();
	for (int i = 0; i < n && !rc; i++) {
		LdPlan plan;
		LdBuffer bufs[LD_MAX_RANGES];
		rc = ld_plan_make(m, g0 + (uint64_t)i, p, &plan, err, errlen);
		out->plan_ns += lap(&t);
		if (!rc)
			rc = read_ranges(rd, &plan, reads, bufs, out, err, errlen);
		out->read_ns += lap(&t);
		if (!rc)
			rc = ld_clip_decode(d, m, &plan, p, bufs, dst, err, errlen);
		out->decode_ns += lap(&t);
		out->clips += !rc;
	}
	ld_decoder_timing(d, 0);
	LdCost delta = *ld_decoder_cost(d);
	uint64_t *x = (uint64_t *)&delta;
	const uint64_t *a = (const uint64_t *)&c0;
	for (size_t i = 0; i < sizeof(LdCost) / sizeof(uint64_t); i++)
		x[i] -= a[i];
	ld_cost_add(&out->cost, &delta);
	return rc;
}

double bench_run_rate(const BenchRun *r)
{
	uint64_t ns = r->plan_ns + r->read_ns + r->decode_ns + r->cost.helper_ns; // a second decoder's CPU too
	return ns ? r->clips / (ns * 1e-9) : 0;
}

void bench_run_print_budget(FILE *f, const BenchRun *runs, const char *const *names, int n)
{
	fprintf(f, "  %-44s", "ms of one core per clip");
	for (int i = 0; i < n; i++)
		fprintf(f, " %12s", names[i]);
	fprintf(f, "\n");
	struct {
		const char *what;
		int field; // -1: computed
	} rows[] = {{"open + demux | decoder lookup + packet set-up", 0},
		    {"packet reads (page cache)", 1},
		    {"decode: needed frames", 2},
		    {"decode: key frames only referenced", 3},
		    {"decode: other frames only referenced", 4},
		    {"crop + scale + convert", 5},
		    {"plan + the rest", 6},
		    {"total", 7}};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		fprintf(f, "  %-44.44s", rows[r].what);
		for (int i = 0; i < n; i++) {
			const BenchRun *x = &runs[i];
			const LdCost *c = &x->cost;
			uint64_t split = c->open_ns + c->demux_ns + c->decode_needed_ns + c->decode_key_ns +
					 c->decode_ref_ns + c->convert_ns;
			uint64_t v[] = {c->open_ns + c->demux_ns,
					x->read_ns,
					c->decode_needed_ns,
					c->decode_key_ns,
					c->decode_ref_ns,
					c->convert_ns,
					x->plan_ns + (x->decode_ns + c->helper_ns > split
							      ? x->decode_ns + c->helper_ns - split
							      : 0),
					x->plan_ns + x->read_ns + x->decode_ns + c->helper_ns};
			fprintf(f, " %12.2f", x->clips ? v[rows[r].field] * 1e-6 / x->clips : 0);
		}
		fprintf(f, "\n");
	}
	const char *counts[] = {"frames decoded per clip", "packets decoded per clip", "reads per clip",
				"kB read per clip"};
	for (int r = 0; r < 4; r++) {
		fprintf(f, "  %-44s", counts[r]);
		for (int i = 0; i < n; i++) {
			const BenchRun *x = &runs[i];
			double v = r == 0   ? x->cost.frames
				   : r == 1 ? x->cost.packets
				   : r == 2 ? x->reads
					    : x->bytes_read / 1e3;
			fprintf(f, " %12.1f", x->clips ? v / x->clips : 0);
		}
		fprintf(f, "\n");
	}
}
