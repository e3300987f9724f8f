// Shared helpers of the loader tests: a small synthetic dataset in a temporary folder, PSNR,
// and removal of the folder afterwards.
#ifndef TESTS_TEST_LOADER_UTIL_H
#define TESTS_TEST_LOADER_UTIL_H
// defines: tl_dataset, tl_psnr, tl_rmdir, tl_packet_of

#include "ld_fixture.h" // defines: LdFixtureOpts, ld_fixture_dataset, ld_fixture_tmpdir
#include "testutil.h"   // defines: CHECK, test_skip

#include <dirent.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// dir receives the folder; skips (77) when libavcodec has no H.264 encoder
static inline void tl_dataset(char *dir, size_t cap, const LdFixtureOpts *o)
{
	if (!avcodec_find_encoder_by_name("libx264"))
		test_skip("libavcodec has no libx264 encoder to make test chunks");
	CHECK(ld_fixture_tmpdir(dir, cap) == 0);
	char err[256] = "";
	int rc = ld_fixture_dataset(dir, o, err, sizeof(err));
	if (rc)
		fprintf(stderr, "fixture: %s\n", err);
	CHECK(rc == 0);
}

static inline void tl_packet_of(const char *path, int frame, int64_t *pos, int *size)
{
	AVFormatContext *ic = NULL;
	CHECK(avformat_open_input(&ic, path, NULL, NULL) == 0);
	CHECK(avformat_find_stream_info(ic, NULL) >= 0);
	AVStream *st = ic->streams[0];
	AVPacket *p = av_packet_alloc();
	*pos = -1;
	while (av_read_frame(ic, p) >= 0) {
		int64_t fn = av_rescale_q(p->pts - (st->start_time == AV_NOPTS_VALUE ? 0 : st->start_time),
					  st->time_base, (AVRational){1, 24});
		if (fn == frame) {
			*pos = p->pos;
			*size = p->size;
		}
		av_packet_unref(p);
	}
	av_packet_free(&p);
	avformat_close_input(&ic);
	CHECK(*pos > 0 && *size > 64);
}

static inline double tl_psnr(const uint8_t *a, const uint8_t *b, size_t n)
{
	double se = 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)a[i] - b[i];
		se += d * d;
	}
	if (se == 0)
		return 99.0;
	return 10 * log10(255.0 * 255.0 / (se / n));
}

static inline void tl_rmdir(const char *dir) // dir shorter than 1000 bytes
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char p[1400];
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p))
			continue;
		if (e->d_type == DT_DIR)
			tl_rmdir(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

#endif
