// Dataset manifest writer: records collected in growable arrays, laid out in the order of
// manifest.h, checksummed, written to a temp file, fsynced and renamed into place.
#include "manifest.h" // defines: manifest_writer_new, manifest_add_*, manifest_write, ManifestHeader, ManifestChunk, ..., manifest_crc32
#include "fs_dir.h"     // defines: fs_create_new
#include "proc_ident.h" // defines: proc_is_dead

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	void *data;
	size_t n, cap, elem;
} Vec;

static void *vec_push(Vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 64;
		void *d = realloc(v->data, cap * v->elem);
		if (!d)
			return NULL;
		v->data = d;
		v->cap = cap;
	}
	return (char *)v->data + v->elem * v->n++;
}

struct ManifestWriter {
	uint32_t context, vocab_size, chunk_ms, short_side;
	uint64_t vocab_hash;
	Vec strings; // (bytes)
	Vec videos, chunks, keyframes, shards, samples, tokens;
	Vec packets, configs; // configs: (bytes)
	Vec labels;           // (n_samples, MANIFEST_MAX_HEADS) int32, kept with samples
	uint32_t n_heads;     // 0: no labels (version 2)
	ManifestHead heads[MANIFEST_MAX_HEADS];
	uint64_t last_config_off, last_config_size; // identical configurations are stored once
};

int manifest_writer_new(ManifestWriter **out, uint32_t context, uint32_t vocab_size, uint32_t chunk_ms,
			uint32_t short_side)
{
	*out = NULL;
	if (context < 2 || context > 4096 || vocab_size < 3 || vocab_size > 65536)
		return -EINVAL;
	ManifestWriter *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->context = context, w->vocab_size = vocab_size, w->chunk_ms = chunk_ms, w->short_side = short_side;
	w->strings.elem = 1;
	w->videos.elem = sizeof(ManifestVideo);
	w->chunks.elem = sizeof(ManifestChunk);
	w->keyframes.elem = sizeof(uint32_t);
	w->shards.elem = sizeof(ManifestShard);
	w->samples.elem = sizeof(ManifestSample);
	w->tokens.elem = (size_t)context * sizeof(uint16_t);
	w->packets.elem = sizeof(ManifestPacket);
	w->configs.elem = 1;
	w->labels.elem = MANIFEST_MAX_HEADS * sizeof(int32_t);
	*out = w;
	return 0;
}

void manifest_writer_free(ManifestWriter *w)
{
	if (!w)
		return;
	Vec *v[] = {&w->strings, &w->videos, &w->chunks,  &w->keyframes, &w->shards,
		    &w->samples, &w->tokens, &w->packets, &w->configs,   &w->labels};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		free(v[i]->data);
	free(w);
}

void manifest_writer_set_vocab(ManifestWriter *w, uint64_t vocab_hash)
{
	w->vocab_hash = vocab_hash;
}

static int64_t add_string(ManifestWriter *w, const char *s)
{
	size_t n = strlen(s) + 1, off = w->strings.n;
	for (size_t i = 0; i < n; i++) {
		char *c = vec_push(&w->strings);
		if (!c)
			return -ENOMEM;
		*c = s[i];
	}
	return (int64_t)off;
}

int64_t manifest_add_video(ManifestWriter *w, const char *name, uint64_t duration_ms)
{
	if (!name || !*name || w->videos.n >= UINT32_MAX)
		return -EINVAL;
	int64_t off = add_string(w, name);
	if (off < 0)
		return off;
	ManifestVideo *v = vec_push(&w->videos);
	if (!v)
		return -ENOMEM;
	*v = (ManifestVideo){.name_off = (uint64_t)off,
			     .first_chunk = (uint32_t)w->chunks.n,
			     .n_chunks = 0,
			     .duration_ms = duration_ms};
	return (int64_t)w->videos.n - 1;
}

