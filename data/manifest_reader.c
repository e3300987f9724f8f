// Dataset manifest reader: the file read into private memory, then header and table validation
// so that every accessor can index without further checks; bad files produce an error line, never
// a fault. The bytes validated are the bytes used: the file rewritten or truncated while a program
// runs (a cp of a new manifest, an editor) changes nothing it holds; manifest_file_changed tells it.
#include "manifest.h"    // defines: manifest_open, manifest_chunk, manifest_clip_locate, ...
#include "fs_dir.h"      // defines: fs_open_regular
#include "bpe.h"         // defines: bpe_load, bpe_vocab_hash, bpe_free
#include "errbuf.h"      // defines: err_fmt
#include "shell_quote.h" // defines: shell_quoted

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// bound on a chunk's fps_num and fps_den (rates are reduced fractions like 30000/1001)
#define MANIFEST_MAX_FPS_TERM 1000000u

struct Manifest {
	const uint8_t *base;
	size_t size;
	int borrowed;   // base belongs to the caller (manifest_open_mem)
	struct stat st; // the file as it was read (manifest_open): device, inode, size, mtime, ctime
	const ManifestHeader *h;
	uint8_t *seen;  // scratch of the packet index check at open (MANIFEST_MAX_INDEXED_FRAMES bytes)
	char dir[4096]; // folder of the manifest, for relative paths
};

const ManifestHeader *manifest_header(const Manifest *m)
{
	return m->h;
}
const ManifestVideo *manifest_video(const Manifest *m, uint32_t i)
{
	return (const ManifestVideo *)(m->base + m->h->videos_off) + i;
}
const ManifestChunk *manifest_chunk(const Manifest *m, uint32_t i)
{
	return (const ManifestChunk *)(m->base + m->h->chunks_off) + i;
}
const ManifestShard *manifest_shard(const Manifest *m, uint32_t i)
{
	return (const ManifestShard *)(m->base + m->h->shards_off) + i;
}
const ManifestSample *manifest_sample(const Manifest *m, uint64_t i)
{
	return (const ManifestSample *)(m->base + m->h->samples_off) + i;
}
const uint16_t *manifest_tokens(const Manifest *m, uint64_t i)
{
	return (const uint16_t *)(m->base + m->h->tokens_off) + i * m->h->context;
}
const char *manifest_string(const Manifest *m, uint64_t off)
{
	return off < m->h->strings_size ? (const char *)m->base + m->h->strings_off + off : "";
}
const uint32_t *manifest_keyframes(const Manifest *m, uint32_t chunk, uint32_t *n)
{
	const ManifestChunk *c = manifest_chunk(m, chunk);
	*n = c->kf_count;
	return (const uint32_t *)(m->base + m->h->keyframes_off) + c->kf_first;
}

static const ManifestPacket *manifest_packets_of(const Manifest *m, const ManifestChunk *c)
{
	return (const ManifestPacket *)(m->base + m->h->packets_off) + c->pkt_first;
}

const ManifestPacket *manifest_packets(const Manifest *m, uint32_t chunk, uint32_t *n)
{
	const ManifestChunk *c = manifest_chunk(m, chunk);
	*n = c->pkt_count;
	return c->pkt_count ? manifest_packets_of(m, c) : NULL;
}

const uint8_t *manifest_codec_config(const Manifest *m, uint32_t chunk, uint32_t *size)
{
	const ManifestChunk *c = manifest_chunk(m, chunk);
	*size = c->config_size;
	return c->config_size ? m->base + m->h->configs_off + c->config_off : NULL;
}

uint32_t manifest_keyframe_at_or_before(const Manifest *m, uint32_t chunk, uint32_t frame)
{
	uint32_t n;
	const uint32_t *kf = manifest_keyframes(m, chunk, &n);
	return kf[manifest_keyframe_index(kf, n, frame)];
}

uint64_t manifest_clip_frames(const Manifest *m, const ManifestSample *s)
{
	if (s->kind != MANIFEST_KIND_CLIP)
		return 0;
	uint64_t n = 0;
	for (uint32_t c = s->clip.chunk_first; c < s->clip.chunk_last; c++)
		n += manifest_chunk(m, c)->n_frames;
	return n + s->clip.frame_end - s->clip.frame_begin;
}

