// Version 1 -> 2 conversion. Version 1 differs only in its header (no packet and configuration
// sections) and chunk record (no index fields); videos, shards, samples and tokens have the
// current layout. Its frozen layout is spelled out here, checked (checksums, section bounds,
// record references) and replayed through the manifest writer: chunk by chunk in order with the
// packet index ld_index_chunk finds (the chunk must still have the frame count and keyframes
// the old manifest recorded), then shards and samples in order, so every index stays the same.
#include "prep_upgrade.h" // defines: prep_upgrade, ManifestV1Header, ManifestV1Chunk
#include "fs_dir.h"       // defines: fs_open_regular, fs_strerror

#include "loader.h"   // defines: ld_index_chunk, ld_index_free, LdChunkIndex
#include "log.h"      // defines: log_info, log_warnx
#include "manifest.h" // defines: manifest_writer_new, manifest_add_*, manifest_set_chunk_index, manifest_write

#include <errno.h>
#include <libavutil/error.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
	const uint8_t *base;
	size_t size;
	const ManifestV1Header *h;
	char dir[4096];
} V1;

static int section(const ManifestV1Header *h, uint64_t off, uint64_t count, uint64_t elem)
{
	return off % 8 == 0 && off >= sizeof(ManifestV1Header) && off <= h->file_size &&
	       count <= (h->file_size - off) / elem;
}

static const char *v1_check(const V1 *v)
{
	const ManifestV1Header *h = v->h;
	ManifestV1Header copy = *h;
	copy.header_crc = 0;
	if (v->size < sizeof(ManifestV1Header) || h->header_size != sizeof(ManifestV1Header) ||
	    manifest_crc32(0, &copy, sizeof(copy)) != h->header_crc)
		return "version 1 header damaged";
	if (h->file_size != v->size ||
	    manifest_crc32(0, v->base + sizeof(ManifestV1Header), v->size - sizeof(ManifestV1Header)) != h->data_crc)
		return "truncated or damaged (checksum mismatch)";
	if (h->context < 2 || h->context > 4096 || !section(h, h->strings_off, h->strings_size, 1) ||
	    !section(h, h->videos_off, h->n_videos, sizeof(ManifestVideo)) ||
	    !section(h, h->chunks_off, h->n_chunks, sizeof(ManifestV1Chunk)) ||
	    !section(h, h->keyframes_off, h->n_keyframes, 4) ||
	    !section(h, h->shards_off, h->n_shards, sizeof(ManifestShard)) ||
	    !section(h, h->samples_off, h->n_samples, sizeof(ManifestSample)) ||
	    !section(h, h->tokens_off, h->n_samples, (uint64_t)h->context * 2) ||
	    (h->strings_size && v->base[h->strings_off + h->strings_size - 1]))
		return "sections outside the file";
	const ManifestV1Chunk *c = (const ManifestV1Chunk *)(v->base + h->chunks_off);
	for (uint32_t i = 0; i < h->n_chunks; i++)
		if (c[i].path_off >= h->strings_size || c[i].video >= h->n_videos || c[i].kf_first > h->n_keyframes ||
		    c[i].kf_count > h->n_keyframes - c[i].kf_first)
			return "a chunk refers outside its tables";
	const ManifestVideo *vd = (const ManifestVideo *)(v->base + h->videos_off);
	const ManifestShard *sh = (const ManifestShard *)(v->base + h->shards_off);
	for (uint32_t i = 0; i < h->n_videos; i++)
		if (vd[i].name_off >= h->strings_size)
			return "a video name outside the string table";
	for (uint32_t i = 0; i < h->n_shards; i++)
		if (sh[i].path_off >= h->strings_size)
			return "a shard path outside the string table";
	return NULL;
}

typedef struct {
	const V1 *v;
	LdChunkIndex *ix;
	int *rc;
	uint32_t first, n, next;
	pthread_mutex_t mu;
} Batch;

static void *index_worker(void *arg)
{
	Batch *b = arg;
	const ManifestV1Chunk *c = (const ManifestV1Chunk *)(b->v->base + b->v->h->chunks_off);
	for (;;) {
		pthread_mutex_lock(&b->mu);
		uint32_t i = b->next < b->n ? b->next++ : UINT32_MAX;
		pthread_mutex_unlock(&b->mu);
		if (i == UINT32_MAX)
			return NULL;
		const char *name = (const char *)b->v->base + b->v->h->strings_off + c[b->first + i].path_off;
		char full[8192];
		snprintf(full, sizeof(full), "%s/%s", name[0] == '/' ? "" : b->v->dir, name);
		b->rc[i] = ld_index_chunk(name[0] == '/' ? name : full, &b->ix[i]);
	}
}

