// tools/prep's chunk encoding defaults, in one place: prep's options start from them and the
// benchmarks that measure "chunks as prep makes them" encode with them. GOP 32 with up to 7
// B-frames that are never references (b-pyramid none) and CAVLC came out of make bench-prep-gop:
// about half the size of GOP 16 without B-frames (the loader skips every B-frame a clip does not
// need) and CAVLC decodes a third cheaper than CABAC for 5% more bytes.
#ifndef TOOLS_PREP_DEFAULTS_H
#define TOOLS_PREP_DEFAULTS_H
// defines: PREP_DEFAULT_GOP, PREP_DEFAULT_BFRAMES, PREP_DEFAULT_B_PYRAMID, PREP_DEFAULT_B_FIXED, PREP_DEFAULT_CAVLC, PREP_DEFAULT_NO_DEBLOCK, PREP_DEFAULT_CRF, PREP_DEFAULT_PRESET, PREP_DEFAULT_CHUNK_SEC, PREP_DEFAULT_SHORT_SIDE

#define PREP_DEFAULT_CHUNK_SEC 15
#define PREP_DEFAULT_SHORT_SIDE 288
#define PREP_DEFAULT_GOP 32
#define PREP_DEFAULT_BFRAMES 7
#define PREP_DEFAULT_B_PYRAMID 1  // PrepEncodeOpts.b_pyramid: none (prep always; no option)
#define PREP_DEFAULT_B_FIXED 0    // PrepEncodeOpts.b_fixed: x264 picks each run's length (b-adapt 1)
#define PREP_DEFAULT_CAVLC 1      // PrepEncodeOpts.cavlc (--entropy cavlc)
#define PREP_DEFAULT_NO_DEBLOCK 0 // PrepEncodeOpts.no_deblock: x264 deblocks
#define PREP_DEFAULT_CRF 23
#define PREP_DEFAULT_PRESET "veryfast"

#endif
