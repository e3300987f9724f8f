// A zeroed 4 KB block inside a keyframe's slice data (issue 31 §4) is a corrupt error on the
// demux path and on the packet-index path, for that GOP only: libavcodec decodes the zeros as
// valid CABAC syntax and outputs the frames garbled with no error and no flag, so the loader
// checks the NAL units' bytes itself (ld_nal_zeroed). The clean chunk, the clean GOPs of the
// damaged one, and NAL framings that carry zeros legitimately (start codes, padding) pass.
#include "loader.h" // defines: ld_decode_video, ld_nal_zeroed, ld_nal_framing, LdDecoder, LD_ERR_*, ld_error_name, LdChunkIndex, ld_index_chunk, ld_index_free
#include "test_loader_util.h" // defines: tl_rmdir, tl_packet_of, test_file_read, CHECK

#include <libavformat/avformat.h>

#define W 1280
#define H 720
#define BLOCK 4096

// ix NULL: the demux path; else the packet-index path with ix's packets (decoder contexts reused)
static int decode(LdDecoder *d, const LdChunkIndex *ix, const uint8_t *buf, size_t n, const uint32_t *frames, int nf,
		  char *err, size_t errlen)
{
	static uint32_t kf[] = {0, 8, 16};
	LdChunkInfo ci = {.n_frames = 24,
			  .fps_num = 24,
			  .fps_den = 1,
			  .width = W,
			  .height = H,
			  .keyframes = kf,
			  .n_keyframes = 3};
	if (ix) {
		ci.packets = ix->packets;
		ci.config = ix->config;
		ci.config_size = ix->config_size;
	}
	LdBuffer b = {buf, n, 0};
	static uint8_t out[24][32 * 32 * 3];
	uint8_t *dst[24];
	for (int i = 0; i < nf; i++)
		dst[i] = out[i];
	LdDecodeOpts o = {.mode = LD_MODE_FUSED, .out_w = 32, .out_h = 32, .crop = {0, 0, W, H, 0}, .threads = 1};
	err[0] = 0;
	return -ld_decode_video(d, &b, 1, &ci, frames, nf, dst, &o, err, errlen);
}

static int zeroed(const char *bytes, size_t n, int framing)
{
	size_t at;
	return ld_nal_zeroed((const uint8_t *)bytes, n, framing, &at);
}

// the byte rule alone, on hand-made packets
static void nal_rule(void)
{
	// length-prefixed (4 bytes): a NAL unit of 6 bytes; a start code inside a sample; zero padding
	CHECK(!zeroed("\0\0\0\6\x65\x88\0\0\3\1", 10, 4));
	CHECK(!zeroed("\0\0\0\7\x65\x88\0\0\0\1\x41", 11, 4));
	CHECK(!zeroed("\0\0\0\2\x65\x88\0\0\0\0\0", 11, 4));
	CHECK(!zeroed("\0\0\0\4\x65\x88\0\0", 8, 4)); // zeros ending a NAL unit pass (cannot tell padding)
	CHECK(zeroed("\0\0\0\7\x65\x88\0\0\0\x55\x41", 11, 4));
	CHECK(zeroed("\0\0\0\2\x65\x88\0\0\0\0\x41\x9a", 12, 4)); // a zero length, data after it
	CHECK(zeroed("\0\0\0\x20\x65\x88\0\0\0\x55", 10, 4));     // a length past the end: what is there
	CHECK(zeroed("\0\0\0\x10\x65\x88\0\0\0\0\0\0\0\0\1\x41\x9a\x10\x20\x30", 20, 4)); // a start code 8 zeros out
	CHECK(zeroed("\0\0\0\0\0\0\0\0", 8, 4));                                          // no NAL unit at all
	// Annex B: start codes with leading zeros, trailing zeros
	CHECK(!zeroed("\0\0\0\1\x65\x88\0\0\3\0\0\0\0\1\x41\x9a\0\0", 18, 0));
	CHECK(zeroed("\0\0\0\1\x65\x88\0\0\0\0\x41\x9a", 12, 0));
	CHECK(!zeroed("\0\0\0\1\x65\x88\0\0\0\0\0\0\0\0\0\1\x41", 17, 0)); // trailing_zero_8bits
	CHECK(zeroed("\0\0\0\0\0\0", 6, 0));
	// not H.264 or HEVC: nothing checked
	CHECK(!zeroed("\0\0\0\0\0\x55", 6, -1));
	CHECK(ld_nal_framing(AV_CODEC_ID_VP9, NULL, 0) == -1);
	CHECK(ld_nal_framing(AV_CODEC_ID_H264, (const uint8_t *)"\1\x64\0\x1e\xff\xe1\0", 7) == 4);
	CHECK(ld_nal_framing(AV_CODEC_ID_H264, (const uint8_t *)"\0\0\0\1\x67", 5) == 0);
}

