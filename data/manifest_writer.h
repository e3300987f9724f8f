// Builds a dataset manifest in memory (videos, chunks with keyframes, tar shards, samples
// with caption tokens) and writes it atomically (temp file, fsync, rename).
#ifndef DATA_MANIFEST_WRITER_H
#define DATA_MANIFEST_WRITER_H
// defines: ManifestWriter, manifest_writer_new, manifest_writer_free, manifest_writer_set_vocab, manifest_add_video, manifest_add_chunk, manifest_set_chunk_index, manifest_add_shard, manifest_add_clip, manifest_add_image, manifest_write,
//          manifest_writer_set_heads, manifest_set_labels

#include "manifest_format.h" // defines: ManifestPacket, MANIFEST_CODEC_*

#include <stdint.h>

typedef struct ManifestWriter ManifestWriter;

// context: token ids per caption (77); vocab_size: tokenizer vocabulary (<= 65536, ids are
// stored as uint16); chunk_ms / short_side: the chunk geometry recorded in the header.
int manifest_writer_new(ManifestWriter **out, uint32_t context, uint32_t vocab_size, uint32_t chunk_ms,
			uint32_t short_side);
void manifest_writer_free(ManifestWriter *w);
// records the captions' vocabulary (bpe_vocab_hash of the tokenizer that made the token ids)
void manifest_writer_set_vocab(ManifestWriter *w, uint64_t vocab_hash);

// Each add returns the new record's index (>= 0) or -EINVAL / -ENOMEM.
int64_t manifest_add_video(ManifestWriter *w, const char *name, uint64_t duration_ms);
// chunks of a video are added consecutively, in time order; keyframes ascending, first 0
int64_t manifest_add_chunk(ManifestWriter *w, uint32_t video, const char *path, uint32_t start_ms, uint32_t n_frames,
			   uint32_t fps_num, uint32_t fps_den, uint16_t width, uint16_t height,
			   const uint32_t *keyframes, uint32_t n_keyframes);
// Gives chunk its packet index (packets in decode order, one per frame; see ManifestPacket), the
// codec configuration bytes (stored once while consecutive chunks share them) and the size of the
// file it describes. 0, or -EINVAL when inconsistent (manifest_packets_check) / -ENOMEM.
int manifest_set_chunk_index(ManifestWriter *w, uint32_t chunk, uint32_t codec, const ManifestPacket *packets,
			     uint32_t n_packets, const uint8_t *config, uint32_t config_size, uint64_t file_size);
int64_t manifest_add_shard(ManifestWriter *w, const char *path, uint64_t size);
// frames [frame_begin of chunk_first, frame_end of chunk_last), chunks of the same video;
// tokens: (context) ids as bpe_tokenize writes them
int64_t manifest_add_clip(ManifestWriter *w, uint32_t video, uint32_t chunk_first, uint32_t frame_begin,
			  uint32_t chunk_last, uint32_t frame_end, const int32_t *tokens);
int64_t manifest_add_image(ManifestWriter *w, uint32_t shard, uint64_t offset, uint64_t length, const int32_t *tokens);

// Gives the manifest n_heads (1..MANIFEST_MAX_HEADS) label heads, each with a name, a class count
// and (class_names[k] not NULL) its n_classes[k] class names; once, before any manifest_set_labels.
// A manifest with heads is written as version 3, one without as version 2. 0 or -EINVAL / -ENOMEM.
int manifest_writer_set_heads(ManifestWriter *w, uint32_t n_heads, const char *const *head_names,
			      const uint32_t *n_classes, const char *const *const *class_names);
// sample's labels (MANIFEST_MAX_HEADS of them; MANIFEST_NO_LABEL for none, and for every head past
// n_heads); every sample starts without. -EINVAL for a label outside its head's classes.
int manifest_set_labels(ManifestWriter *w, uint64_t sample, const int32_t *labels);

// Writes path atomically (path.tmp.<pid>, fsync, rename; temps of writers that died are removed
// first). Returns 0 or -errno.
int manifest_write(ManifestWriter *w, const char *path);

#endif
