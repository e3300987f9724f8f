// Manifest summary (--info) and verification (--verify): structure and header checksum at
// open, data checksum and token range, referenced files (and the size an indexed chunk's packet
// index describes), and with --deep every chunk's frame count, size, frame rate, keyframes and
// packet index re-read with libavformat, every frame and image decoded strictly, and every chunk
// compared with the CRC-32 recorded when it was written.
#include "prep_info.h"   // defines: prep_info, prep_verify
#include "manifest.h"    // defines: manifest_open, manifest_check_data, ...
#include "prep_chunk.h"  // defines: prep_index_chunk
#include "prep_damage.h" // defines: prep_decode_check, prep_done_crc, prep_file_crc
#include "loader.h"      // defines: ld_file_read, LdDecoder, ld_decoder_new, ld_image_load, ld_error_name

#include <libavutil/error.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// each label head: its name, classes (the first names when recorded) and how many samples have a label
static void info_labels(const Manifest *m)
{
	const uint32_t heads = manifest_label_heads(m);
	if (!heads) {
		printf("labels        none (captions only)\n");
		return;
	}
	for (uint32_t k = 0; k < heads; k++) {
		uint64_t labelled = 0;
		for (uint64_t i = 0; i < manifest_header(m)->n_samples; i++) {
			int32_t l[MANIFEST_MAX_HEADS];
			manifest_labels(m, i, l);
			labelled += l[k] != MANIFEST_NO_LABEL;
		}
		printf("label head %u  %s: %u classes, %llu samples labelled, class names ", k,
		       manifest_label_head_name(m, k), manifest_label_classes(m, k), (unsigned long long)labelled);
		if (!manifest_label_class_name(m, k, 0))
			printf("not recorded\n");
		for (uint32_t c = 0; c < 3 && manifest_label_class_name(m, k, c); c++)
			printf("%s%s", c ? ", " : "", manifest_label_class_name(m, k, c));
		if (manifest_label_class_name(m, k, 0))
			printf("%s\n", manifest_label_classes(m, k) > 3 ? ", ..." : "");
	}
}

int prep_info(const char *path)
{
	Manifest *m;
	char err[256];
	if (manifest_open(&m, path, err, sizeof(err)) < 0) {
		printf("%s: %s\n", path, err);
		return 1;
	}
	const ManifestHeader *h = manifest_header(m);
	uint64_t frames = 0, kf = 0, clips = 0, images = 0, span2 = 0, tokens = 0, cut = 0, indexed = 0;
	double seconds = 0;
	for (uint32_t i = 0; i < h->n_chunks; i++) {
		const ManifestChunk *c = manifest_chunk(m, i);
		frames += c->n_frames;
		kf += c->kf_count;
		indexed += c->codec != MANIFEST_CODEC_NONE;
		seconds += (double)c->n_frames * c->fps_den / c->fps_num;
	}
	for (uint64_t i = 0; i < h->n_samples; i++) {
		const ManifestSample *s = manifest_sample(m, i);
		clips += s->kind == MANIFEST_KIND_CLIP;
		images += s->kind == MANIFEST_KIND_IMAGE;
		span2 += s->kind == MANIFEST_KIND_CLIP && s->clip.chunk_last > s->clip.chunk_first;
		tokens += s->n_tokens;
		cut += s->n_tokens == h->context;
	}
	printf("manifest      %s (version %u, %llu bytes)\n", path, h->version, (unsigned long long)h->file_size);
	printf("videos        %u (%.2f h, %llu frames)\n", h->n_videos, seconds / 3600, (unsigned long long)frames);
	printf("chunks        %u of %.1f s, short side %u, %.1f keyframes each, %llu with a packet index\n",
	       h->n_chunks, h->chunk_ms / 1000.0, h->short_side, h->n_chunks ? (double)kf / h->n_chunks : 0,
	       (unsigned long long)indexed);
	if (h->n_chunks) {
		const ManifestChunk *c = manifest_chunk(m, 0);
		printf("first chunk   %s: %u frames at %u/%u fps, %ux%u\n", manifest_string(m, c->path_off),
		       c->n_frames, c->fps_num, c->fps_den, c->width, c->height);
	}
	printf("tar shards    %u\n", h->n_shards);
	printf("samples       %llu (%llu clips, %llu crossing a chunk boundary, %llu images)\n",
	       (unsigned long long)h->n_samples, (unsigned long long)clips, (unsigned long long)span2,
	       (unsigned long long)images);
	printf("captions      context %u, vocabulary %u, %.1f tokens on average, %llu cut at the context\n", h->context,
	       h->vocab_size, h->n_samples ? (double)tokens / h->n_samples : 0, (unsigned long long)cut);
	// the captions' vocabulary identity (tools/eval, the trainer and launch.sh compare it)
	uint64_t vh;
	char merges[4200];
	static const char *const from[] = {[MANIFEST_VOCAB_UNKNOWN] = "not recorded, and no bpe_merges.txt next to it",
					   [MANIFEST_VOCAB_RECORDED] = "recorded",
					   [MANIFEST_VOCAB_NEARBY] = "not recorded: the bpe_merges.txt next to it"};
	int src = manifest_vocab(m, &vh, merges, sizeof merges);
	printf("merges        bpe %016llx (%s)%s%s\n", (unsigned long long)vh, from[src], merges[0] ? ", file " : "",
	       merges);
	info_labels(m);
	manifest_close(m);
	return 0;
}

