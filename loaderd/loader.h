// loaderd's decode library: the one public header of libloaderd. A sample record of the manifest
// becomes a plan (which chunks, frames and crop: ld_plan_make), the plan a u8 clip (ld_clip_decode,
// ld_sample_load) through the decoder (ld_decoder_*), reading with io_uring or pread (ld_reader_*);
// failures are LD_ERR_* codes (ld_error_name); tools/prep indexes chunks with ld_index_chunk. The
// daemon (loaderd.c, ld_config, ld_worker, ld_bench, ld_cores) and the decoder internals are private.
#ifndef LOADERD_LOADER_H
#define LOADERD_LOADER_H
// defines: LdError, ld_error_name, LdMode, LdLoopFilter, LdCrop, LdBuffer, LdChunkInfo, LdDecodeOpts, LdCost,
//          LdDecoder, ld_decoder_new, ld_decoder_free, ld_decode_video, ld_image_load, ld_image_render,
//          ld_decoder_frames, ld_decoder_jumps, ld_decoder_timing, ld_decoder_cost, ld_cost_add,
//          ld_libav_quiet, ld_nal_framing, ld_nal_zeroed, LdParams, LdCropPos, LdSource, LdRange, LdPlan,
//          ld_params_default, ld_plan_make, ld_crop_make, LD_MAX_FRAMES, LD_MAX_SOURCES, LD_MAX_RANGES,
//          LD_FRAME_BLANK, LD_MAX_STRIDE, LdFiles, ld_clip_decode, ld_file_open, ld_file_read,
//          ld_file_size_error, ld_files_free, ld_sample_load, LdChunkIndex, ld_index_chunk, ld_index_free,
//          LdRead, LdReader, ld_reader_new, ld_reader_free, ld_reader_submit, ld_reader_wait, ld_reader_kind

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h> // defines: struct stat

#include "manifest.h" // defines: ManifestPacket, Manifest

// ---- errors (ld_error) ----
// Why a sample could not be produced: the codes the loader publishes in a ring slot's error
// field (positive, stable: consumers and ringstat may print them) and their names.

// Library calls return 0 or -LD_ERR_*; the code published in the ring is the positive value.
typedef enum {
	LD_OK = 0,
	LD_ERR_MISSING = 1,    // file not found / not readable
	LD_ERR_IO = 2,         // read failed or returned fewer bytes than the file has
	LD_ERR_EMPTY = 3,      // zero-length file or tar member
	LD_ERR_CORRUPT = 4,    // container or bitstream cannot be parsed
	LD_ERR_CODEC = 5,      // no video stream, or a codec the loader does not decode
	LD_ERR_SHORT = 6,      // fewer frames than the manifest says (or a frame number never seen)
	LD_ERR_TIMEOUT = 7,    // the per-sample watchdog fired
	LD_ERR_GEOMETRY = 8,   // decoded size differs from the manifest, or too small to crop
	LD_ERR_MANIFEST = 9,   // the sample record cannot be planned (bad reference, too many chunks)
	LD_ERR_NOMEM = 10,     // allocation failed
	LD_ERR_TRUNCATED = 11, // the container ends before its own index says it should
	LD_ERR_COUNT
} LdError;

// "missing", "corrupt", ...; "unknown" for codes outside the table
const char *ld_error_name(int code);

// ---- the decoder (ld_decode) ----
// Fused decode-crop of one chunk or image held in memory: from the manifest's packet index
// (no demuxer, decoder contexts reused across samples) or by demuxing the file, decoding only
// what the needed frames require, cropping in YUV and scaling into dst.

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
	// 2: a clip's GOPs of one chunk are shared with a second decoder on its own thread (the later
	// half); the same bytes as 1, its CPU time counted (LdCost.helper_ns)
	int clip_decoders;
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
	uint64_t helper_ns;        // CPU time of the second decoder thread (clip_decoders 2); its share
				   // of the fields above is in them too, so a clip's CPU is the caller's plus this
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

// ---- plans (ld_plan) ----
// What a position g becomes: the sample (epoch permutation), which frames of which chunks,
// and the crop box + flip, all pure functions of (seed, g) and the manifest.

#define LD_MAX_FRAMES 64
#define LD_MAX_SOURCES 4            // chunks one clip may span
#define LD_MAX_RANGES LD_MAX_FRAMES // byte ranges one sample reads (at most one per needed frame)
#define LD_PATH_MAX 512
#define LD_FRAME_BLANK 0xFF // LdPlan.frame_src of a frame past a short sample's end: black
#define LD_MAX_STRIDE 1024  // LdParams.stride

