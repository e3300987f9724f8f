// Cuts one source video into fixed-length H.264 chunks (<root>/<id>/<start-sec>.mp4) at a
// constant frame rate and short side, resumably, and indexes each chunk's frames/keyframes.
#ifndef TOOLS_PREP_CHUNK_H
#define TOOLS_PREP_CHUNK_H
// defines: PrepChunkOpts, PrepChunkInfo, PrepVideoResult, prep_chunk_video, prep_index_chunk, prep_video_result_free, prep_clip_frames

#include "loader.h"      // defines: LdChunkIndex
#include "prep_damage.h" // defines: PrepDamage

#include <stdint.h>

typedef struct {
	const char *root;     // output root
	int chunk_sec;        // chunk length in seconds (15)
	int short_side;       // output short side (288)
	int fps_num, fps_den; // output rate; fps_num 0: the source's, rounded to an integer
	int gop;              // keyframe interval in frames
	int crf, bframes;
	int cavlc;      // 1: CAVLC entropy coding (--entropy cavlc), 0: CABAC
	int b_fixed;    // 1: every run of B-frames bframes long (--b-runs fixed), 0: x264 picks (adaptive)
	int no_deblock; // 1: no in-loop deblocking (--deblock off)
	const char *preset;
	uint64_t *frames_done; // progress: output frames so far (atomic adds), may be NULL
	// this video's progress (may be NULL): output frames so far, reused ones too (atomic adds),
	// and how many there will be, from the source's duration, once it is open
	uint64_t *video_done, *video_total;
	int decode_threads; // decoder threads (output does not depend on it); 0 means 1
} PrepChunkOpts;

typedef struct {
	char path[512];       // relative to root: <id>/<start-sec>.mp4
	uint32_t start_frame; // first frame in the video's output frame numbering
	LdChunkIndex ix;      // frames, keyframes, rate, size and the packet index (loaderd/loader.h)
	uint32_t crc;         // CRC-32 of the chunk file (kept in the .done marker)
	int reused;           // 1: existed already (resume), not encoded again
} PrepChunkInfo;

typedef struct {
	PrepChunkInfo *chunks;
	int n_chunks;
	uint64_t n_frames; // output frames of the whole video
	uint32_t fps_num, fps_den;
	double duration;   // seconds, n_frames / fps
	PrepDamage damage; // output frames made from source frames that decoded with errors
	char error[256];   // set when the video could not be prepared
} PrepVideoResult;

// Prepares video id from src. A finished video (marker <id>/.done) is only re-indexed;
// chunks that exist are not encoded again. Returns 0, or a negative AVERROR/-errno with
// res->error describing it (unreadable, corrupt, no video stream, zero frames, ...); a video
// that fails leaves no folder of its own behind. Output frames made from source frames that
// decoded with errors (error returns, decode_error_flags, corrupt flags, and every frame after
// them up to the next clean keyframe, which may reference them) are listed in res->damage,
// also across a resume (the .done marker keeps them): clips must not use them.
int prep_chunk_video(const char *src, const char *id, const PrepChunkOpts *o, PrepVideoResult *res);
void prep_video_result_free(PrepVideoResult *res);

// Maps a caption's [start, end) seconds to output frames [round(start*fps), round(end*fps))
// (at least one frame; an end within half a frame past the video is clamped) and then to
// (chunk, frame) pairs: frames [*f0 of chunk *c0, *f1 of chunk *c1), chunk indices within
// the video. Returns 0, or -ERANGE when the range lies outside the video.
int prep_clip_frames(const PrepVideoResult *res, double start, double end, uint32_t *c0, uint32_t *f0, uint32_t *c1,
		     uint32_t *f1);

// Reads a chunk's packets with libavformat (ld_index_chunk): exact frame count, keyframe
// positions in display order, frame rate, size and the packet index. 0 or a negative AVERROR.
int prep_index_chunk(const char *path, PrepChunkInfo *info);

#endif
