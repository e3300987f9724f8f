// Synthetic inputs for the loader's tests and benchmark: videos of smooth moving gradients and
// a drifting soft square (so scaling differences stay small and motion is realistic for inter
// prediction), images, tar shards and manifests built with the manifest writer.
#include "ld_fixture.h" // defines: ld_fixture_encode, ld_fixture_image, ld_fixture_tar, ...

#include "loader.h"   // defines: ld_index_chunk, ld_index_free, LdChunkIndex
#include "manifest.h" // defines: manifest_writer_new, manifest_add_*, manifest_set_chunk_index, manifest_write
#include "tar.h"      // defines: TarWriter, tar_open, tar_add, tar_close

#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void paint(AVFrame *f, int t, uint32_t pattern, int texture)
{
	const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(f->format);
	double ph = (pattern % 97) * 0.37;
	double sx = f->width * (0.2 + 0.6 * (0.5 + 0.5 * sin(0.05 * t + ph))),
	       sy = f->height * (0.5 + 0.3 * cos(0.04 * t));
	for (int y = 0; y < f->height; y++)
		for (int x = 0; x < f->width; x++) {
			double d = hypot(x - sx, y - sy) / (0.12 * f->height);
			double sq = 70.0 / (1.0 + d * d * d * d);
			double v = 110 + 45 * sin(0.045 * x + 0.09 * t + ph) + 30 * cos(0.06 * y - 0.05 * t) + sq;
			if (texture) { // a fixed random texture that pans: detail the encoder must code, motion it can predict
				uint32_t hsh =
					(uint32_t)(x + 2 * t) * 2654435761u ^ (uint32_t)y * 2246822519u ^ pattern;
				hsh ^= hsh >> 15;
				hsh *= 2246822519u;
				hsh ^= hsh >> 13;
				v += texture * ((double)(hsh & 255) / 255.0 - 0.5);
			}
			f->data[0][y * f->linesize[0] + x] = (uint8_t)fmax(16, fmin(235, v));
		}
	int cw = AV_CEIL_RSHIFT(f->width, desc->log2_chroma_w), ch = AV_CEIL_RSHIFT(f->height, desc->log2_chroma_h);
	for (int y = 0; y < ch; y++)
		for (int x = 0; x < cw; x++) {
			double fx = (double)x / cw, fy = (double)y / ch;
			f->data[1][y * f->linesize[1] + x] = (uint8_t)(128 + 50 * sin(6.0 * fx + 0.03 * t + ph));
			f->data[2][y * f->linesize[2] + x] = (uint8_t)(128 + 50 * cos(5.0 * fy - 0.02 * t));
		}
}

// index_code: frame number and column in the luma, grey chroma (RGB = (Y - 16) * 255 / 219)
static void paint_index(AVFrame *f, int t)
{
	const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(f->format);
	for (int y = 0; y < f->height; y++)
		for (int x = 0; x < f->width; x++)
			f->data[0][y * f->linesize[0] + x] =
				(uint8_t)(y < f->height / 2 ? 16 + 4 * (t % 50) : 16 + 3 * (x % 64));
	int cw = AV_CEIL_RSHIFT(f->width, desc->log2_chroma_w), ch = AV_CEIL_RSHIFT(f->height, desc->log2_chroma_h);
	for (int p = 1; p < 3; p++)
		for (int y = 0; y < ch; y++)
			memset(f->data[p] + y * f->linesize[p], 128, (size_t)cw);
}

static int luma_of(int rgb)
{
	return (int)lround(16 + rgb * 219.0 / 255.0);
}

int ld_fixture_index_frame(int rgb)
{
	return (int)lround((luma_of(rgb) - 16) / 4.0);
}

int ld_fixture_index_column(int rgb)
{
	return (int)lround((luma_of(rgb) - 16) / 3.0);
}

static int pump(AVFormatContext *oc, AVCodecContext *c, AVStream *st, AVPacket *pkt, AVFrame *f)
{
	int rc = avcodec_send_frame(c, f);
	while (rc >= 0) {
		rc = avcodec_receive_packet(c, pkt);
		if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
			return 0;
		if (rc < 0)
			return rc;
		if (!pkt->duration) // without one the muxer's edit list drops the last frame
			pkt->duration = 1;
		av_packet_rescale_ts(pkt, c->time_base, st->time_base);
		pkt->stream_index = st->index;
		rc = av_interleaved_write_frame(oc, pkt);
	}
	return rc;
}

