// tools/prep's chunk encoding defaults, in one place: prep's options start from them and the
// benchmarks that measure "chunks as prep makes them" encode with them. From make bench-prep-gop on
// real videos (docs/data.md): GOP 32 with runs of exactly 7 B-frames that are never references
// (b-pyramid none, b-adapt 0: the loader skips every B-frame a clip does not need, and a needed
// frame waits on its key frame and at most 4 P-frames), CAVLC (a third cheaper to decode than CABAC), no deblocking
// (a fifth cheaper) and CRF 22 to keep the PSNR of the previous defaults (GOP 32, adaptive runs,
// deblocking, CRF 23) within 0.2 dB: 1.6-1.9x fewer instructions per clip.
#ifndef TOOLS_PREP_DEFAULTS_H
#define TOOLS_PREP_DEFAULTS_H
// defines: PREP_DEFAULT_GOP, PREP_DEFAULT_BFRAMES, PREP_DEFAULT_B_PYRAMID, PREP_DEFAULT_B_FIXED, PREP_DEFAULT_CAVLC, PREP_DEFAULT_NO_DEBLOCK, PREP_DEFAULT_CRF, PREP_DEFAULT_PRESET, PREP_DEFAULT_CHUNK_SEC, PREP_DEFAULT_SHORT_SIDE

#define PREP_DEFAULT_CHUNK_SEC 15
#define PREP_DEFAULT_SHORT_SIDE 288
#define PREP_DEFAULT_GOP 32
#define PREP_DEFAULT_BFRAMES 7
#define PREP_DEFAULT_B_PYRAMID 1  // PrepEncodeOpts.b_pyramid: none (prep always; no option)
#define PREP_DEFAULT_B_FIXED 1    // PrepEncodeOpts.b_fixed: every B run bframes long (x264 b-adapt 0)
#define PREP_DEFAULT_CAVLC 1      // PrepEncodeOpts.cavlc (--entropy cavlc)
#define PREP_DEFAULT_NO_DEBLOCK 1 // PrepEncodeOpts.no_deblock: no in-loop deblocking
#define PREP_DEFAULT_CRF 22
#define PREP_DEFAULT_PRESET "veryfast"

#endif
