// The indexed decode path: no demuxer. The manifest's packet index names each frame's bytes, so
// per GOP that holds needed frames the key packet, every reference packet up to the last needed
// frame and the needed frames themselves go to the decoder (unneeded non-reference packets are
// not even read); the decoder is then drained, so nothing past the last needed frame is decoded,
// and flushed for the next GOP. Decoder contexts stay open across samples, one per codec
// configuration (LD_CODEC_SLOTS, least recently used replaced), flushed between uses and dropped
// after any error so a damaged stream never leaves state behind. A clip's GOPs may be shared with
// a second decoder thread (ld_split.c): each GOP starts on a flushed context, so the bytes are the same.
#include "ld_decoder_priv.h" // defines: LdDecoder, LdCodecSlot, ld_decode_indexed, ld_render
#include "proc_time.h"       // defines: time_mono_ns
#include "loader.h"          // defines: LD_ERR_*, LD_MAX_FRAMES
#include "ld_gop.h"          // defines: LdGop, ld_gops, ld_gop_sends, ld_frame_needed

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void slot_close(LdCodecSlot *s)
{
	avcodec_free_context(&s->c);
	free(s->config);
	memset(s, 0, sizeof(*s));
}

static int slot_open(LdCodecSlot *s, const LdChunkInfo *ci, int threads, char *err, size_t errlen)
{
	const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_H264);
	if (!codec) {
		snprintf(err, errlen, "this libavcodec has no H.264 decoder");
		return -LD_ERR_CODEC;
	}
	s->c = avcodec_alloc_context3(codec);
	s->config = malloc(ci->config_size);
	uint8_t *extra = av_mallocz(ci->config_size + AV_INPUT_BUFFER_PADDING_SIZE);
	if (!s->c || !s->config || !extra) {
		av_free(extra);
		slot_close(s);
		snprintf(err, errlen, "out of memory for a decoder");
		return -LD_ERR_NOMEM;
	}
	memcpy(extra, ci->config, ci->config_size);
	memcpy(s->config, ci->config, ci->config_size);
	s->c->extradata = extra;
	s->c->extradata_size = (int)ci->config_size;
	s->c->width = s->width = ci->width;
	s->c->height = s->height = ci->height;
	s->c->thread_count = s->threads = threads;
	// damaged packets are an error, not a concealed frame: nothing damaged passes silently; damaged
	// frames come out flagged instead of being dropped unseen, so the frames that predict from one
	// are known to be damaged too (Run.tainted)
	s->c->err_recognition |= AV_EF_EXPLODE | AV_EF_CAREFUL;
	s->c->flags |= AV_CODEC_FLAG_OUTPUT_CORRUPT;
	s->config_size = ci->config_size;
	int rc = avcodec_open2(s->c, codec, NULL);
	if (rc < 0) {
		slot_close(s);
		snprintf(err, errlen, "the H.264 decoder refused the chunk's configuration: %s", av_err2str(rc));
		return -LD_ERR_CODEC;
	}
	return 0;
}

// the open context for this chunk's configuration (opened, or the least recently used replaced)
static LdCodecSlot *slot_get(LdDecoder *d, const LdChunkInfo *ci, int threads, char *err, size_t errlen, int *rc)
{
	LdCodecSlot *lru = &d->slots[0];
	for (int i = 0; i < LD_CODEC_SLOTS; i++) {
		LdCodecSlot *s = &d->slots[i];
		if (s->c && s->config_size == ci->config_size && s->width == ci->width && s->height == ci->height &&
		    s->threads == threads && !memcmp(s->config, ci->config, ci->config_size)) {
			s->used = ++d->tick;
			return s;
		}
		if (!s->c || (lru->c && s->used < lru->used))
			lru = s;
	}
	slot_close(lru);
	if ((*rc = slot_open(lru, ci, threads, err, errlen)) != 0)
		return NULL;
	lru->used = ++d->tick;
	return lru;
}

typedef struct {
	LdDecoder *d;
	AVCodecContext *c;
	const LdChunkInfo *ci;
	const uint32_t *frames;
	int n, delivered;
	int tainted; // a frame of this GOP decoded with errors: the frames after it may predict from it
	int framing; // ld_nal_framing of the chunk's configuration
	uint8_t *const *dst;
	const LdDecodeOpts *o;
	char *err;
	size_t errlen;
} Run;

