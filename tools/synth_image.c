// Image side of tools/synth: PNG encoding through libavcodec and a minimal ustar writer
// for webdataset shards (fixed metadata, so the same images give the same bytes).
#include "synth.h" // defines: synth_png_encode, synth_tar_open, synth_tar_add, synth_tar_close

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

int synth_tar_open(SynthTar *t, const char *path)
{
	t->f = fopen(path, "wb");
	t->pos = 0;
	return t->f ? 0 : -errno;
}

int synth_tar_header(unsigned char hdr[512], const char *name, uint64_t len, char type)
{
	memset(hdr, 0, 512);
	if (strlen(name) >= 100)
		return -ENAMETOOLONG;
	memcpy(hdr, name, strlen(name));
	snprintf((char *)hdr + 100, 8, "%07o", 0644);
	snprintf((char *)hdr + 108, 8, "%07o", 0);
	snprintf((char *)hdr + 116, 8, "%07o", 0);
	snprintf((char *)hdr + 124, 12, "%011llo", (unsigned long long)len);
	snprintf((char *)hdr + 136, 12, "%011o", 0);
	hdr[156] = (unsigned char)type;
	memcpy(hdr + 257, "ustar", 6);
	memcpy(hdr + 263, "00", 2);
	memset(hdr + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += hdr[i];
	snprintf((char *)hdr + 148, 8, "%06o", sum);
	return 0;
}

int synth_tar_add(SynthTar *t, const char *name, const void *data, size_t len)
{
	unsigned char hdr[512];
	int rc = synth_tar_header(hdr, name, len, '0');
	if (rc)
		return rc;
	static const unsigned char zeros[512];
	size_t pad = (512 - len % 512) % 512;
	if (fwrite(hdr, 1, 512, t->f) != 512 || fwrite(data, 1, len, t->f) != len ||
	    fwrite(zeros, 1, pad, t->f) != pad)
		return -EIO;
	t->pos += 512 + len + pad;
	return 0;
}

int synth_tar_close(SynthTar *t)
{
	static const unsigned char zeros[1024];
	int rc = fwrite(zeros, 1, 1024, t->f) == 1024 ? 0 : -EIO;
	if (fclose(t->f) != 0 && !rc)
		rc = -errno;
	t->f = NULL;
	return rc;
}
