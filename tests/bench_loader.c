// make bench-loader: where a clip's time goes and clips/s per core of the loader's paths, on
// 288p chunks as tools/prep makes them (camera-like source, prep's default encoding, packet
// index) or with --texture on the older panning-texture chunks (GOP 16, 2 B-frames): the demux
// path (before the packet index), the indexed path (the product), decode-only (the decoder's
// bound) and naive (decode everything, full-frame RGB, crop); the loop-filter cheap paths with
// their PSNR; then io_uring vs pread on cold files.
// Usage: bench_loader [--texture | --gop G --bframes B --entropy cavlc|cabac] [--loop-filter all|ref|none]
//                     [--rates-only] [--clips N] [--rounds R] [--clip-list FILE] [DIR | --manifest M]
//   DIR keeps the dataset between runs, reused while its settings hold (default a temp folder); --gop/--bframes/--entropy: camera
//   chunks with other settings than prep's defaults; --rates-only: clips/s per core of the indexed
//   and the demux path only, for tools/bench/peers.sh; --manifest M: any prepared dataset instead of
//   the synthetic one; --clips/--rounds: positions 0..N-1 per round (48), best of R rounds (3);
//   --clip-list FILE: first write those positions' plans at T=4 and T=16 (bench_clips.h) for peers.sh)
#include "../tools/bench_clips.h"   // defines: bench_clips_write
#include "../tools/bench_data.h"    // defines: bench_data_make, BenchDataOpts
#include "proc_time.h"              // defines: time_mono_ns
#include "../tools/bench_run.h"     // defines: bench_run_clips, bench_run_rate, bench_run_print_budget
#include "ld_fixture.h"             // defines: ld_fixture_dataset, ld_fixture_tmpdir
#include "../tools/prep_defaults.h" // defines: PREP_DEFAULT_*

#include <fcntl.h>
#include <libavcodec/avcodec.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int N_CLIPS = 48, ROUNDS = 3; // --clips, --rounds

static double wall_s(void)
{
	return time_mono_ns() * 1e-9;
}

static void die(const char *what, const char *err)
{
	fprintf(stderr, "%s: %s\n", what, err);
	exit(1);
}

// best of ROUNDS (interleaved with the other configurations by the caller) per configuration
typedef struct {
	const char *name;
	LdMode mode;
	int demux;
	LdLoopFilter lf;
	BenchRun best;
	double rate;
} Config;

static void run_round(const Manifest *m, LdDecoder *d, LdReader *rd, LdParams p, Config *c, uint8_t *dst)
{
	p.mode = c->mode, p.demux = c->demux, p.loop_filter = c->lf;
	BenchRun r = {0};
	char err[512];
	if (bench_run_clips(m, d, rd, &p, 0, N_CLIPS, dst, &r, err, sizeof(err)) != 0)
		die(c->name, err);
	if (bench_run_rate(&r) > c->rate) {
		c->rate = bench_run_rate(&r);
		c->best = r;
	}
}

// PSNR of the cheap loop-filter paths against the fully filtered output, over the same clips
static void loop_filter_psnr(const Manifest *m, LdDecoder *d, LdParams p, double *worst, double *mean)
{
	size_t bytes = (size_t)p.frames * p.out_w * p.out_h * 3, fb = (size_t)p.out_w * p.out_h * 3;
	uint8_t *a = malloc(bytes), *b = malloc(bytes);
	LdFiles f = {0};
	char err[512];
	for (int lf = 1; lf <= 2; lf++) {
		double w = 99, sum = 0;
		int n = 0;
		for (uint64_t g = 0; g < (uint64_t)N_CLIPS; g++) {
			LdPlan plan;
			p.loop_filter = LD_LOOP_FILTER_ALL;
			if (ld_sample_load(d, &f, m, g, &p, &plan, a, err, sizeof(err)))
				die("loop filter reference", err);
			p.loop_filter = (LdLoopFilter)lf;
			if (ld_sample_load(d, &f, m, g, &p, &plan, b, err, sizeof(err)))
				die("loop filter variant", err);
			for (int t = 0; t < p.frames; t++) {
				double se = 0;
				for (size_t i = 0; i < fb; i++) {
					double e = (double)a[t * fb + i] - b[t * fb + i];
					se += e * e;
				}
				double q = se ? 10 * log10(255.0 * 255.0 * fb / se) : 99.0;
				w = fmin(w, q), sum += q, n++;
			}
		}
		worst[lf] = w, mean[lf] = sum / n;
	}
	ld_files_free(&f);
	free(a);
	free(b);
}