int ld_fixture_encode(const char *path, const LdFixtureVideo *v)
{
	const char *name = v->codec ? v->codec : "libx264";
	const AVCodec *codec = avcodec_find_encoder_by_name(name);
	if (!codec)
		return AVERROR_ENCODER_NOT_FOUND;
	AVFormatContext *oc = NULL;
	int rc = avformat_alloc_output_context2(&oc, NULL, NULL, path);
	if (rc < 0)
		return rc;
	AVCodecContext *c = avcodec_alloc_context3(codec);
	AVStream *st = avformat_new_stream(oc, NULL);
	AVPacket *pkt = av_packet_alloc();
	AVFrame *f = av_frame_alloc();
	if (!c || !st || !pkt || !f) {
		rc = AVERROR(ENOMEM);
		goto out;
	}
	c->width = v->width;
	c->height = v->height;
	c->pix_fmt = v->yuv444 ? AV_PIX_FMT_YUV444P : !strcmp(name, "mjpeg") ? AV_PIX_FMT_YUVJ420P : AV_PIX_FMT_YUV420P;
	c->time_base = v->vfr ? (AVRational){1, v->fps * 4} : (AVRational){1, v->fps};
	c->framerate = (AVRational){v->fps, 1};
	c->gop_size = v->gop > 0 ? v->gop : 16;
	c->max_b_frames = v->bframes;
	c->thread_count = 1;
	c->flags |= AV_CODEC_FLAG_CLOSED_GOP;
	if (oc->oformat->flags & AVFMT_GLOBALHEADER)
		c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	if (!strcmp(name, "libx264")) {
		char params[96];
		snprintf(params, sizeof(params), "scenecut=0:open-gop=0:keyint-min=%d:crf=%d", c->gop_size,
			 v->crf > 0 ? v->crf : 18);
		av_opt_set(c->priv_data, "preset", "veryfast", 0);
		av_opt_set(c->priv_data, "x264-params", params, 0);
	}
	if ((rc = avcodec_open2(c, codec, NULL)) < 0 || (rc = avcodec_parameters_from_context(st->codecpar, c)) < 0)
		goto out;
	st->time_base = c->time_base;
	if ((rc = avio_open(&oc->pb, path, AVIO_FLAG_WRITE)) < 0)
		goto out;
	AVDictionary *opts = NULL;
	av_dict_set(&opts, "movflags", "+faststart", 0);
	rc = avformat_write_header(oc, &opts);
	av_dict_free(&opts);
	if (rc < 0)
		goto out;
	f->format = c->pix_fmt;
	f->width = v->width;
	f->height = v->height;
	if ((rc = av_frame_get_buffer(f, 0)) < 0)
		goto out;
	int64_t pts = 0;
	for (int t = 0; t < v->n_frames && rc >= 0; t++) {
		if ((rc = av_frame_make_writable(f)) < 0)
			break;
		if (v->index_code)
			paint_index(f, t);
		else
			paint(f, t, v->pattern, v->texture);
		f->pts = pts;
		pts += v->vfr ? 2 + (t * 7 % 5) : 1; // irregular gaps of 2..6 ticks
		rc = pump(oc, c, st, pkt, f);
	}
	if (rc >= 0)
		rc = pump(oc, c, st, pkt, NULL);
	if (rc >= 0)
		rc = av_write_trailer(oc);
out:
	if (oc && oc->pb)
		avio_closep(&oc->pb);
	avformat_free_context(oc);
	avcodec_free_context(&c);
	av_packet_free(&pkt);
	av_frame_free(&f);
	return rc;
}

