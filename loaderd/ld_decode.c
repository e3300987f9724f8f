// Decoder entry points and the demux path: chunks without a packet index (and the tests'
// reference path) are demuxed from memory, seeked to the keyframe the manifest names (and again
// whenever the next needed frame lies past another keyframe); packets of frames nobody needs are
// sent with skip_frame=nonref (a non-reference frame never feeds another frame). Images too.
#include "ld_decoder_priv.h" // defines: LdDecoder, ld_render, ld_decode_indexed
#include "proc_time.h"       // defines: time_mono_ns, time_thread_cpu_ns

#include "ld_avio.h" // defines: LdMemIO, ld_avio_open, ld_avio_close
#include "loader.h"  // defines: LD_ERR_*

#include <assert.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void ld_libav_quiet(void)
{
	av_log_set_level(AV_LOG_QUIET);
}

int ld_decoder_new(LdDecoder **out)
{
	LdDecoder *d = calloc(1, sizeof(*d));
	if (!d)
		return -LD_ERR_NOMEM;
	d->frame = av_frame_alloc();
	d->pkt = av_packet_alloc();
	if (!d->frame || !d->pkt) {
		ld_decoder_free(d);
		return -LD_ERR_NOMEM;
	}
	*out = d;
	return 0;
}

void ld_decoder_free(LdDecoder *d)
{
	if (!d)
		return;
	ld_split_free(d->helper);
	for (int i = 0; i < LD_CODEC_SLOTS; i++) {
		avcodec_free_context(&d->slots[i].c);
		free(d->slots[i].config);
	}
	av_frame_free(&d->frame);
	av_packet_free(&d->pkt);
	sws_freeContext(d->sws_crop);
	sws_freeContext(d->sws_full);
	sws_freeContext(d->sws_yuv);
	sws_freeContext(d->sws_rgb);
	av_freep(&d->yuv[0]);
	free(d->rgb);
	free(d);
}

uint64_t ld_decoder_frames(const LdDecoder *d)
{
	return d->frames_decoded;
}
uint64_t ld_decoder_jumps(const LdDecoder *d)
{
	return d->seeks;
}
void ld_decoder_timing(LdDecoder *d, int on)
{
	d->timing = on;
}
const LdCost *ld_decoder_cost(const LdDecoder *d)
{
	return &d->cost;
}

void ld_cost_add(LdCost *to, const LdCost *from)
{
	static_assert(sizeof(LdCost) % sizeof(uint64_t) == 0, "LdCost holds only uint64_t counters");
	uint64_t *t = (uint64_t *)to;
	const uint64_t *f = (const uint64_t *)from;
	for (size_t i = 0; i < sizeof(LdCost) / sizeof(uint64_t); i++)
		t[i] += f[i];
}

static int is_needed(const uint32_t *frames, int n, int64_t fn)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if ((int64_t)frames[mid] < fn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && (int64_t)frames[lo] == fn;
}

static int is_supported_video(enum AVCodecID id)
{
	return id == AV_CODEC_ID_H264 || id == AV_CODEC_ID_HEVC || id == AV_CODEC_ID_VP9 || id == AV_CODEC_ID_AV1 ||
	       id == AV_CODEC_ID_VP8 || id == AV_CODEC_ID_MPEG4;
}

// Damaged input must never become a sample: the decoder reports what it detects as an error
// (AV_EF_EXPLODE: a truncated JPEG otherwise decodes with its missing part filled in) and
// outputs damaged frames flagged (concealment, corrupt) instead of hiding them.
static void ld_decode_strict(AVCodecContext *c)
{
	c->err_recognition = AV_EF_EXPLODE | AV_EF_CRCCHECK | AV_EF_BITSTREAM | AV_EF_BUFFER;
	c->flags |= AV_CODEC_FLAG_OUTPUT_CORRUPT;
}

static int frame_flagged(const AVFrame *f)
{
	return f->decode_error_flags != 0 || (f->flags & AV_FRAME_FLAG_CORRUPT);
}

