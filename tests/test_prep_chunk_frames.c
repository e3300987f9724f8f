// Chunking is exact: a 12-s 10-fps source cut into 5-s chunks gives 50+50+20 frames lasting
// 5 + 5 + 2 s by the container, each
// decoded frame is the source frame it should be (barcode), keyframes in the index are
// where the decoder and libavformat's own index see them, and frame-rate conversion and
// portrait sources come out right.
#include "../tools/prep_chunk.h" // defines: prep_chunk_video, prep_video_result_free
#include "test_prep_util.h"      // defines: tp_make_source, tp_decode, tp_barcode

#include <libavutil/log.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int fails;

typedef struct {
	int first;   // global frame number of the chunk's frame 0
	double step; // source frames per output frame
	int src_w, src_h;
	int bad, keys[64], n_keys;
} Check;

static void on_frame(void *ctx, int i, const AVFrame *f)
{
	Check *c = ctx;
	int want = (int)((c->first + i) * c->step + 1e-9);
	int got = tp_barcode(f, c->src_w, c->src_h);
	if (got != want && c->bad++ < 3)
		printf("FAIL frame %d shows source frame %d, want %d\n", c->first + i, got, want);
	if (f->key_frame && c->n_keys < 64)
		c->keys[c->n_keys++] = i;
}

// keyframes libavformat's index of the chunk reports, as frame numbers; *secs: the stream's
// duration as the container states it
static int format_index_keys(const char *path, int *keys, int max, double *secs)
{
	AVFormatContext *ic = NULL;
	if (avformat_open_input(&ic, path, NULL, NULL) < 0)
		return -1;
	AVStream *st = ic->streams[0];
	*secs = st->duration * av_q2d(st->time_base);
	int n = 0, k = 0;
	for (int i = 0; i < avformat_index_get_entries_count(st); i++, k++)
		if ((avformat_index_get_entry(st, i)->flags & AVINDEX_KEYFRAME) && n < max)
			keys[n++] = k;
	avformat_close_input(&ic);
	return n;
}

static void check_video(const char *name, PrepVideoResult *r, const char *root, int n_chunks, const int *frames,
			int gop, double step, int src_w, int src_h, int out_w, int out_h)
{
	if (r->n_chunks != n_chunks) {
		printf("FAIL %s: %d chunks, want %d (%s)\n", name, r->n_chunks, n_chunks, r->error);
		fails++;
		return;
	}
	int first = 0;
	for (int k = 0; k < n_chunks; k++) {
		PrepChunkInfo *ci = &r->chunks[k];
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", root, ci->path);
		Check c = {.first = first, .step = step, .src_w = src_w, .src_h = src_h};
		int n = tp_decode(path, on_frame, &c);
		double secs = 0, want_secs = frames[k] * (double)r->fps_den / r->fps_num;
		int fk[64], nfk = format_index_keys(path, fk, 64, &secs);
		int ok = (int)ci->ix.n_frames == frames[k] && n == frames[k] && !c.bad && ci->ix.width == out_w &&
			 fabs(secs - want_secs) < 1e-6 && ci->ix.height == out_h &&
			 (int)ci->ix.n_keyframes == c.n_keys && nfk == c.n_keys;
		for (int i = 0; ok && i < c.n_keys; i++)
			ok = (int)ci->ix.keyframes[i] == c.keys[i] && fk[i] == c.keys[i] && c.keys[i] == i * gop;
		if (ok && ci->ix.codec != MANIFEST_CODEC_H264) { // the loader reads prep's chunks by packet index
			printf("FAIL %s chunk %s: no packet index: %s\n", name, ci->path, ci->ix.why);
			ok = 0;
		}
		if (!ok) {
			printf("FAIL %s chunk %s: index %u frames %u keys %ux%u; decoded %d frames %d keys; libavformat %d keys, "
			       "%.6f s; want %d frames %dx%d %.6f s\n",
			       name, ci->path, ci->ix.n_frames, ci->ix.n_keyframes, ci->ix.width, ci->ix.height, n,
			       c.n_keys, nfk, secs, frames[k], out_w, out_h, want_secs);
			fails++;
		}
		first += frames[k];
	}
	printf("%s: %d chunks checked frame by frame\n", name, n_chunks);
}

int main(void)
{
	av_log_set_level(AV_LOG_ERROR);
	if (!prep_encoder_available()) {
		printf("no H.264 encoder in this libavcodec\n");
		return 77;
	}
	char dir[] = "/tmp/test_prep_chunk_XXXXXX", src[1200], root[1100];
	if (!mkdtemp(dir))
		return 1;
	snprintf(root, sizeof(root), "%s/out", dir);
	mkdir(root, 0755);
	PrepChunkOpts o = {
		.root = root, .chunk_sec = 5, .short_side = 288, .gop = 16, .crf = 23, .preset = "ultrafast"};
	PrepVideoResult r;

	// 12 s at 10 fps, landscape: 50 + 50 + 20 frames, 512x288
	snprintf(src, sizeof(src), "%s/land.mp4", dir);
	if (tp_make_source(src, 320, 180, 10, 120, 30) < 0)
		return 1;
	prep_chunk_video(src, "land", &o, &r);
	check_video("landscape 10 fps", &r, root, 3, (int[]){50, 50, 20}, 16, 1.0, 320, 180, 512, 288);
	// the clip 4.0-6.0 s crosses chunk 0 into chunk 1: frames 40..49 of chunk 0, 0..9 of chunk 1
	uint32_t c0, f0, c1, f1;
	if (prep_clip_frames(&r, 4.0, 6.0, &c0, &f0, &c1, &f1) || c0 != 0 || f0 != 40 || c1 != 1 || f1 != 10) {
		printf("FAIL clip 4-6 s maps to chunk %u frame %u .. chunk %u frame %u\n", c0, f0, c1, f1);
		fails++;
	}
	if (prep_clip_frames(&r, 11.0, 12.04, &c0, &f0, &c1, &f1) || c1 != 2 || f1 != 20) {
		printf("FAIL clip ending within half a frame of the end is not clamped\n");
		fails++;
	}
	if (prep_clip_frames(&r, 11.0, 12.2, &c0, &f0, &c1, &f1) != -ERANGE ||
	    prep_clip_frames(&r, 12.0, 13.0, &c0, &f0, &c1, &f1) != -ERANGE) {
		printf("FAIL clips past the end are not refused\n");
		fails++;
	}
	prep_video_result_free(&r);

	// 25 fps source to 10 fps output: output frame i shows source frame floor(2.5 i)
	snprintf(src, sizeof(src), "%s/fast.mp4", dir);
	if (tp_make_source(src, 320, 180, 25, 150, 25) < 0)
		return 1;
	o.fps_num = 10, o.fps_den = 1;
	prep_chunk_video(src, "fast", &o, &r);
	check_video("25 fps to 10 fps", &r, root, 2, (int[]){50, 10}, 16, 2.5, 320, 180, 512, 288);
	prep_video_result_free(&r);
	o.fps_num = 0;

	// portrait: the short side is the width
	snprintf(src, sizeof(src), "%s/portrait.mp4", dir);
	if (tp_make_source(src, 180, 320, 10, 60, 10) < 0)
		return 1;
	prep_chunk_video(src, "portrait", &o, &r);
	check_video("portrait", &r, root, 2, (int[]){50, 10}, 16, 1.0, 180, 320, 288, 512);
	prep_video_result_free(&r);

	char cmd[2400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("note: could not remove %s\n", dir);
	printf("%s\n", fails ? "FAILED" : "chunk frame counts, frames and keyframes are exact");
	return fails ? 1 : 0;
}
