// The indexed path decodes only what the needed frames require: per GOP a clip enters, the key
// packet and the references up to its last needed frame (in decode order) and the needed frames;
// never a non-reference frame nobody needs, never a packet past the last needed one. Counted on a
// chunk with B-frames (x264's pyramid: some B-frames are references, most are not) for random
// frame sets: packets sent and frames out of the decoder equal that set exactly.
#include "loader.h"           // defines: ld_decode_video, ld_index_chunk, LdDecoder, LdCost
#include "test_loader_util.h" // defines: tl_rmdir, test_file_read

enum { W = 128, H = 96, N = 96, OUT = 16 };

// the packets the needed frames[0..n) require, counted from the index by the rule above
static int required(const LdChunkIndex *ix, const uint32_t *frames, int n, int *skipped)
{
	int count = 0;
	for (uint32_t k = 0; k < ix->n_keyframes; k++) {
		uint32_t a = ix->keyframes[k], b = k + 1 < ix->n_keyframes ? ix->keyframes[k + 1] : N;
		int last = -1;
		for (uint32_t j = a; j < b; j++) // GOPs are closed: their packets are decode positions a..b-1
			for (int i = 0; i < n; i++)
				if (ix->packets[j].frame == frames[i])
					last = (int)j;
		for (int j = (int)a; j <= last; j++) {
			int needed = 0;
			for (int i = 0; i < n; i++)
				needed |= ix->packets[j].frame == frames[i];
			if (needed || (ix->packets[j].flags & MANIFEST_PKT_REF))
				count++;
			else
				(*skipped)++;
		}
	}
	return count;
}

int main(void)
{
	ld_libav_quiet();
	if (!avcodec_find_encoder_by_name("libx264"))
		test_skip("libavcodec lacks the libx264 encoder for test inputs");
	char dir[256], path[512], err[256];
	CHECK(ld_fixture_tmpdir(dir, sizeof dir) == 0);
	snprintf(path, sizeof path, "%s/chunk.mp4", dir);
	LdFixtureVideo v = {.width = W, .height = H, .n_frames = N, .fps = 24, .gop = 24, .bframes = 3, .texture = 30};
	CHECK(ld_fixture_encode(path, &v) >= 0);
	size_t size;
	uint8_t *buf = test_file_read(path, &size);
	LdChunkIndex ix;
	CHECK(buf && ld_index_chunk(path, &ix) == 0 && ix.codec == MANIFEST_CODEC_H264 && ix.n_keyframes == 4);
	int nonref = 0, bref = 0;
	for (uint32_t j = 0; j < N; j++) {
		nonref += !(ix.packets[j].flags & MANIFEST_PKT_REF);
		// a reference decoded before a frame it precedes in display order: a B-frame of the pyramid
		bref += (ix.packets[j].flags & MANIFEST_PKT_REF) && j + 1 < N &&
			ix.packets[j + 1].frame > ix.packets[j].frame && j > 0 &&
			ix.packets[j - 1].frame > ix.packets[j].frame;
	}
	printf("chunk: %d of %d frames non-reference, %d reference B-frames\n", nonref, N, bref);
	CHECK(nonref > N / 5 && bref > 0);
	LdChunkInfo ci = {.n_frames = N,
			  .fps_num = 24,
			  .fps_den = 1,
			  .width = W,
			  .height = H,
			  .keyframes = ix.keyframes,
			  .n_keyframes = ix.n_keyframes,
			  .packets = ix.packets,
			  .config = ix.config,
			  .config_size = ix.config_size};
	static uint8_t out[8][OUT * OUT * 3];
	uint8_t *dst[8];
	for (int i = 0; i < 8; i++)
		dst[i] = out[i];
	LdDecodeOpts o = {.mode = LD_MODE_FUSED, .out_w = OUT, .out_h = OUT, .crop = {0, 0, W, H, 0}, .threads = 1};
	LdDecoder *d;
	CHECK(ld_decoder_new(&d) == 0);
	LdBuffer b = {buf, size, 0};
	uint32_t rng = 7;
	int skipped = 0, sets = 0;
	for (int s = 0; s < 200; s++) {
		uint32_t frames[8];
		int n = 1 + s % 6;
		for (int i = 0; i < n; i++) {
			rng = rng * 1664525u + 1013904223u;
			frames[i] = (rng >> 8) % N;
		}
		for (int i = 1; i < n; i++) // ascending (repeats allowed)
			for (int j = i; j > 0 && frames[j] < frames[j - 1]; j--) {
				uint32_t t = frames[j];
				frames[j] = frames[j - 1], frames[j - 1] = t;
			}
		int want = required(&ix, frames, n, &skipped);
		uint64_t p0 = ld_decoder_cost(d)->packets, f0 = ld_decoder_frames(d);
		CHECK(ld_decode_video(d, &b, 1, &ci, frames, n, dst, &o, err, sizeof err) == 0);
		uint64_t sent = ld_decoder_cost(d)->packets - p0, out_frames = ld_decoder_frames(d) - f0;
		if (sent != (uint64_t)want || out_frames != (uint64_t)want)
			fprintf(stderr, "set %d (%d frames from %u): %llu packets sent, %llu frames out, %d required\n",
				s, n, frames[0], (unsigned long long)sent, (unsigned long long)out_frames, want);
		CHECK(sent == (uint64_t)want && out_frames == (uint64_t)want);
		sets++;
	}
	printf("%d frame sets: exactly the required packets sent and frames decoded; %d unneeded non-reference "
	       "frames up to the last needed ones skipped\n",
	       sets, skipped);
	CHECK(skipped > 100);
	ld_decoder_free(d);
	ld_index_free(&ix);
	free(buf);
	tl_rmdir(dir);
	return 0;
}
