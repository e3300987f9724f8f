// The decoder's state shared by its parts inside loaderd (demux path, indexed path, rendering);
// nothing outside loaderd's library sees it.
#ifndef LOADERD_LD_DECODER_PRIV_H
#define LOADERD_LD_DECODER_PRIV_H
// defines: LdDecoder (struct), LdCodecSlot, LD_CODEC_SLOTS, ld_render_every, ld_render, ld_decode_indexed, ld_cost_clock, ld_cancelled

#include "loader.h"    // defines: LdDecoder, LdDecodeOpts, LdCost, ...
#include "proc_time.h" // defines: time_thread_cpu_ns

#include <libavcodec/avcodec.h>

#define LD_CODEC_SLOTS 4 // open decoder contexts kept per LdDecoder (one per codec configuration)

// an open decoder context for one codec configuration, flushed between uses
typedef struct {
	AVCodecContext *c;
	uint8_t *config; // copy of the configuration it was opened with
	uint32_t config_size;
	int width, height, threads;
	uint64_t used; // LRU tick
} LdCodecSlot;

struct LdDecoder {
	AVFrame *frame; // last decoded frame (the image after ld_image_load)
	AVPacket *pkt;
	struct SwsContext *sws_crop; // crop (any format) -> out RGB24
	struct SwsContext *sws_full; // naive: full frame -> full RGB24
	uint8_t *rgb;                // naive: (H, W, 3) full-frame RGB
	size_t rgb_cap;
	uint64_t frames_decoded;
	uint64_t seeks;
	LdCodecSlot slots[LD_CODEC_SLOTS];
	uint64_t tick;
	int timing;
	LdCost cost;
};

// thread CPU time when timing is on, else 0 (differences of 0 add nothing)
static inline uint64_t ld_cost_clock(const LdDecoder *d)
{
	return d->timing ? time_thread_cpu_ns() : 0;
}

// the loader is stopping: decoding gives up between packets (o->cancel set)
static inline int ld_cancelled(const LdDecodeOpts *o)
{
	return o->cancel && atomic_load_explicit(o->cancel, memory_order_relaxed);
}

// Called for every decoded frame: the naive mode converts each whole frame to RGB (as a
// decode-everything pipeline does); the other modes do nothing. 0 or -LD_ERR_* with a reason.
int ld_render_every(LdDecoder *d, const AVFrame *f, const LdDecodeOpts *o, char *err, size_t errlen);
// Writes needed frame f into dst as o->mode says (fused crop+scale, naive crop of the RGB frame
// ld_render_every made, nothing for decode-only). 0 or -LD_ERR_* with a reason.
int ld_render(LdDecoder *d, const AVFrame *f, const LdDecodeOpts *o, uint8_t *dst, char *err, size_t errlen);

// The indexed path of ld_decode_video (ci->packets set).
int ld_decode_indexed(LdDecoder *d, const LdBuffer *bufs, int n_bufs, const LdChunkInfo *ci, const uint32_t *frames,
		      int n, uint8_t *const *dst, const LdDecodeOpts *o, char *err, size_t errlen);

#endif