// the loop filter's cheap paths on the indexed path: speed and quality against full filtering
static void loop_filter_section(const Manifest *m, LdDecoder *d, LdReader *rd, LdParams p, uint8_t *dst)
{
	printf("\nloop filter on the indexed path, T=%d: clips/s per core and PSNR against full filtering\n", p.frames);
	Config lf[3] = {{.name = "all", .lf = LD_LOOP_FILTER_ALL},
			{.name = "ref", .lf = LD_LOOP_FILTER_REF},
			{.name = "none", .lf = LD_LOOP_FILTER_NONE}};
	for (int r = 0; r < ROUNDS; r++)
		for (int c = 0; c < 3; c++)
			run_round(m, d, rd, p, &lf[c], dst);
	double worst[3] = {99, 99, 99}, mean[3] = {99, 99, 99};
	loop_filter_psnr(m, d, p, worst, mean);
	for (int c = 0; c < 3; c++)
		printf("  %-5s %8.1f clips/s   PSNR worst %5.1f dB, mean %5.1f dB%s\n", lf[c].name, lf[c].rate,
		       worst[c], mean[c], c == LD_LOOP_FILTER_REF ? "   (default)" : "");
}

typedef struct {
	int texture, rates_only, gop, bframes, cavlc, shift;
	const char *shaped; // an option that shapes the synthetic chunks (--manifest takes a dataset as it is)
	LdLoopFilter filter;
	const char *manifest, *clip_list;
} Opts;

static int count_arg(const char *flag, const char *v, int max)
{
	char *end;
	long n = strtol(v, &end, 10);
	if (*end || end == v || n < 1 || n > max) {
		fprintf(stderr, "%s: '%s' is not a count in 1..%d\n", flag, v, max);
		exit(1);
	}
	return (int)n;
}

// options before DIR; returns argc less the options (op->shift of them)
static int parse_args(int argc, char **argv, Opts *op)
{
	*op = (Opts){.gop = PREP_DEFAULT_GOP,
		     .bframes = PREP_DEFAULT_BFRAMES,
		     .cavlc = PREP_DEFAULT_CAVLC,
		     .filter = LD_LOOP_FILTER_REF};
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--texture"))
			op->texture = 1, op->shaped = a;
		else if (!strcmp(a, "--rates-only"))
			op->rates_only = 1;
		else if (v && !strcmp(a, "--manifest"))
			op->manifest = v, i++;
		else if (v && !strcmp(a, "--clip-list"))
			op->clip_list = v, i++;
		else if (v && !strcmp(a, "--clips"))
			N_CLIPS = count_arg(a, v, 100000), i++;
		else if (v && !strcmp(a, "--rounds"))
			ROUNDS = count_arg(a, v, 100), i++;
		else if (v && !strcmp(a, "--gop"))
			op->gop = atoi(v), op->shaped = a, i++;
		else if (v && !strcmp(a, "--bframes"))
			op->bframes = atoi(v), op->shaped = a, i++;
		else if (v && !strcmp(a, "--entropy"))
			op->cavlc = !strcmp(v, "cavlc"), op->shaped = a, i++;
		else if (v && !strcmp(a, "--loop-filter"))
			op->filter = !strcmp(v, "all")    ? LD_LOOP_FILTER_ALL
				     : !strcmp(v, "none") ? LD_LOOP_FILTER_NONE
							  : LD_LOOP_FILTER_REF,
			i++;
		else
			die(a,
			    "unknown option (--texture, --gop N, --bframes N, --entropy E, --loop-filter L, --rates-only, "
			    "--clips N, --rounds R, --clip-list FILE, --manifest M)");
	}
	if (op->gop < 1 || op->bframes < 0 || op->bframes > 16)
		die("--gop/--bframes", "out of range");
	if (op->manifest && op->shaped)
		die(op->shaped, "shapes the synthetic chunks; --manifest takes a dataset as it is");
	op->shift = i - 1;
	return argc - op->shift;
}

