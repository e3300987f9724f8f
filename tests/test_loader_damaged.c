// Damaged media never becomes a sample: frames that decode with errors (a burst of inverted
// bytes inside one packet of a chunk) and the frames predicted from them up to the next
// keyframe are a corrupt error, on the demux path and on the packet-index path (reused decoder
// contexts), while frames of clean GOPs of the same chunk still decode; a truncated or
// byte-flipped JPEG and a truncated PNG are corrupt too (a truncated JPEG used to decode as an image whose
// missing part was filled with one colour). Damaged inputs are made here from clean ones.
#include "loader.h" // defines: ld_decode_video, ld_image_load, LdDecoder, LD_ERR_*, ld_error_name, LdChunkIndex, ld_index_chunk, ld_index_free
#include "test_loader_util.h" // defines: tl_rmdir, tl_packet_of, test_file_read

#include <libavformat/avformat.h>

// ix NULL: the demux path; else the packet-index path with ix's packets (decoder contexts reused)
static int decode(LdDecoder *d, const LdChunkIndex *ix, const uint8_t *buf, size_t n, const uint32_t *frames, int nf,
		  char *err, size_t errlen)
{
	static uint32_t kf[] = {0, 16, 32, 48, 64, 80};
	LdChunkInfo ci = {.n_frames = 96,
			  .fps_num = 24,
			  .fps_den = 1,
			  .width = 128,
			  .height = 96,
			  .keyframes = kf,
			  .n_keyframes = 6};
	if (ix) {
		ci.packets = ix->packets;
		ci.config = ix->config;
		ci.config_size = ix->config_size;
	}
	LdBuffer b = {buf, n, 0};
	static uint8_t out[64][32 * 32 * 3];
	uint8_t *dst[64];
	for (int i = 0; i < nf; i++)
		dst[i] = out[i];
	LdDecodeOpts o = {.mode = LD_MODE_FUSED, .out_w = 32, .out_h = 32, .crop = {0, 0, 128, 96, 0}, .threads = 1};
	err[0] = 0;
	return -ld_decode_video(d, &b, 1, &ci, frames, nf, dst, &o, err, errlen);
}

static int image(LdDecoder *d, const uint8_t *b, size_t n, char *err, size_t errlen)
{
	int w, h;
	err[0] = 0;
	return -ld_image_load(d, b, n, &w, &h, 0, err, errlen);
}