int64_t manifest_add_chunk(ManifestWriter *w, uint32_t video, const char *path, uint32_t start_ms, uint32_t n_frames,
			   uint32_t fps_num, uint32_t fps_den, uint16_t width, uint16_t height,
			   const uint32_t *keyframes, uint32_t n_keyframes)
{
	if (video >= w->videos.n || !path || !*path || n_frames == 0 || !fps_num || !fps_den || !width || !height ||
	    n_keyframes == 0 || keyframes[0] != 0)
		return -EINVAL;
	ManifestVideo *v = (ManifestVideo *)w->videos.data + video;
	// a video's chunks are consecutive: only the last video may still grow
	if (v->first_chunk + v->n_chunks != w->chunks.n)
		return -EINVAL;
	for (uint32_t i = 1; i < n_keyframes; i++)
		if (keyframes[i] <= keyframes[i - 1] || keyframes[i] >= n_frames)
			return -EINVAL;
	int64_t off = add_string(w, path);
	if (off < 0)
		return off;
	uint64_t kf_first = w->keyframes.n;
	for (uint32_t i = 0; i < n_keyframes; i++) {
		uint32_t *k = vec_push(&w->keyframes);
		if (!k)
			return -ENOMEM;
		*k = keyframes[i];
	}
	ManifestChunk *c = vec_push(&w->chunks);
	if (!c)
		return -ENOMEM;
	*c = (ManifestChunk){.path_off = (uint64_t)off,
			     .kf_first = kf_first,
			     .kf_count = n_keyframes,
			     .video = video,
			     .start_ms = start_ms,
			     .n_frames = n_frames,
			     .fps_num = fps_num,
			     .fps_den = fps_den,
			     .width = width,
			     .height = height};
	v->n_chunks++;
	return (int64_t)w->chunks.n - 1;
}

static int vec_append(Vec *v, const void *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		void *d = vec_push(v);
		if (!d)
			return -ENOMEM;
		memcpy(d, (const char *)src + i * v->elem, v->elem);
	}
	return 0;
}

int manifest_set_chunk_index(ManifestWriter *w, uint32_t chunk, uint32_t codec, const ManifestPacket *packets,
			     uint32_t n_packets, const uint8_t *config, uint32_t config_size, uint64_t file_size)
{
	if (chunk >= w->chunks.n || !packets || !config)
		return -EINVAL;
	ManifestChunk c = ((ManifestChunk *)w->chunks.data)[chunk];
	if (c.codec != MANIFEST_CODEC_NONE)
		return -EINVAL;
	c.codec = codec, c.pkt_count = n_packets, c.config_size = config_size, c.file_size = file_size;
	if (n_packets != c.n_frames || n_packets > MANIFEST_MAX_INDEXED_FRAMES)
		return -EINVAL;
	uint8_t *seen = malloc(c.n_frames ? c.n_frames : 1);
	if (!seen)
		return -ENOMEM;
	const char *why = manifest_packets_check(&c, (const uint32_t *)w->keyframes.data + c.kf_first, packets, seen);
	free(seen);
	if (why)
		return -EINVAL;
	c.pkt_first = w->packets.n;
	if (config_size == w->last_config_size &&
	    !memcmp((const uint8_t *)w->configs.data + w->last_config_off, config, config_size)) {
		c.config_off = w->last_config_off;
	} else {
		c.config_off = w->configs.n;
		if (vec_append(&w->configs, config, config_size))
			return -ENOMEM;
		w->last_config_off = c.config_off, w->last_config_size = config_size;
	}
	if (vec_append(&w->packets, packets, n_packets))
		return -ENOMEM;
	((ManifestChunk *)w->chunks.data)[chunk] = c;
	return 0;
}

int64_t manifest_add_shard(ManifestWriter *w, const char *path, uint64_t size)
{
	if (!path || !*path || w->shards.n >= UINT32_MAX)
		return -EINVAL;
	int64_t off = add_string(w, path);
	if (off < 0)
		return off;
	ManifestShard *s = vec_push(&w->shards);
	if (!s)
		return -ENOMEM;
	*s = (ManifestShard){(uint64_t)off, size};
	return (int64_t)w->shards.n - 1;
}

// checks and stores a caption's tokens; returns the non-padding count or -EINVAL
static int add_tokens(ManifestWriter *w, const int32_t *tokens)
{
	int n = 0;
	for (uint32_t i = 0; i < w->context; i++) {
		if (tokens[i] < 0 || (uint32_t)tokens[i] >= w->vocab_size)
			return -EINVAL;
		if (tokens[i])
			n = (int)i + 1;
	}
	// what manifest_open accepts: <|startoftext|> first, <|endoftext|> last (bpe_sot, bpe_eot)
	if (n < 2 || (uint32_t)tokens[0] != w->vocab_size - 2 || (uint32_t)tokens[n - 1] != w->vocab_size - 1)
		return -EINVAL;
	uint16_t *t = vec_push(&w->tokens);
	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < w->context; i++)
		t[i] = (uint16_t)tokens[i];
	return n;
}