// renders a decoded frame into every destination that wants its frame number
static int deliver(Run *r, const AVFrame *f)
{
	int64_t fn = f->pts;
	if (f->width != r->ci->width || f->height != r->ci->height) {
		snprintf(r->err, r->errlen, "frame %lld is %dx%d, the manifest says %dx%d", (long long)fn, f->width,
			 f->height, r->ci->width, r->ci->height);
		return -LD_ERR_GEOMETRY;
	}
	int flagged = f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT);
	r->tainted |= flagged;
	for (int i = 0; i < r->n; i++) {
		if ((int64_t)r->frames[i] != fn)
			continue;
		if (r->tainted) {
			snprintf(r->err, r->errlen, "frame %lld decoded with errors (damaged packets%s)", (long long)fn,
				 flagged ? "" : ", after a damaged frame it predicts from");
			return -LD_ERR_CORRUPT;
		}
		int rc = ld_render(r->d, f, r->o, r->dst[i], r->err, r->errlen);
		if (rc)
			return rc;
		r->delivered++;
	}
	return 0;
}

static int receive_all(Run *r)
{
	for (;;) {
		int rc = avcodec_receive_frame(r->c, r->d->frame);
		if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
			return 0;
		if (rc < 0) {
			snprintf(r->err, r->errlen, "decoding: %s", av_err2str(rc));
			return -LD_ERR_CORRUPT;
		}
		r->d->frames_decoded++;
		r->d->cost.frames++;
		rc = deliver(r, r->d->frame);
		av_frame_unref(r->d->frame);
		if (rc)
			return rc;
	}
}

// the bytes of packet p among the buffers read (they come in file order: *at is a cursor)
static const uint8_t *packet_bytes(const LdBuffer *bufs, int n_bufs, int *at, const ManifestPacket *p)
{
	for (int k = 0; k < n_bufs; k++) {
		const LdBuffer *b = &bufs[(*at + k) % n_bufs];
		if (p->offset >= b->offset && (uint64_t)p->offset + p->size <= b->offset + b->size) {
			*at = (*at + k) % n_bufs;
			return b->data + (p->offset - b->offset);
		}
	}
	return NULL;
}

static int send_packet(Run *r, const ManifestPacket *p, const uint8_t *data)
{
	LdDecoder *d = r->d;
	uint64_t t0 = ld_cost_clock(d);
	AVPacket *pkt = d->pkt;
	size_t at;
	if (ld_nal_zeroed(data, p->size, r->framing, &at)) { // the decoder would show it garbled, unflagged
		snprintf(r->err, r->errlen, "decoding frame %u: zeroed bytes inside a NAL unit (at byte %zu of its %u)",
			 p->frame, at, p->size);
		return -LD_ERR_CORRUPT;
	}
	if (av_new_packet(pkt, (int)p->size) < 0) { // zeroed padding after the data, as decoders want
		snprintf(r->err, r->errlen, "out of memory for a packet");
		return -LD_ERR_NOMEM;
	}
	memcpy(pkt->data, data, p->size);
	pkt->pts = p->frame;
	pkt->flags = p->flags & MANIFEST_PKT_KEY ? AV_PKT_FLAG_KEY : 0;
	uint64_t t1 = ld_cost_clock(d), c0 = d->cost.convert_ns;
	d->cost.demux_ns += t1 - t0;
	d->cost.packets++;
	d->cost.bytes += p->size;
	int rc = avcodec_send_packet(r->c, pkt);
	av_packet_unref(pkt);
	if (rc < 0) {
		snprintf(r->err, r->errlen, "decoding frame %u: %s", p->frame, av_err2str(rc));
		rc = -LD_ERR_CORRUPT;
	} else {
		rc = receive_all(r);
	}
	uint64_t dt = ld_cost_clock(d) - t1 - (d->cost.convert_ns - c0);
	*(ld_frame_needed(p->frame, r->frames, r->n) ? &d->cost.decode_needed_ns
	  : p->flags & MANIFEST_PKT_KEY              ? &d->cost.decode_key_ns
						     : &d->cost.decode_ref_ns) += dt;
	return rc;
}