// adds chunk i (version 1 record c) with the index ix found for it
static int add_chunk(ManifestWriter *w, const V1 *v, uint32_t i, const ManifestV1Chunk *c, int rc, LdChunkIndex *ix,
		     uint32_t *unindexed)
{
	const char *name = (const char *)v->base + v->h->strings_off + c->path_off;
	const uint32_t *kf = (const uint32_t *)(v->base + v->h->keyframes_off) + c->kf_first;
	if (rc < 0) {
		log_warnx("chunk %u (%s) cannot be read: %s", i, name, av_err2str(rc));
		return -EIO;
	}
	if (ix->n_frames != c->n_frames || ix->n_keyframes != c->kf_count ||
	    memcmp(ix->keyframes, kf, c->kf_count * sizeof(uint32_t))) {
		log_warnx(
			"chunk %u (%s) has %u frames and %u keyframes, the manifest says %u and %u: changed since prep "
			"(run prep again instead)",
			i, name, ix->n_frames, ix->n_keyframes, c->n_frames, c->kf_count);
		return -EINVAL;
	}
	int64_t id = manifest_add_chunk(w, c->video, name, c->start_ms, c->n_frames, c->fps_num, c->fps_den, c->width,
					c->height, kf, c->kf_count);
	if (id != (int64_t)i) {
		log_warnx("chunk %u (%s) refused by the manifest writer (chunks out of video order?)", i, name);
		return -EINVAL;
	}
	if (ix->codec == MANIFEST_CODEC_NONE) {
		(*unindexed)++;
		return 0;
	}
	return manifest_set_chunk_index(w, i, ix->codec, ix->packets, ix->n_frames, ix->config, ix->config_size,
					ix->file_size);
}

// videos and chunks: each video before its chunks, chunks indexed in parallel batches
static int replay_chunks(ManifestWriter *w, const V1 *v, int jobs, uint32_t *unindexed)
{
	const ManifestV1Header *h = v->h;
	const ManifestVideo *vd = (const ManifestVideo *)(v->base + h->videos_off);
	const ManifestV1Chunk *c = (const ManifestV1Chunk *)(v->base + h->chunks_off);
	enum { BATCH = 512 };
	LdChunkIndex *ix = calloc(BATCH, sizeof(LdChunkIndex));
	int *rcs = calloc(BATCH, sizeof(int)), rc = ix && rcs ? 0 : -ENOMEM;
	uint32_t video = 0;
	for (uint32_t first = 0; first < h->n_chunks && !rc; first += BATCH) {
		Batch b = {.v = v,
			   .ix = ix,
			   .rc = rcs,
			   .first = first,
			   .n = h->n_chunks - first < BATCH ? h->n_chunks - first : BATCH};
		pthread_mutex_init(&b.mu, NULL);
		pthread_t th[64];
		int nt = jobs < 1 ? 1 : jobs > 64 ? 64 : jobs;
		for (int t = 0; t < nt; t++)
			pthread_create(&th[t], NULL, index_worker, &b);
		for (int t = 0; t < nt; t++)
			pthread_join(th[t], NULL);
		pthread_mutex_destroy(&b.mu);
		for (uint32_t k = 0; k < b.n; k++) {
			uint32_t i = first + k;
			for (; !rc && video <= c[i].video; video++)
				if (manifest_add_video(w, (const char *)v->base + h->strings_off + vd[video].name_off,
						       vd[video].duration_ms) != (int64_t)video)
					rc = -EINVAL;
			if (!rc)
				rc = add_chunk(w, v, i, &c[i], rcs[k], &ix[k], unindexed);
			ld_index_free(&ix[k]);
		}
		if (first + BATCH < h->n_chunks)
			log_info("indexed %u of %u chunks", first + BATCH, h->n_chunks);
	}
	for (; !rc && video < h->n_videos; video++) // videos without chunks
		if (manifest_add_video(w, (const char *)v->base + h->strings_off + vd[video].name_off,
				       vd[video].duration_ms) < 0)
			rc = -EINVAL;
	free(ix);
	free(rcs);
	return rc;
}