// appends a sample of this kind and source with its caption tokens; the caller fills the rest
static int push_sample(ManifestWriter *w, const int32_t *tokens, uint32_t kind, uint32_t source, ManifestSample **out)
{
	int n = add_tokens(w, tokens);
	if (n < 0)
		return n;
	ManifestSample *s = vec_push(&w->samples);
	int32_t *lab = s ? vec_push(&w->labels) : NULL;
	if (!lab) {
		w->samples.n -= s != NULL;
		w->tokens.n--;
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < MANIFEST_MAX_HEADS; k++)
		lab[k] = MANIFEST_NO_LABEL;
	*s = (ManifestSample){.kind = kind, .source = source, .n_tokens = (uint32_t)n};
	*out = s;
	return 0;
}

int64_t manifest_add_clip(ManifestWriter *w, uint32_t video, uint32_t chunk_first, uint32_t frame_begin,
			  uint32_t chunk_last, uint32_t frame_end, const int32_t *tokens)
{
	if (video >= w->videos.n || chunk_first > chunk_last || chunk_last >= w->chunks.n)
		return -EINVAL;
	const ManifestVideo *v = (const ManifestVideo *)w->videos.data + video;
	const ManifestChunk *c = w->chunks.data;
	if (chunk_first < v->first_chunk || chunk_last >= v->first_chunk + v->n_chunks ||
	    frame_begin >= c[chunk_first].n_frames || frame_end > c[chunk_last].n_frames || frame_end == 0 ||
	    (chunk_first == chunk_last && frame_end <= frame_begin))
		return -EINVAL;
	ManifestSample *s;
	int rc = push_sample(w, tokens, MANIFEST_KIND_CLIP, video, &s);
	if (rc < 0)
		return rc;
	s->clip.chunk_first = chunk_first, s->clip.chunk_last = chunk_last;
	s->clip.frame_begin = frame_begin, s->clip.frame_end = frame_end;
	return (int64_t)w->samples.n - 1;
}

int64_t manifest_add_image(ManifestWriter *w, uint32_t shard, uint64_t offset, uint64_t length, const int32_t *tokens)
{
	if (shard >= w->shards.n || length == 0)
		return -EINVAL;
	const ManifestShard *sh = (const ManifestShard *)w->shards.data + shard;
	if (offset > sh->size || length > sh->size - offset)
		return -EINVAL;
	ManifestSample *s;
	int rc = push_sample(w, tokens, MANIFEST_KIND_IMAGE, shard, &s);
	if (rc < 0)
		return rc;
	s->image.offset = offset, s->image.length = length;
	return (int64_t)w->samples.n - 1;
}

int manifest_writer_set_heads(ManifestWriter *w, uint32_t n_heads, const char *const *head_names,
			      const uint32_t *n_classes, const char *const *const *class_names)
{
	if (w->n_heads || n_heads < 1 || n_heads > MANIFEST_MAX_HEADS)
		return -EINVAL;
	for (uint32_t k = 0; k < n_heads; k++) {
		if (!head_names[k] || !*head_names[k] || n_classes[k] < 1 || n_classes[k] > MANIFEST_MAX_CLASSES)
			return -EINVAL;
		for (uint32_t c = 0; class_names && class_names[k] && c < n_classes[k]; c++)
			if (!class_names[k][c])
				return -EINVAL;
	}
	for (uint32_t k = 0; k < n_heads; k++) {
		ManifestHead *d = &w->heads[k];
		int64_t off = add_string(w, head_names[k]);
		if (off < 0)
			return (int)off;
		*d = (ManifestHead){.name_off = (uint64_t)off, .n_classes = n_classes[k]};
		for (uint32_t c = 0; class_names && class_names[k] && c < n_classes[k]; c++) {
			if ((off = add_string(w, class_names[k][c])) < 0)
				return (int)off;
			if (c == 0)
				d->classes_off = (uint64_t)off;
			d->n_named++;
		}
	}
	w->n_heads = n_heads;
	return 0;
}

int manifest_set_labels(ManifestWriter *w, uint64_t sample, const int32_t *labels)
{
	if (sample >= w->samples.n)
		return -EINVAL;
	for (uint32_t k = 0; k < MANIFEST_MAX_HEADS; k++) {
		int64_t lim = k < w->n_heads ? w->heads[k].n_classes : 0;
		if (labels[k] != MANIFEST_NO_LABEL && (labels[k] < 0 || labels[k] >= lim))
			return -EINVAL;
	}
	memcpy((int32_t *)w->labels.data + sample * MANIFEST_MAX_HEADS, labels, w->labels.elem);
	return 0;
}

static uint64_t align8(uint64_t x)
{
	return (x + 7) & ~(uint64_t)7;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t r = write(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		p += r, n -= (size_t)r;
	}
	return 0;
}