int ld_fixture_image(const char *name, int w, int h, uint32_t pattern, uint8_t **out, size_t *size)
{
	const AVCodec *codec = avcodec_find_encoder_by_name(name);
	if (!codec)
		return AVERROR_ENCODER_NOT_FOUND;
	AVCodecContext *c = avcodec_alloc_context3(codec);
	AVFrame *f = av_frame_alloc(), *yuv = av_frame_alloc();
	AVPacket *pkt = av_packet_alloc();
	int rc = !c || !f || !yuv || !pkt ? AVERROR(ENOMEM) : 0;
	enum AVPixelFormat fmt = !strcmp(name, "png")     ? AV_PIX_FMT_RGB24
				 : !strcmp(name, "mjpeg") ? AV_PIX_FMT_YUVJ420P
							  : AV_PIX_FMT_YUV420P;
	if (!rc) {
		c->width = w;
		c->height = h;
		c->pix_fmt = fmt;
		c->time_base = (AVRational){1, 25};
		c->flags |= AV_CODEC_FLAG_QSCALE;
		c->global_quality = FF_QP2LAMBDA * (strcmp(name, "libwebp") ? 2 : 90); // JPEG qscale / WebP quality
		rc = avcodec_open2(c, codec, NULL);
	}
	yuv->format = AV_PIX_FMT_YUV444P;
	yuv->width = w;
	yuv->height = h;
	if (!rc)
		rc = av_frame_get_buffer(yuv, 0);
	if (!rc) {
		paint(yuv, 0, pattern, 0);
		f->format = fmt;
		f->width = w;
		f->height = h;
		rc = av_frame_get_buffer(f, 0);
	}
	if (!rc) { // 4:4:4 picture -> the encoder's format (RGB by BT.601 limited range, or 2x2 chroma)
		const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(fmt);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				int Y = yuv->data[0][y * yuv->linesize[0] + x],
				    U = yuv->data[1][y * yuv->linesize[1] + x],
				    V = yuv->data[2][y * yuv->linesize[2] + x];
				if (fmt == AV_PIX_FMT_RGB24) {
					double yy = 1.164 * (Y - 16), uu = U - 128, vv = V - 128;
					uint8_t *p = f->data[0] + y * f->linesize[0] + 3 * x;
					p[0] = (uint8_t)fmax(0, fmin(255, yy + 1.596 * vv));
					p[1] = (uint8_t)fmax(0, fmin(255, yy - 0.392 * uu - 0.813 * vv));
					p[2] = (uint8_t)fmax(0, fmin(255, yy + 2.017 * uu));
				} else {
					f->data[0][y * f->linesize[0] + x] = (uint8_t)Y;
					if (!(x & 1) && !(y & 1)) {
						int cy = y >> desc->log2_chroma_h, cx = x >> desc->log2_chroma_w;
						f->data[1][cy * f->linesize[1] + cx] = (uint8_t)U;
						f->data[2][cy * f->linesize[2] + cx] = (uint8_t)V;
					}
				}
			}
		rc = avcodec_send_frame(c, f);
	}
	if (!rc)
		rc = avcodec_send_frame(c, NULL);
	if (!rc)
		rc = avcodec_receive_packet(c, pkt);
	if (!rc) {
		*out = malloc((size_t)pkt->size);
		*size = (size_t)pkt->size;
		if (*out)
			memcpy(*out, pkt->data, (size_t)pkt->size);
		else
			rc = AVERROR(ENOMEM);
	}
	av_packet_free(&pkt);
	av_frame_free(&f);
	av_frame_free(&yuv);
	avcodec_free_context(&c);
	return rc;
}

int ld_fixture_tar(const char *path, const char *const *names, const uint8_t *const *data, const size_t *sizes, int n,
		   uint64_t *offsets)
{
	TarWriter t;
	int rc = tar_open(&t, path);
	for (int i = 0; i < n && !rc; i++)
		rc = tar_add(&t, names[i], data[i], sizes[i], &offsets[i]);
	if (t.f) {
		int rc2 = tar_close(&t);
		rc = rc ? rc : rc2;
	}
	return rc;
}

static void caption(int32_t *tok, int k)
{
	memset(tok, 0, 77 * sizeof(*tok));
	tok[0] = 49406;
	tok[1] = 320 + k % 1000;
	tok[2] = 49407;
}

static int keyframes_of(uint32_t n, uint32_t gop, uint32_t *kf)
{
	int nk = 0;
	for (uint32_t f = 0; f < n; f += gop ? gop : n)
		kf[nk++] = f;
	return nk;
}

