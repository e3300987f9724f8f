// Opens a dataset manifest (read whole into private memory) and checks its structure, so the
// loader, the trainer and tools can index chunks, keyframes, samples and caption tokens in place.
// What was validated is what is used: the file rewritten while a program runs changes nothing it
// holds (manifest_file_changed tells it happened).
#ifndef DATA_MANIFEST_READER_H
#define DATA_MANIFEST_READER_H
// defines: Manifest, manifest_open, manifest_open_verified, manifest_open_mem, manifest_close, manifest_header, manifest_video, manifest_chunk, manifest_shard, manifest_sample, manifest_string, manifest_keyframes, manifest_packets, manifest_codec_config, manifest_tokens, manifest_keyframe_at_or_before, manifest_clip_frames, manifest_clip_locate, manifest_check_data, manifest_resolve, manifest_vocab, manifest_vocab_check, manifest_identity, manifest_file_changed, MANIFEST_VOCAB_*,
//          manifest_label_heads, manifest_label_classes, manifest_label_head_name, manifest_label_class_name,
//          manifest_labels, manifest_labels_check, manifest_labels_bytes

#include "manifest_format.h" // defines: ManifestHeader, ManifestChunk, ManifestSample, ...

#include <stddef.h>
#include <stdint.h>

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

#endif