// --deep for one chunk: every frame decoded strictly, and the bytes compared with the CRC its
// video's .done marker recorded (a flip the decoder cannot see still shows there)
static int deep_chunk(uint32_t i, const char *name, const char *full)
{
	int problems = 0;
	uint64_t frames;
	PrepSpan bad;
	char why[160];
	int rc = prep_decode_check(full, &frames, &bad, why, sizeof why);
	if (rc < 0) {
		printf("chunk %u: %s does not decode: %s\n", i, name, av_err2str(rc));
		problems++;
	} else if (rc > 0) {
		char span[64];
		if (bad.first == bad.last)
			snprintf(span, sizeof span, "frame %llu decodes", (unsigned long long)bad.first);
		else
			snprintf(span, sizeof span, "frames %llu-%llu decode", (unsigned long long)bad.first,
				 (unsigned long long)bad.last);
		printf("chunk %u: %s: %s with errors (%s)\n", i, name, span, why);
		problems++;
	}
	uint32_t want, have;
	if (prep_done_crc(full, &want) == 0 && prep_file_crc(full, &have) == 0 && want != have) {
		printf("chunk %u: %s changed since it was prepared (CRC-32 %08x, its .done marker says %08x)\n", i,
		       name, have, want);
		problems++;
	}
	return problems;
}

// --deep for one image sample: decoded strictly from its bytes in the shard
static int deep_image(LdDecoder *dec, uint64_t i, const char *shard, uint64_t off, uint64_t len)
{
	uint8_t *buf = NULL;
	size_t cap = 0, size = 0;
	char err[256];
	int w, h, rc = ld_file_read(shard, off, len, 0, &buf, &cap, &size, err, sizeof err);
	if (!rc)
		rc = ld_image_load(dec, buf, size, &w, &h, 0, err, sizeof err);
	free(buf);
	if (!rc)
		return 0;
	printf("sample %llu: image at byte %llu of %s: %s (%s)\n", (unsigned long long)i, (unsigned long long)off,
	       shard, ld_error_name(-rc), err);
	return 1;
}