int ld_nal_framing(int codec_id, const uint8_t *extradata, int extradata_size)
{
	const uint8_t *x = extradata;
	if (codec_id == AV_CODEC_ID_H264)
		return extradata_size >= 7 && x[0] == 1 ? (x[4] & 3) + 1 : 0;
	if (codec_id == AV_CODEC_ID_HEVC) // hvcC unless it starts like a start code (as libavcodec decides)
		return extradata_size >= 23 && (x[0] || x[1] || x[2] > 1) ? (x[21] & 3) + 1 : 0;
	return -1;
}

// offset in p[0..n) of the first run of 3+ zero bytes followed by a byte other than 01 (or by 01
// after long_run zeros or more: no start code stands that far from its NAL unit), or n
static size_t bad_zero_run(const uint8_t *p, size_t n, size_t long_run)
{
	size_t i = 0;
	while (i < n) {
		const uint8_t *z = memchr(p + i, 0, n - i);
		if (!z)
			return n;
		size_t s = (size_t)(z - p), e = s;
		while (e < n && p[e] == 0)
			e++;
		if (e - s >= 3 && e < n && (p[e] != 1 || e - s >= long_run))
			return s;
		i = e;
	}
	return n;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

int ld_nal_zeroed(const uint8_t *data, size_t size, int framing, size_t *at)
{
	size_t i = 0, k;
	if (framing < 0)
		return 0;
	if (size && all_zero(data, size)) { // not one NAL unit: the whole packet is zeroed
		*at = 0;
		return 1;
	}
	if (framing == 0) { // Annex B: zeros may stand before a start code and at the end, nowhere else
		*at = k = bad_zero_run(data, size, SIZE_MAX);
		return k < size;
	}
	while (i < size) {
		if (size - i < (size_t)framing || all_zero(data + i, size - i))
			return 0; // padding, or a stub too short to hold a NAL unit (the decoder skips it)
		uint32_t len = 0;
		for (int b = 0; b < framing; b++)
			len = len << 8 | data[i + b];
		i += (size_t)framing;
		if (len == 0) { // the length of a zeroed NAL unit, with data after it
			*at = i - (size_t)framing;
			return 1;
		}
		size_t n = len < size - i ? len : size - i; // a length past the end: check what there is
		if ((k = bad_zero_run(data + i, n, 8)) < n) {
			*at = i + k;
			return 1;
		}
		i += n;
	}
	return 0;
}

typedef struct {
	LdDecoder *d;
	LdMemIO io;
	AVCodecContext *c;
	int tainted; // a frame decoded with errors since the last clean keyframe: later frames may predict from it
	int si;
	int framing; // ld_nal_framing of the stream: zeroed NAL bytes are refused before the decoder sees them
	AVRational tb, frame_dur; // stream time base, 1/fps
	int64_t start;            // pts of frame 0
} VideoCtx;

static int64_t frame_number(const VideoCtx *v, int64_t pts)
{
	if (pts == AV_NOPTS_VALUE)
		return -1;
	return av_rescale_q_rnd(pts - v->start, v->tb, v->frame_dur, AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
}

static int open_video(VideoCtx *v, const uint8_t *buf, size_t size, const LdChunkInfo *ci, const LdDecodeOpts *o,
		      char *err, size_t errlen)
{
	int rc = ld_avio_open(&v->io, buf, size, o->deadline_ns, o->cancel, err, errlen);
	if (rc)
		return rc;
	const AVCodec *codec = NULL;
	v->si = av_find_best_stream(v->io.fc, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
	if (v->si < 0) {
		snprintf(err, errlen, "no video stream");
		return -LD_ERR_CODEC;
	}
	AVStream *st = v->io.fc->streams[v->si];
	if (!is_supported_video(st->codecpar->codec_id) || !codec) {
		snprintf(err, errlen, "unsupported video codec %s", avcodec_get_name(st->codecpar->codec_id));
		return -LD_ERR_CODEC;
	}
	if (st->codecpar->width != ci->width || st->codecpar->height != ci->height) {
		snprintf(err, errlen, "stream is %dx%d, manifest says %dx%d", st->codecpar->width, st->codecpar->height,
			 ci->width, ci->height);
		return -LD_ERR_GEOMETRY;
	}
	v->framing = ld_nal_framing(st->codecpar->codec_id, st->codecpar->extradata, st->codecpar->extradata_size);
	v->c = avcodec_alloc_context3(codec);
	if (!v->c) {
		snprintf(err, errlen, "out of memory for the decoder");
		return -LD_ERR_NOMEM;
	}
	avcodec_parameters_to_context(v->c, st->codecpar);
	v->c->thread_count = o->threads > 0 ? o->threads : 1;
	ld_decode_strict(v->c);
	if ((rc = avcodec_open2(v->c, codec, NULL)) < 0) {
		snprintf(err, errlen, "decoder %s refused the stream: %s", codec->name, av_err2str(rc));
		return -LD_ERR_CODEC;
	}
	// frame numbers become timestamps at the manifest's rate: a stream at another rate would
	// seek and match the wrong frames
	// (r_frame_rate is exact for a constant rate; the average, from a short file's duration, is
	// a few percent off: either agreeing is enough)
	double want = (double)ci->fps_num / ci->fps_den;
	double r = st->r_frame_rate.num > 0 && st->r_frame_rate.den > 0 ? av_q2d(st->r_frame_rate) : want;
	double avg = st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0 ? av_q2d(st->avg_frame_rate) : want;
	double have = fabs(r - want) <= fabs(avg - want) ? r : avg;
	if (fabs(have - want) > 0.05 * want) {
		snprintf(err, errlen, "the stream runs at %.3f fps, the manifest says %u/%u", have, ci->fps_num,
			 ci->fps_den);
		return -LD_ERR_MANIFEST;
	}
	v->tb = st->time_base;
	v->frame_dur = (AVRational){(int)ci->fps_den, (int)ci->fps_num};
	v->start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
	return 0;
}

// the container's own index points past the end of the bytes we have
static int truncated(VideoCtx *v)
{
	if (v->si < 0 || !v->io.fc)
		return 0;
	AVStream *st = v->io.fc->streams[v->si];
	int n = avformat_index_get_entries_count(st);
	const AVIndexEntry *e = n > 0 ? avformat_index_get_entry(st, n - 1) : NULL;
	return e && e->pos + e->size > (int64_t)v->io.size;
}

static int decode_err(VideoCtx *v, int rc, const char *what, char *err, size_t errlen)
{
	if (v->io.timed_out || rc == AVERROR_EXIT) {
		snprintf(err, errlen, "watchdog: deadline passed while %s", what);
		return -LD_ERR_TIMEOUT;
	}
	if (truncated(v)) {
		snprintf(err, errlen, "%s failed: the file ends before its index does (truncated, %zu bytes)", what,
			 v->io.size);
		return -LD_ERR_TRUNCATED;
	}
	snprintf(err, errlen, "%s failed: %s", what, av_err2str(rc));
	return -LD_ERR_CORRUPT;
}

// output one decoded frame to every destination that wants its frame number
static int deliver(VideoCtx *v, const AVFrame *f, const uint32_t *frames, int n, int *next, uint8_t *const *dst,
		   const LdDecodeOpts *o, char *err, size_t errlen)
{
	LdDecoder *d = v->d;
	int64_t fn = frame_number(v, f->best_effort_timestamp);
	if (frame_flagged(f))
		v->tainted = 1;
	else if (f->key_frame)
		v->tainted = 0;
	if (*next < n && fn == (int64_t)frames[*next] && v->tainted) {
		snprintf(err, errlen, "frame %lld decodes with errors%s", (long long)fn,
			 frame_flagged(f) ? (f->decode_error_flags ? " (concealed)" : " (corrupt)")
					  : " (after a damaged frame it predicts from)");
		return -LD_ERR_CORRUPT;
	}
	if (f->width != v->c->width || f->height != v->c->height || f->width <= 0) {
		snprintf(err, errlen, "frame %lld is %dx%d, stream says %dx%d", (long long)fn, f->width, f->height,
			 v->c->width, v->c->height);
		return -LD_ERR_GEOMETRY;
	}
	int rc = ld_render_every(d, f, o, err, errlen);
	if (rc)
		return rc;
	if (*next < n && fn > (int64_t)frames[*next]) {
		snprintf(err, errlen, "frame %u never decoded (next frame is %lld): missing or variable frame rate",
			 frames[*next], (long long)fn);
		return -LD_ERR_SHORT;
	}
	while (*next < n && fn == (int64_t)frames[*next]) {
		if ((rc = ld_render(d, f, o, dst[*next], err, errlen)) != 0)
			return rc;
		(*next)++;
	}
	return 0;
}

static int drain(VideoCtx *v, const uint32_t *frames, int n, int *next, uint8_t *const *dst, const LdDecodeOpts *o,
		 char *err, size_t errlen)
{
	for (;;) {
		int rc = avcodec_receive_frame(v->c, v->d->frame);
		if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
			return 0;
		if (rc < 0)
			return decode_err(v, rc, "decoding", err, errlen);
		v->d->frames_decoded++;
		v->d->cost.frames++;
		rc = deliver(v, v->d->frame, frames, n, next, dst, o, err, errlen);
		av_frame_unref(v->d->frame);
		if (rc)
			return rc;
		if ((o->deadline_ns && time_mono_ns() > o->deadline_ns) || ld_cancelled(o)) {
			snprintf(err, errlen,
				 ld_cancelled(o) ? "cancelled: the loader is stopping"
						 : "watchdog: deadline passed while decoding");
			return -LD_ERR_TIMEOUT;
		}
	}
}

static int64_t keyframe_before(const LdChunkInfo *ci, uint32_t frame)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < ci->n_keyframes && ci->keyframes[i] <= frame; i++)
		k = ci->keyframes[i];
	return k;
}

static int seek_to(VideoCtx *v, const LdChunkInfo *ci, uint32_t first, char *err, size_t errlen)
{
	int64_t k = keyframe_before(ci, first);
	if (k == 0)
		return 0; // the demuxer already stands at frame 0
	int64_t ts = v->start + av_rescale_q(k, v->frame_dur, v->tb);
	int rc = av_seek_frame(v->io.fc, v->si, ts, AVSEEK_FLAG_BACKWARD);
	if (rc < 0)
		return decode_err(v, rc, "seeking", err, errlen);
	avcodec_flush_buffers(v->c);
	v->tainted = 0; // decoding restarts at a keyframe
	return 0;
}

// sends one demuxed packet and takes the frames it releases; its time goes to the needed or the
// referenced-only bucket (rendering is counted apart)
static int send_counted(VideoCtx *v, AVPacket *pkt, int needed, const uint32_t *frames, int n, int *next,
			uint8_t *const *dst, const LdDecodeOpts *o, char *err, size_t errlen)
{
	LdDecoder *d = v->d;
	uint64_t t0 = ld_cost_clock(d), c0 = d->cost.convert_ns;
	int key = !!(pkt->flags & AV_PKT_FLAG_KEY);
	char what[48];
	snprintf(what, sizeof what, "decoding frame %lld", (long long)frame_number(v, pkt->pts));
	d->cost.packets++;
	d->cost.bytes += (uint64_t)pkt->size;
	size_t at;
	if (ld_nal_zeroed(pkt->data, (size_t)pkt->size, v->framing, &at)) {
		snprintf(err, errlen, "%s: zeroed bytes inside a NAL unit (at byte %zu of its %d-byte packet)", what,
			 at, pkt->size);
		av_packet_unref(pkt);
		return -LD_ERR_CORRUPT;
	}
	int rc = avcodec_send_packet(v->c, pkt);
	av_packet_unref(pkt);
	if (rc < 0 && rc != AVERROR(EAGAIN))
		rc = decode_err(v, rc, what, err, errlen);
	else
		rc = drain(v, frames, n, next, dst, o, err, errlen);
	uint64_t dt = ld_cost_clock(d) - t0 - (d->cost.convert_ns - c0);
	*(needed ? &d->cost.decode_needed_ns : key ? &d->cost.decode_key_ns : &d->cost.decode_ref_ns) += dt;
	return rc;
}

// the demux path: the whole file in buf, libavformat finds the packets
static int decode_demuxed(LdDecoder *d, const uint8_t *buf, size_t size, const LdChunkInfo *ci, const uint32_t *frames,
			  int n, uint8_t *const *dst, const LdDecodeOpts *o, char *err, size_t errlen)
{
	VideoCtx v = {.d = d, .si = -1};
	uint64_t t0 = ld_cost_clock(d);
	int rc = open_video(&v, buf, size, ci, o, err, errlen);
	if (!rc && !o->no_seek)
		rc = seek_to(&v, ci, frames[0], err, errlen);
	d->cost.open_ns += ld_cost_clock(d) - t0;
	int next = 0, seeked_back = o->no_seek;
	int64_t max_pn = -1;
	// a jump goes to a later keyframe than every seek before it: when the stream's timestamps
	// disagree with the manifest (a wrong frame rate), seeks land short and would repeat forever
	int64_t last_target = o->no_seek ? 0 : keyframe_before(ci, frames[0]);
	AVPacket *pkt = d->pkt;
	while (!rc && next < n) {
		if (ld_cancelled(o)) {
			snprintf(err, errlen, "cancelled: the loader is stopping");
			rc = -LD_ERR_TIMEOUT;
			break;
		}
		t0 = ld_cost_clock(d);
		rc = av_read_frame(v.io.fc, pkt);
		d->cost.demux_ns += ld_cost_clock(d) - t0;
		if (rc == AVERROR_EOF) {
			rc = avcodec_send_packet(v.c, NULL);
			rc = rc < 0 && rc != AVERROR_EOF ? decode_err(&v, rc, "flushing", err, errlen)
							 : drain(&v, frames, n, &next, dst, o, err, errlen);
			if (!rc && next < n && truncated(&v)) {
				snprintf(err, errlen,
					 "frame %u missing: the file ends before its index does (truncated, %zu bytes)",
					 frames[next], size);
				rc = -LD_ERR_TRUNCATED;
			} else if (!rc && next < n) {
				snprintf(err, errlen,
					 "frame %u of %u not in the file: it ends earlier than the manifest says",
					 frames[next], ci->n_frames);
				rc = -LD_ERR_SHORT;
			}
			break;
		}
		if (rc < 0) {
			rc = decode_err(&v, rc, "demuxing", err, errlen);
			break;
		}
		if (pkt->stream_index != v.si) {
			av_packet_unref(pkt);
			continue;
		}
		int64_t pn = frame_number(&v, pkt->pts);
		if (!seeked_back && (pkt->flags & AV_PKT_FLAG_KEY) && pn > (int64_t)frames[next]) {
			// the seek landed past the first needed frame: start over from frame 0
			av_packet_unref(pkt);
			seeked_back = 1;
			rc = av_seek_frame(v.io.fc, v.si, v.start, AVSEEK_FLAG_BACKWARD);
			avcodec_flush_buffers(v.c);
			v.tainted = 0;
			if (rc < 0)
				rc = decode_err(&v, rc, "seeking to the start", err, errlen);
			continue;
		}
		seeked_back = 1;
		int needed = pn >= 0 && is_needed(frames, n, pn);
		v.c->skip_frame = o->mode != LD_MODE_NAIVE && !needed ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
		if (pn > max_pn)
			max_pn = pn;
		rc = send_counted(&v, pkt, needed, frames, n, &next, dst, o, err, errlen);
		// the next needed frame lies past a keyframe we have not reached: jump there instead of
		// decoding the frames between (nothing still inside the decoder is needed)
		if (!rc && next < n && o->mode != LD_MODE_NAIVE && !o->no_seek &&
		    keyframe_before(ci, frames[next]) > max_pn + 1 && keyframe_before(ci, frames[next]) > last_target) {
			last_target = keyframe_before(ci, frames[next]);
			t0 = ld_cost_clock(d);
			rc = seek_to(&v, ci, frames[next], err, errlen);
			d->cost.demux_ns += ld_cost_clock(d) - t0;
			seeked_back = 0;
			d->seeks++;
		}
	}
	// frames decoded but still held for reordering count as decoded work (the indexed path drains them)
	if (!rc && v.c && avcodec_send_packet(v.c, NULL) >= 0)
		while (avcodec_receive_frame(v.c, d->frame) >= 0) {
			d->frames_decoded++;
			d->cost.frames++;
			av_frame_unref(d->frame);
		}
	avcodec_free_context(&v.c);
	ld_avio_close(&v.io);
	return rc;
}

int ld_decode_video(LdDecoder *d, const LdBuffer *bufs, int n_bufs, const LdChunkInfo *ci, const uint32_t *frames,
		    int n, uint8_t *const *dst, const LdDecodeOpts *o, char *err, size_t errlen)
{
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++)
		if ((i && frames[i] < frames[i - 1]) || frames[i] >= ci->n_frames) {
			snprintf(err, errlen, "frame list not ascending or past the chunk's %u frames", ci->n_frames);
			return -LD_ERR_MANIFEST;
		}
	d->cost.samples++;
	if (ci->packets && !o->no_seek && o->mode != LD_MODE_NAIVE)
		return ld_decode_indexed(d, bufs, n_bufs, ci, frames, n, dst, o, err, errlen);
	if (n_bufs != 1 || bufs[0].offset != 0) {
		snprintf(err, errlen, "demuxing needs the whole file as one buffer");
		return -LD_ERR_MANIFEST;
	}
	return decode_demuxed(d, bufs[0].data, bufs[0].size, ci, frames, n, dst, o, err, errlen);
}

