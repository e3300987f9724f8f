// The dataset manifest (libdata): its byte format, the reader (open, verify, look up) and the writer.
#ifndef DATA_MANIFEST_H
#define DATA_MANIFEST_H
// defines: MANIFEST_MAGIC, MANIFEST_VERSION, MANIFEST_VERSION_MIN, MANIFEST_MAX_HEADS, MANIFEST_MAX_CLASSES,
//          MANIFEST_NO_LABEL, ManifestHead, ManifestHeader, ManifestVideo, ManifestChunk, ManifestPacket,
//          ManifestShard, ManifestSample, MANIFEST_KIND_CLIP, MANIFEST_KIND_IMAGE, MANIFEST_CODEC_*,
//          MANIFEST_PKT_*, MANIFEST_MAX_INDEXED_FRAMES, manifest_crc32, manifest_packets_check,
//          manifest_keyframe_index, Manifest, manifest_open, manifest_open_verified, manifest_open_mem,
//          manifest_close, manifest_header, manifest_video, manifest_chunk, manifest_shard, manifest_sample,
//          manifest_string, manifest_keyframes, manifest_packets, manifest_codec_config, manifest_tokens,
//          manifest_keyframe_at_or_before, manifest_clip_frames, manifest_clip_locate, manifest_check_data,
//          manifest_resolve, manifest_vocab, manifest_vocab_check, manifest_identity, manifest_file_changed,
//          MANIFEST_VOCAB_*, manifest_label_heads, manifest_label_classes, manifest_label_head_name,
//          manifest_label_class_name, manifest_labels, manifest_labels_check, manifest_labels_bytes,
//          ManifestWriter, manifest_writer_new, manifest_writer_free, manifest_writer_set_vocab,
//          manifest_add_video, manifest_add_chunk, manifest_set_chunk_index, manifest_add_shard,
//          manifest_add_clip, manifest_add_image, manifest_write, manifest_writer_set_heads,
//          manifest_set_labels

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "crc32.h" // defines: crc32_ieee

// ---- the format (manifest_format) ----
// On-disk layout of the dataset manifest (one mmap-able file per dataset): header, string
// table, videos, chunks, keyframe index, tar shards, samples, caption token ids.

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

// ---- the reader (manifest_reader) ----
// Opens a dataset manifest (read whole into private memory) and checks its structure, so the
// loader, the trainer and tools can index chunks, keyframes, samples and caption tokens in place.
// What was validated is what is used: the file rewritten while a program runs changes nothing it
// holds (manifest_file_changed tells it happened).

typedef struct Manifest Manifest;

// Reads path (a regular file; the bytes stay in this process's memory: a large manifest costs its
// size in every process that opens it) and validates header (magic, version, header size, header checksum, file size)
// and every table (offsets in range, sections disjoint, strings terminated, chunk/keyframe/sample
// references consistent, each caption <|startoftext|> first and <|endoftext|> last). On error returns -errno (-ENOENT..., -EBADMSG not a manifest or corrupt,
// -EPROTONOSUPPORT other version) and writes a one-line reason to err.
int manifest_open(Manifest **out, const char *path, char *err, size_t errlen);
void manifest_close(Manifest *m);
// The dataset's identity: its header and data checksums (the header's covers every count, offset
// and the file size), equal for copies of one manifest, different for another dataset or a
// rewrite. What rings and checkpoints record, so nothing joins or resumes the wrong job.
uint64_t manifest_identity(const Manifest *m);
// 1 when path no longer names the file m was read from as it was (replaced, resized, written to,
// gone), with the change in why; 0 when unchanged (and always for manifest_open_mem)
int manifest_file_changed(const Manifest *m, const char *path, char *why, size_t whylen);
// the same checks on size bytes at buf (8-byte aligned, outliving the Manifest; not freed by
// manifest_close); dir resolves relative paths. For tests and the fuzz harness.
int manifest_open_mem(Manifest **out, const void *buf, size_t size, const char *dir, char *err, size_t errlen);

