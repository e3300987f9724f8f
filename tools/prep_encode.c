// H.264 MP4 writer: libx264 at a fixed GOP with scene-cut keyframes off (closed GOPs, so the
// manifest's keyframe index is exact), one thread and bit-exact flags for reproducible bytes.
#include "prep_encode.h" // defines: prep_encoder_open, prep_encoder_write, prep_encoder_close, ...

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <stdio.h>

struct PrepEncoder {
	AVFormatContext *oc;
	AVCodecContext *c;
	AVStream *st;
	AVPacket *pkt;
	int64_t n;
	int header_written;
};

static const AVCodec *find_h264(void)
{
	const AVCodec *codec = avcodec_find_encoder_by_name("libx264");
	return codec ? codec : NULL;
}

int prep_encoder_available(void)
{
	return find_h264() != NULL;
}

void prep_encoder_abort(PrepEncoder *e)
{
	if (!e)
		return;
	avcodec_free_context(&e->c);
	av_packet_free(&e->pkt);
	if (e->oc) {
		if (e->oc->pb)
			avio_closep(&e->oc->pb);
		avformat_free_context(e->oc);
	}
	av_free(e);
}

int prep_encoder_open(PrepEncoder **out, const char *path, const PrepEncodeOpts *o)
{
	*out = NULL;
	const AVCodec *codec = find_h264();
	if (!codec)
		return AVERROR_ENCODER_NOT_FOUND;
	PrepEncoder *e = av_mallocz(sizeof(*e));
	if (!e)
		return AVERROR(ENOMEM);
	int rc = avformat_alloc_output_context2(&e->oc, NULL, "mp4", path);
	if (rc < 0)
		goto fail;
	e->oc->flags |= AVFMT_FLAG_BITEXACT;
	e->c = avcodec_alloc_context3(codec);
	e->pkt = av_packet_alloc();
	e->st = avformat_new_stream(e->oc, NULL);
	if (!e->c || !e->pkt || !e->st) {
		rc = AVERROR(ENOMEM);
		goto fail;
	}
	AVCodecContext *c = e->c;
	c->width = o->width;
	c->height = o->height;
	c->pix_fmt = AV_PIX_FMT_YUV420P;
	c->time_base = (AVRational){o->fps_den, o->fps_num};
	c->framerate = (AVRational){o->fps_num, o->fps_den};
	c->gop_size = o->gop;
	c->keyint_min = o->gop;
	c->max_b_frames = o->bframes;
	c->thread_count = 1;
	c->flags |= AV_CODEC_FLAG_BITEXACT | AV_CODEC_FLAG_CLOSED_GOP;
	c->color_range = AVCOL_RANGE_MPEG;
	if (e->oc->oformat->flags & AVFMT_GLOBALHEADER)
		c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	av_opt_set(c->priv_data, "preset", o->preset ? o->preset : "veryfast", 0);
	char params[160];
	int n = snprintf(params, sizeof(params), "scenecut=0:open-gop=0:crf=%d", o->crf > 0 ? o->crf : 23);
	if (o->refs > 0)
		n += snprintf(params + n, sizeof(params) - (size_t)n, ":ref=%d", o->refs);
	if (o->b_pyramid)
		n += snprintf(params + n, sizeof(params) - (size_t)n, ":b-pyramid=%s",
			      o->b_pyramid == 1   ? "none"
			      : o->b_pyramid == 3 ? "strict"
						  : "normal");
	if (o->b_fixed)
		n += snprintf(params + n, sizeof(params) - (size_t)n, ":b-adapt=0");
	if (o->cavlc)
		n += snprintf(params + n, sizeof(params) - (size_t)n, ":cabac=0");
	if (o->no_deblock)
		n += snprintf(params + n, sizeof(params) - (size_t)n, ":no-deblock=1");
	if (o->fullpel)
		snprintf(params + n, sizeof(params) - (size_t)n, ":subme=0");
	av_opt_set(c->priv_data, "x264-params", params, 0);
	if ((rc = avcodec_open2(c, codec, NULL)) < 0)
		goto fail;
	if ((rc = avcodec_parameters_from_context(e->st->codecpar, c)) < 0)
		goto fail;
	e->st->time_base = c->time_base;
	e->st->avg_frame_rate = c->framerate;
	if ((rc = avio_open(&e->oc->pb, path, AVIO_FLAG_WRITE)) < 0)
		goto fail;
	AVDictionary *opts = NULL;
	if (o->faststart)
		av_dict_set(&opts, "movflags", "+faststart", 0);
	rc = avformat_write_header(e->oc, &opts);
	av_dict_free(&opts);
	if (rc < 0)
		goto fail;
	e->header_written = 1;
	*out = e;
	return 0;
fail:
	prep_encoder_abort(e);
	return rc;
}

// sends frame (NULL: flush) and writes every packet the encoder has ready
static int pump(PrepEncoder *e, AVFrame *frame)
{
	int rc = avcodec_send_frame(e->c, frame);
	if (rc < 0)
		return rc;
	for (;;) {
		rc = avcodec_receive_packet(e->c, e->pkt);
		if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
			return 0;
		if (rc < 0)
			return rc;
		av_packet_rescale_ts(e->pkt, e->c->time_base, e->st->time_base);
		e->pkt->stream_index = e->st->index;
		rc = av_interleaved_write_frame(e->oc, e->pkt);
		if (rc < 0)
			return rc;
	}
}

int prep_encoder_write(PrepEncoder *e, AVFrame *frame)
{
	frame->pts = e->n++;
	frame->pict_type = AV_PICTURE_TYPE_NONE;
	return pump(e, frame);
}

int prep_encoder_close(PrepEncoder *e, int64_t *n_frames)
{
	int rc = pump(e, NULL);
	if (rc >= 0)
		rc = av_write_trailer(e->oc);
	if (n_frames)
		*n_frames = e->n;
	prep_encoder_abort(e);
	return rc < 0 ? rc : 0;
}

int prep_encode_frames(const char *path, const PrepEncodeOpts *o, int n_frames,
		       void (*paint)(void *ctx, int i, AVFrame *f), void *ctx)
{
	PrepEncoder *e;
	int rc = prep_encoder_open(&e, path, o);
	if (rc < 0)
		return rc;
	AVFrame *f = av_frame_alloc();
	if (!f) {
		prep_encoder_abort(e);
		return AVERROR(ENOMEM);
	}
	f->format = AV_PIX_FMT_YUV420P, f->width = o->width, f->height = o->height;
	rc = av_frame_get_buffer(f, 0);
	for (int i = 0; rc >= 0 && i < n_frames; i++) {
		if ((rc = av_frame_make_writable(f)) < 0)
			break;
		paint(ctx, i, f);
		rc = prep_encoder_write(e, f);
	}
	av_frame_free(&f);
	if (rc < 0) {
		prep_encoder_abort(e);
		return rc;
	}
	return prep_encoder_close(e, NULL);
}