// where an eval crop sits along the source's long side (LaViLa's three test crops)
typedef enum { LD_CROP_CENTRE = 0, LD_CROP_START, LD_CROP_END } LdCropPos;

typedef struct {
	uint64_t seed;
	int frames;                 // T
	int out_w, out_h;           // H x W of each output frame
	int train;                  // 1: shuffled epochs, jittered frames, random-resized-crop; 0: eval
	int flip;                   // 1: random horizontal flip in training (p = 1/2)
	float scale_min, scale_max; // random-resized-crop area fraction (0.5, 1)
	float ratio_min, ratio_max; // aspect ratio w/h (3/4, 4/3)
	int threads;                // decoder threads per sample
	int clip_decoders;          // 1, or 2: a second thread decodes half of a clip's GOPs (LdDecodeOpts)
	uint32_t timeout_ms;        // per-sample watchdog; 0: none
	LdMode mode;
	int no_seek;              // decode every chunk from frame 0 (the tests' reference path)
	int demux;                // 1: demux whole files even where the manifest has a packet index
	LdLoopFilter loop_filter; // deblocking on the indexed path (LD_LOOP_FILTER_REF by default)
	const atomic_int *cancel; // non-zero: stop decoding now (loaderd stopping); NULL: never
	// Eval views (eval mode only; all 0: segment midpoints and the centre crop). stride > 0: T
	// frames stride decoded frames apart from the start of temporal clip view_clip of view_clips
	// (0 or 1: one clip, from the sample's first frame), the starts spread over the sample as
	// LaViLa's EGTEA test clips (ld_view.c); a sample shorter than T x stride gives every clip
	// frames 0, stride, ... then black ones. crop_pos: the eval crop box slid to the start (left
	// or top) or end of the source's long side.
	int stride, view_clips, view_clip;
	LdCropPos crop_pos;
} LdParams;

void ld_params_default(LdParams *p);

// a byte range to read; length 0: the whole file
typedef struct {
	uint64_t offset, length;
} LdRange;

// one file (chunk, or a tar member) the sample needs, read as ranges[first_range, +n_ranges)
typedef struct {
	uint32_t chunk;          // manifest chunk index (clips)
	uint64_t offset, length; // image: the tar member's bytes
	uint64_t file_size;      // indexed chunk: the size its index describes (checked when read); else 0
	int indexed;             // decoded from the packet index (its ranges cover the needed GOPs)
	int first_range, n_ranges;
	char path[LD_PATH_MAX];
} LdSource;

typedef struct {
	uint64_t position; // g
	uint64_t sample;   // manifest sample index
	uint64_t epoch;
	uint32_t kind; // MANIFEST_KIND_*
	int n_sources;
	LdSource src[LD_MAX_SOURCES];
	int frames;                       // T
	uint8_t frame_src[LD_MAX_FRAMES]; // source of output frame t (LD_FRAME_BLANK: a black frame)
	uint32_t frame_no[LD_MAX_FRAMES]; // frame within that chunk, non-decreasing per source
	int src_w, src_h;                 // 0 for images until decoded
	LdCrop crop;                      // valid when src_w > 0
	int n_ranges;                     // what to read, source by source, in file order within a source
	LdRange ranges[LD_MAX_RANGES];
} LdPlan;

// Plans position g. 0 or -LD_ERR_MANIFEST / -LD_ERR_GEOMETRY with a reason.
int ld_plan_make(const Manifest *m, uint64_t g, const LdParams *p, LdPlan *plan, char *err, size_t errlen);
// The clip's one crop for a w x h source: random-resized-crop in training (10 tries, then a
// centre crop at the nearest allowed ratio), the centre crop of the output's aspect in eval;
// x, y, w, h even; p->crop_pos slides the eval box along the long side. Uses the RNG keyed by
// (seed, g).
void ld_crop_make(const LdParams *p, uint64_t g, int w, int h, LdCrop *crop);

// ---- clips and files (ld_clip) ----
// A whole sample from its plan: decodes each source chunk's frames (or the image) into the
// (T, H, W, 3) destination with one crop for the clip; plus a plain-read path for tools/tests.

// Decodes plan's frames from bufs[0..plan->n_ranges) (the bytes of plan->ranges, read) into dst
// (T, out_h, out_w, 3). For an
// image, fills plan->src_w/h and plan->crop, and repeats the image over T frames. The watchdog
// (p->timeout_ms) starts now. 0 or -LD_ERR_* with a one-line reason.
int ld_clip_decode(LdDecoder *d, const Manifest *m, LdPlan *plan, const LdParams *p, const LdBuffer *bufs, uint8_t *dst,
		   char *err, size_t errlen);

