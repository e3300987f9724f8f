// Image side of tools/synth: PNG encoding through libavcodec (bit-exact, so the same images give
// the same bytes); the shards are written by the one tar writer (data/tar.h).
#include "synth.h" // defines: synth_png_encode

#include <errno.h>
#include <libavcodec/avcodec.h>
#include <stdlib.h>
#include <string.h>

int synth_png_encode(const uint8_t *rgb, int w, int h, uint8_t **out, size_t *len)
{
	*out = NULL;
	const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
	if (!codec)
		return AVERROR_ENCODER_NOT_FOUND;
	AVCodecContext *c = avcodec_alloc_context3(codec);
	AVFrame *f = av_frame_alloc();
	AVPacket *p = av_packet_alloc();
	int rc = AVERROR(ENOMEM);
	if (!c || !f || !p)
		goto out;
	c->width = w, c->height = h, c->pix_fmt = AV_PIX_FMT_RGB24, c->time_base = (AVRational){1, 1};
	c->flags |= AV_CODEC_FLAG_BITEXACT;
	if ((rc = avcodec_open2(c, codec, NULL)) < 0)
		goto out;
	f->format = AV_PIX_FMT_RGB24, f->width = w, f->height = h;
	if ((rc = av_frame_get_buffer(f, 0)) < 0)
		goto out;
	for (int y = 0; y < h; y++)
		memcpy(f->data[0] + (size_t)y * f->linesize[0], rgb + (size_t)y * w * 3, (size_t)w * 3);
	f->pts = 0;
	if ((rc = avcodec_send_frame(c, f)) < 0 || (rc = avcodec_receive_packet(c, p)) < 0)
		goto out;
	*out = malloc((size_t)p->size);
	if (!*out) {
		rc = AVERROR(ENOMEM);
		goto out;
	}
	memcpy(*out, p->data, (size_t)p->size);
	*len = (size_t)p->size;
	rc = 0;
out:
	av_packet_free(&p);
	av_frame_free(&f);
	avcodec_free_context(&c);
	return rc;
}