static int replay_samples(ManifestWriter *w, const V1 *v)
{
	const ManifestV1Header *h = v->h;
	const ManifestShard *sh = (const ManifestShard *)(v->base + h->shards_off);
	for (uint32_t i = 0; i < h->n_shards; i++)
		if (manifest_add_shard(w, (const char *)v->base + h->strings_off + sh[i].path_off, sh[i].size) !=
		    (int64_t)i)
			return -EINVAL;
	const ManifestSample *s = (const ManifestSample *)(v->base + h->samples_off);
	const uint16_t *tok = (const uint16_t *)(v->base + h->tokens_off);
	int32_t ids[4096];
	for (uint64_t i = 0; i < h->n_samples; i++) {
		for (uint32_t k = 0; k < h->context; k++)
			ids[k] = tok[i * h->context + k];
		int64_t rc = s[i].kind == MANIFEST_KIND_CLIP
				     ? manifest_add_clip(w, s[i].source, s[i].clip.chunk_first, s[i].clip.frame_begin,
							 s[i].clip.chunk_last, s[i].clip.frame_end, ids)
			     : s[i].kind == MANIFEST_KIND_IMAGE
				     ? manifest_add_image(w, s[i].source, s[i].image.offset, s[i].image.length, ids)
				     : -EINVAL;
		if (rc != (int64_t)i) {
			log_warnx("sample %llu refused by the manifest writer (%s)", (unsigned long long)i,
				  strerror(rc < 0 ? (int)-rc : EINVAL));
			return -EINVAL;
		}
	}
	return 0;
}

static int open_v1(V1 *v, const char *path)
{
	struct stat st;
	int fd = fs_open_regular(path, &st); // a FIFO at path must not block the open
	if (fd < 0) {
		log_warnx("%s: %s", path, fs_strerror(-fd));
		return -1;
	}
	v->size = (size_t)st.st_size;
	v->base = v->size >= 16 ? mmap(NULL, v->size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	close(fd);
	if (v->base == MAP_FAILED) {
		log_warnx("%s: not a manifest", path);
		return -1;
	}
	v->h = (const ManifestV1Header *)v->base;
	const char *slash = strrchr(path, '/');
	snprintf(v->dir, sizeof(v->dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	return 0;
}

int prep_upgrade(const char *path, int jobs)
{
	V1 v = {0};
	if (open_v1(&v, path) < 0)
		return 1;
	int status = 1;
	const char *why = memcmp(v.h->magic, MANIFEST_MAGIC, 8) ? "not a manifest" : NULL;
	if (!why && v.h->version >= MANIFEST_VERSION_MIN && v.h->version <= MANIFEST_VERSION) {
		log_info("%s is already version %u (nothing to convert)", path, v.h->version);
		status = 0;
		goto out;
	}
	if (!why && v.h->version != 1)
		why = "a version this build does not know";
	if (!why)
		why = v1_check(&v);
	if (why) {
		log_warnx("%s: %s", path, why);
		goto out;
	}
	ManifestWriter *w;
	if (manifest_writer_new(&w, v.h->context, v.h->vocab_size, v.h->chunk_ms, v.h->short_side) < 0) {
		log_warnx("%s: context or vocabulary out of range", path);
		goto out;
	}
	uint32_t unindexed = 0;
	int rc = replay_chunks(w, &v, jobs, &unindexed);
	if (!rc)
		rc = replay_samples(w, &v);
	char backup[4200];
	snprintf(backup, sizeof(backup), "%s.v1", path);
	if (!rc && (unlink(backup), link(path, backup)) < 0)
		rc = -errno;
	if (!rc)
		rc = manifest_write(w, path);
	manifest_writer_free(w);
	if (rc) {
		log_warnx("%s: not upgraded (%s)", path, strerror(-rc));
		goto out;
	}
	log_info("%s: now version %u; %u chunks indexed, %u without a packet index (the loader demuxes those); the "
		 "version 1 file is kept as %s",
		 path, MANIFEST_VERSION_MIN, v.h->n_chunks - unindexed, unindexed, backup); // no labels: version 2
	status = 0;
out:
	munmap((void *)v.base, v.size);
	return status;
}
