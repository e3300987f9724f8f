// Damaged media in tools/prep: which output frames of a video came from frames that decoded with
// errors (kept in the video's result and its .done marker), and a full decode of a chunk or an
// image that says whether, and where, its bytes are damaged (prep --verify --deep).
#ifndef TOOLS_PREP_DAMAGE_H
#define TOOLS_PREP_DAMAGE_H
// defines: PrepSpan, PrepDamage, prep_damage_mark, prep_damage_overlap, prep_damage_format, prep_damage_line,
//          prep_damage_parse, prep_damage_free, prep_frame_damaged, prep_decode_check, prep_file_crc, prep_done_crc

#include <libavutil/frame.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint64_t first, last; // output frames, inclusive
} PrepSpan;

typedef struct {
	PrepSpan *spans; // ascending, disjoint, not adjacent
	int n, cap;
	uint64_t frames;                // damaged output frames
	int errors, concealed, corrupt; // decoder error returns, frames with decode_error_flags, corrupt-flagged frames
} PrepDamage;

// adds output frame f (frames come in ascending order); 0 or -ENOMEM
int prep_damage_mark(PrepDamage *d, uint64_t f);
// index of the first span intersecting frames [fb, fe), or -1
int prep_damage_overlap(const PrepDamage *d, uint64_t fb, uint64_t fe);
// "frames 120-318 (8.00-21.27 s), 400 (26.67 s)" at fps_num/fps_den, at most max spans listed
void prep_damage_format(const PrepDamage *d, uint32_t fps_num, uint32_t fps_den, int max, char *buf, size_t cap);
// the .done marker's line "damage none" or "damage 120-318 400-400" (no newline)
void prep_damage_line(const PrepDamage *d, char *buf, size_t cap);
// parses that line back; 0, or -EINVAL when it is not one
int prep_damage_parse(PrepDamage *d, const char *line);
void prep_damage_free(PrepDamage *d);

// 1 when libavcodec says the frame is damaged: decode_error_flags (invalid bitstream, missing
// reference, concealment) or the corrupt flag
int prep_frame_damaged(const AVFrame *f);

// Decodes every frame of the video file path strictly (AV_EF_EXPLODE: any error the decoder
// detects counts). Returns 0 when clean, 1 when damaged with the first and last damaged frame
// (decode order) in *bad and a reason in why, or a negative AVERROR when it cannot be opened.
// *frames gets the frames decoded.
int prep_decode_check(const char *path, uint64_t *frames, PrepSpan *bad, char *why, size_t whylen);

// CRC-32 of a whole file; 0 or -errno
int prep_file_crc(const char *path, uint32_t *crc);
// The CRC-32 the video's .done marker (next to the chunk) recorded for the chunk when it was
// written: any byte changed since shows, also where decoding sees nothing. 0, or -ENOENT when
// the marker has none for it.
int prep_done_crc(const char *chunk_path, uint32_t *crc);

#endif