static enum AVCodecID image_codec(const uint8_t *b, size_t n)
{
	if (n >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF)
		return AV_CODEC_ID_MJPEG;
	if (n >= 8 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8))
		return AV_CODEC_ID_PNG;
	if (n >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4))
		return AV_CODEC_ID_WEBP;
	return AV_CODEC_ID_NONE;
}

int ld_image_load(LdDecoder *d, const uint8_t *buf, size_t size, int *w, int *h, uint64_t deadline_ns, char *err,
		  size_t errlen)
{
	av_frame_unref(d->frame);
	if (size == 0) {
		snprintf(err, errlen, "zero-length image");
		return -LD_ERR_EMPTY;
	}
	enum AVCodecID id = image_codec(buf, size);
	const AVCodec *codec = id != AV_CODEC_ID_NONE ? avcodec_find_decoder(id) : NULL;
	if (!codec) {
		snprintf(err, errlen, "not a JPEG, PNG or WebP image (or no decoder for it)");
		return -LD_ERR_CODEC;
	}
	AVCodecContext *c = avcodec_alloc_context3(codec);
	AVPacket *pkt = d->pkt;
	int rc = !c ? AVERROR(ENOMEM) : av_new_packet(pkt, (int)size);
	if (rc == 0) {
		memcpy(pkt->data, buf, size);
		c->thread_count = 1;
		ld_decode_strict(c);
		rc = avcodec_open2(c, codec, NULL);
		if (rc == 0)
			rc = avcodec_send_packet(c, pkt);
		if (rc == 0)
			rc = avcodec_send_packet(c, NULL);
		if (rc == 0 || rc == AVERROR_EOF)
			rc = avcodec_receive_frame(c, d->frame);
	}
	av_packet_unref(pkt);
	avcodec_free_context(&c);
	if (rc == AVERROR(ENOMEM)) {
		snprintf(err, errlen, "out of memory decoding an image");
		return -LD_ERR_NOMEM;
	}
	if (rc >= 0 && frame_flagged(d->frame))
		rc = AVERROR_INVALIDDATA;
	if (rc < 0) {
		av_frame_unref(d->frame);
		snprintf(err, errlen, "%s image does not decode cleanly (damaged or truncated): %s", codec->name,
			 av_err2str(rc));
		return -LD_ERR_CORRUPT;
	}
	if (deadline_ns && time_mono_ns() > deadline_ns) {
		snprintf(err, errlen, "watchdog: deadline passed while decoding the image");
		return -LD_ERR_TIMEOUT;
	}
	d->frames_decoded++;
	*w = d->frame->width;
	*h = d->frame->height;
	return 0;
}

int ld_image_render(LdDecoder *d, uint8_t *dst, const LdDecodeOpts *o, char *err, size_t errlen)
{
	if (!d->frame->data[0]) {
		snprintf(err, errlen, "no image loaded");
		return -LD_ERR_MANIFEST;
	}
	int rc = ld_render_every(d, d->frame, o, err, errlen);
	return rc ? rc : ld_render(d, d->frame, o, dst, err, errlen);
}
