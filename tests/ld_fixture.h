// Test and benchmark data for the loader: small synthetic chunks (smooth moving patterns,
// any libavcodec encoder, optional variable frame rate), image tar shards and manifests.
#ifndef LOADERD_LD_FIXTURE_H
#define LOADERD_LD_FIXTURE_H
// defines: LdFixtureVideo, ld_fixture_index_frame, ld_fixture_index_column, LdFixtureChunk, LdFixtureOpts, ld_fixture_encode, ld_fixture_image, ld_fixture_tar, ld_fixture_manifest, ld_fixture_dataset, ld_fixture_tmpdir

#include <stddef.h>
#include <stdint.h>

typedef struct {
	const char *codec; // encoder name: "libx264" (default), "mpeg4", "mjpeg", "ffv1", ...
	int width, height;
	int n_frames, fps, gop, bframes;
	int yuv444;       // 4:4:4 input (odd sizes with x264)
	int vfr;          // timestamps with irregular gaps (variable frame rate)
	int crf;          // x264 quality (default 18)
	uint32_t pattern; // which picture (videos differ)
	int texture;      // amplitude of a fine texture panning 2 px/frame (0: smooth picture)
	int index_code;   // frames that say what they are (ld_fixture_index_*): grey, luma 16 + 4 (t mod 50)
			  // in the top half, 16 + 3 (x mod 64) in the bottom half
} LdFixtureVideo;

// what an index-coded frame (LdFixtureVideo.index_code) says, from a decoded RGB value (BT.601
// limited range, grey): the frame number (top half) or the source column (bottom half)
int ld_fixture_index_frame(int rgb);
int ld_fixture_index_column(int rgb);

// Encodes a video to path (container from the extension). 0 or a negative AVERROR.
int ld_fixture_encode(const char *path, const LdFixtureVideo *v);
// Encodes one w x h picture with "png", "mjpeg" or "libwebp" into a malloc'd buffer.
int ld_fixture_image(const char *codec, int w, int h, uint32_t pattern, uint8_t **out, size_t *size);
// Writes a ustar archive of n members; offsets[i] receives member i's data offset.
int ld_fixture_tar(const char *path, const char *const *names, const uint8_t *const *data, const size_t *sizes, int n,
		   uint64_t *offsets);

// one chunk as the manifest will describe it (n_frames may deliberately differ from the file)
typedef struct {
	const char *path; // relative to the manifest's folder
	uint32_t n_frames, fps, gop;
	int width, height;
} LdFixtureChunk;

// Manifest with one video per chunk and one clip sample over each chunk's frames
// [0, n_frames), then one image sample per (shard path, offset, length). 0 or -errno.
int ld_fixture_manifest(const char *path, const LdFixtureChunk *chunks, int n_chunks, const char *shard,
			const uint64_t *img_off, const uint64_t *img_len, int n_images);

typedef struct {
	int videos, chunks_per_video; // chunks of one video are consecutive in time
	int width, height, fps, frames_per_chunk, gop, bframes;
	int images;   // PNG/JPEG/WebP members of one tar shard, in turn (0: none)
	int texture;  // LdFixtureVideo.texture for every chunk
	int no_index; // 1: no packet index in the manifest (the loader demuxes)
} LdFixtureOpts;

// A dataset in dir: chunk files (each with its packet index, as tools/prep writes it), optional
// images.tar, manifest.bin with clip samples within chunks and crossing chunk boundaries. 0 or
// -errno; err gets a reason.
int ld_fixture_dataset(const char *dir, const LdFixtureOpts *o, char *err, size_t errlen);

// mkdtemp under $TMPDIR or /tmp into buf ("/tmp/ldtest-XXXXXX"); 0 or -errno
int ld_fixture_tmpdir(char *buf, size_t cap);

#endif
