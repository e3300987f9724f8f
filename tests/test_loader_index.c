// The indexed path (packet index, no demuxer): bit-identical to demuxing with full filtering and
// across decoder reuse (two chunk geometries alternating on one decoder, a fresh decoder for
// the same sample); damaged media become their error codes: a chunk truncated or replaced since
// prep (size check), junk inside a needed GOP's packets, a missing file, the watchdog.
#include "loader.h"   // defines: ld_sample_load, LdFiles, LD_ERR_*, ld_error_name, ld_index_chunk, ld_index_free
#include "manifest.h" // defines: manifest_writer_new, manifest_add_*, manifest_set_chunk_index
#include "test_loader_util.h" // defines: tl_rmdir

#include <errno.h>
#include <sys/stat.h>

static char dir[256];

static void path_of(char *p, size_t n, const char *name)
{
	snprintf(p, n, "%s/%s", dir, name);
}

static void encode(const char *name, int w, int h)
{
	char p[512];
	path_of(p, sizeof(p), name);
	LdFixtureVideo v = {
		.width = w, .height = h, .n_frames = 48, .fps = 24, .gop = 12, .bframes = 3, .pattern = (uint32_t)w};
	CHECK(ld_fixture_encode(p, &v) >= 0);
}

// copy of src as dst, then cut to keep bytes / grown by grow bytes / junk over [at, at + n)
static void damaged_copy(const char *src, const char *dst, size_t keep, size_t grow, size_t at, size_t n)
{
	char a[512], b[512], err[256];
	path_of(a, sizeof(a), src), path_of(b, sizeof(b), dst);
	uint8_t *buf = NULL;
	size_t cap = 0, size = 0;
	CHECK(ld_file_read(a, 0, 0, 0, &buf, &cap, &size, err, sizeof(err)) == 0);
	buf = realloc(buf, size + grow);
	memset(buf + size, 0x5a, grow);
	for (size_t i = at; i < at + n && i < size; i++)
		buf[i] = (uint8_t)(i * 131 + 17);
	FILE *f = fopen(b, "wb");
	size_t out = keep ? keep : size + grow;
	CHECK(f && fwrite(buf, 1, out, f) == out && fclose(f) == 0);
	free(buf);
}

