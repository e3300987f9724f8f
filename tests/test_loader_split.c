// Two decoders on one clip (clip_decoders 2: the later GOPs on a helper thread) give the serial
// path's bytes, frame counts and errors: clean clips over 2 to 6 GOPs, a damaged GOP in either
// half, a watchdog already past; the helper's CPU time is counted, and a damaged chunk leaves no
// context behind on either thread.
#include "loader.h"           // defines: ld_decode_video, LdDecoder, LdDecodeOpts, LD_ERR_*, ld_error_name
#include "proc_time.h"        // defines: time_mono_ns
#include "test_loader_util.h" // defines: tl_rmdir, tl_packet_of, test_file_read

enum { W = 128, H = 96, N = 96, OUT = 32 };

static uint8_t out[2][64][OUT * OUT * 3];

// decodes frames[0..nf) of the chunk in buf with clip_decoders cd into out[cd - 1]; rc > 0: LD_ERR_*
static int decode(LdDecoder *d, const LdChunkIndex *ix, const uint8_t *buf, size_t n, const uint32_t *frames, int nf,
		  int cd, uint64_t deadline, char *err, size_t errlen)
{
	LdChunkInfo ci = {.n_frames = N,
			  .fps_num = 24,
			  .fps_den = 1,
			  .width = W,
			  .height = H,
			  .keyframes = ix->keyframes,
			  .n_keyframes = ix->n_keyframes,
			  .packets = ix->packets,
			  .config = ix->config,
			  .config_size = ix->config_size};
	LdBuffer b = {buf, n, 0};
	uint8_t *dst[64];
	for (int i = 0; i < nf; i++)
		dst[i] = out[cd - 1][i];
	LdDecodeOpts o = {.mode = LD_MODE_FUSED,
			  .out_w = OUT,
			  .out_h = OUT,
			  .crop = {8, 6, 100, 80, 0},
			  .threads = 1,
			  .clip_decoders = cd,
			  .deadline_ns = deadline};
	err[0] = 0;
	return -ld_decode_video(d, &b, 1, &ci, frames, nf, dst, &o, err, errlen);
}

int main(void)
{
	ld_libav_quiet();
	if (!avcodec_find_encoder_by_name("libx264"))
		test_skip("libavcodec lacks the libx264 encoder for test inputs");
	char dir[256], path[512], e1[256], e2[256];
	CHECK(ld_fixture_tmpdir(dir, sizeof dir) == 0);
	snprintf(path, sizeof path, "%s/chunk.mp4", dir);
	LdFixtureVideo v = {.width = W, .height = H, .n_frames = N, .fps = 24, .gop = 16, .bframes = 3, .texture = 40};
	CHECK(ld_fixture_encode(path, &v) >= 0);
	size_t n;
	uint8_t *good = test_file_read(path, &n), *bad = malloc(n);
	CHECK(good && bad);
	LdChunkIndex ix;
	CHECK(ld_index_chunk(path, &ix) == 0 && ix.codec == MANIFEST_CODEC_H264 && ix.n_keyframes == 6);
	int64_t pos;
	int size = 0;
	tl_packet_of(path, 40, &pos, &size); // a frame in the GOP of frames 32..47
	memcpy(bad, good, n);
	for (int k = 0; k < 16; k++)
		bad[pos + size / 2 + k] ^= 0xff;
	LdDecoder *serial, *split;
	CHECK(ld_decoder_new(&serial) == 0 && ld_decoder_new(&split) == 0);
	ld_decoder_timing(split, 1);

	struct {
		const char *what;
		uint32_t frames[16];
		int nf;
		int damaged; // needs a frame of the damaged GOP (32..47)
	} cases[] = {
		{"two GOPs", {3, 20}, 2, 0},
		{"16 frames over six GOPs", {1, 7, 13, 19, 25, 31, 37, 43, 49, 55, 61, 67, 73, 79, 85, 91}, 16, 1},
		{"repeated frames over three GOPs", {5, 5, 21, 21, 40, 40, 47}, 7, 1},
		{"16 frames over two GOPs", {16, 18, 19, 20, 22, 24, 26, 28, 30, 31, 33, 35, 37, 39, 41, 47}, 16, 1},
		{"one GOP (not split)", {0, 4, 8, 15}, 4, 0},
		{"the damage in the later half", {2, 18, 24, 41}, 4, 1},
		{"the damage in the earlier half", {36, 44, 60, 70, 80, 95}, 6, 1},
		{"four GOPs after the damage", {48, 60, 70, 80, 95}, 5, 0},
	};
	int split_clips = 0;
	for (int pass = 0; pass < 2; pass++) { // clean chunk, then the damaged one
		const uint8_t *buf = pass ? bad : good;
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			uint64_t h0 = ld_decoder_cost(split)->helper_ns, f0 = ld_decoder_frames(serial),
				 f1 = ld_decoder_frames(split);
			int a = decode(serial, &ix, buf, n, cases[i].frames, cases[i].nf, 1, 0, e1, sizeof e1);
			int b = decode(split, &ix, buf, n, cases[i].frames, cases[i].nf, 2, 0, e2, sizeof e2);
			printf("%-7s %-34s serial %-8s split %-8s %s\n", pass ? "damaged" : "clean", cases[i].what,
			       ld_error_name(a), ld_error_name(b), e2);
			CHECK(a == b && !strcmp(e1, e2));
			CHECK(a == (pass && cases[i].damaged ? LD_ERR_CORRUPT : 0));
			if (a == 0) {
				for (int k = 0; k < cases[i].nf; k++)
					CHECK(!memcmp(out[0][k], out[1][k], sizeof(out[0][k])));
				CHECK(ld_decoder_frames(serial) - f0 == ld_decoder_frames(split) - f1);
			}
			split_clips += ld_decoder_cost(split)->helper_ns > h0;
		}
	}
	printf("%d clip decodes used the helper thread (its CPU time counted)\n", split_clips);
	CHECK(split_clips == 14); // the 7 cases of more than one GOP, clean and damaged
	// the watchdog: a deadline already past stops both halves, with the serial path's error
	uint32_t all[16] = {1, 7, 13, 19, 25, 31, 37, 43, 49, 55, 61, 67, 73, 79, 85, 91};
	int a = decode(serial, &ix, good, n, all, 16, 1, 1, e1, sizeof e1);
	int b = decode(split, &ix, good, n, all, 16, 2, 1, e2, sizeof e2);
	printf("deadline past: serial %s split %s (%s)\n", ld_error_name(a), ld_error_name(b), e2);
	CHECK(a == LD_ERR_TIMEOUT && b == LD_ERR_TIMEOUT && !strcmp(e1, e2));
	// after the errors, both threads' contexts decode the clean chunk again
	CHECK(decode(split, &ix, good, n, all, 16, 2, 0, e2, sizeof e2) == 0);
	CHECK(decode(serial, &ix, good, n, all, 16, 1, 0, e1, sizeof e1) == 0);
	for (int k = 0; k < 16; k++)
		CHECK(!memcmp(out[0][k], out[1][k], sizeof(out[0][k])));
	ld_decoder_free(serial);
	ld_decoder_free(split);
	ld_index_free(&ix);
	free(good);
	free(bad);
	tl_rmdir(dir);
	printf("two decoders per clip: the serial path's bytes and errors\n");
	return 0;
}
