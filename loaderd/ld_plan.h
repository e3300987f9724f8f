// What a position g becomes: the sample (epoch permutation), which frames of which chunks,
// and the crop box + flip, all pure functions of (seed, g) and the manifest.
#ifndef LOADERD_LD_PLAN_H
#define LOADERD_LD_PLAN_H
// defines: LdParams, LdCropPos, LdSource, LdRange, LdPlan, ld_params_default, ld_plan_make, ld_crop_make, LD_MAX_FRAMES, LD_MAX_SOURCES, LD_MAX_RANGES, LD_FRAME_BLANK, LD_MAX_STRIDE

#include "ld_decode.h"       // defines: LdCrop, LdMode
#include "manifest_reader.h" // defines: Manifest

#include <stdatomic.h>
#include <stdint.h>

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

#endif