// one GOP: its packets up to the last needed one, then drain (frames still held for reordering
// come out) and flush for the next key packet
static int decode_gop(Run *r, const LdGop *g, const LdBuffer *bufs, int n_bufs, int *at)
{
	r->tainted = 0; // a GOP starts at a keyframe on a flushed decoder
	for (uint32_t j = g->first; j <= g->last; j++) {
		const ManifestPacket *p = &r->ci->packets[j];
		if (!ld_gop_sends(p, r->frames, r->n))
			continue;
		const uint8_t *data = packet_bytes(bufs, n_bufs, at, p);
		if (!data) {
			snprintf(r->err, r->errlen, "packet of frame %u (bytes %u+%u) is not among the bytes read",
				 p->frame, p->offset, p->size);
			return -LD_ERR_MANIFEST;
		}
		int rc = send_packet(r, p, data);
		if (rc)
			return rc;
		if ((r->o->deadline_ns && time_mono_ns() > r->o->deadline_ns) || ld_cancelled(r->o)) {
			snprintf(r->err, r->errlen,
				 ld_cancelled(r->o) ? "cancelled: the loader is stopping"
						    : "watchdog: deadline passed while decoding");
			return -LD_ERR_TIMEOUT;
		}
	}
	uint64_t t0 = ld_cost_clock(r->d), c0 = r->d->cost.convert_ns;
	int rc = avcodec_send_packet(r->c, NULL);
	rc = rc < 0 && rc != AVERROR_EOF ? -LD_ERR_CORRUPT : receive_all(r);
	if (rc == -LD_ERR_CORRUPT && !r->err[0])
		snprintf(r->err, r->errlen, "draining the decoder failed");
	avcodec_flush_buffers(r->c);
	r->d->cost.decode_ref_ns += ld_cost_clock(r->d) - t0 - (r->d->cost.convert_ns - c0);
	return rc;
}

int ld_decode_gops(LdDecoder *d, const LdBuffer *bufs, int n_bufs, const LdChunkInfo *ci, const LdGop *gops, int ng,
		   const uint32_t *frames, int n, uint8_t *const *dst, const LdDecodeOpts *o, int *delivered, char *err,
		   size_t errlen)
{
	uint64_t t0 = ld_cost_clock(d);
	int rc = 0;
	int threads = o->threads > 0 ? o->threads : 1;
	LdCodecSlot *s = slot_get(d, ci, threads, err, errlen, &rc);
	if (!s)
		return rc;
	avcodec_flush_buffers(s->c);
	s->c->skip_frame = AVDISCARD_DEFAULT;
	s->c->skip_loop_filter = o->loop_filter == LD_LOOP_FILTER_NONE  ? AVDISCARD_ALL
				 : o->loop_filter == LD_LOOP_FILTER_REF ? AVDISCARD_NONREF
									: AVDISCARD_DEFAULT;
	d->cost.open_ns += ld_cost_clock(d) - t0;
	err[0] = 0;
	Run r = {.d = d,
		 .c = s->c,
		 .ci = ci,
		 .frames = frames,
		 .n = n,
		 .framing = ld_nal_framing(AV_CODEC_ID_H264, ci->config, (int)ci->config_size),
		 .dst = dst,
		 .o = o,
		 .err = err,
		 .errlen = errlen};
	int at = 0;
	for (int g = 0; g < ng && !rc; g++)
		rc = decode_gop(&r, &gops[g], bufs, n_bufs, &at);
	*delivered = r.delivered;
	if (rc)
		slot_close(s); // unknown state after an error: never reused
	return rc;
}

int ld_decode_indexed(LdDecoder *d, const LdBuffer *bufs, int n_bufs, const LdChunkInfo *ci, const uint32_t *frames,
		      int n, uint8_t *const *dst, const LdDecodeOpts *o, char *err, size_t errlen)
{
	LdGop gops[LD_MAX_FRAMES];
	if (n > LD_MAX_FRAMES) {
		snprintf(err, errlen, "more than %d frames from one chunk", LD_MAX_FRAMES);
		return -LD_ERR_MANIFEST;
	}
	int ng = ld_gops(ci->packets, ci->n_frames, ci->keyframes, ci->n_keyframes, frames, n, gops);
	if (ng < 0) {
		snprintf(err, errlen, "a needed frame is missing from the packet index");
		return -LD_ERR_MANIFEST;
	}
	d->seeks += (uint64_t)(ng - 1);
	int delivered = 0;
	int rc = o->clip_decoders > 1 && ng > 1
			 ? ld_split_decode(d, bufs, n_bufs, ci, gops, ng, frames, n, dst, o, &delivered, err, errlen)
			 : ld_decode_gops(d, bufs, n_bufs, ci, gops, ng, frames, n, dst, o, &delivered, err, errlen);
	if (!rc && delivered < n) {
		snprintf(err, errlen, "%d of %d needed frames never came out of the decoder (damaged packets)",
			 n - delivered, n);
		rc = -LD_ERR_CORRUPT;
	}
	return rc;
}
