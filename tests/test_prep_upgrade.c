// tools/prep --upgrade: a version 1 manifest (made here from a current one by writing the
// version 1 layout) converts back to the very same bytes, its old file kept; a chunk changed
// since the manifest was written stops the upgrade and leaves the file as it was; the loader's
// own error for a version 1 file names the command.
#include "../tools/prep_upgrade.h" // defines: prep_upgrade, ManifestV1Header, ManifestV1Chunk
#include "loader.h"                // defines: ld_file_read, ld_libav_quiet, Manifest, manifest_*
#include "log.h"                   // defines: log_init
#include "test_loader_util.h"      // defines: tl_dataset, tl_rmdir

#include <sys/stat.h>

static uint8_t *slurp(const char *path, size_t *n)
{
	uint8_t *b = NULL;
	size_t cap = 0;
	char err[256];
	CHECK(ld_file_read(path, 0, 0, 0, &b, &cap, n, err, sizeof(err)) == 0);
	return b;
}

// writes the version 1 layout of the manifest in m (the sections it shares, chunks without index fields)
static void write_v1(const Manifest *m, const uint8_t *img, const char *path)
{
	const ManifestHeader *h = manifest_header(m);
	CHECK(h->n_chunks < 64);
	ManifestV1Chunk chunks[64] = {{0}};
	for (uint32_t i = 0; i < h->n_chunks; i++) // the first 44 bytes of a chunk record are version 1's
		memcpy(&chunks[i], manifest_chunk(m, i), 44);
	struct {
		const void *p;
		uint64_t n;
	} sec[] = {{img + h->strings_off, h->strings_size},
		   {img + h->videos_off, h->n_videos * sizeof(ManifestVideo)},
		   {chunks, sizeof(ManifestV1Chunk) * h->n_chunks},
		   {img + h->keyframes_off, h->n_keyframes * 4},
		   {img + h->shards_off, h->n_shards * sizeof(ManifestShard)},
		   {img + h->samples_off, h->n_samples * sizeof(ManifestSample)},
		   {img + h->tokens_off, h->n_samples * h->context * 2ull}};
	ManifestV1Header v = {.version = 1,
			      .header_size = 160,
			      .n_videos = h->n_videos,
			      .n_chunks = h->n_chunks,
			      .n_shards = h->n_shards,
			      .context = h->context,
			      .n_samples = h->n_samples,
			      .n_keyframes = h->n_keyframes,
			      .vocab_size = h->vocab_size,
			      .chunk_ms = h->chunk_ms,
			      .short_side = h->short_side,
			      .strings_size = h->strings_size};
	uint64_t *offs[7] = {&v.strings_off, &v.videos_off,  &v.chunks_off, &v.keyframes_off,
			     &v.shards_off,  &v.samples_off, &v.tokens_off};
	memcpy(v.magic, MANIFEST_MAGIC, 8);
	static uint8_t out[1 << 20];
	uint64_t pos = 160;
	for (int i = 0; i < 7; i++) {
		pos = (pos + 7) & ~7ull;
		*offs[i] = pos;
		CHECK(pos + sec[i].n < sizeof(out));
		memcpy(out + pos, sec[i].p, sec[i].n);
		pos += sec[i].n;
	}
	v.file_size = pos;
	v.data_crc = manifest_crc32(0, out + 160, pos - 160);
	v.header_crc = manifest_crc32(0, &v, sizeof(v));
	memcpy(out, &v, sizeof(v));
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(out, 1, pos, f) == pos && fclose(f) == 0);
}

int main(void)
{
	log_init("test_prep_upgrade", LOG_WARN);
	ld_libav_quiet();
	char dir[256], mpath[300], v1path[320], err[512];
	LdFixtureOpts o = {.videos = 2,
			   .chunks_per_video = 2,
			   .width = 256,
			   .height = 144,
			   .fps = 24,
			   .frames_per_chunk = 36,
			   .gop = 12,
			   .bframes = 2,
			   .images = 2};
	tl_dataset(dir, sizeof(dir), &o);
	snprintf(mpath, sizeof(mpath), "%s/manifest.bin", dir);
	snprintf(v1path, sizeof(v1path), "%s.v1", mpath);
	size_t n2, n1, nu;
	uint8_t *v2 = slurp(mpath, &n2);
	Manifest *m;
	CHECK(manifest_open(&m, mpath, err, sizeof(err)) == 0);
	for (uint32_t i = 0; i < manifest_header(m)->n_chunks; i++)
		CHECK(manifest_chunk(m, i)->codec == MANIFEST_CODEC_H264);
	write_v1(m, v2, mpath);
	manifest_close(m);
	CHECK(manifest_open(&m, mpath, err, sizeof(err)) == -EPROTONOSUPPORT && strstr(err, "prep --upgrade"));
	printf("version 1 at open: %s\n", err);
	uint8_t *old = slurp(mpath, &n1);

	// a chunk re-encoded with other frames since: the upgrade refuses and changes nothing
	char chunk[400], saved[420];
	snprintf(chunk, sizeof(chunk), "%s/chunks/vid01_1.mp4", dir);
	snprintf(saved, sizeof(saved), "%s.saved", chunk);
	CHECK(rename(chunk, saved) == 0);
	LdFixtureVideo fv = {.width = 256, .height = 144, .n_frames = 30, .fps = 24, .gop = 12};
	CHECK(ld_fixture_encode(chunk, &fv) >= 0);
	CHECK(prep_upgrade(mpath, 2) == 1);
	size_t nb;
	uint8_t *same = slurp(mpath, &nb);
	CHECK(nb == n1 && !memcmp(same, old, n1) && access(v1path, F_OK) != 0);
	free(same);
	CHECK(rename(saved, chunk) == 0);

	// the real upgrade: the same bytes the current writer made, the old file kept
	CHECK(prep_upgrade(mpath, 2) == 0);
	uint8_t *up = slurp(mpath, &nu), *kept = slurp(v1path, &nb);
	CHECK(nu == n2 && !memcmp(up, v2, n2));
	CHECK(nb == n1 && !memcmp(kept, old, n1));
	CHECK(prep_upgrade(mpath, 2) == 0); // already current: nothing to do
	printf("version 1 (%zu bytes) upgraded to the identical version 2 manifest (%zu bytes)\n", n1, nu);
	free(v2), free(old), free(up), free(kept);
	tl_rmdir(dir);
	return 0;
}
