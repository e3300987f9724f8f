// prep accepts what cameras and downloads produce and always writes 8-bit 4:2:0 H.264 chunks:
// 10-bit 4:4:4 FFV1 at an odd size in Matroska, variable frame rate MPEG-4 Part 2 with an
// audio track, full-range Motion JPEG in AVI, and a phone's landscape frames with a 90-degree
// display rotation (comes out portrait). Each output frame is checked by its barcode.
#include "../tools/prep_chunk.h" // defines: prep_chunk_video, prep_video_result_free
#include "test_prep_util.h"      // defines: tp_barcode, tp_decode

#include <libavutil/channel_layout.h>
#include <libavutil/display.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int fails;

// frames with the barcode of their index at pts_ms[i]; optional 8 kHz mono PCM track
static int write_source(const char *path, const char *fmt, const char *codec_name, enum AVPixelFormat pix, int w, int h,
			const int64_t *pts_ms, int n, int audio, int rotate_cw)
{
	const AVCodec *codec = avcodec_find_encoder_by_name(codec_name);
	if (!codec)
		return AVERROR_ENCODER_NOT_FOUND;
	AVFormatContext *oc = NULL;
	if (avformat_alloc_output_context2(&oc, NULL, fmt, path) < 0)
		return -1;
	AVStream *vs = avformat_new_stream(oc, NULL), *as = NULL;
	AVCodecContext *c = avcodec_alloc_context3(codec);
	c->width = w, c->height = h, c->pix_fmt = pix, c->time_base = (AVRational){1, 1000};
	c->framerate = (AVRational){25, 1};
	c->thread_count = 1;
	if (pix == AV_PIX_FMT_YUVJ420P)
		c->color_range = AVCOL_RANGE_JPEG, c->strict_std_compliance = FF_COMPLIANCE_UNOFFICIAL;
	if (oc->oformat->flags & AVFMT_GLOBALHEADER)
		c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	int rc = avcodec_open2(c, codec, NULL);
	if (rc < 0)
		return rc;
	avcodec_parameters_from_context(vs->codecpar, c);
	vs->time_base = c->time_base;
	if (rotate_cw) { // what a phone writes for portrait video
		int32_t *m = (int32_t *)av_stream_new_side_data(vs, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
		if (m)
			av_display_rotation_set(m, rotate_cw); // clockwise; av_display_rotation_get reports -90
	}
	if (audio) {
		as = avformat_new_stream(oc, NULL);
		as->codecpar->codec_type = AVMEDIA_TYPE_AUDIO;
		as->codecpar->codec_id = AV_CODEC_ID_PCM_S16LE;
		as->codecpar->sample_rate = 8000;
		av_channel_layout_default(&as->codecpar->ch_layout, 1);
		as->codecpar->block_align = 2;
		as->codecpar->bits_per_coded_sample = 16;
		as->time_base = (AVRational){1, 8000};
	}
	if (avio_open(&oc->pb, path, AVIO_FLAG_WRITE) < 0 || avformat_write_header(oc, NULL) < 0)
		return -1;
	AVFrame *src = av_frame_alloc(), *f = av_frame_alloc();
	src->format = AV_PIX_FMT_YUV420P, src->width = w + (w & 1), src->height = h + (h & 1);
	av_frame_get_buffer(src, 0);
	f->format = pix, f->width = w, f->height = h;
	av_frame_get_buffer(f, 0);
	struct SwsContext *sws = sws_getContext(w, h, AV_PIX_FMT_YUV420P, w, h, pix, SWS_POINT, NULL, NULL, NULL);
	AVPacket *p = av_packet_alloc();
	int64_t audio_pos = 0;
	for (int i = 0; i <= n; i++) {
		if (i < n) {
			for (int y = 0; y < src->height; y++)
				memset(src->data[0] + y * src->linesize[0], 90, (size_t)src->width);
			for (int y = 0; y < src->height / 2; y++) {
				memset(src->data[1] + y * src->linesize[1], 128, (size_t)src->width / 2);
				memset(src->data[2] + y * src->linesize[2], 128, (size_t)src->width / 2);
			}
			for (int b = 0; b < 10; b++)
				for (int y = 0; y < 16; y++)
					memset(src->data[0] + y * src->linesize[0] + 16 * b, (i >> b & 1) ? 235 : 16,
					       16);
			av_frame_make_writable(f);
			sws_scale(sws, (const uint8_t *const *)src->data, src->linesize, 0, h, f->data, f->linesize);
			f->pts = pts_ms[i];
			avcodec_send_frame(c, f);
		} else {
			avcodec_send_frame(c, NULL);
		}
		while (avcodec_receive_packet(c, p) >= 0) {
			av_packet_rescale_ts(p, c->time_base, vs->time_base);
			p->stream_index = vs->index;
			av_interleaved_write_frame(oc, p);
		}
		// 100 ms of silence at a time, up to the current video time
		while (as &&
		       (i < n ? audio_pos * 1000 / 8000 < pts_ms[i] : audio_pos * 1000 / 8000 < pts_ms[n - 1] + 100)) {
			av_new_packet(p, 1600);
			memset(p->data, 0, 1600);
			p->pts = p->dts = audio_pos, p->duration = 800, p->stream_index = as->index;
			audio_pos += 800;
			av_interleaved_write_frame(oc, p);
		}
	}
	av_write_trailer(oc);
	avio_closep(&oc->pb);
	sws_freeContext(sws);
	av_packet_free(&p);
	av_frame_free(&src);
	av_frame_free(&f);
	avcodec_free_context(&c);
	avformat_free_context(oc);
	return 0;
}

typedef struct {
	const int64_t *pts_ms;
	int n_src, first, src_w, src_h, bad, not420;
	int fps, rot;
} Check;

// the barcode of a frame turned clockwise by 90 degrees: source (x, y) is at (h - 1 - y, x)
static int barcode_rotated(const AVFrame *f, int src_w, int src_h)
{
	double sx = (double)f->width / src_h, sy = (double)f->height / src_w;
	int n = 0;
	for (int b = 0; b < 10; b++) {
		int x = (int)((src_h - 1 - 8) * sx), y = (int)((16 * b + 8) * sy);
		n |= (f->data[0][y * f->linesize[0] + x] > 128) << b;
	}
	return n;
}

static void on_frame(void *ctx, int i, const AVFrame *f)
{
	Check *c = ctx;
	int64_t t = (int64_t)(c->first + i) * 1000 / c->fps;
	int want = 0;
	for (int k = 0; k < c->n_src; k++)
		if (c->pts_ms[k] - c->pts_ms[0] <= t)
			want = k;
	int got = c->rot ? barcode_rotated(f, c->src_w, c->src_h) : tp_barcode(f, c->src_w, c->src_h);
	if (got != want && c->bad++ < 3)
		printf("FAIL output frame %d shows source frame %d, want %d\n", c->first + i, got, want);
	if (f->format != AV_PIX_FMT_YUV420P)
		c->not420++;
}

static void run_case(const char *dir, const char *name, const char *fmt, const char *codec, enum AVPixelFormat pix,
		     int w, int h, const int64_t *pts_ms, int n, int audio, int rot, int min_frames, int max_frames)
{
	char src[512], root[512];
	snprintf(src, sizeof(src), "%s/%s.%s", dir, name, fmt);
	snprintf(root, sizeof(root), "%s/out", dir);
	int rc = write_source(src, strcmp(fmt, "mkv") == 0 ? "matroska" : fmt, codec, pix, w, h, pts_ms, n, audio, rot);
	if (rc == AVERROR_ENCODER_NOT_FOUND) {
		printf("skip %s: this libavcodec has no %s encoder\n", name, codec);
		return;
	}
	if (rc < 0) {
		printf("FAIL %s: cannot write the source with %s (%d)\n", name, codec, rc);
		fails++;
		return;
	}
	PrepChunkOpts o = {.root = root,
			   .chunk_sec = 2,
			   .short_side = 96,
			   .fps_num = 10,
			   .fps_den = 1,
			   .gop = 8,
			   .crf = 23,
			   .preset = "ultrafast"};
	PrepVideoResult r;
	if (prep_chunk_video(src, name, &o, &r) < 0) {
		printf("FAIL %s: %s\n", name, r.error);
		fails++;
		return;
	}
	int first = 0, ok = (int)r.n_frames >= min_frames && (int)r.n_frames <= max_frames;
	Check c = {.pts_ms = pts_ms, .n_src = n, .src_w = w, .src_h = h, .fps = 10, .rot = rot};
	if (rot && r.n_chunks && r.chunks[0].ix.width > r.chunks[0].ix.height) {
		printf("FAIL %s: rotated source came out landscape\n", name);
		fails++;
	}
	for (int k = 0; k < r.n_chunks; k++) {
		char path[1200];
		snprintf(path, sizeof(path), "%s/%s", root, r.chunks[k].path);
		c.first = first;
		int got = tp_decode(path, on_frame, &c);
		ok = ok && got == (int)r.chunks[k].ix.n_frames &&
		     (r.chunks[k].ix.height < r.chunks[k].ix.width ? r.chunks[k].ix.height : r.chunks[k].ix.width) ==
			     96;
		first += got;
	}
	ok = ok && !c.bad && !c.not420 && first == (int)r.n_frames;
	printf("%s %s: %s %s %dx%d%s -> %llu frames in %d chunks of %ux%u\n", ok ? "ok  " : "FAIL", name, codec,
	       av_get_pix_fmt_name(pix), w, h, audio ? " + audio" : "", (unsigned long long)r.n_frames, r.n_chunks,
	       r.n_chunks ? r.chunks[0].ix.width : 0, r.n_chunks ? r.chunks[0].ix.height : 0);
	fails += !ok;
	prep_video_result_free(&r);
}

int main(void)
{
	av_log_set_level(getenv("TEST_AV_LOG") ? AV_LOG_INFO : AV_LOG_FATAL);
	if (!prep_encoder_available()) {
		printf("no H.264 encoder in this libavcodec\n");
		return 77;
	}
	char dir[] = "/tmp/test_prep_any_XXXXXX", root[64];
	if (!mkdtemp(dir))
		return 1;
	snprintf(root, sizeof(root), "%s/out", dir);
	mkdir(root, 0755);
	int64_t cfr[75], vfr[40];
	for (int i = 0; i < 75; i++)
		cfr[i] = i * 40; // 25 fps, 3 s
	for (int i = 0, t = 0; i < 40; i++) {
		vfr[i] = t;
		t += (i % 3 == 0) ? 20 : (i % 3 == 1) ? 70 : 150; // irregular gaps, mean 80 ms
	}
	// 3 s at 25 fps -> 30 frames at 10 fps; VFR: ~3.2 s -> 32 or 33 frames
	run_case(dir, "ffv1_444p10_odd", "mkv", "ffv1", AV_PIX_FMT_YUV444P10LE, 161, 91, cfr, 75, 0, 0, 30, 30);
	run_case(dir, "mpeg4_vfr_audio", "mkv", "mpeg4", AV_PIX_FMT_YUV420P, 176, 144, vfr, 40, 1, 0, 32, 33);
	run_case(dir, "mjpeg_fullrange", "avi", "mjpeg", AV_PIX_FMT_YUVJ420P, 192, 108, cfr, 75, 0, 0, 30, 30);
	run_case(dir, "phone_rotated", "mov", "libx264", AV_PIX_FMT_YUV420P, 320, 180, cfr, 75, 1, 90, 30, 30);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (!getenv("TEST_KEEP") && system(cmd) != 0)
		printf("note: could not remove %s\n", dir);
	printf("%s\n", fails ? "FAILED" : "every source became 8-bit 4:2:0 chunks with the right frames");
	return fails ? 1 : 0;
}