// A writer killed between creating its temp file and the rename leaves "<path>.tmp.<pid>"
// behind, and no later run writes that name again: remove those whose writer is gone (a live
// writer's temp, another prep writing the same manifest, is left alone).
static void sweep_dead_temps(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (slash)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) ? (int)(slash - path) : 1, path);
	else
		snprintf(dir, sizeof dir, ".");
	DIR *d = opendir(dir);
	if (!d)
		return;
	size_t bl = strlen(base);
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		if (strncmp(e->d_name, base, bl) || strncmp(e->d_name + bl, ".tmp.", 5))
			continue;
		long pid = strtol(e->d_name + bl + 5, &end, 10);
		if (*end || pid <= 0 || pid > 0x7fffffff || pid == getpid() || !proc_is_dead((int)pid, 0))
			continue;
		char full[8200];
		snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
		unlink(full);
	}
	closedir(d);
}

int manifest_write(ManifestWriter *w, const char *path)
{
	ManifestHeader h = {0};
	memcpy(h.magic, MANIFEST_MAGIC, 8);
	h.header_size = sizeof(h);
	h.n_videos = (uint32_t)w->videos.n, h.n_chunks = (uint32_t)w->chunks.n, h.n_shards = (uint32_t)w->shards.n;
	h.context = w->context, h.n_samples = w->samples.n, h.n_keyframes = w->keyframes.n;
	h.vocab_size = w->vocab_size, h.chunk_ms = w->chunk_ms, h.short_side = w->short_side;
	h.vocab_hash = w->vocab_hash;
	h.n_packets = w->packets.n;
	// version 3's labels section: the heads, then the labels right after them (48 bytes, aligned);
	// a manifest without labels has neither and stays version 2
	h.n_heads = w->n_heads;
	h.version = w->n_heads ? 3u : 2u;
	Vec heads = {w->heads, w->n_heads ? MANIFEST_MAX_HEADS : 0, MANIFEST_MAX_HEADS, sizeof(ManifestHead)};
	Vec labels = w->labels;
	labels.n = w->n_heads ? w->labels.n : 0;
	uint64_t labels_data_off = 0;
	struct {
		uint64_t *off;
		const Vec *v;
	} sec[] = {{&h.strings_off, &w->strings},     {&h.videos_off, &w->videos},   {&h.chunks_off, &w->chunks},
		   {&h.keyframes_off, &w->keyframes}, {&h.shards_off, &w->shards},   {&h.samples_off, &w->samples},
		   {&h.tokens_off, &w->tokens},       {&h.packets_off, &w->packets}, {&h.configs_off, &w->configs},
		   {&h.labels_off, &heads},           {&labels_data_off, &labels}};
	// without labels the two sections are not laid out at all (not even their alignment): a
	// manifest without labels is the version 2 file it always was, byte for byte
	const int NSEC = w->n_heads ? (int)(sizeof(sec) / sizeof(sec[0])) : (int)(sizeof(sec) / sizeof(sec[0])) - 2;
	uint64_t pos = sizeof(h);
	for (int i = 0; i < NSEC; i++) {
		pos = align8(pos);
		*sec[i].off = pos;
		pos += sec[i].v->n * sec[i].v->elem;
	}
	h.strings_size = w->strings.n;
	h.configs_size = w->configs.n;
	h.file_size = pos;
	// data checksum over exactly the bytes written after the header, padding included
	static const char zeros[8];
	uint32_t crc = 0;
	uint64_t at = sizeof(h);
	for (int i = 0; i < NSEC; i++) {
		crc = manifest_crc32(crc, zeros, *sec[i].off - at);
		crc = manifest_crc32(crc, sec[i].v->data, sec[i].v->n * sec[i].v->elem);
		at = *sec[i].off + sec[i].v->n * sec[i].v->elem;
	}
	h.data_crc = crc;
	h.header_crc = manifest_crc32(0, &h, sizeof(h));

	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	sweep_dead_temps(path);
	int fd = fs_create_new(tmp, 0644); // never through a link planted at the temporary's name
	if (fd < 0)
		return fd;
	int rc = write_all(fd, &h, sizeof(h));
	at = sizeof(h);
	for (int i = 0; i < NSEC && !rc; i++) {
		rc = write_all(fd, zeros, *sec[i].off - at);
		if (!rc)
			rc = write_all(fd, sec[i].v->data, sec[i].v->n * sec[i].v->elem);
		at = *sec[i].off + sec[i].v->n * sec[i].v->elem;
	}
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}
