// Builds benchmark datasets the way tools/prep lays them out: per video one camera-like source,
// cut into chunks encoded with prep_encoder (closed GOP, +faststart), each indexed with
// ld_index_chunk and recorded with its packet index, then clip samples with placeholder captions.
#include "bench_data.h" // defines: bench_data_make

#include "camsrc.h"   // defines: cam_new, cam_render, cam_free
#include "loader.h"   // defines: ld_index_chunk, ld_index_free
#include "manifest.h" // defines: manifest_writer_new, manifest_add_*, manifest_set_chunk_index

#include <errno.h>
#include <libavutil/error.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void caption(int32_t *tok, int k)
{
	memset(tok, 0, 77 * sizeof(*tok));
	tok[0] = 49406;
	tok[1] = 320 + k % 1000;
	tok[2] = 49407;
}

typedef struct {
	const CamSource *cs;
	int first;
} Paint;

static void paint(void *ctx, int i, AVFrame *f)
{
	const Paint *p = ctx;
	cam_render(p->cs, p->first + i, f);
}

// encodes frames [first, first + frames_per_chunk) of the source into path
static int encode_chunk(const char *path, const CamSource *cs, int first, const BenchDataOpts *o)
{
	PrepEncodeOpts eo = o->enc;
	eo.width = o->width, eo.height = o->height, eo.fps_num = o->fps, eo.fps_den = 1, eo.faststart = 1;
	Paint p = {cs, first};
	return prep_encode_frames(path, &eo, o->frames_per_chunk, paint, &p);
}

static int add_chunk(ManifestWriter *w, uint32_t vid, const char *dir, const char *rel, uint32_t start_ms, char *err,
		     size_t errlen)
{
	char path[1200];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	LdChunkIndex ix;
	int rc = ld_index_chunk(path, &ix);
	if (rc < 0) {
		snprintf(err, errlen, "indexing %s: %s", path, av_err2str(rc));
		return -EIO;
	}
	int64_t ci = manifest_add_chunk(w, vid, rel, start_ms, ix.n_frames, ix.fps_num, ix.fps_den, ix.width, ix.height,
					ix.keyframes, ix.n_keyframes);
	if (ci >= 0 && ix.codec != MANIFEST_CODEC_NONE)
		rc = manifest_set_chunk_index(w, (uint32_t)ci, ix.codec, ix.packets, ix.n_frames, ix.config,
					      ix.config_size, ix.file_size);
	else if (ix.codec == MANIFEST_CODEC_NONE)
		snprintf(err, errlen, "%s: no packet index: %s", path, ix.why), rc = -EINVAL;
	ld_index_free(&ix);
	if (ci < 0 || rc < 0) {
		if (!err[0])
			snprintf(err, errlen, "%s: refused by the manifest writer", path);
		return ci < 0 ? (int)ci : rc;
	}
	return (int)ci;
}

static int add_clips(ManifestWriter *w, uint32_t vid, int ci, int k, const BenchDataOpts *o, uint32_t *rng)
{
	int32_t tok[77];
	uint32_t n = (uint32_t)o->frames_per_chunk;
	int rc = 0;
	if (o->clip_frames > 0) {
		uint32_t len = (uint32_t)o->clip_frames < n ? (uint32_t)o->clip_frames : n;
		for (int s = 0; s < 32 && rc >= 0; s++) {
			*rng = *rng * 1664525u + 1013904223u;
			uint32_t a = (*rng >> 8) % (n - len + 1);
			caption(tok, ci * 40 + s);
			rc = (int)manifest_add_clip(w, vid, (uint32_t)ci, a, (uint32_t)ci, a + len, tok);
		}
		return rc;
	}
	uint32_t spans[3][2] = {{0, n / 2}, {n / 4, 3 * n / 4}, {n / 2, n}};
	for (int s = 0; s < 3 && rc >= 0; s++) {
		caption(tok, ci * 10 + s);
		rc = (int)manifest_add_clip(w, vid, (uint32_t)ci, spans[s][0], (uint32_t)ci, spans[s][1], tok);
	}
	if (k > 0 && rc >= 0) { // across the boundary with the previous chunk
		caption(tok, ci * 10 + 9);
		rc = (int)manifest_add_clip(w, vid, (uint32_t)ci - 1, 3 * n / 4, (uint32_t)ci, n / 4, tok);
	}
	return rc;
}

int bench_data_make(const char *dir, const BenchDataOpts *o, char *err, size_t errlen)
{
	err[0] = 0;
	char path[1200];
	snprintf(path, sizeof(path), "%s/chunks", dir);
	if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || (mkdir(path, 0755) < 0 && errno != EEXIST)) {
		snprintf(err, errlen, "cannot create %s", path);
		return -errno;
	}
	ManifestWriter *w;
	int rc = manifest_writer_new(&w, 77, 49408, (uint32_t)(o->frames_per_chunk * 1000 / o->fps),
				     (uint32_t)o->height);
	if (rc)
		return rc;
	uint32_t rng = o->seed * 2654435761u + 1;
	for (int v = 0; v < o->videos && rc >= 0; v++) {
		char name[32], rel[64];
		snprintf(name, sizeof(name), "vid%02d", v);
		int64_t vid = manifest_add_video(w, name,
						 (uint64_t)o->chunks_per_video * o->frames_per_chunk * 1000 / o->fps);
		CamSource *cs = NULL;
		rc = vid < 0 ? (int)vid : cam_new(&cs, o->width, o->height, o->fps, o->seed + (uint32_t)v);
		for (int k = 0; k < o->chunks_per_video && rc >= 0; k++) {
			snprintf(rel, sizeof(rel), "chunks/%s_%d.mp4", name, k);
			snprintf(path, sizeof(path), "%s/%s", dir, rel);
			int e = encode_chunk(path, cs, k * o->frames_per_chunk, o);
			if (e < 0) {
				snprintf(err, errlen, "encoding %s: %s", path, av_err2str(e));
				rc = -EIO;
				break;
			}
			int ci = add_chunk(w, (uint32_t)vid, dir, rel,
					   (uint32_t)((uint64_t)k * o->frames_per_chunk * 1000 / o->fps), err, errlen);
			rc = ci < 0 ? ci : add_clips(w, (uint32_t)vid, ci, k, o, &rng);
		}
		cam_free(cs);
	}
	snprintf(path, sizeof(path), "%s/manifest.bin", dir);
	if (rc >= 0 && (rc = manifest_write(w, path)) < 0)
		snprintf(err, errlen, "writing %s: %s", path, strerror(-rc));
	else if (rc < 0 && !err[0])
		snprintf(err, errlen, "building the manifest: %s", strerror(-rc));
	manifest_writer_free(w);
	return rc < 0 ? rc : 0;
}