// reusable read buffers for the plain (pread) path, one per range
typedef struct {
	uint8_t *buf[LD_MAX_RANGES];
	size_t cap[LD_MAX_RANGES];
} LdFiles;
void ld_files_free(LdFiles *f);

// Reads [offset, offset + length) of path (length 0: the whole file) into *buf (grown as
// needed); expect_size (0: any) is the file size a packet index describes. -LD_ERR_MISSING /
// EMPTY / IO / TRUNCATED / CORRUPT (other size than indexed) / NOMEM with a reason.
int ld_file_read(const char *path, uint64_t offset, uint64_t length, uint64_t expect_size, uint8_t **buf, size_t *cap,
		 size_t *size, char *err, size_t errlen);
// Opens a chunk or shard for reading, never blocking: a FIFO or device planted at the path (a
// hostile manifest, a file replaced in the dataset folder) would hang open() and read() beyond any
// watchdog. The fd (O_NONBLOCK cleared) with *st filled, or -LD_ERR_MISSING / IO with a reason.
int ld_file_open(const char *path, struct stat *st, char *err, size_t errlen);
// 0 when a file of size bytes fits what the read asks for, else -LD_ERR_* with a reason (shared
// by the pread and io_uring readers)
int ld_file_size_error(const char *path, uint64_t size, uint64_t offset, uint64_t length, uint64_t expect_size,
		       char *err, size_t errlen);

// plan + plain reads + decode of position g (tests, clipdump, benchmarks)
int ld_sample_load(LdDecoder *d, LdFiles *files, const Manifest *m, uint64_t g, const LdParams *p, LdPlan *plan,
		   uint8_t *dst, char *err, size_t errlen);

// ---- the packet index (ld_index) ----
// Indexes a chunk file for the manifest: frame count, keyframes, rate and size, and when the
// chunk allows it (H.264 in AVCC, constant rate, closed GOPs of IDR pictures) its packet index.

typedef struct {
	uint32_t n_frames;
	uint32_t fps_num, fps_den;
	uint16_t width, height;
	uint32_t *keyframes; // (n_keyframes) frame numbers in display order, first 0
	uint32_t n_keyframes;
	uint64_t file_size;
	uint32_t codec;          // MANIFEST_CODEC_H264 when the packet index below is usable, else NONE
	ManifestPacket *packets; // (n_frames) in decode order, when codec != NONE
	uint8_t *config;         // (config_size) avcC record, when codec != NONE
	uint32_t config_size;
	char why[160]; // codec NONE: why the chunk has no packet index (the loader demuxes it)
} LdChunkIndex;

// Reads every packet of path's video stream with libavformat (and the first bytes of each to
// see whether other pictures may reference it). Returns 0 or a negative AVERROR; a chunk that
// only lacks a usable packet index is not an error (codec NONE, why says what is missing).
int ld_index_chunk(const char *path, LdChunkIndex *ix);
void ld_index_free(LdChunkIndex *ix);

// ---- reads (ld_io) ----
// Whole-file and byte-range (tar member, GOP) reads for the loader: io_uring with several reads in flight, or
// pread when io_uring is refused or forced off. Completions come back in any order.

// One read. The caller owns it and its buffer (grown by the reader as needed, reused).
typedef struct LdRead {
	const char *path;
	uint64_t offset, length; // length 0: the whole file
	uint64_t expect_size;    // the file's size a packet index describes (0: not checked)
	uint8_t *buf;
	size_t cap;
	size_t size;      // bytes read (valid when done)
	int error;        // 0 or -LD_ERR_*
	char reason[256]; // when error
	void *user;
	// reader's own
	int fd;
	size_t want, got;
} LdRead;

typedef struct LdReader LdReader;

// depth: reads in flight at most. force_pread: do not try io_uring. *why_pread (may be NULL)
// receives why io_uring is not used, "" when it is. 0 or -errno.
int ld_reader_new(LdReader **out, unsigned depth, int force_pread, char *why_pread, size_t whylen);
void ld_reader_free(LdReader *r);
// "io_uring" or "pread"
const char *ld_reader_kind(const LdReader *r);
// Starts a read (errors are delivered through ld_reader_wait like completions). -EBUSY when
// depth reads are already in flight.
int ld_reader_submit(LdReader *r, LdRead *rd);
// Next finished read (*done), waiting when none is ready. -EAGAIN when nothing is in flight.
int ld_reader_wait(LdReader *r, LdRead **done);

#endif
