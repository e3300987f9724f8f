// bench_prep_gop's footage: every frame of the chunk rendered (camera-like source) or decoded and
// scaled (a file) once into memory, so every setting encodes the same pictures and PSNR compares with them.
#include "bench_prep_gop_src.h" // defines: BpgSource, bpg_source_open, bpg_source_free, bpg_source_frame
#include "../tools/camsrc.h"    // defines: cam_new_style, cam_render, cam_free, CamStyle

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t pic_bytes(const BpgSource *s)
{
	return (size_t)s->width * s->height * 3 / 2;
}

// packs the yuv420p frame f into p (rows without padding)
static void pack(const BpgSource *s, const AVFrame *f, unsigned char *p)
{
	for (int pl = 0; pl < 3; pl++) {
		int w = pl ? s->width / 2 : s->width, h = pl ? s->height / 2 : s->height;
		for (int y = 0; y < h; y++, p += w)
			memcpy(p, f->data[pl] + (size_t)y * f->linesize[pl], (size_t)w);
	}
}

static int alloc_pics(BpgSource *s, int n)
{
	s->yuv = calloc((size_t)n, sizeof(*s->yuv));
	if (!s->yuv)
		return -1;
	for (int i = 0; i < n; i++)
		if (!(s->yuv[i] = malloc(pic_bytes(s))))
			return -1;
	s->source_frames = n;
	return 0;
}

static int open_cam(BpgSource *s, int hard, int seconds)
{
	// hard: head turns (pan 3x as fast, ~20 pixels a frame at the peaks), 3x the shake, twice the
	// noise, and a near layer of objects sliding over the world
	CamStyle style = hard ? (CamStyle){3, 3, 2, 1} : (CamStyle){1, 1, 1, 0};
	snprintf(s->name, sizeof(s->name), "%s", hard ? "cam-hard" : "cam");
	s->width = 512, s->height = 288, s->fps = 30, s->frames = 30 * seconds;
	CamSource *cs;
	AVFrame *f = av_frame_alloc();
	if (!f || cam_new_style(&cs, s->width, s->height, s->fps, 1, &style) != 0) {
		av_frame_free(&f);
		return -1;
	}
	f->format = AV_PIX_FMT_YUV420P, f->width = s->width, f->height = s->height;
	int rc = av_frame_get_buffer(f, 0) < 0 || alloc_pics(s, s->frames) ? -1 : 0;
	for (int i = 0; !rc && i < s->frames; i++) {
		cam_render(cs, i, f);
		pack(s, f, s->yuv[i]);
	}
	av_frame_free(&f);
	cam_free(cs);
	return rc;
}

// decodes every frame of path, scaled to short side 288 (even sides) with bicubic as tools/prep does
static int open_file(BpgSource *s, const char *path, int seconds, char *err, size_t errlen)
{
	const char *base = strrchr(path, '/');
	snprintf(s->name, sizeof(s->name), "%s", base ? base + 1 : path);
	char *dot = strrchr(s->name, '.');
	if (dot)
		*dot = 0;
	AVFormatContext *ic = NULL;
	if (avformat_open_input(&ic, path, NULL, NULL) < 0 || avformat_find_stream_info(ic, NULL) < 0) {
		snprintf(err, errlen, "--source %s: cannot open the video", path);
		avformat_close_input(&ic);
		return -1;
	}
	const AVCodec *codec = NULL;
	int si = av_find_best_stream(ic, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
	AVCodecContext *c = si >= 0 ? avcodec_alloc_context3(codec) : NULL;
	if (!c || avcodec_parameters_to_context(c, ic->streams[si]->codecpar) < 0 ||
	    avcodec_open2(c, codec, NULL) < 0) {
		snprintf(err, errlen, "--source %s: no video stream it can decode", path);
		avcodec_free_context(&c);
		avformat_close_input(&ic);
		return -1;
	}
	AVRational r = ic->streams[si]->avg_frame_rate;
	s->fps = r.num > 0 && r.den > 0 ? (int)lround(av_q2d(r)) : 25;
	s->frames = s->fps * seconds;
	int sw = c->width, sh = c->height;
	if (sw >= sh)
		s->height = 288, s->width = 2 * (int)lround((double)sw * 288 / sh / 2);
	else
		s->width = 288, s->height = 2 * (int)lround((double)sh * 288 / sw / 2);
	AVPacket *pkt = av_packet_alloc();
	AVFrame *f = av_frame_alloc(), *o = av_frame_alloc();
	struct SwsContext *sws = NULL;
	int cap = 0, n = 0, rc = !pkt || !f || !o ? -1 : 0, eof = 0;
	if (!rc) {
		o->format = AV_PIX_FMT_YUV420P, o->width = s->width, o->height = s->height;
		rc = av_frame_get_buffer(o, 0) < 0 ? -1 : 0;
	}
	while (!rc && !eof) {
		eof = av_read_frame(ic, pkt) < 0;
		if (!eof && pkt->stream_index != si) {
			av_packet_unref(pkt);
			continue;
		}
		avcodec_send_packet(c, eof ? NULL : pkt);
		av_packet_unref(pkt);
		while (!rc && avcodec_receive_frame(c, f) >= 0) {
			sws = sws_getCachedContext(sws, f->width, f->height, f->format, s->width, s->height,
						   AV_PIX_FMT_YUV420P, SWS_BICUBIC, NULL, NULL, NULL);
			unsigned char **grown =
				n < cap ? s->yuv : realloc(s->yuv, (size_t)(cap = 2 * cap + 64) * sizeof(*s->yuv));
			if (!sws || !grown || !(grown[n] = malloc(pic_bytes(s)))) {
				rc = -1;
				if (grown)
					s->yuv = grown;
				break;
			}
			s->yuv = grown;
			sws_scale(sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, o->data,
				  o->linesize);
			pack(s, o, s->yuv[n++]);
			s->source_frames = n;
			av_frame_unref(f);
		}
	}
	if (!rc && n < 2) {
		snprintf(err, errlen, "--source %s: fewer than 2 frames", path);
		rc = -1;
	} else if (rc) {
		snprintf(err, errlen, "--source %s: out of memory or no scaler", path);
	}
	sws_freeContext(sws);
	av_frame_free(&f), av_frame_free(&o), av_packet_free(&pkt);
	avcodec_free_context(&c);
	avformat_close_input(&ic);
	return rc;
}

int bpg_source_open(BpgSource *s, const char *spec, int seconds, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	int rc = !strcmp(spec, "cam") || !strcmp(spec, "cam-hard") ? open_cam(s, spec[3] == '-', seconds)
								   : open_file(s, spec, seconds, err, errlen);
	if (rc && !err[0])
		snprintf(err, errlen, "--source %s: out of memory", spec);
	if (rc)
		bpg_source_free(s);
	return rc;
}

void bpg_source_free(BpgSource *s)
{
	for (int i = 0; s->yuv && i < s->source_frames; i++)
		free(s->yuv[i]);
	free(s->yuv);
	memset(s, 0, sizeof(*s));
}

void bpg_source_frame(const BpgSource *s, int i, AVFrame *f)
{
	int period = 2 * (s->source_frames - 1), k = i % period; // forward, then backward
	const unsigned char *p = s->yuv[k < s->source_frames ? k : period - k];
	for (int pl = 0; pl < 3; pl++) {
		int w = pl ? s->width / 2 : s->width, h = pl ? s->height / 2 : s->height;
		for (int y = 0; y < h; y++, p += w)
			memcpy(f->data[pl] + (size_t)y * f->linesize[pl], p, (size_t)w);
	}
}