int manifest_clip_locate(const Manifest *m, const ManifestSample *s, uint64_t k, uint32_t *chunk, uint32_t *frame)
{
	if (s->kind != MANIFEST_KIND_CLIP || k >= manifest_clip_frames(m, s))
		return -EINVAL;
	uint64_t f = s->clip.frame_begin + k;
	uint32_t c = s->clip.chunk_first;
	while (f >= manifest_chunk(m, c)->n_frames && c < s->clip.chunk_last)
		f -= manifest_chunk(m, c++)->n_frames;
	*chunk = c;
	*frame = (uint32_t)f;
	return 0;
}

int manifest_resolve(const Manifest *m, const char *name, char *buf, size_t cap)
{
	int n = name[0] == '/' ? snprintf(buf, cap, "%s", name) : snprintf(buf, cap, "%s/%s", m->dir, name);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static int section_ok(const ManifestHeader *h, uint64_t off, uint64_t count, uint64_t elem)
{
	if (off % 8 || off < h->header_size || off > h->file_size)
		return 0;
	if (elem && count > (h->file_size - off) / elem)
		return 0;
	return 1;
}

// a chunk's packet index: absent (codec NONE, no packets), or in range and consistent
static int check_index(Manifest *m, uint32_t i, const ManifestChunk *c, const uint32_t *kf, char *err, size_t errlen)
{
	const ManifestHeader *h = m->h;
	if (c->codec == MANIFEST_CODEC_NONE) {
		if (c->pkt_count || c->config_size)
			return err_fmt(err, errlen, -EBADMSG,
				       "chunk %u: packets or codec configuration without a codec", i);
		return 0;
	}
	if (c->pkt_first > h->n_packets || c->pkt_count > h->n_packets - c->pkt_first ||
	    c->config_off > h->configs_size || c->config_size > h->configs_size - c->config_off)
		return err_fmt(err, errlen, -EBADMSG,
			       "chunk %u: packet or codec configuration range outside its section", i);
	if (c->pkt_count != c->n_frames || c->n_frames > MANIFEST_MAX_INDEXED_FRAMES)
		return err_fmt(err, errlen, -EBADMSG, "chunk %u: packet index of %u packets for %u frames (at most %u)",
			       i, c->pkt_count, c->n_frames, MANIFEST_MAX_INDEXED_FRAMES);
	if (!m->seen && !(m->seen = malloc(MANIFEST_MAX_INDEXED_FRAMES)))
		return err_fmt(err, errlen, -ENOMEM, "out of memory checking chunk %u", i);
	const char *why = manifest_packets_check(c, kf, manifest_packets_of(m, c), m->seen);
	return why ? err_fmt(err, errlen, -EBADMSG, "chunk %u: packet index: %s", i, why) : 0;
}

static int validate(Manifest *m, char *err, size_t errlen)
{
	const ManifestHeader *h = m->h;
	if (m->size < 16 || memcmp(h->magic, MANIFEST_MAGIC, 8) != 0)
		return err_fmt(
			err, errlen, -EBADMSG,
			"not a manifest (magic is not %s; annotations such as a CSV become a manifest with tools/prep)",
			MANIFEST_MAGIC);
	if (h->version == 1)
		return err_fmt(err, errlen, -EPROTONOSUPPORT,
			       "manifest version 1 has no packet index, this build reads version %u: convert it with "
			       "tools/prep --upgrade FILE (chunks are indexed, not re-encoded)",
			       MANIFEST_VERSION);
	if (h->version < MANIFEST_VERSION_MIN || h->version > MANIFEST_VERSION)
		return err_fmt(err, errlen, -EPROTONOSUPPORT, "manifest version %u, this build reads versions %u to %u",
			       h->version, MANIFEST_VERSION_MIN, MANIFEST_VERSION);
	if (h->header_size != sizeof(ManifestHeader))
		return err_fmt(err, errlen, -EBADMSG, "header size %u, version %u has %zu", h->header_size,
			       MANIFEST_VERSION, sizeof(ManifestHeader));
	if (m->size < sizeof(ManifestHeader))
		return err_fmt(err, errlen, -EBADMSG, "truncated: %zu bytes, the header alone is %zu", m->size,
			       sizeof(ManifestHeader));
	ManifestHeader copy = *h;
	copy.header_crc = 0;
	if (manifest_crc32(0, &copy, sizeof(copy)) != h->header_crc)
		return err_fmt(err, errlen, -EBADMSG, "header checksum mismatch (corrupt header)");
	if (h->file_size != m->size)
		return err_fmt(err, errlen, -EBADMSG, "%s: header says %llu bytes, file has %zu",
			       h->file_size > m->size ? "truncated" : "trailing bytes",
			       (unsigned long long)h->file_size, m->size);
	if (h->context < 2 || h->vocab_size < 3 || h->vocab_size > 65536)
		return err_fmt(err, errlen, -EBADMSG, "context %u / vocabulary %u out of range", h->context,
			       h->vocab_size);
	struct {
		const char *name;
		uint64_t off, count, elem;
	} sec[] = {{"strings", h->strings_off, h->strings_size, 1},
		   {"videos", h->videos_off, h->n_videos, sizeof(ManifestVideo)},
		   {"chunks", h->chunks_off, h->n_chunks, sizeof(ManifestChunk)},
		   {"keyframes", h->keyframes_off, h->n_keyframes, sizeof(uint32_t)},
		   {"shards", h->shards_off, h->n_shards, sizeof(ManifestShard)},
		   {"samples", h->samples_off, h->n_samples, sizeof(ManifestSample)},
		   {"tokens", h->tokens_off, h->n_samples, (uint64_t)h->context * 2},
		   {"packets", h->packets_off, h->n_packets, sizeof(ManifestPacket)},
		   {"configs", h->configs_off, h->configs_size, 1},
		   // version 3: class labels (version 2 has none: an empty section at the header's end); its
		   // size cannot wrap once the samples section before it was found inside the file
		   {"labels", h->version >= 3 ? h->labels_off : h->header_size,
		    h->version >= 3 ? manifest_labels_bytes(h) : 0, 1}};
	enum { NSEC = sizeof(sec) / sizeof(sec[0]) };
	for (size_t i = 0; i < NSEC; i++)
		if (!section_ok(h, sec[i].off, sec[i].count, sec[i].elem))
			return err_fmt(err, errlen, -EBADMSG, "%s section (offset %llu, %llu records) outside the file",
				       sec[i].name, (unsigned long long)sec[i].off, (unsigned long long)sec[i].count);
	// a valid checksum proves nothing (anyone can recompute it): sections placed on each other
	// (tokens on the samples table) would make every reader see one table's bytes as another's
	for (size_t i = 0; i < NSEC; i++)
		for (size_t j = i + 1; j < NSEC; j++) {
			uint64_t ei = sec[i].off + sec[i].count * sec[i].elem,
				 ej = sec[j].off + sec[j].count * sec[j].elem;
			if (sec[i].count && sec[j].count && sec[i].off < ej && sec[j].off < ei)
				return err_fmt(
					err, errlen, -EBADMSG,
					"%s section (bytes [%llu, %llu)) overlaps the %s section (bytes [%llu, %llu))",
					sec[i].name, (unsigned long long)sec[i].off, (unsigned long long)ei,
					sec[j].name, (unsigned long long)sec[j].off, (unsigned long long)ej);
		}
	const char *str = (const char *)m->base + h->strings_off;
	if (h->strings_size && str[h->strings_size - 1] != 0)
		return err_fmt(err, errlen, -EBADMSG, "string table not terminated");
	for (uint32_t i = 0; i < h->n_videos; i++) {
		const ManifestVideo *v = manifest_video(m, i);
		if (v->name_off >= h->strings_size || v->first_chunk > h->n_chunks ||
		    v->n_chunks > h->n_chunks - v->first_chunk)
			return err_fmt(err, errlen, -EBADMSG, "video %u: name or chunk range out of range", i);
	}
	for (uint32_t i = 0; i < h->n_chunks; i++) {
		const ManifestChunk *c = manifest_chunk(m, i);
		if (c->path_off >= h->strings_size || c->video >= h->n_videos || !c->n_frames || !c->kf_count ||
		    c->kf_first > h->n_keyframes || c->kf_count > h->n_keyframes - c->kf_first || !c->width ||
		    !c->height)
			return err_fmt(err, errlen, -EBADMSG,
				       "chunk %u: bad path, video, frame count, size or keyframe range", i);
		// the loader turns frame numbers into timestamps with this rate: it must be plausible
		// and agree with the chunk length (a wrong one made seeks land short, over and over)
		double fps = c->fps_den ? (double)c->fps_num / c->fps_den : 0;
		if (c->fps_num > MANIFEST_MAX_FPS_TERM || c->fps_den > MANIFEST_MAX_FPS_TERM ||
		    !(fps >= 0.01 && fps <= 1000))
			return err_fmt(err, errlen, -EBADMSG, "chunk %u: frame rate %u/%u outside 0.01..1000 fps", i,
				       c->fps_num, c->fps_den);
		if (h->chunk_ms && c->n_frames / fps > h->chunk_ms / 1000.0 + 1.0)
			return err_fmt(
				err, errlen, -EBADMSG,
				"chunk %u: %u frames at %u/%u fps last %.1f s, longer than the %.1f-s chunks of this manifest",
				i, c->n_frames, c->fps_num, c->fps_den, c->n_frames / fps, h->chunk_ms / 1000.0);
		const ManifestVideo *v = manifest_video(m, c->video);
		if (i < v->first_chunk || i >= v->first_chunk + v->n_chunks)
			return err_fmt(err, errlen, -EBADMSG, "chunk %u: not in its video's chunk range", i);
		uint32_t nk;
		const uint32_t *kf = manifest_keyframes(m, i, &nk);
		if (kf[0] != 0)
			return err_fmt(err, errlen, -EBADMSG, "chunk %u: first keyframe is %u, not 0", i, kf[0]);
		for (uint32_t k = 1; k < nk; k++)
			if (kf[k] <= kf[k - 1] || kf[k] >= c->n_frames)
				return err_fmt(err, errlen, -EBADMSG,
					       "chunk %u: keyframes not ascending within the chunk", i);
		int rc = check_index(m, i, c, kf, err, errlen);
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < h->n_shards; i++)
		if (manifest_shard(m, i)->path_off >= h->strings_size)
			return err_fmt(err, errlen, -EBADMSG, "shard %u: path out of range", i);
	for (uint64_t i = 0; i < h->n_samples; i++) {
		const ManifestSample *s = manifest_sample(m, i);
		if (s->n_tokens < 2 || s->n_tokens > h->context)
			return err_fmt(err, errlen, -EBADMSG, "sample %llu: %u tokens", (unsigned long long)i,
				       s->n_tokens);
		// as bpe_tokenize writes a caption: <|startoftext|> (vocab_size - 2) first, <|endoftext|>
		// (vocab_size - 1) last of its n_tokens (zero padding after it: manifest_check_data)
		const uint16_t *tok = manifest_tokens(m, i);
		if (tok[0] != h->vocab_size - 2 || tok[s->n_tokens - 1] != h->vocab_size - 1)
			return err_fmt(
				err, errlen, -EBADMSG,
				"sample %llu: caption is not <|startoftext|> ... <|endoftext|> (ids %u and %u at 0 "
				"and %u, want %u and %u)",
				(unsigned long long)i, tok[0], tok[s->n_tokens - 1], s->n_tokens - 1, h->vocab_size - 2,
				h->vocab_size - 1);
		if (s->kind == MANIFEST_KIND_CLIP) {
			uint32_t c0 = s->clip.chunk_first, c1 = s->clip.chunk_last;
			if (s->source >= h->n_videos || c0 > c1 || c1 >= h->n_chunks ||
			    manifest_chunk(m, c0)->video != s->source || manifest_chunk(m, c1)->video != s->source ||
			    s->clip.frame_begin >= manifest_chunk(m, c0)->n_frames ||
			    s->clip.frame_end > manifest_chunk(m, c1)->n_frames || s->clip.frame_end == 0 ||
			    (c0 == c1 && s->clip.frame_end <= s->clip.frame_begin))
				return err_fmt(err, errlen, -EBADMSG, "sample %llu: chunk or frame range out of range",
					       (unsigned long long)i);
		} else if (s->kind == MANIFEST_KIND_IMAGE) {
			const ManifestShard *sh = s->source < h->n_shards ? manifest_shard(m, s->source) : NULL;
			if (!sh || !s->image.length || s->image.offset > sh->size ||
			    s->image.length > sh->size - s->image.offset)
				return err_fmt(err, errlen, -EBADMSG, "sample %llu: shard or byte range out of range",
					       (unsigned long long)i);
		} else {
			return err_fmt(err, errlen, -EBADMSG, "sample %llu: unknown kind %u", (unsigned long long)i,
				       s->kind);
		}
	}
	return manifest_labels_check(h, err, errlen);
}

// reads the whole regular file fd of st->st_size bytes into anonymous private pages (8-byte aligned,
// as the tables need); -ESTALE when it is shorter or longer than that by the time it is read
static int read_private(int fd, const struct stat *st, const uint8_t **out, char *err, size_t errlen)
{
	size_t size = (size_t)st->st_size;
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return err_fmt(err, errlen, -ENOMEM, "cannot hold its %zu bytes in memory: %s", size, strerror(errno));
	size_t got = 0;
	while (got < size) {
		ssize_t n = pread(fd, p + got, size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : 0;
			munmap(p, size);
			if (n < 0)
				return err_fmt(err, errlen, -e, "read: %s", strerror(e));
			return err_fmt(err, errlen, -ESTALE,
				       "the file shrank from %zu to %zu bytes while it was read (rewritten meanwhile?)",
				       size, got);
		}
		got += (size_t)n;
	}
	char extra;
	if (pread(fd, &extra, 1, (off_t)size) == 1) {
		munmap(p, size);
		return err_fmt(err, errlen, -ESTALE,
			       "the file grew past %zu bytes while it was read (rewritten meanwhile?)", size);
	}
	mprotect(p, size, PROT_READ);
	*out = p;
	return 0;
}

int manifest_open(Manifest **out, const char *path, char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	struct stat st;
	int fd = fs_open_regular(path, &st); // a FIFO at path must not block the open
	if (fd == -EINVAL || fd == -EISDIR)
		return err_fmt(err, errlen, -EINVAL, "not a regular file");
	if (fd < 0)
		return err_fmt(err, errlen, fd, "cannot open: %s", strerror(-fd));
	if (st.st_size < 16) {
		close(fd);
		return err_fmt(err, errlen, -EBADMSG, "not a manifest (%lld bytes)", (long long)st.st_size);
	}
	Manifest *m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	m->size = (size_t)st.st_size;
	m->st = st;
	int rc = read_private(fd, &st, &m->base, err, errlen);
	close(fd);
	if (rc) {
		free(m);
		return rc;
	}
	m->h = (const ManifestHeader *)m->base;
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(m->dir, sizeof(m->dir), ".");
	else if (slash == path)
		snprintf(m->dir, sizeof(m->dir), "/");
	else
		snprintf(m->dir, sizeof(m->dir), "%.*s", (int)(slash - path), path);
	rc = validate(m, err, errlen);
	free(m->seen);
	m->seen = NULL;
	if (rc) {
		manifest_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

uint64_t manifest_identity(const Manifest *m)
{
	return (uint64_t)m->h->data_crc << 32 | m->h->header_crc;
}

int manifest_file_changed(const Manifest *m, const char *path, char *why, size_t whylen)
{
	if (m->borrowed)
		return 0;
	struct stat now;
	if (stat(path, &now) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return 1;
	}
	const struct stat *was = &m->st;
	if (now.st_dev != was->st_dev || now.st_ino != was->st_ino)
		snprintf(why, whylen, "another file now has its name (replaced)");
	else if (now.st_size != was->st_size)
		snprintf(why, whylen, "its size went from %lld to %lld bytes", (long long)was->st_size,
			 (long long)now.st_size);
	else if (now.st_mtim.tv_sec != was->st_mtim.tv_sec || now.st_mtim.tv_nsec != was->st_mtim.tv_nsec ||
		 now.st_ctim.tv_sec != was->st_ctim.tv_sec || now.st_ctim.tv_nsec != was->st_ctim.tv_nsec)
		snprintf(why, whylen, "it was written to");
	else
		return 0;
	return 1;
}

int manifest_open_mem(Manifest **out, const void *buf, size_t size, const char *dir, char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	if (size < 16)
		return err_fmt(err, errlen, -EBADMSG, "not a manifest (%zu bytes)", size);
	Manifest *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->base = buf;
	m->h = buf;
	m->size = size;
	m->borrowed = 1;
	snprintf(m->dir, sizeof(m->dir), "%s", dir && *dir ? dir : ".");
	int rc = validate(m, err, errlen);
	free(m->seen); // the packet index check's scratch is needed at open only
	m->seen = NULL;
	if (rc) {
		manifest_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

void manifest_close(Manifest *m)
{
	if (!m)
		return;
	if (!m->borrowed)
		munmap((void *)m->base, m->size);
	free(m);
}

int manifest_open_verified(Manifest **out, const char *path, char *err, size_t errlen)
{
	int rc = manifest_open(out, path, err, errlen);
	if (rc == 0 && (rc = manifest_check_data(*out, err, errlen)) != 0) {
		manifest_close(*out);
		*out = NULL;
	}
	return rc;
}

int manifest_check_data(const Manifest *m, char *err, size_t errlen)
{
	const ManifestHeader *h = m->h;
	uint32_t crc = manifest_crc32(0, m->base + h->header_size, m->size - h->header_size);
	if (crc != h->data_crc)
		return err_fmt(err, errlen, -EBADMSG, "data checksum mismatch (file corrupt after the header)");
	// one pass over all ids in blocks the compiler vectorizes (saturating subtraction leaves
	// non-zero only for an id >= vocab_size); the sample is looked for only if there is one
	const uint16_t *all = manifest_tokens(m, 0);
	uint64_t n = h->n_samples * h->context;
	const uint16_t lim = (uint16_t)(h->vocab_size - 1); // vocab_size is 3..65536
	uint16_t over = 0;
	for (uint64_t k = 0; k < n; k++) {
		uint16_t x = all[k];
		over |= (uint16_t)(x > lim ? x - lim : 0);
	}
	if (over)
		for (uint64_t k = 0; k < n; k++)
			if (all[k] >= h->vocab_size)
				return err_fmt(err, errlen, -EBADMSG,
					       "sample %llu: token %llu is id %u, outside the vocabulary (%u)",
					       (unsigned long long)(k / h->context),
					       (unsigned long long)(k % h->context), all[k], h->vocab_size);
	// the padding after <|endoftext|> is zero (the reader may take a caption's length from it)
	for (uint64_t i = 0; i < h->n_samples; i++) {
		const uint16_t *t = all + i * h->context;
		uint16_t pad = 0;
		for (uint32_t k = manifest_sample(m, i)->n_tokens; k < h->context; k++)
			pad |= t[k];
		if (pad)
			return err_fmt(err, errlen, -EBADMSG,
				       "sample %llu: non-zero token ids after its <|endoftext|> (token %u)",
				       (unsigned long long)i, manifest_sample(m, i)->n_tokens - 1);
	}
	return 0;
}

// the bpe_merges.txt next to the manifest (tools/prep keeps the vocabulary there): its hash, 0 when
// there is none or it does not load
static uint64_t nearby_vocab(const Manifest *m, char *path, size_t cap)
{
	struct stat st;
	BpeTokenizer *t;
	int line;
	if (manifest_resolve(m, "bpe_merges.txt", path, cap) || stat(path, &st) || !S_ISREG(st.st_mode) ||
	    bpe_load(&t, path, &line))
		return 0;
	uint64_t h = bpe_vocab_hash(t);
	bpe_free(t);
	return h;
}

int manifest_vocab(const Manifest *m, uint64_t *hash, char *merges, size_t cap)
{
	char path[4200];
	const uint64_t rec = m->h->vocab_hash;
	// the file next to it is read only when it is needed: no record, or its path asked for
	uint64_t near = !rec || (merges && cap) ? nearby_vocab(m, path, sizeof path) : 0;
	*hash = rec ? rec : near;
	if (merges && cap)
		snprintf(merges, cap, "%s", near && near == *hash ? path : "");
	return rec ? MANIFEST_VOCAB_RECORDED : near ? MANIFEST_VOCAB_NEARBY : MANIFEST_VOCAB_UNKNOWN;
}

int manifest_vocab_check(const Manifest *m, const char *path, uint64_t want, const char *who, const char *want_merges,
			 char *err, size_t errlen)
{
	uint64_t have;
	manifest_vocab(m, &have, NULL, 0);
	if (!want || !have || have == want)
		return 0;
	return err_fmt(err, errlen, -EINVAL,
		       "%s: its captions were tokenized with another vocabulary (bpe %016llx) than %s (bpe %016llx), "
		       "so every caption would read as other words and the figures would be wrong: prepare it again "
		       "with the same tools/prep command plus --bpe %s",
		       path, (unsigned long long)have, who, (unsigned long long)want,
		       want_merges && *want_merges ? shell_quoted(want_merges)
						   : "MERGES (the merges file of the model's vocabulary)");
}
