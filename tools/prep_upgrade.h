// tools/prep --upgrade: converts a version 1 manifest (no packet index) to the current version
// by indexing the chunks it names; nothing is re-encoded and samples keep their numbers.
#ifndef TOOLS_PREP_UPGRADE_H
#define TOOLS_PREP_UPGRADE_H
// defines: prep_upgrade, ManifestV1Header, ManifestV1Chunk

#include <assert.h>
#include <stdint.h>

// The frozen version 1 layout of what differs from version 2: the header and the chunk record
// (videos, shards, samples and tokens are laid out as in version 2).
typedef struct {
	char magic[8];
	uint32_t version, header_size;
	uint64_t file_size;
	uint32_t header_crc, data_crc;
	uint32_t n_videos, n_chunks, n_shards, context;
	uint64_t n_samples, n_keyframes;
	uint32_t vocab_size, chunk_ms, short_side, reserved0;
	uint64_t strings_off, strings_size, videos_off, chunks_off, keyframes_off, shards_off, samples_off, tokens_off;
	uint64_t reserved[2];
} ManifestV1Header;

typedef struct {
	uint64_t path_off, kf_first;
	uint32_t kf_count, video, start_ms, n_frames, fps_num, fps_den;
	uint16_t width, height;
	uint32_t reserved;
} ManifestV1Chunk;

static_assert(sizeof(ManifestV1Header) == 160 && sizeof(ManifestV1Chunk) == 48, "version 1 layout");

// Rewrites path in place (the old file kept as path.v1) using `jobs` threads to index chunks.
// Returns the exit status: 0 done (or already current), 1 failure with a line on stderr.
int prep_upgrade(const char *path, int jobs);

#endif