#define IO_FILES 16
#define IO_FILE_MB 8

// io files: 16 x 8 MB (the size of a few 15-s 288p chunks), made once in dir/io
static void io_files(const char *dir, char paths[IO_FILES][600])
{
	char d[600];
	snprintf(d, sizeof(d), "%s/io", dir);
	mkdir(d, 0755);
	uint8_t *blk = malloc((size_t)IO_FILE_MB << 20);
	for (size_t i = 0; i < ((size_t)IO_FILE_MB << 20); i++)
		blk[i] = (uint8_t)(i * 2654435761u >> 13);
	for (int i = 0; i < IO_FILES; i++) {
		if (snprintf(paths[i], 600, "%s/f%02d.bin", d, i) >= 600)
			exit(1);
		struct stat st;
		if (stat(paths[i], &st) == 0 && st.st_size == ((off_t)IO_FILE_MB << 20))
			continue;
		FILE *f = fopen(paths[i], "wb");
		if (!f || fwrite(blk, 1, (size_t)IO_FILE_MB << 20, f) != ((size_t)IO_FILE_MB << 20))
			die("cannot write", paths[i]);
		fclose(f);
	}
	free(blk);
}

// reads every file once with `depth` reads in flight, after dropping its cached pages
static double read_all(char paths[IO_FILES][600], int force_pread, unsigned depth)
{
	LdReader *r;
	char why[128];
	if (ld_reader_new(&r, depth, force_pread, why, sizeof(why)) != 0)
		exit(1);
	LdRead rd[IO_FILES];
	memset(rd, 0, sizeof(rd));
	for (int i = 0; i < IO_FILES; i++) {
		int fd = open(paths[i], O_RDONLY);
		fdatasync(fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
		rd[i].path = paths[i];
	}
	double t0 = wall_s(), bytes = 0;
	int next = 0, done = 0;
	while (done < IO_FILES) {
		while (next < IO_FILES && ld_reader_submit(r, &rd[next]) == 0)
			next++;
		LdRead *x;
		if (ld_reader_wait(r, &x) != 0)
			break;
		if (x->error)
			fprintf(stderr, "%s\n", x->reason);
		bytes += (double)x->size;
		done++;
	}
	double t = wall_s() - t0, mb = bytes / 1e6;
	for (int i = 0; i < IO_FILES; i++)
		free(rd[i].buf);
	printf("  %-8s depth %u  %6.1f MB in %.3f s = %7.1f MB/s\n", ld_reader_kind(r), depth, mb, t, mb / t);
	ld_reader_free(r);
	return mb / t;
}

// cold whole-file reads, io_uring against pread: the ratio
static double io_section(const char *dir)
{
	printf("\nwhole-file reads, %d files x %d MB, cold (pages dropped with POSIX_FADV_DONTNEED first)\n", IO_FILES,
	       IO_FILE_MB);
	char paths[IO_FILES][600];
	io_files(dir, paths);
	double ur = read_all(paths, 0, 8), pr = read_all(paths, 1, 1);
	return ur / pr;
}

static void make_dataset(const char *dir, int texture, int gop, int bframes, int cavlc)
{
	char err[512] = "";
	int rc;
	if (texture) {
		LdFixtureOpts o = {.videos = 2,
				   .chunks_per_video = 2,
				   .width = 512,
				   .height = 288,
				   .fps = 30,
				   .frames_per_chunk = 300,
				   .gop = 16,
				   .bframes = 2,
				   .texture = 48};
		printf("making 4 chunks of 512x288, 300 frames, panning texture, GOP 16, 2 B-frames, in %s ...\n", dir);
		fflush(stdout);
		rc = ld_fixture_dataset(dir, &o, err, sizeof(err));
	} else {
		BenchDataOpts o = {.videos = 2,
				   .chunks_per_video = 2,
				   .width = 512,
				   .height = 288,
				   .fps = 30,
				   .frames_per_chunk = 300,
				   .seed = 1,
				   .enc = {.gop = gop,
					   .bframes = bframes,
					   .b_pyramid = PREP_DEFAULT_B_PYRAMID,
					   .b_fixed = PREP_DEFAULT_B_FIXED,
					   .cavlc = cavlc,
					   .no_deblock = PREP_DEFAULT_NO_DEBLOCK,
					   .crf = PREP_DEFAULT_CRF,
					   .preset = PREP_DEFAULT_PRESET}};
		printf("making 4 chunks of 512x288, 300 frames, camera-like source encoded as prep does (GOP %d, %d "
		       "B-frames in %s runs, %s, deblocking %s, crf %d), in %s ...\n",
		       gop, bframes, PREP_DEFAULT_B_FIXED ? "fixed" : "adaptive", cavlc ? "CAVLC" : "CABAC",
		       PREP_DEFAULT_NO_DEBLOCK ? "off" : "on", PREP_DEFAULT_CRF, dir);
		fflush(stdout);
		rc = bench_data_make(dir, &o, err, sizeof(err));
	}
	if (rc)
		die("dataset", err);
}

// the plans of positions [0, N_CLIPS) at T=4 and T=16, as the rounds below load them
static void write_clip_list(const char *path, const Manifest *m, LdParams p)
{
	char err[600];
	FILE *f = fopen(path, "w");
	if (!f)
		die(path, "cannot create the clip list");
	for (int k = 0; k < 2; k++) {
		p.frames = k ? 16 : 4;
		if (bench_clips_write(f, m, &p, 0, N_CLIPS, err, sizeof(err)) != 0)
			die(path, err);
	}
	if (fclose(f) != 0)
		die(path, "cannot write the clip list");
}

int main(int argc, char **argv)
{
	ld_libav_quiet();
	Opts op;
	argc = parse_args(argc, argv, &op);
	argv += op.shift;
	char dir[512] = "", mpath[600], err[512] = "";
	int keep = argc > 1;
	if (op.manifest && keep)
		die(argv[1], "give DIR or --manifest, not both");
	Manifest *m = NULL;
	if (op.manifest) {
		if (manifest_open(&m, op.manifest, err, sizeof(err)) != 0)
			die(op.manifest, err);
	} else {
		if (keep) {
			snprintf(dir, sizeof(dir), "%s", argv[1]);
			mkdir(dir, 0755);
		} else if (ld_fixture_tmpdir(dir, sizeof(dir)) != 0) {
			return 1;
		}
		snprintf(mpath, sizeof(mpath), "%s/manifest.bin", dir);
		// a kept DIR is reused only when it holds chunks of the same settings (prep's defaults move)
		char stamp[700], want[200], have[200] = "";
		snprintf(stamp, sizeof(stamp), "%s/settings.txt", dir);
		if (op.texture)
			snprintf(want, sizeof(want), "texture\n");
		else
			snprintf(want, sizeof(want),
				 "camera gop=%d bframes=%d b_runs=%s entropy=%s deblock=%s crf=%d\n", op.gop,
				 op.bframes, PREP_DEFAULT_B_FIXED ? "fixed" : "adaptive", op.cavlc ? "cavlc" : "cabac",
				 PREP_DEFAULT_NO_DEBLOCK ? "off" : "on", PREP_DEFAULT_CRF);
		FILE *sf = fopen(stamp, "r");
		if (sf && !fgets(have, sizeof(have), sf))
			have[0] = 0;
		if (sf)
			fclose(sf);
		if (strcmp(have, want) || manifest_open(&m, mpath, err, sizeof(err)) != 0) {
			if (!avcodec_find_encoder_by_name("libx264")) {
				printf("skip: no libx264 encoder to make benchmark chunks\n");
				return 77;
			}
			make_dataset(dir, op.texture, op.gop, op.bframes, op.cavlc);
			if (manifest_open(&m, mpath, err, sizeof(err)) != 0)
				die(mpath, err);
			if (!(sf = fopen(stamp, "w")) || fputs(want, sf) < 0 || fclose(sf) != 0)
				die(stamp, "cannot write the settings of the kept dataset");
		}
	}
	LdDecoder *d;
	LdReader *rd;
	char why[160];
	if (ld_decoder_new(&d) || ld_reader_new(&rd, LD_MAX_RANGES, 0, why, sizeof(why)))
		die("setup", "out of memory");
	LdParams p;
	ld_params_default(&p);
	p.seed = 1;
	p.timeout_ms = 0;
	p.loop_filter = op.filter;
	if (op.clip_list)
		write_clip_list(op.clip_list, m, p);
	uint8_t *dst = malloc((size_t)16 * 224 * 224 * 3);
	Config cf[2][4];
	for (int k = 0; k < 2; k++) {
		Config row[4] = {{.name = "demux (before)", .mode = LD_MODE_FUSED, .demux = 1},
				 {.name = "indexed", .mode = LD_MODE_FUSED, .lf = p.loop_filter},
				 {.name = "decode-only", .mode = LD_MODE_DECODE_ONLY, .lf = p.loop_filter},
				 {.name = "naive", .mode = LD_MODE_NAIVE, .demux = 1}};
		memcpy(cf[k], row, sizeof(row));
		p.frames = k ? 16 : 4;
		for (int r = 0; r < ROUNDS; r++)
			for (int c = 0; c < (op.rates_only ? 2 : 4); c++)
				run_round(m, d, rd, p, &cf[k][c], dst);
	}
	if (op.rates_only) {
		static const char *const lfname[] = {"all", "ref", "none"};
		printf("loaderd (indexed path, %s reader, one thread, loop filter %s): T=4 %.1f clips/s per core, T=16 %.1f\n",
		       ld_reader_kind(rd), lfname[op.filter], cf[0][1].rate, cf[1][1].rate);
		printf("loaderd-demux (the path before the packet index): T=4 %.1f clips/s per core, T=16 %.1f\n",
		       cf[0][0].rate, cf[1][0].rate);
		goto out;
	}
	printf("\nclips/s per core (one thread, %s reader, files in the page cache, %d clips of 224x224, train crops,\n"
	       "thread CPU time, best of %d interleaved rounds)\n",
	       ld_reader_kind(rd), N_CLIPS, ROUNDS);
	printf("  %-4s %14s %10s %12s %10s\n", "T", "demux(before)", "indexed", "decode-only", "naive");
	for (int k = 0; k < 2; k++)
		printf("  %-4d %14.1f %10.1f %12.1f %10.1f\n", k ? 16 : 4, cf[k][0].rate, cf[k][1].rate, cf[k][2].rate,
		       cf[k][3].rate);
	for (int k = 0; k < 2; k++) {
		printf("\ncost budget, T=%d\n", k ? 16 : 4);
		BenchRun runs[3] = {cf[k][0].best, cf[k][1].best, cf[k][3].best};
		const char *names[3] = {"demux", "indexed", "naive"};
		bench_run_print_budget(stdout, runs, names, 3);
	}
	p.frames = 4;
	loop_filter_section(m, d, rd, p, dst);
	double io_ratio = op.manifest ? 0 : io_section(dir); // --manifest: no scratch folder of ours to write in
	printf("\nratios\n");
	for (int k = 0; k < 2; k++)
		printf("  T=%-2d indexed/demux %.2fx   indexed/decode-only %.2f   indexed/naive %.2fx\n", k ? 16 : 4,
		       cf[k][1].rate / cf[k][0].rate, cf[k][1].rate / cf[k][2].rate, cf[k][1].rate / cf[k][3].rate);
	if (io_ratio > 0)
		printf("  cold reads io_uring (8 in flight) / pread %.2fx\n", io_ratio);
out:
	free(dst);
	ld_reader_free(rd);
	ld_decoder_free(d);
	manifest_close(m);
	if (!keep && !op.manifest) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return 0;
}
