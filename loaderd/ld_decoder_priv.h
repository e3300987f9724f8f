// The decoder's state shared by its parts inside loaderd (demux path, indexed path, rendering);
// nothing outside loaderd's library sees it.
#ifndef LOADERD_LD_DECODER_PRIV_H
#define LOADERD_LD_DECODER_PRIV_H
// defines: LdDecoder (struct), LdCodecSlot, LdHelper, LD_CODEC_SLOTS, ld_render_every, ld_render, ld_decode_indexed, ld_decode_gops, ld_split_decode, ld_split_free, ld_cost_clock, ld_cancelled

#include "ld_gop.h"    // defines: LdGop
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

typedef struct LdHelper LdHelper; // the second decoder thread of clip_decoders 2 (ld_split.c)

struct LdDecoder {
	AVFrame *frame; // last decoded frame (the image after ld_image_load)
	AVPacket *pkt;
	struct SwsContext *sws_crop; // crop (any format) -> out RGB24
	struct SwsContext *sws_full; // naive: full frame -> full RGB24
	struct SwsContext *sws_yuv;  // 4:2:0 crop -> out-sized yuv420p (two-step fused path)
	struct SwsContext *sws_rgb;  // out-sized yuv420p -> out RGB24
	uint8_t *yuv[4];             // the out-sized yuv420p picture (yuv[0] owns the buffer)
	int yuv_stride[4], yuv_w, yuv_h;
	uint8_t *rgb; // naive: (H, W, 3) full-frame RGB
	size_t rgb_cap;
	uint64_t frames_decoded;
	uint64_t seeks;
	LdCodecSlot slots[LD_CODEC_SLOTS];
	uint64_t tick;
	int timing;
	LdCost cost;
	LdHelper *helper; // started at the first split clip, stopped by ld_decoder_free
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
// Decodes GOPs gops[0..ng) of the indexed chunk on d's own context (frames[], dst[] as
// ld_decode_video; *delivered: frames rendered). 0 or -LD_ERR_* with a reason (the first GOP's
// error in order: decoding stops there).
int ld_decode_gops(LdDecoder *d, const LdBuffer *bufs, int n_bufs, const LdChunkInfo *ci, const LdGop *gops, int ng,
		   const uint32_t *frames, int n, uint8_t *const *dst, const LdDecodeOpts *o, int *delivered, char *err,
		   size_t errlen);
// ld_decode_gops with the later GOPs on d's helper thread, the earlier ones on the caller's: the
// same frames and errors (the earlier GOPs' error first), the helper's cost added to d's.
int ld_split_decode(LdDecoder *d, const LdBuffer *bufs, int n_bufs, const LdChunkInfo *ci, const LdGop *gops, int ng,
		    const uint32_t *frames, int n, uint8_t *const *dst, const LdDecodeOpts *o, int *delivered,
		    char *err, size_t errlen);
// stops and frees d's helper thread (NULL: nothing)
void ld_split_free(LdHelper *h);

#endif
