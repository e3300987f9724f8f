// The clip list: positions planned by the loader's own sampling (ld_plan_make), written as text
// so that other readers (tools/bench/peers.sh's Python peers) decode the very same frames and crops.
#ifndef TOOLS_BENCH_CLIPS_H
#define TOOLS_BENCH_CLIPS_H
// defines: bench_clips_write

#include "loader.h" // defines: LdParams, Manifest

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

// Writes one line per position g in [g0, g0 + n), fields separated by one tab:
//   clip T out_h out_w g src_w src_h crop_x crop_y crop_w crop_h flip n_sources {path frames}...
// with frames the source's frame numbers (display order within the chunk, comma-separated,
// non-decreasing; a frame may repeat). 0, or -1 with a reason in err: a position that does not
// plan, an image sample (the list is for video readers), a path with a tab or a line break.
int bench_clips_write(FILE *f, const Manifest *m, const LdParams *p, uint64_t g0, int n, char *err, size_t errlen);

#endif
