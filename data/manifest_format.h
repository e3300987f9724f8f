// On-disk layout of the dataset manifest (one mmap-able file per dataset): header, string
// table, videos, chunks, keyframe index, tar shards, samples, caption token ids.
#ifndef DATA_MANIFEST_FORMAT_H
#define DATA_MANIFEST_FORMAT_H
// defines: MANIFEST_MAGIC, MANIFEST_VERSION, MANIFEST_VERSION_MIN, MANIFEST_MAX_HEADS, MANIFEST_MAX_CLASSES, MANIFEST_NO_LABEL, ManifestHead, ManifestHeader, ManifestVideo, ManifestChunk, ManifestPacket, ManifestShard, ManifestSample, MANIFEST_KIND_CLIP, MANIFEST_KIND_IMAGE, MANIFEST_CODEC_*, MANIFEST_PKT_*, MANIFEST_MAX_INDEXED_FRAMES, manifest_crc32, manifest_packets_check, manifest_keyframe_index

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "crc32.h" // defines: crc32_ieee

// All integers little-endian; every section starts 8-byte aligned; offsets are from the
// start of the file. Paths in the string table are relative to the manifest's folder
// unless they start with '/'.
// Version 2 added the per-chunk packet index (packets and codec configuration sections, the
// chunk record's index fields); version 1 files are refused (tools/prep --upgrade converts).
// Within a version, a field may only be added in reserved space whose zero means "not
// recorded", so older files of the version stay readable: vocab_hash is such a field (version 2
// files written before it have 0, and readers fall back to the bpe_merges.txt next to them).
// Version 3 added class labels (the labels section, n_heads and labels_off in what was reserved):
// it is written only for a manifest with labels, so a manifest without them is still version 2,
// byte for byte, and a build that reads version 3 reads both. A build that knows only version 2
// refuses a labelled manifest by its version instead of training on it without its labels.
#define MANIFEST_MAGIC "AVCLIPMF"
#define MANIFEST_VERSION 3u     // the newest this build reads and writes (labelled manifests)
#define MANIFEST_VERSION_MIN 2u // the oldest it reads (no labels)

typedef struct {
	char magic[8];                                  // MANIFEST_MAGIC, no NUL
	uint32_t version;                               // MANIFEST_VERSION
	uint32_t header_size;                           // sizeof(ManifestHeader)
	uint64_t file_size;                             // whole file, to detect truncation
	uint32_t header_crc;                            // CRC-32 of these header_size bytes with this field zero
	uint32_t data_crc;                              // CRC-32 of bytes [header_size, file_size)
	uint32_t n_videos, n_chunks, n_shards, context; // context: token ids per caption (77)
	uint64_t n_samples, n_keyframes;
	uint32_t vocab_size;                // every token id < vocab_size
	uint32_t chunk_ms;                  // nominal chunk length (the last chunk of a video is shorter)
	uint32_t short_side;                // chunks' short side in pixels (0: images only)
	uint32_t n_heads;                   // version 3: label heads, 1..MANIFEST_MAX_HEADS (version 2: reserved, 0)
	uint64_t strings_off, strings_size; // NUL-terminated strings back to back
	uint64_t videos_off;                // ManifestVideo[n_videos]
	uint64_t chunks_off;                // ManifestChunk[n_chunks], each video's chunks consecutive, in time order
	uint64_t keyframes_off;             // uint32_t[n_keyframes]: frame numbers, each chunk's slice ascending
	uint64_t shards_off;                // ManifestShard[n_shards]
	uint64_t samples_off;               // ManifestSample[n_samples]
	uint64_t tokens_off;                // uint16_t[n_samples][context], padded with 0 after <|endoftext|>
	uint64_t packets_off;               // ManifestPacket[n_packets]: each indexed chunk's packets in decode order
	uint64_t n_packets;
	uint64_t configs_off, configs_size; // codec configuration bytes (H.264 avcC) chunks point into
	uint64_t vocab_hash; // bpe_vocab_hash of the merges the captions were tokenized with (0: not recorded)
	uint64_t labels_off; // version 3: ManifestHead[MANIFEST_MAX_HEADS], then int32_t[n_samples][MANIFEST_MAX_HEADS]
} ManifestHeader;

// Class labels (version 3): per sample one class id per head (EK-100: head 0 verb, head 1 noun; a
// single-label set such as Kinetics: head 0 only), MANIFEST_NO_LABEL where a sample has none and
// for every head >= n_heads. A head records its class count and, when known, its class names.
#define MANIFEST_MAX_HEADS 2u
#define MANIFEST_MAX_CLASSES (1u << 20)
#define MANIFEST_NO_LABEL (-1)
typedef struct {
	uint64_t name_off;    // the head's name (string table): "verb", "noun", "label"
	uint64_t classes_off; // string table: class 0's name, then class 1's, ... back to back (n_named)
	uint32_t n_classes;   // this head's labels are 0 .. n_classes - 1 (1..MANIFEST_MAX_CLASSES)
	uint32_t n_named;     // 0: no class names recorded, else n_classes
} ManifestHead;

typedef struct {
	uint64_t name_off;    // video id (string table)
	uint32_t first_chunk; // chunks first_chunk .. first_chunk + n_chunks - 1
	uint32_t n_chunks;
	uint64_t duration_ms; // of the source video
} ManifestVideo;