int main(void)
{
	ld_libav_quiet();
	if (!avcodec_find_encoder_by_name("libx264") || !avcodec_find_encoder_by_name("mjpeg"))
		test_skip("libavcodec lacks the libx264 or mjpeg encoder for test inputs");
	char dir[256], path[512], err[256];
	CHECK(ld_fixture_tmpdir(dir, sizeof dir) == 0);
	snprintf(path, sizeof path, "%s/chunk.mp4", dir);
	LdFixtureVideo v = {.width = 128, .height = 96, .n_frames = 96, .fps = 24, .gop = 16, .texture = 40};
	CHECK(ld_fixture_encode(path, &v) >= 0);
	size_t n;
	uint8_t *good = test_file_read(path, &n), *bad = malloc(n);
	CHECK(good);
	int64_t pos;
	int size = 0;
	tl_packet_of(path, 40, &pos, &size); // a P-frame in the GOP of frames 32..47
	memcpy(bad, good, n);
	for (int k = 0; k < 16; k++) // a burst of inverted bytes inside the slice data (as a bad sector leaves)
		bad[pos + size / 2 + k] ^= 0xff;
	LdDecoder *d;
	CHECK(ld_decoder_new(&d) == 0);

	struct {
		const char *what;
		uint32_t frames[4];
		int nf, want;
	} cases[] = {
		{"frames before the damage", {0, 10, 31, 39}, 4, 0},
		{"the damaged frame", {40}, 1, LD_ERR_CORRUPT},
		{"a frame predicted from it", {45}, 1, LD_ERR_CORRUPT},
		{"the next GOP", {48, 60}, 2, 0},
		{"a clip across the damage", {20, 36, 44, 60}, 4, LD_ERR_CORRUPT},
	};
	uint32_t all[64];
	for (int i = 0; i < 64; i++)
		all[i] = (uint32_t)i;
	// both decode paths: demuxing the file, and the packet index (the damage does not move a byte)
	LdChunkIndex ix;
	CHECK(ld_index_chunk(path, &ix) == 0);
	CHECK(ix.codec == MANIFEST_CODEC_H264 && ix.n_frames == 96 && ix.n_keyframes == 6);
	for (int path_i = 0; path_i < 2; path_i++) {
		const LdChunkIndex *x = path_i ? &ix : NULL;
		CHECK(decode(d, x, good, n, all, 64, err, sizeof err) == 0); // the clean chunk decodes whole
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			int rc = decode(d, x, bad, n, cases[i].frames, cases[i].nf, err, sizeof err);
			printf("%-8s %-28s %-8s %s\n", x ? "indexed" : "demuxed", cases[i].what, ld_error_name(rc),
			       err);
			CHECK(rc == cases[i].want);
			CHECK(rc == 0 || strlen(err) > 10);
		}
		// the decoder context a damaged chunk used is not reused in an unknown state
		CHECK(decode(d, x, good, n, all, 64, err, sizeof err) == 0);
	}
	ld_index_free(&ix);

	// a frame rate the stream does not have (a manifest made by hand): a clear error, no
	// endless seeking, with the watchdog off
	{
		static uint32_t kf[] = {0, 16, 32, 48, 64, 80};
		LdChunkInfo ci = {.n_frames = 96,
				  .fps_num = 1,
				  .fps_den = 1,
				  .width = 128,
				  .height = 96,
				  .keyframes = kf,
				  .n_keyframes = 6};
		static uint8_t o1[32 * 32 * 3], o2[32 * 32 * 3];
		uint8_t *dst[] = {o1, o2};
		uint32_t fr[] = {20, 40};
		LdDecodeOpts o = {
			.mode = LD_MODE_FUSED, .out_w = 32, .out_h = 32, .crop = {0, 0, 128, 96, 0}, .threads = 1};
		alarm(20);
		LdBuffer b = {good, n, 0};
		int rc = -ld_decode_video(d, &b, 1, &ci, fr, 2, dst, &o, err, sizeof err);
		alarm(0);
		printf("%-28s %-8s %s\n", "manifest rate 1/1", ld_error_name(rc), err);
		CHECK(rc == LD_ERR_MANIFEST && strstr(err, "the stream runs at 24.000 fps, the manifest says 1/1"));
	}

	// images: truncated and byte-flipped JPEG, truncated PNG
	uint8_t *jpg, *png;
	size_t njpg, npng;
	CHECK(ld_fixture_image("mjpeg", 200, 150, 3, &jpg, &njpg) == 0);
	CHECK(ld_fixture_image("png", 200, 150, 3, &png, &npng) == 0);
	CHECK(image(d, jpg, njpg, err, sizeof err) == 0 && image(d, png, npng, err, sizeof err) == 0);
	int rc = image(d, jpg, njpg * 8 / 10, err, sizeof err);
	printf("%-28s %-8s %s\n", "JPEG cut at 80%", ld_error_name(rc), err);
	CHECK(rc == LD_ERR_CORRUPT);
	uint8_t *flip = malloc(njpg);
	memcpy(flip, jpg, njpg);
	for (int k = 0; k < 8; k++)
		flip[njpg / 3 + (size_t)k * 37] ^= 0x10;
	rc = image(d, flip, njpg, err, sizeof err);
	printf("%-28s %-8s %s\n", "JPEG with flipped bytes", ld_error_name(rc), err);
	CHECK(rc == LD_ERR_CORRUPT);
	rc = image(d, png, npng / 2, err, sizeof err);
	printf("%-28s %-8s %s\n", "PNG cut in half", ld_error_name(rc), err);
	CHECK(rc == LD_ERR_CORRUPT);
	free(flip);
	free(jpg);
	free(png);
	free(good);
	free(bad);
	ld_decoder_free(d);
	tl_rmdir(dir);
	printf("damaged frames and images are corrupt errors; clean GOPs of a damaged chunk still decode\n");
	return 0;
}
