// Writes a manifest with two videos (one clip crossing a chunk boundary), a tar shard with an
// image, reads it back by mmap and checks every field, keyframe lookup and clip frame mapping.
#include "manifest.h" // defines: manifest_open, manifest_clip_locate, ..., manifest_writer_new, manifest_add_*, manifest_write

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails;
#define CHECK(cond)                                                                                                    \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			printf("FAIL line %d: %s\n", __LINE__, #cond);                                                 \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

int main(void)
{
	CHECK(manifest_crc32(0, "123456789", 9) == 0xcbf43926u); // the standard CRC-32 check value
	char dir[] = "/tmp/test_manifest_XXXXXX", path[256];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/train.manifest", dir);
	ManifestWriter *w;
	CHECK(manifest_writer_new(&w, 77, 49408, 15000, 288) == 0);
	int32_t tok[77] = {49406, 320, 736, 49407}, tok2[77] = {49406, 1000, 2000, 3000, 49407};
	uint32_t kf0[] = {0, 16, 32, 48}, kf1[] = {0, 16}, kf2[] = {0};
	CHECK(manifest_add_video(w, "vid-a", 24000) == 0);
	CHECK(manifest_add_chunk(w, 0, "vid-a/0.mp4", 0, 450, 30, 1, 512, 288, kf0, 4) == 0);
	CHECK(manifest_add_chunk(w, 0, "vid-a/15.mp4", 15000, 270, 30, 1, 512, 288, kf1, 2) == 1);
	CHECK(manifest_add_video(w, "vid-b", 1000) == 1);
	CHECK(manifest_add_chunk(w, 1, "vid-b/0.mp4", 0, 25, 25, 1, 288, 512, kf2, 1) == 2);
	CHECK(manifest_add_shard(w, "shards/00000.tar", 10240) == 0);
	// inside one chunk; crossing from chunk 0 frame 440 into chunk 1 up to frame 20
	CHECK(manifest_add_clip(w, 0, 0, 30, 0, 90, tok) == 0);
	CHECK(manifest_add_clip(w, 0, 0, 440, 1, 20, tok2) == 1);
	CHECK(manifest_add_clip(w, 1, 2, 0, 2, 25, tok) == 2);
	CHECK(manifest_add_image(w, 0, 512, 3000, tok2) == 3);
	// packet indexes: chunk 1 in display order (keyframes 0, 16), chunk 2 with B-frames in decode
	// order (0 2 1 4 3 ...); both share one codec configuration, stored once
	static ManifestPacket pk1[270], pk2[25];
	const uint8_t config[] = {1, 0x64, 0, 0x1f, 0xff, 0xe1, 0, 0x19};
	for (int i = 0; i < 270; i++)
		pk1[i] = (ManifestPacket){.offset = 48 + 1000 * (uint32_t)i,
					  .size = 900,
					  .frame = (uint16_t)i,
					  .flags = MANIFEST_PKT_REF | (i == 0 || i == 16 ? MANIFEST_PKT_KEY : 0)};
	for (int i = 0; i < 25; i++) {
		int f = i == 0 ? 0 : i % 2 ? (i + 1 < 25 ? i + 1 : i) : i - 1;
		pk2[i] = (ManifestPacket){.offset = 40 + 100 * (uint32_t)i,
					  .size = 100,
					  .frame = (uint16_t)f,
					  .flags = (uint16_t)(i == 0  ? MANIFEST_PKT_KEY | MANIFEST_PKT_REF
							      : i % 2 ? MANIFEST_PKT_REF
								      : 0)};
	}
	CHECK(manifest_set_chunk_index(w, 1, MANIFEST_CODEC_H264, pk1, 270, config, sizeof(config), 270100) == 0);
	CHECK(manifest_set_chunk_index(w, 2, MANIFEST_CODEC_H264, pk2, 25, config, sizeof(config), 2600) == 0);
	CHECK(manifest_set_chunk_index(w, 2, MANIFEST_CODEC_H264, pk2, 25, config, sizeof(config), 2600) == -EINVAL);
	CHECK(manifest_write(w, path) == 0);
	manifest_writer_free(w);

	Manifest *m;
	char err[256];
	int rc = manifest_open(&m, path, err, sizeof(err));
	if (rc) {
		printf("open: %s\n", err);
		return 1;
	}
	const ManifestHeader *h = manifest_header(m);
	CHECK(h->n_videos == 2 && h->n_chunks == 3 && h->n_shards == 1 && h->n_samples == 4);
	CHECK(h->n_keyframes == 7 && h->context == 77 && h->vocab_size == 49408);
	CHECK(h->chunk_ms == 15000 && h->short_side == 288);
	CHECK(strcmp(manifest_string(m, manifest_video(m, 1)->name_off), "vid-b") == 0);
	CHECK(manifest_video(m, 0)->first_chunk == 0 && manifest_video(m, 0)->n_chunks == 2);
	CHECK(manifest_video(m, 1)->first_chunk == 2 && manifest_video(m, 1)->duration_ms == 1000);
	const ManifestChunk *c1 = manifest_chunk(m, 1);
	CHECK(strcmp(manifest_string(m, c1->path_off), "vid-a/15.mp4") == 0);
	CHECK(c1->n_frames == 270 && c1->start_ms == 15000 && c1->fps_num == 30 && c1->fps_den == 1);
	CHECK(manifest_chunk(m, 2)->width == 288 && manifest_chunk(m, 2)->height == 512);
	uint32_t nk;
	const uint32_t *kf = manifest_keyframes(m, 0, &nk);
	CHECK(nk == 4 && kf[3] == 48);
	CHECK(manifest_keyframe_at_or_before(m, 0, 0) == 0);
	CHECK(manifest_keyframe_at_or_before(m, 0, 31) == 16);
	CHECK(manifest_keyframe_at_or_before(m, 0, 32) == 32);
	CHECK(manifest_keyframe_at_or_before(m, 0, 449) == 48);
	CHECK(manifest_keyframe_at_or_before(m, 2, 24) == 0);
	// the spanning clip: 10 frames of chunk 0 (440..449), then 20 of chunk 1 (0..19)
	const ManifestSample *s = manifest_sample(m, 1);
	CHECK(s->kind == MANIFEST_KIND_CLIP && s->source == 0 && s->n_tokens == 5);
	CHECK(manifest_clip_frames(m, s) == 30);
	uint32_t ch, fr;
	CHECK(manifest_clip_locate(m, s, 0, &ch, &fr) == 0 && ch == 0 && fr == 440);
	CHECK(manifest_clip_locate(m, s, 9, &ch, &fr) == 0 && ch == 0 && fr == 449);
	CHECK(manifest_clip_locate(m, s, 10, &ch, &fr) == 0 && ch == 1 && fr == 0);
	CHECK(manifest_clip_locate(m, s, 29, &ch, &fr) == 0 && ch == 1 && fr == 19);
	CHECK(manifest_clip_locate(m, s, 30, &ch, &fr) < 0);
	CHECK(manifest_clip_frames(m, manifest_sample(m, 0)) == 60);
	const ManifestSample *img = manifest_sample(m, 3);
	CHECK(img->kind == MANIFEST_KIND_IMAGE && img->image.offset == 512 && img->image.length == 3000);
	CHECK(manifest_clip_frames(m, img) == 0 && manifest_clip_locate(m, img, 0, &ch, &fr) < 0);
	CHECK(strcmp(manifest_string(m, manifest_shard(m, 0)->path_off), "shards/00000.tar") == 0);
	const uint16_t *t = manifest_tokens(m, 1);
	CHECK(t[0] == 49406 && t[3] == 3000 && t[4] == 49407 && t[5] == 0 && t[76] == 0);
	CHECK(manifest_check_data(m, err, sizeof(err)) == 0);
	uint32_t np, cs;
	CHECK(manifest_packets(m, 0, &np) == NULL && np == 0 && manifest_codec_config(m, 0, &cs) == NULL && cs == 0);
	const ManifestPacket *rp = manifest_packets(m, 2, &np);
	CHECK(rp && np == 25 && rp[1].frame == 2 && rp[2].frame == 1 && rp[2].flags == 0 && rp[23].frame == 24 &&
	      rp[24].frame == 23);
	CHECK(manifest_chunk(m, 2)->file_size == 2600 && manifest_chunk(m, 2)->codec == MANIFEST_CODEC_H264);
	rp = manifest_packets(m, 1, &np);
	CHECK(rp && np == 270 && rp[16].flags == (MANIFEST_PKT_KEY | MANIFEST_PKT_REF) &&
	      rp[269].offset == 48 + 269000);
	const uint8_t *c1cfg = manifest_codec_config(m, 1, &cs), *c2cfg = manifest_codec_config(m, 2, &np);
	CHECK(cs == sizeof(config) && c1cfg == c2cfg && !memcmp(c1cfg, config, cs) &&
	      h->configs_size == sizeof(config));
	char full[512];
	CHECK(manifest_resolve(m, "vid-a/0.mp4", full, sizeof(full)) == 0);
	char want[512];
	snprintf(want, sizeof(want), "%s/vid-a/0.mp4", dir);
	CHECK(strcmp(full, want) == 0);
	manifest_close(m);
	unlink(path);
	rmdir(dir);
	printf("%s\n", fails ? "FAILED" : "manifest round trip: every field, keyframe and frame mapping matches");
	return fails ? 1 : 0;
}
