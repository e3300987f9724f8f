// Builds a dataset manifest in memory (videos, chunks with keyframes, tar shards, samples
// with caption tokens) and writes it atomically (temp file, fsync, rename).
#ifndef COMMON_MANIFEST_WRITER_H
#define COMMON_MANIFEST_WRITER_H
// defines: ManifestWriter, manifest_writer_new, manifest_writer_free, manifest_add_video, manifest_add_chunk, manifest_add_shard, manifest_add_clip, manifest_add_image, manifest_write

#include <stdint.h>

typedef struct ManifestWriter ManifestWriter;

// context: token ids per caption (77); vocab_size: tokenizer vocabulary (<= 65536, ids are
// stored as uint16); chunk_ms / short_side: the chunk geometry recorded in the header.
int manifest_writer_new(ManifestWriter **out, uint32_t context, uint32_t vocab_size, uint32_t chunk_ms,
			uint32_t short_side);
void manifest_writer_free(ManifestWriter *w);

// Each add returns the new record's index (>= 0) or -EINVAL / -ENOMEM.
int64_t manifest_add_video(ManifestWriter *w, const char *name, uint64_t duration_ms);
// chunks of a video are added consecutively, in time order; keyframes ascending, first 0
int64_t manifest_add_chunk(ManifestWriter *w, uint32_t video, const char *path, uint32_t start_ms,
			   uint32_t n_frames, uint32_t fps_num, uint32_t fps_den, uint16_t width,
			   uint16_t height, const uint32_t *keyframes, uint32_t n_keyframes);
int64_t manifest_add_shard(ManifestWriter *w, const char *path, uint64_t size);
// frames [frame_begin of chunk_first, frame_end of chunk_last), chunks of the same video;
// tokens: (context) ids as bpe_tokenize writes them
int64_t manifest_add_clip(ManifestWriter *w, uint32_t video, uint32_t chunk_first, uint32_t frame_begin,
			  uint32_t chunk_last, uint32_t frame_end, const int32_t *tokens);
int64_t manifest_add_image(ManifestWriter *w, uint32_t shard, uint64_t offset, uint64_t length,
			   const int32_t *tokens);

// Writes path atomically (path.tmp.<pid>, fsync, rename). Returns 0 or -errno.
int manifest_write(ManifestWriter *w, const char *path);

#endif
