// Helpers for the tools/prep tests: source videos whose frames carry their own number as a
// 10-bit barcode, decoding a chunk frame by frame, and reading the barcode back.
#ifndef TEST_PREP_UTIL_H
#define TEST_PREP_UTIL_H
// defines: tp_make_source, tp_barcode, tp_decode

#include "../tools/prep_encode.h" // defines: prep_encode_frames, PrepEncodeOpts

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <string.h>

// bit b of frame number n: a 16x16 block at x = 16 b, y = 0 (white 1, black 0)
__attribute__((unused)) static void tp_paint(void *ctx, int n, AVFrame *f)
{
	(void)ctx;
	for (int y = 0; y < f->height; y++)
		memset(f->data[0] + y * f->linesize[0], 90, (size_t)f->width);
	for (int y = 0; y < f->height / 2; y++) {
		memset(f->data[1] + y * f->linesize[1], 128, (size_t)f->width / 2);
		memset(f->data[2] + y * f->linesize[2], 128, (size_t)f->width / 2);
	}
	for (int b = 0; b < 10; b++)
		for (int y = 0; y < 16; y++)
			memset(f->data[0] + y * f->linesize[0] + 16 * b, (n >> b & 1) ? 235 : 16, 16);
}

__attribute__((unused)) static int tp_make_source(const char *path, int w, int h, int fps, int n_frames, int gop)
{
	PrepEncodeOpts eo = {
		.width = w, .height = h, .fps_num = fps, .fps_den = 1, .gop = gop, .crf = 18, .preset = "ultrafast"};
	return prep_encode_frames(path, &eo, n_frames, tp_paint, NULL);
}

// the frame number in a decoded frame scaled from a src_w-wide source
__attribute__((unused)) static int tp_barcode(const AVFrame *f, int src_w, int src_h)
{
	double sx = (double)f->width / src_w, sy = (double)f->height / src_h;
	int n = 0;
	for (int b = 0; b < 10; b++) {
		int x = (int)((16 * b + 8) * sx), y = (int)(8 * sy);
		n |= (f->data[0][y * f->linesize[0] + x] > 128) << b;
	}
	return n;
}

// decodes every frame of path in display order: fn(ctx, index, frame); returns the count
// or a negative AVERROR
__attribute__((unused)) static int tp_decode(const char *path, void (*fn)(void *, int, const AVFrame *), void *ctx)
{
	AVFormatContext *ic = NULL;
	int rc = avformat_open_input(&ic, path, NULL, NULL);
	if (rc < 0)
		return rc;
	avformat_find_stream_info(ic, NULL);
	const AVCodec *dec;
	int vs = av_find_best_stream(ic, AVMEDIA_TYPE_VIDEO, -1, -1, &dec, 0);
	AVCodecContext *c = avcodec_alloc_context3(dec);
	avcodec_parameters_to_context(c, ic->streams[vs]->codecpar);
	c->thread_count = 1;
	avcodec_open2(c, dec, NULL);
	AVPacket *p = av_packet_alloc();
	AVFrame *f = av_frame_alloc();
	int n = 0, eof = 0;
	while (!eof) {
		if (av_read_frame(ic, p) < 0) {
			eof = 1;
			avcodec_send_packet(c, NULL);
		} else {
			if (p->stream_index == vs)
				avcodec_send_packet(c, p);
			av_packet_unref(p);
		}
		while (avcodec_receive_frame(c, f) >= 0) {
			fn(ctx, n++, f);
			av_frame_unref(f);
		}
	}
	av_frame_free(&f);
	av_packet_free(&p);
	avcodec_free_context(&c);
	avformat_close_input(&ic);
	return n;
}

#endif