int main(void)
{
	ld_libav_quiet();
	nal_rule();
	if (!avcodec_find_encoder_by_name("libx264"))
		test_skip("libavcodec lacks the libx264 encoder for test inputs");
	char dir[256], path[512], err[256];
	CHECK(ld_fixture_tmpdir(dir, sizeof dir) == 0);
	snprintf(path, sizeof path, "%s/chunk.mp4", dir);
	LdFixtureVideo v = {.width = W, .height = H, .n_frames = 24, .fps = 24, .gop = 8, .texture = 0};
	CHECK(ld_fixture_encode(path, &v) >= 0);
	size_t n;
	uint8_t *good = test_file_read(path, &n), *bad = malloc(n);
	CHECK(good);
	int64_t pos;
	int size = 0;
	tl_packet_of(path, 8, &pos, &size); // the keyframe of the GOP of frames 8..15
	printf("keyframe 8: %d bytes at %lld\n", size, (long long)pos);
	// inside its slice data, where libavcodec (5.1, this x264) decodes the zeros without an error
	// or a flag (elsewhere in this slice, CABAC often fails on them); clear of the NAL framing
	int at = size / 2 + 155;
	CHECK(size >= at + BLOCK + 16);
	memcpy(bad, good, n);
	memset(bad + pos + at, 0, BLOCK);
	LdDecoder *d;
	CHECK(ld_decoder_new(&d) == 0);

	struct {
		const char *what;
		uint32_t frames[4];
		int nf, want;
	} cases[] = {
		{"frames before the damage", {0, 4, 7}, 3, 0},
		{"the zeroed keyframe", {8}, 1, LD_ERR_CORRUPT},
		{"a frame predicted from it", {12}, 1, LD_ERR_CORRUPT},
		{"the next GOP", {16, 20}, 2, 0},
		{"a clip across the damage", {5, 9, 13, 17}, 4, LD_ERR_CORRUPT},
	};
	uint32_t all[24];
	for (int i = 0; i < 24; i++)
		all[i] = (uint32_t)i;
	LdChunkIndex ix;
	CHECK(ld_index_chunk(path, &ix) == 0);
	for (int path_i = 0; path_i < 2; path_i++) {
		const LdChunkIndex *x = path_i ? &ix : NULL;
		int rc = decode(d, x, good, n, all, 24, err, sizeof err);
		printf("%-8s %-28s %-8s %s\n", x ? "indexed" : "demuxed", "the clean chunk", ld_error_name(rc), err);
		CHECK(rc == 0); // no false positive on a clean chunk
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			rc = decode(d, x, bad, n, cases[i].frames, cases[i].nf, err, sizeof err);
			printf("%-8s %-28s %-8s %s\n", x ? "indexed" : "demuxed", cases[i].what, ld_error_name(rc),
			       err);
			CHECK(rc == cases[i].want);
			CHECK(rc == 0 || strstr(err, "zeroed bytes inside a NAL unit"));
		}
	}
	ld_index_free(&ix);
	free(good);
	free(bad);
	ld_decoder_free(d);
	tl_rmdir(dir);
	printf("a zeroed block in slice data is a corrupt error on both decode paths; clean GOPs decode\n");
	return 0;
}
