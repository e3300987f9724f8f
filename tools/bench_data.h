// Benchmark datasets as tools/prep makes them: chunks of the camera-like source encoded with
// prep's encoder and settings, indexed with their packets, and a manifest of clip samples.
#ifndef TOOLS_BENCH_DATA_H
#define TOOLS_BENCH_DATA_H
// defines: BenchDataOpts, bench_data_make

#include "prep_encode.h" // defines: PrepEncodeOpts

#include <stddef.h>
#include <stdint.h>

typedef struct {
	int videos, chunks_per_video;
	int width, height, fps, frames_per_chunk;
	PrepEncodeOpts enc; // gop, bframes, crf, preset, refs, b_pyramid (size and rate filled in)
	uint32_t seed;      // camera source of video v: seed + v
	int clip_frames;    // 0: three half-chunk clips per chunk and one across each boundary;
			    // else 32 clips of this many frames per chunk at seeded random starts
} BenchDataOpts;

// Writes dir/chunks/vidVV_K.mp4 and dir/manifest.bin. 0 or -errno with a reason in err.
int bench_data_make(const char *dir, const BenchDataOpts *o, char *err, size_t errlen);

#endif
