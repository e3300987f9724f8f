// Fused decode-crop of one chunk or image held in memory: from the manifest's packet index
// (no demuxer, decoder contexts reused across samples) or by demuxing the file, decoding only
// what the needed frames require, cropping in YUV and scaling into dst.
#ifndef LOADERD_LD_DECODE_H
#define LOADERD_LD_DECODE_H
// defines: LdMode, LdLoopFilter, LdCrop, LdBuffer, LdChunkInfo, LdDecodeOpts, LdCost, LdDecoder, ld_decoder_new, ld_decoder_free, ld_decode_video, ld_image_load, ld_image_render, ld_decoder_frames, ld_decoder_jumps, ld_decoder_timing, ld_decoder_cost, ld_cost_add, ld_libav_quiet, ld_nal_framing, ld_nal_zeroed

#include "manifest_format.h" // defines: ManifestPacket

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	LD_MODE_FUSED = 0,       // crop by plane offsets in YUV, swscale scales + converts into dst
	LD_MODE_NAIVE = 1,       // every decoded frame to full-frame RGB, then crop + resize (reference)
	LD_MODE_DECODE_ONLY = 2, // decode the same frames as FUSED, write nothing (the decoder's bound)
} LdMode;

// the H.264 loop filter (deblocking) on the frames the indexed path decodes
typedef enum {
	LD_LOOP_FILTER_ALL = 0,  // every frame filtered: bit-exact with a full decode
	LD_LOOP_FILTER_REF = 1,  // skipped on needed frames no other frame references (no drift)
	LD_LOOP_FILTER_NONE = 2, // skipped everywhere: errors carry through a GOP (quality trade)
} LdLoopFilter;

// crop box in source pixels (x, y, w, h even where the pixel format subsamples), optional flip
typedef struct {
	int x, y, w, h;
	int flip;
} LdCrop;

// bytes [offset, offset + size) of a file, in memory
typedef struct {
	const uint8_t *data;
	size_t size;
	uint64_t offset;
} LdBuffer;

// what the manifest says about the chunk being decoded
typedef struct {
	uint32_t n_frames;         // decodable frames
	uint32_t fps_num, fps_den; // constant frame rate
	int width, height;         // decoded size
	const uint32_t *keyframes; // (n_keyframes) ascending frame numbers, first 0
	uint32_t n_keyframes;
	const ManifestPacket *packets; // (n_frames) packet index in decode order; NULL: demux the file
	const uint8_t *config;         // codec configuration (avcC) of an indexed chunk
	uint32_t config_size;
} LdChunkInfo;

typedef struct {
	LdMode mode;
	int out_w, out_h; // destination frame size
	LdCrop crop;
	int threads; // decoder threads (1: best when many decoders run in parallel)
	int no_seek; // demux and decode from frame 0 (reference path for tests)
	LdLoopFilter loop_filter;
	uint64_t deadline_ns;     // CLOCK_MONOTONIC watchdog; 0: none
	const atomic_int *cancel; // non-zero: give up now with -LD_ERR_TIMEOUT (a stopping loader); may be NULL
} LdDecodeOpts;

// Where a decoder's time went (thread CPU time, counted while timing is on) and what it did.
typedef struct {
	uint64_t samples;          // ld_decode_video calls (one chunk of one sample each)
	uint64_t open_ns;          // demuxer + decoder open (demux path), decoder lookup + flush (indexed)
	uint64_t demux_ns;         // reading and seeking packets (demux path), packet set-up (indexed)
	uint64_t decode_needed_ns; // decoding packets of frames the clip needs
	uint64_t decode_key_ns;    // decoding key frames only other frames need (a GOP's entry cost)
	uint64_t decode_ref_ns;    // decoding other packets only other frames need, and draining
	uint64_t convert_ns;       // crop + scale + convert (and the naive full-frame conversion)
	uint64_t packets, frames;  // packets sent to the decoder, frames it returned
	uint64_t bytes;            // packet bytes sent
} LdCost;

typedef struct LdDecoder LdDecoder;

// Reusable per-thread state (decoder contexts, scaler contexts, frames, packets). 0 or -LD_ERR_NOMEM.
int ld_decoder_new(LdDecoder **out);
void ld_decoder_free(LdDecoder *d);

// Decodes chunk frames frames[0..n) (non-decreasing frame numbers) into dst[i], each (out_h,
// out_w, 3) uint8 RGB. bufs[0..n_bufs) hold the chunk's bytes: with a packet index (and
// !o->no_seek, mode != NAIVE) any ranges covering the packets needed, else the whole file as one
// buffer at offset 0. Returns 0 or -LD_ERR_*, with a one-line reason in err.
int ld_decode_video(LdDecoder *d, const LdBuffer *bufs, int n_bufs, const LdChunkInfo *ci, const uint32_t *frames,
		    int n, uint8_t *const *dst, const LdDecodeOpts *o, char *err, size_t errlen);

// Decodes a JPEG / PNG / WebP image held in buf into the decoder; *w, *h get its size.
int ld_image_load(LdDecoder *d, const uint8_t *buf, size_t size, int *w, int *h, uint64_t deadline_ns, char *err,
		  size_t errlen);
// Renders the loaded image through the same crop paths into dst (out_h, out_w, 3).
int ld_image_render(LdDecoder *d, uint8_t *dst, const LdDecodeOpts *o, char *err, size_t errlen);

// frames decoded by this decoder since it was made (for benchmarks)
uint64_t ld_decoder_frames(const LdDecoder *d);
// GOPs entered after the first one of a chunk (a jump or a fresh start at a later keyframe)
uint64_t ld_decoder_jumps(const LdDecoder *d);
// cost accounting on/off (off: no clock reads); the counters keep accumulating
void ld_decoder_timing(LdDecoder *d, int on);
const LdCost *ld_decoder_cost(const LdDecoder *d);
// to += from, field by field
void ld_cost_add(LdCost *to, const LdCost *from);
// libav's own log lines off (programs call it once; libraries never print)
void ld_libav_quiet(void);

// Zeroed bytes inside H.264 / HEVC slice data (a zeroed disk block, a hole in a download) are
// damage the decoder does not see: CABAC reads the zeros as valid syntax and the frame comes out
// garbled with no error, no flag and no log line. Emulation prevention keeps three zero bytes
// out of every NAL unit, so the packet bytes tell: a run of 3+ zeros inside a NAL unit followed
// by anything but 01 (a start code, which some muxers leave inside samples; 8+ zeros before it
// are damage too), a zero length prefix with data after it, or a packet of nothing but zeros.
// Zeros at the end of a NAL unit or packet after its first NAL unit (padding) pass.
// How codec_id's packets delimit NAL units: 1-4 (the length prefix size of avcC / hvcC
// extradata), 0 (Annex B start codes), -1 (neither H.264 nor HEVC: nothing to check).
int ld_nal_framing(int codec_id, const uint8_t *extradata, int extradata_size);
// 1 when packet data[0..size) holds zeros no intact NAL unit can (*at: the offset of the first), else 0
int ld_nal_zeroed(const uint8_t *data, size_t size, int framing, size_t *at);

#endif