const ManifestHeader *manifest_header(const Manifest *m);
const ManifestVideo *manifest_video(const Manifest *m, uint32_t i);
const ManifestChunk *manifest_chunk(const Manifest *m, uint32_t i);
const ManifestShard *manifest_shard(const Manifest *m, uint32_t i);
const ManifestSample *manifest_sample(const Manifest *m, uint64_t i);
// string table entry (validated NUL-terminated), "" when off is out of range
const char *manifest_string(const Manifest *m, uint64_t off);
// the chunk's keyframe frame numbers (ascending, first 0); *n gets their count
const uint32_t *manifest_keyframes(const Manifest *m, uint32_t chunk, uint32_t *n);
// the chunk's packet index (ManifestPacket, decode order); NULL and *n = 0 when not indexed
const ManifestPacket *manifest_packets(const Manifest *m, uint32_t chunk, uint32_t *n);
// the chunk's codec configuration bytes (H.264: avcC); NULL and *size = 0 when not indexed
const uint8_t *manifest_codec_config(const Manifest *m, uint32_t chunk, uint32_t *size);
// (context) token ids of sample i
const uint16_t *manifest_tokens(const Manifest *m, uint64_t i);
// the last keyframe <= frame in the chunk: where a decoder seeks to reach frame
uint32_t manifest_keyframe_at_or_before(const Manifest *m, uint32_t chunk, uint32_t frame);
// number of frames of a clip sample (0 for an image)
uint64_t manifest_clip_frames(const Manifest *m, const ManifestSample *s);
// k-th frame of a clip (0 <= k < manifest_clip_frames) as chunk index and frame in it;
// -EINVAL when k is out of range or s is not a clip
int manifest_clip_locate(const Manifest *m, const ManifestSample *s, uint64_t k, uint32_t *chunk, uint32_t *frame);
// full check of the data: data checksum, every token id < vocab_size, zero padding after each caption
int manifest_check_data(const Manifest *m, char *err, size_t errlen);
// manifest_open and manifest_check_data: what a program that reads samples uses, so that a
// damaged data section is refused at open (about 0.1 s per million samples, see docs/data.md)
int manifest_open_verified(Manifest **out, const char *path, char *err, size_t errlen);
// path of a string-table file name resolved against the manifest's folder into buf
int manifest_resolve(const Manifest *m, const char *name, char *buf, size_t cap);

// Where manifest_vocab found the captions' vocabulary.
#define MANIFEST_VOCAB_UNKNOWN 0  // not recorded, and no loadable bpe_merges.txt next to it
#define MANIFEST_VOCAB_RECORDED 1 // the header's vocab_hash
#define MANIFEST_VOCAB_NEARBY 2   // a manifest written before vocab_hash: the bpe_merges.txt next to it
// The vocabulary the captions were tokenized with (bpe_vocab_hash) into *hash (0 when unknown), and
// in merges (when not NULL, cap bytes) the merges file of it next to the manifest when there is one
// with that hash ("" otherwise): the file to pass to tools/prep --bpe so another split agrees.
int manifest_vocab(const Manifest *m, uint64_t *hash, char *merges, size_t cap);
// Refuses captions tokenized with another vocabulary than the model's. path: how the manifest is
// named in the message ("--eval-manifest FILE"); want: the vocabulary of `who` (e.g. "the training
// manifest FILE", "checkpoint FILE"), 0 = unknown: nothing to check; want_merges: that
// vocabulary's merges file ("" unknown). 0 when they agree or either is unknown; -EINVAL with the
// sentence and the command that fixes it in err.
int manifest_vocab_check(const Manifest *m, const char *path, uint64_t want, const char *who, const char *want_merges,
			 char *err, size_t errlen);

// Class labels (version 3; in manifest_labels.c). Heads: 0 for a manifest without labels
// (version 2), else 1..MANIFEST_MAX_HEADS; a head's classes 0 .. n-1 (0 for a head that is not there).
uint32_t manifest_label_heads(const Manifest *m);
uint32_t manifest_label_classes(const Manifest *m, uint32_t head);
// the head's name ("verb", "noun", "label"; "" for a head that is not there)
const char *manifest_label_head_name(const Manifest *m, uint32_t head);
// class cls's name, NULL when the manifest records no names for the head (a walk over the names
// before it: for tools, not per sample)
const char *manifest_label_class_name(const Manifest *m, uint32_t head, uint32_t cls);
// sample's label of every head into out (MANIFEST_NO_LABEL where none, and for every head of a
// manifest without labels)
void manifest_labels(const Manifest *m, uint64_t sample, int32_t out[MANIFEST_MAX_HEADS]);
// manifest_open's check of the labels section (heads, names, every label in its head's range) on
// a header whose sections were checked to lie in the file; 0 for version 2. -EBADMSG with a reason.
int manifest_labels_check(const ManifestHeader *h, char *err, size_t errlen);
// the labels section's size in bytes (heads, then n_samples labels per head)
uint64_t manifest_labels_bytes(const ManifestHeader *h);

// ---- the writer (manifest_writer) ----
// Builds a dataset manifest in memory (videos, chunks with keyframes, tar shards, samples
// with caption tokens) and writes it atomically (temp file, fsync, rename).

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