typedef struct {
	uint64_t path_off;         // string table
	uint64_t kf_first;         // first index into the keyframe array
	uint32_t kf_count;         // keyframes of this chunk (>= 1: frame 0 is one)
	uint32_t video;            // ManifestVideo index
	uint32_t start_ms;         // chunk start in the source video
	uint32_t n_frames;         // decodable frames (exact)
	uint32_t fps_num, fps_den; // constant frame rate
	uint16_t width, height;
	uint32_t codec;       // MANIFEST_CODEC_*: NONE = no packet index (the loader demuxes the file)
	uint64_t pkt_first;   // packet index: packets pkt_first .. pkt_first + pkt_count - 1
	uint32_t pkt_count;   // n_frames when indexed, else 0
	uint32_t config_size; // codec configuration: configs section bytes [config_off, +config_size)
	uint64_t config_off;
	uint64_t file_size; // bytes of the chunk file the index describes (0 when not indexed)
} ManifestChunk;

#define MANIFEST_CODEC_NONE 0u
#define MANIFEST_CODEC_H264 1u // AVCC (length-prefixed NAL units), config = avcC record

// One frame's packet in the chunk file. An indexed chunk has exactly one packet per frame, in
// decode order, at increasing non-overlapping offsets, and closed GOPs: a KEY packet at decode
// position i shows frame i and every packet before it shows an earlier frame, so decoding from a
// KEY packet after a flush reaches every frame up to the next one.
#define MANIFEST_MAX_INDEXED_FRAMES 65536u // ManifestPacket.frame is 16 bits
#define MANIFEST_PKT_KEY 1u                // an IDR picture: decoding may start here
#define MANIFEST_PKT_REF 2u                // other pictures may reference it (nal_ref_idc != 0)
typedef struct {
	uint32_t offset; // byte offset in the chunk file
	uint32_t size;
	uint16_t frame; // display frame number within the chunk
	uint16_t flags; // MANIFEST_PKT_*
} ManifestPacket;

typedef struct {
	uint64_t path_off; // string table
	uint64_t size;     // bytes of the tar file, checked by --verify
} ManifestShard;

#define MANIFEST_KIND_CLIP 1u
#define MANIFEST_KIND_IMAGE 2u

// A clip covers frames [frame_begin, frame_end) where frame_begin counts from the start of
// chunk_first and frame_end from the start of chunk_last; chunk_first..chunk_last are
// consecutive chunks of one video (usually one, or two when the clip crosses a boundary).
// An image is bytes [offset, offset + length) of a tar shard (the member's data).
typedef struct {
	uint32_t kind;   // MANIFEST_KIND_*
	uint32_t source; // clip: video index; image: shard index
	union {
		struct {
			uint32_t chunk_first, chunk_last;
			uint32_t frame_begin, frame_end;
		} clip;
		struct {
			uint64_t offset, length;
		} image;
	};
	uint32_t n_tokens; // non-padding token ids of the caption (2..context)
	uint32_t reserved;
} ManifestSample;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the manifest is read in place: little-endian hosts only");
static_assert(sizeof(ManifestHeader) == 192, "manifest header size is part of the format");
static_assert(offsetof(ManifestHeader, file_size) == 16, "manifest header layout");
static_assert(offsetof(ManifestHeader, n_samples) == 48, "manifest header layout");
static_assert(offsetof(ManifestHeader, strings_off) == 80, "manifest header layout");
static_assert(offsetof(ManifestHeader, tokens_off) == 136, "manifest header layout");
static_assert(offsetof(ManifestHeader, configs_size) == 168, "manifest header layout");
static_assert(offsetof(ManifestHeader, vocab_hash) == 176, "manifest header layout");
static_assert(offsetof(ManifestHeader, n_heads) == 76 && offsetof(ManifestHeader, labels_off) == 184,
	      "manifest header layout (version 3 fields in version 2's reserved space)");
static_assert(sizeof(ManifestHead) == 24, "manifest head record");
static_assert(sizeof(ManifestVideo) == 24, "manifest video record");
static_assert(sizeof(ManifestChunk) == 80, "manifest chunk record");
static_assert(offsetof(ManifestChunk, width) == 40, "manifest chunk layout");
static_assert(offsetof(ManifestChunk, pkt_first) == 48, "manifest chunk layout");
static_assert(offsetof(ManifestChunk, file_size) == 72, "manifest chunk layout");
static_assert(sizeof(ManifestPacket) == 12, "manifest packet record");
static_assert(sizeof(ManifestShard) == 16, "manifest shard record");
static_assert(sizeof(ManifestSample) == 32, "manifest sample record");
static_assert(offsetof(ManifestSample, clip.frame_end) == 20, "manifest sample layout");
static_assert(offsetof(ManifestSample, n_tokens) == 24, "manifest sample layout");

// the manifest's checksums are CRC-32 (IEEE, as zlib's crc32): crc = manifest_crc32(crc, buf, n), start with 0
static inline uint32_t manifest_crc32(uint32_t crc, const void *buf, size_t n)
{
	return crc32_ieee(crc, buf, n);
}

// Checks an indexed chunk's packets (pkt[0..c->n_frames)) against its record and keyframes as
// the ManifestPacket comment says. seen: scratch of at least c->n_frames bytes. NULL when
// consistent, else a static reason.
const char *manifest_packets_check(const ManifestChunk *c, const uint32_t *keyframes, const ManifestPacket *pkt,
				   uint8_t *seen);
// index of the last of keyframes kf[0..n) (ascending, kf[0] == 0) at or before frame
uint32_t manifest_keyframe_index(const uint32_t *kf, uint32_t n, uint32_t frame);

#endif
