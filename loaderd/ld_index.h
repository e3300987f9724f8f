// Indexes a chunk file for the manifest: frame count, keyframes, rate and size, and when the
// chunk allows it (H.264 in AVCC, constant rate, closed GOPs of IDR pictures) its packet index.
#ifndef LOADERD_LD_INDEX_H
#define LOADERD_LD_INDEX_H
// defines: LdChunkIndex, ld_index_chunk, ld_index_free

#include "manifest_format.h" // defines: ManifestPacket, MANIFEST_CODEC_*

#include <stdint.h>

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

#endif
