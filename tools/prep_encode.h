// H.264 MP4 writer over libavcodec/libavformat, shared by tools/prep (chunks) and
// tools/synth (source videos): 8-bit 4:2:0, constant frame rate, closed fixed GOP.
#ifndef TOOLS_PREP_ENCODE_H
#define TOOLS_PREP_ENCODE_H
// defines: PrepEncodeOpts, PrepEncoder, prep_encoder_open, prep_encoder_write, prep_encoder_close, prep_encoder_abort, prep_encoder_available, prep_encode_frames

#include <libavutil/frame.h>

typedef struct {
	int width, height;    // even
	int fps_num, fps_den; // constant frame rate
	int gop;              // keyframe every gop frames exactly (no scene-cut keyframes)
	int crf;              // x264 quality, 23 by default in x264
	const char *preset;   // x264 preset ("veryfast")
	int faststart;        // moov before mdat (+faststart)
	int bframes;          // max B-frames (0: decode order = display order)
	int refs;             // reference frames (0: the preset's)
	int b_pyramid;        // B-frames as references: 0 the preset's (x264: normal), 1 none, 2 normal, 3 strict
	int b_fixed;          // 1: every run of B-frames is bframes long (x264 b-adapt 0); 0: the preset's choice
	int cavlc;            // 1: CAVLC entropy coding instead of CABAC (cheaper to decode, larger)
	int no_deblock;       // 1: no in-loop deblocking filter (cheaper to decode, blockier)
	int fullpel;          // 1: whole-pixel motion vectors only (x264 subme 0: no sub-pixel interpolation to decode)
} PrepEncodeOpts;

typedef struct PrepEncoder PrepEncoder;

// 1 when libavcodec has an H.264 encoder (libx264)
int prep_encoder_available(void);
// opens path for writing (the caller decides temp names); single-threaded and bit-exact
// so the same frames give the same bytes. Returns 0 or a negative AVERROR.
int prep_encoder_open(PrepEncoder **out, const char *path, const PrepEncodeOpts *o);
// frame: yuv420p, width x height; its pts is set to the running frame count
int prep_encoder_write(PrepEncoder *e, AVFrame *frame);
// flushes, writes the trailer and frees; returns 0 or a negative AVERROR. *n_frames: frames
// written. prep_encoder_abort frees without finishing the file.
int prep_encoder_close(PrepEncoder *e, int64_t *n_frames);
void prep_encoder_abort(PrepEncoder *e);

// A whole file: paint(ctx, i, frame) fills frame i (yuv420p, o->width x o->height, writable) for
// i < n_frames, each is encoded, the file finished. 0 or a negative AVERROR.
int prep_encode_frames(const char *path, const PrepEncodeOpts *o, int n_frames,
		       void (*paint)(void *ctx, int i, AVFrame *f), void *ctx);

#endif
