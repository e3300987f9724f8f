// Fused decode-crop of one in-memory chunk or image: demux from memory, seek by the manifest's
// keyframe index, decode only up to the last needed frame, crop in YUV and scale into dst.
#ifndef LOADERD_LD_DECODE_H
#define LOADERD_LD_DECODE_H
// defines: LdMode, LdCrop, LdChunkInfo, LdDecodeOpts, LdDecoder, ld_decoder_new, ld_decoder_free, ld_decode_video, ld_image_load, ld_image_render, ld_decoder_frames, ld_decoder_jumps, ld_now_ns, ld_libav_quiet

#include <stddef.h>
#include <stdint.h>

typedef enum {
	LD_MODE_FUSED = 0,       // crop by plane offsets in YUV, swscale scales + converts into dst
	LD_MODE_NAIVE = 1,       // every decoded frame to full-frame RGB, then crop + resize (reference)
	LD_MODE_DECODE_ONLY = 2, // decode the same frames as FUSED, write nothing (the decoder's bound)
} LdMode;

// crop box in source pixels (x, y, w, h even where the pixel format subsamples), optional flip
typedef struct {
	int x, y, w, h;
	int flip;
} LdCrop;

// what the manifest says about the chunk being decoded
typedef struct {
	uint32_t n_frames;           // decodable frames
	uint32_t fps_num, fps_den;   // constant frame rate
	int width, height;           // decoded size
	const uint32_t *keyframes;   // (n_keyframes) ascending frame numbers, first 0
	uint32_t n_keyframes;
} LdChunkInfo;

typedef struct {
	LdMode mode;
	int out_w, out_h;     // destination frame size
	LdCrop crop;
	int threads;          // decoder threads (1: best when many decoders run in parallel)
	int no_seek;          // decode from frame 0 (reference path for tests)
	uint64_t deadline_ns; // CLOCK_MONOTONIC watchdog; 0: none
} LdDecodeOpts;

typedef struct LdDecoder LdDecoder;

// Reusable per-thread state (scaler contexts, frames, packets). 0 or -LD_ERR_NOMEM.
int ld_decoder_new(LdDecoder **out);
void ld_decoder_free(LdDecoder *d);

// Decodes chunk frames frames[0..n) (non-decreasing frame numbers) from buf into dst[i], each
// (out_h, out_w, 3) uint8 RGB. Returns 0 or -LD_ERR_*, with a one-line reason in err.
int ld_decode_video(LdDecoder *d, const uint8_t *buf, size_t size, const LdChunkInfo *ci,
		    const uint32_t *frames, int n, uint8_t *const *dst, const LdDecodeOpts *o, char *err,
		    size_t errlen);

// Decodes a JPEG / PNG / WebP image held in buf into the decoder; *w, *h get its size.
int ld_image_load(LdDecoder *d, const uint8_t *buf, size_t size, int *w, int *h, uint64_t deadline_ns,
		  char *err, size_t errlen);
// Renders the loaded image through the same crop paths into dst (out_h, out_w, 3).
int ld_image_render(LdDecoder *d, uint8_t *dst, const LdDecodeOpts *o, char *err, size_t errlen);

// frames decoded by this decoder since it was made (for benchmarks)
uint64_t ld_decoder_frames(const LdDecoder *d);
// jumps to a later keyframe between two needed frames (for tests and benchmarks)
uint64_t ld_decoder_jumps(const LdDecoder *d);
uint64_t ld_now_ns(void);
// libav's own log lines off (programs call it once; libraries never print)
void ld_libav_quiet(void);

#endif