int prep_verify(const char *path, int deep)
{
	Manifest *m;
	char err[256];
	if (manifest_open(&m, path, err, sizeof(err)) < 0) {
		printf("%s: %s\n", path, err);
		return 1;
	}
	const ManifestHeader *h = manifest_header(m);
	int problems = 0;
	if (manifest_check_data(m, err, sizeof(err)) < 0) {
		printf("%s: %s\n", path, err);
		problems++;
	}
	char full[8192];
	for (uint32_t i = 0; i < h->n_chunks; i++) {
		const ManifestChunk *c = manifest_chunk(m, i);
		const char *name = manifest_string(m, c->path_off);
		struct stat st;
		int found = manifest_resolve(m, name, full, sizeof(full)) == 0 && stat(full, &st) == 0;
		if (found && !S_ISREG(st.st_mode)) { // a FIFO would block whatever reads it
			printf("chunk %u: %s is not a regular file\n", i, name);
			problems++;
			continue;
		}
		if (!found || st.st_size == 0) {
			printf("chunk %u: %s is missing or empty\n", i, name);
			problems++;
			continue;
		}
		if (c->file_size && (uint64_t)st.st_size != c->file_size) {
			printf("chunk %u: %s has %lld bytes, its packet index describes %llu\n", i, name,
			       (long long)st.st_size, (unsigned long long)c->file_size);
			problems++;
			continue;
		}
		if (!deep)
			continue;
		PrepChunkInfo info = {0};
		if (prep_index_chunk(full, &info) < 0) {
			printf("chunk %u: %s cannot be read\n", i, name);
			problems++;
			continue;
		}
		uint32_t nk, np;
		const uint32_t *kf = manifest_keyframes(m, i, &nk);
		const ManifestPacket *pk = manifest_packets(m, i, &np);
		const LdChunkIndex *ix = &info.ix;
		if (ix->n_frames != c->n_frames)
			printf("chunk %u: %s has %u frames, manifest says %u\n", i, name, ix->n_frames, c->n_frames),
				problems++;
		else if (ix->width != c->width || ix->height != c->height ||
			 (uint64_t)ix->fps_num * c->fps_den != (uint64_t)c->fps_num * ix->fps_den)
			printf("chunk %u: %s is %ux%u at %u/%u fps, manifest says %ux%u at %u/%u fps\n", i, name,
			       ix->width, ix->height, ix->fps_num, ix->fps_den, c->width, c->height, c->fps_num,
			       c->fps_den),
				problems++;
		else if (ix->n_keyframes != nk || memcmp(ix->keyframes, kf, nk * sizeof(uint32_t)) != 0)
			printf("chunk %u: %s keyframes differ from the manifest\n", i, name), problems++;
		else if (pk && (ix->codec != c->codec || ix->file_size != c->file_size ||
				memcmp(ix->packets, pk, np * sizeof(ManifestPacket)) != 0))
			printf("chunk %u: %s packets differ from the manifest's packet index (changed since prep?)\n",
			       i, name),
				problems++;
		ld_index_free(&info.ix);
		problems += deep_chunk(i, name, full);
	}
	for (uint32_t i = 0; i < h->n_shards; i++) {
		const ManifestShard *s = manifest_shard(m, i);
		const char *name = manifest_string(m, s->path_off);
		struct stat st;
		if (manifest_resolve(m, name, full, sizeof(full)) < 0 || stat(full, &st) < 0) {
			printf("shard %u: %s is missing\n", i, name);
			problems++;
		} else if (!S_ISREG(st.st_mode)) {
			printf("shard %u: %s is not a regular file\n", i, name);
			problems++;
		} else if ((uint64_t)st.st_size != s->size) {
			printf("shard %u: %s has %lld bytes, manifest says %llu\n", i, name, (long long)st.st_size,
			       (unsigned long long)s->size);
			problems++;
		}
	}
	LdDecoder *dec = NULL;
	if (deep && ld_decoder_new(&dec) != 0) {
		printf("%s: out of memory\n", path);
		problems++;
	}
	for (uint64_t i = 0; i < h->n_samples; i++) {
		const ManifestSample *s = manifest_sample(m, i);
		if (s->kind == MANIFEST_KIND_IMAGE) {
			const ManifestShard *sh = manifest_shard(m, s->source);
			if (s->image.offset > sh->size || s->image.length > sh->size - s->image.offset) {
				printf("sample %llu: bytes %llu+%llu outside its shard\n", (unsigned long long)i,
				       (unsigned long long)s->image.offset, (unsigned long long)s->image.length);
				problems++;
			} else if (dec &&
				   manifest_resolve(m, manifest_string(m, sh->path_off), full, sizeof(full)) == 0) {
				problems += deep_image(dec, i, full, s->image.offset, s->image.length);
			}
		}
	}
	ld_decoder_free(dec);
	printf("%s: %s (%u chunks, %u shards, %llu samples%s)\n", path, problems ? "PROBLEMS FOUND" : "OK", h->n_chunks,
	       h->n_shards, (unsigned long long)h->n_samples, deep ? ", every frame and image decoded" : "");
	manifest_close(m);
	return problems ? 1 : 0;
}