int ld_fixture_manifest(const char *path, const LdFixtureChunk *chunks, int n_chunks, const char *shard,
			const uint64_t *img_off, const uint64_t *img_len, int n_images)
{
	ManifestWriter *w;
	uint32_t chunk_ms = 2000; // the reader allows a second over; longer chunks: the longest's length
	for (int i = 0; i < n_chunks; i++)
		if (chunks[i].n_frames * 1000ull / chunks[i].fps > 3000 &&
		    chunks[i].n_frames * 1000ull / chunks[i].fps > chunk_ms)
			chunk_ms = (uint32_t)((chunks[i].n_frames * 1000ull + chunks[i].fps - 1) / chunks[i].fps);
	int rc = manifest_writer_new(&w, 77, 49408, chunk_ms, 288);
	if (rc)
		return rc;
	int32_t tok[77];
	for (int i = 0; i < n_chunks && rc >= 0; i++) {
		const LdFixtureChunk *c = &chunks[i];
		char name[32];
		snprintf(name, sizeof(name), "v%03d", i);
		int64_t vid = manifest_add_video(w, name, c->n_frames * 1000ull / c->fps);
		uint32_t kf[4096];
		int nk = keyframes_of(c->n_frames, c->gop, kf);
		int64_t ci = vid < 0 ? vid
				     : manifest_add_chunk(w, (uint32_t)vid, c->path, 0, c->n_frames, c->fps, 1,
							  (uint16_t)c->width, (uint16_t)c->height, kf, (uint32_t)nk);
		caption(tok, i);
		rc = ci < 0 ? (int)ci
			    : (int)manifest_add_clip(w, (uint32_t)vid, (uint32_t)ci, 0, (uint32_t)ci, c->n_frames, tok);
	}
	if (rc >= 0 && n_images) {
		struct stat st;
		char full[1024];
		const char *slash = strrchr(path, '/');
		snprintf(full, sizeof(full), "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, shard);
		int64_t sh = stat(full, &st) ? -errno : manifest_add_shard(w, shard, (uint64_t)st.st_size);
		for (int i = 0; i < n_images && sh >= 0 && rc >= 0; i++) {
			caption(tok, 500 + i);
			rc = (int)manifest_add_image(w, (uint32_t)sh, img_off[i], img_len[i], tok);
		}
		if (sh < 0)
			rc = (int)sh;
	}
	if (rc >= 0)
		rc = manifest_write(w, path);
	manifest_writer_free(w);
	return rc < 0 ? rc : 0;
}

// a chunk as tools/prep records it: frame count and keyframes as encoded, plus its packet index
// (unless o->no_index); the arithmetic keyframes are what the encoder was asked for
static int64_t add_indexed_chunk(ManifestWriter *w, uint32_t vid, const char *rel, const char *path, uint32_t start_ms,
				 uint32_t n, uint32_t fps, const LdFixtureOpts *o, const uint32_t *kf, uint32_t nk,
				 char *err, size_t errlen)
{
	LdChunkIndex ix;
	int e = ld_index_chunk(path, &ix);
	if (e < 0) {
		snprintf(err, errlen, "indexing %s: %s", path, av_err2str(e));
		return -EIO;
	}
	if (ix.n_frames != n || ix.n_keyframes != nk || memcmp(ix.keyframes, kf, nk * sizeof(uint32_t))) {
		snprintf(err, errlen, "%s: %u frames / %u keyframes encoded, %u / %u asked for", path, ix.n_frames,
			 ix.n_keyframes, n, nk);
		ld_index_free(&ix);
		return -EIO;
	}
	int64_t ci =
		manifest_add_chunk(w, vid, rel, start_ms, n, fps, 1, (uint16_t)o->width, (uint16_t)o->height, kf, nk);
	if (ci >= 0 && ix.codec != MANIFEST_CODEC_NONE && !o->no_index) {
		int rc = manifest_set_chunk_index(w, (uint32_t)ci, ix.codec, ix.packets, ix.n_frames, ix.config,
						  ix.config_size, ix.file_size);
		if (rc < 0) {
			snprintf(err, errlen, "%s: packet index refused by the manifest writer", path);
			ci = rc;
		}
	}
	ld_index_free(&ix);
	return ci;
}

int ld_fixture_dataset(const char *dir, const LdFixtureOpts *o, char *err, size_t errlen)
{
	ManifestWriter *w;
	int rc = manifest_writer_new(&w, 77, 49408, (uint32_t)(o->frames_per_chunk * 1000 / o->fps),
				     (uint32_t)o->height);
	if (rc) {
		snprintf(err, errlen, "manifest writer: %s", strerror(-rc));
		return rc;
	}
	int32_t tok[77];
	uint32_t n = (uint32_t)o->frames_per_chunk, kf[4096];
	int nk = keyframes_of(n, (uint32_t)o->gop, kf);
	for (int v = 0; v < o->videos && rc >= 0; v++) {
		char name[32], path[1024], rel[64];
		snprintf(name, sizeof(name), "vid%02d", v);
		int64_t vid = manifest_add_video(w, name, (uint64_t)o->chunks_per_video * n * 1000 / o->fps);
		int64_t first = -1;
		for (int k = 0; k < o->chunks_per_video && rc >= 0 && vid >= 0; k++) {
			snprintf(rel, sizeof(rel), "chunks/%s_%d.mp4", name, k);
			snprintf(path, sizeof(path), "%s/chunks", dir);
			mkdir(path, 0755);
			snprintf(path, sizeof(path), "%s/%s", dir, rel);
			LdFixtureVideo fv = {.width = o->width,
					     .height = o->height,
					     .n_frames = (int)n,
					     .fps = o->fps,
					     .gop = o->gop,
					     .bframes = o->bframes,
					     .pattern = (uint32_t)(v * 31 + k),
					     .texture = o->texture};
			int e = ld_fixture_encode(path, &fv);
			if (e < 0) {
				snprintf(err, errlen, "encoding %s: %s", path, av_err2str(e));
				rc = -EIO;
				break;
			}
			int64_t ci = add_indexed_chunk(w, (uint32_t)vid, rel, path, (uint32_t)(k * n * 1000 / o->fps),
						       n, (uint32_t)o->fps, o, kf, (uint32_t)nk, err, errlen);
			if (ci < 0) {
				rc = (int)ci;
				break;
			}
			if (first < 0)
				first = ci;
			uint32_t spans[3][2] = {{0, n / 2}, {n / 4, 3 * n / 4}, {n / 2, n}};
			for (int s = 0; s < 3 && rc >= 0; s++) {
				caption(tok, v * 100 + k * 10 + s);
				rc = (int)manifest_add_clip(w, (uint32_t)vid, (uint32_t)ci, spans[s][0], (uint32_t)ci,
							    spans[s][1], tok);
			}
			if (k > 0 && rc >= 0) { // a clip across the boundary with the previous chunk
				caption(tok, v * 100 + k * 10 + 9);
				rc = (int)manifest_add_clip(w, (uint32_t)vid, (uint32_t)ci - 1, 3 * n / 4, (uint32_t)ci,
							    n / 4, tok);
			}
		}
		if (vid < 0)
			rc = (int)vid;
	}
	if (rc >= 0 && o->images > 0) {
		uint8_t *data[64];
		size_t sizes[64];
		uint64_t offs[64];
		char names[64][32];
		const char *np[64];
		int ni = o->images < 64 ? o->images : 64;
		for (int i = 0; i < ni && rc >= 0; i++) {
			static const char *const codecs[3] = {"png", "mjpeg", "libwebp"}, *const ext[3] = {"png", "jpg",
													   "webp"};
			const char *codec = codecs[i % 3];
			if (!avcodec_find_encoder_by_name(codec))
				codec = "png";
			int e = ld_fixture_image(codec, 200 + 17 * i, 150 + 11 * i, (uint32_t)i, &data[i], &sizes[i]);
			if (e < 0) {
				snprintf(err, errlen, "encoding image %d: %s", i, av_err2str(e));
				rc = -EIO;
				ni = i;
			}
			snprintf(names[i], sizeof(names[i]), "%05d.%s", i,
				 strcmp(codec, codecs[i % 3]) ? "png" : ext[i % 3]);
			np[i] = names[i];
		}
		char path[1024];
		snprintf(path, sizeof(path), "%s/images.tar", dir);
		if (rc >= 0)
			rc = ld_fixture_tar(path, np, (const uint8_t *const *)data, sizes, ni, offs);
		struct stat st;
		int64_t sh = rc < 0            ? rc
			     : stat(path, &st) ? -errno
					       : manifest_add_shard(w, "images.tar", (uint64_t)st.st_size);
		for (int i = 0; i < ni && sh >= 0 && rc >= 0; i++) {
			caption(tok, 900 + i);
			rc = (int)manifest_add_image(w, (uint32_t)sh, offs[i], sizes[i], tok);
		}
		if (sh < 0)
			rc = (int)sh;
		for (int i = 0; i < ni; i++)
			free(data[i]);
	}
	char mpath[1024];
	snprintf(mpath, sizeof(mpath), "%s/manifest.bin", dir);
	if (rc >= 0 && (rc = manifest_write(w, mpath)) != 0)
		snprintf(err, errlen, "writing %s: %s", mpath, strerror(-rc));
	else if (rc < 0 && !err[0])
		snprintf(err, errlen, "building the manifest: %s", strerror(-rc));
	manifest_writer_free(w);
	return rc < 0 ? rc : 0;
}

int ld_fixture_tmpdir(char *buf, size_t cap)
{
	const char *t = getenv("TMPDIR");
	snprintf(buf, cap, "%s/ldtest-XXXXXX", t && *t ? t : "/tmp");
	return mkdtemp(buf) ? 0 : -errno;
}