int main(void)
{
	ld_libav_quiet();
	if (!avcodec_find_encoder_by_name("libx264"))
		test_skip("libavcodec has no libx264 encoder to make test chunks");
	CHECK(ld_fixture_tmpdir(dir, sizeof(dir)) == 0);
	encode("a.mp4", 256, 144);
	encode("b.mp4", 320, 180);
	char pa[512], pb[512];
	path_of(pa, sizeof(pa), "a.mp4"), path_of(pb, sizeof(pb), "b.mp4");
	LdChunkIndex ia, ib;
	CHECK(ld_index_chunk(pa, &ia) == 0 && ld_index_chunk(pb, &ib) == 0);
	CHECK(ia.codec == MANIFEST_CODEC_H264 && ib.codec == MANIFEST_CODEC_H264);
	const ManifestPacket *key12 = NULL; // the key packet of the second GOP: junk goes into its middle
	for (uint32_t i = 0; i < ia.n_frames; i++)
		if (ia.packets[i].frame == 12)
			key12 = &ia.packets[i];
	CHECK(key12 && (key12->flags & MANIFEST_PKT_KEY) && key12->size > 64);
	damaged_copy("a.mp4", "trunc.mp4", (size_t)ia.file_size * 3 / 5, 0, 0, 0);
	damaged_copy("a.mp4", "grown.mp4", 0, 1000, 0, 0);
	damaged_copy("a.mp4", "junk.mp4", 0, 0, key12->offset + 16, key12->size - 32);
	// manifest: chunk records as prep wrote them before the files were damaged (a's index for all)
	const char *names[] = {"a.mp4", "b.mp4", "trunc.mp4", "grown.mp4", "junk.mp4", "missing.mp4"};
	int want[] = {0, 0, LD_ERR_TRUNCATED, LD_ERR_CORRUPT, LD_ERR_CORRUPT, LD_ERR_MISSING};
	ManifestWriter *w;
	CHECK(manifest_writer_new(&w, 77, 49408, 2000, 144) == 0);
	int32_t tok[77] = {49406, 320, 49407};
	for (int i = 0; i < 6; i++) {
		const LdChunkIndex *x = i == 1 ? &ib : &ia;
		CHECK(manifest_add_video(w, names[i], 2000) == i);
		CHECK(manifest_add_chunk(w, (uint32_t)i, names[i], 0, x->n_frames, 24, 1, x->width, x->height,
					 x->keyframes, x->n_keyframes) == i);
		CHECK(manifest_set_chunk_index(w, (uint32_t)i, x->codec, x->packets, x->n_frames, x->config,
					       x->config_size, x->file_size) == 0);
		CHECK(manifest_add_clip(w, (uint32_t)i, (uint32_t)i, 0, (uint32_t)i, x->n_frames, tok) == i);
	}
	char mp[512], err[512];
	path_of(mp, sizeof(mp), "manifest.bin");
	CHECK(manifest_write(w, mp) == 0);
	manifest_writer_free(w);
	Manifest *m;
	CHECK(manifest_open(&m, mp, err, sizeof(err)) == 0);
	LdDecoder *d, *fresh;
	CHECK(ld_decoder_new(&d) == 0 && ld_decoder_new(&fresh) == 0);
	LdParams p;
	ld_params_default(&p);
	p.train = 0, p.frames = 16, p.out_w = p.out_h = 64;
	size_t bytes = (size_t)p.frames * 64 * 64 * 3;
	uint8_t *x = malloc(bytes), *y = malloc(bytes);
	LdFiles f = {0};
	LdPlan plan;
	for (uint64_t s = 0; s < 6; s++) {
		err[0] = 0;
		int rc = -ld_sample_load(d, &f, m, s, &p, &plan, x, err, sizeof(err));
		printf("%-10s %-10s %s\n", names[s], ld_error_name(rc), err);
		CHECK(rc == want[s] && (rc == 0 || strlen(err) > 5));
		CHECK(plan.src[0].indexed);
	}
	// one decoder alternating geometries (and recovering from the errors above) = a fresh decoder;
	// full filtering = demuxing the whole file
	for (int round = 0; round < 4; round++)
		for (uint64_t s = 0; s < 2; s++) {
			CHECK(ld_sample_load(d, &f, m, s, &p, &plan, x, err, sizeof(err)) == 0);
			CHECK(ld_sample_load(fresh, &f, m, s, &p, &plan, y, err, sizeof(err)) == 0);
			CHECK(!memcmp(x, y, bytes));
			ld_decoder_free(fresh);
			CHECK(ld_decoder_new(&fresh) == 0);
		}
	p.loop_filter = LD_LOOP_FILTER_ALL;
	for (uint64_t s = 0; s < 2; s++) {
		CHECK(ld_sample_load(d, &f, m, s, &p, &plan, x, err, sizeof(err)) == 0 && plan.src[0].indexed);
		p.demux = 1;
		CHECK(ld_sample_load(d, &f, m, s, &p, &plan, y, err, sizeof(err)) == 0 && !plan.src[0].indexed);
		p.demux = 0;
		CHECK(!memcmp(x, y, bytes));
	}
	// frames decoded for 2 needed ones: never more from the index than demuxing with seeks and
	// skip_frame=nonref, far fewer than decoding everything up to the last one
	uint64_t fr[3];
	p.frames = 2;
	for (int k = 0; k < 3; k++) {
		p.demux = k > 0, p.no_seek = k == 2, p.mode = k == 2 ? LD_MODE_NAIVE : LD_MODE_FUSED;
		uint64_t f0 = ld_decoder_frames(d);
		CHECK(ld_sample_load(d, &f, m, 0, &p, &plan, x, err, sizeof(err)) == 0);
		fr[k] = ld_decoder_frames(d) - f0;
	}
	printf("2 frames of a 48-frame chunk: %llu frames decoded from the index, %llu demuxing with seeks, %llu "
	       "decoding everything up to the last\n",
	       (unsigned long long)fr[0], (unsigned long long)fr[1], (unsigned long long)fr[2]);
	CHECK(fr[0] <= fr[1] && 2 * fr[0] < fr[2]);
	p.demux = 0, p.no_seek = 0, p.frames = 16, p.mode = LD_MODE_FUSED;
	p.timeout_ms = 1; // the watchdog between packets
	int rc = -ld_sample_load(d, &f, m, 1, &p, &plan, x, err, sizeof(err));
	printf("watchdog: %s %s\n", ld_error_name(rc), err);
	CHECK(rc == LD_ERR_TIMEOUT);
	ld_files_free(&f);
	free(x), free(y);
	ld_index_free(&ia), ld_index_free(&ib);
	ld_decoder_free(d), ld_decoder_free(fresh);
	manifest_close(m);
	tl_rmdir(dir);
	return 0;
}
