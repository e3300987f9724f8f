// make bench-loader: clips/s per core of the fused decode-crop path vs a naive path (every
// decoded frame to full-frame RGB, then crop + resize) vs decode-only (the decoder's bound),
// for 4- and 16-frame 224x224 clips from 288p chunks; then io_uring vs pread on cold files.
// Usage: bench_loader [DIR]  (DIR: keep the synthetic dataset there; default a temp folder)
#include "ld_clip.h"    // defines: ld_plan_make, ld_clip_decode, ld_file_read
#include "ld_fixture.h" // defines: ld_fixture_dataset, ld_fixture_tmpdir
#include "ld_io.h"      // defines: ld_reader_*

#include <fcntl.h>
#include <sys/stat.h>
#include <libavcodec/avcodec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall_s(void) { return ld_now_ns() * 1e-9; }

typedef struct {
	uint8_t *buf[LD_MAX_SOURCES];
	size_t size[LD_MAX_SOURCES], cap[LD_MAX_SOURCES];
} Cached;

// clips/s per CPU-second over positions [0, n) with every chunk already in memory
static double run(const Manifest *m, LdDecoder *d, LdParams p, LdMode mode, int n, Cached *cache, uint8_t *dst,
		  uint64_t *frames)
{
	p.mode = mode;
	char err[512];
	uint64_t f0 = ld_decoder_frames(d);
	double t0 = cpu_s();
	for (int g = 0; g < n; g++) {
		LdPlan plan;
		if (ld_plan_make(m, (uint64_t)g, &p, &plan, err, sizeof(err)) != 0) {
			fprintf(stderr, "plan %d: %s\n", g, err);
			exit(1);
		}
		LdBuffer b[LD_MAX_SOURCES];
		for (int k = 0; k < plan.n_sources; k++) {
			Cached *c = &cache[plan.src[k].chunk];
			b[k] = (LdBuffer){c->buf[0], c->size[0]};
		}
		if (ld_clip_decode(d, m, &plan, &p, b, dst, err, sizeof(err)) != 0) {
			fprintf(stderr, "decode %d: %s\n", g, err);
			exit(1);
		}
	}
	*frames = ld_decoder_frames(d) - f0;
	return n / (cpu_s() - t0);
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
		if (!f || fwrite(blk, 1, (size_t)IO_FILE_MB << 20, f) != ((size_t)IO_FILE_MB << 20)) {
			fprintf(stderr, "cannot write %s\n", paths[i]);
			exit(1);
		}
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

int main(int argc, char **argv)
{
	ld_libav_quiet();
	if (!avcodec_find_encoder_by_name("libx264")) {
		printf("skip: no libx264 encoder to make benchmark chunks\n");
		return 77;
	}
	char dir[512], mpath[600], err[512] = "";
	int keep = argc > 1;
	if (keep) {
		snprintf(dir, sizeof(dir), "%s", argv[1]);
		mkdir(dir, 0755);
	}
	else if (ld_fixture_tmpdir(dir, sizeof(dir)) != 0)
		return 1;
	snprintf(mpath, sizeof(mpath), "%s/manifest.bin", dir);
	Manifest *m;
	if (access(mpath, R_OK) != 0) {
		// 288p, 30 fps, 10-s chunks with a 16-frame GOP and B-frames, as tools/prep makes them
		LdFixtureOpts o = {.videos = 2, .chunks_per_video = 2, .width = 512, .height = 288, .fps = 30,
				   .frames_per_chunk = 300, .gop = 16, .bframes = 2, .texture = 48};
		printf("making 4 chunks of 512x288, 300 frames, GOP 16, panning texture, in %s ...\n", dir);
		fflush(stdout);
		if (ld_fixture_dataset(dir, &o, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
	}
	if (manifest_open(&m, mpath, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	uint32_t nc = manifest_header(m)->n_chunks;
	Cached *cache = calloc(nc, sizeof(Cached));
	for (uint32_t i = 0; i < nc; i++) {
		char p[600];
		manifest_resolve(m, manifest_string(m, manifest_chunk(m, i)->path_off), p, sizeof(p));
		if (ld_file_read(p, 0, 0, &cache[i].buf[0], &cache[i].cap[0], &cache[i].size[0], err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
	}
	LdDecoder *d;
	ld_decoder_new(&d);
	LdParams p;
	ld_params_default(&p);
	p.seed = 1;
	p.timeout_ms = 0;
	uint8_t *dst = malloc((size_t)16 * 224 * 224 * 3);
	int n = 96;
	double r[2][3];
	printf("\nclips/s per core (one thread, chunks in memory, %d clips of 224x224 each, train crops)\n", n);
	printf("  %-4s %10s %10s %12s   frames decoded per clip (fused / naive)\n", "T", "fused", "naive", "decode-only");
	const char *names[3] = {"fused", "naive", "decode-only"};
	(void)names;
	for (int k = 0; k < 2; k++) {
		p.frames = k ? 16 : 4;
		uint64_t fr[3];
		run(m, d, p, LD_MODE_FUSED, 4, cache, dst, &fr[0]); // warm-up
		for (int mode = 0; mode < 3; mode++)
			r[k][mode] = run(m, d, p, (LdMode)mode, n, cache, dst, &fr[mode]);
		printf("  %-4d %10.1f %10.1f %12.1f   %.1f / %.1f\n", p.frames, r[k][0], r[k][1], r[k][2],
		       (double)fr[0] / n, (double)fr[1] / n);
	}
	printf("\nwhole-file reads, %d files x %d MB, cold (pages dropped with POSIX_FADV_DONTNEED first)\n", IO_FILES,
	       IO_FILE_MB);
	char paths[IO_FILES][600];
	io_files(dir, paths);
	double ur = read_all(paths, 0, 8), pr = read_all(paths, 1, 1);
	printf("\nratios\n");
	for (int k = 0; k < 2; k++)
		printf("  T=%-2d fused/naive %.2fx (target >= 2)   fused/decode-only %.2f (target >= 0.85)\n", k ? 16 : 4,
		       r[k][0] / r[k][1], r[k][0] / r[k][2]);
	printf("  cold reads io_uring (8 in flight) / pread %.2fx\n", ur / pr);
	for (uint32_t i = 0; i < nc; i++)
		free(cache[i].buf[0]);
	free(cache);
	free(dst);
	ld_decoder_free(d);
	manifest_close(m);
	if (!keep) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return 0;
}
