// The eval views (LdParams.stride, view_clips/view_clip, crop_pos) choose LaViLa's EGTEA test
// frames and crops: clip starts np.linspace(0, n - 32, C, dtype=int) (the tables below are that
// expression), 16 frames 2 apart, a short video's frames 0, 2, ... then black, the crop box at
// the start, centre or end of the long side. Decoding a video whose frames carry their number and
// column shows those frames and columns in the output; bad view fields are refused.
#include "loader.h" // defines: ld_sample_load, LdFiles, ld_files_free, LD_ERR_MANIFEST, LdParams, LdPlan, ld_plan_make, ld_params_default, LD_FRAME_BLANK
#include "ld_fixture.h" // defines: ld_fixture_encode, ld_fixture_manifest, ld_fixture_index_*, ld_fixture_tmpdir
#include "testutil.h"   // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <stdio.h>  // defines: snprintf, printf
#include <stdlib.h> // defines: malloc, free, system
#include <string.h> // defines: memcmp, strstr

enum { T = 16, STRIDE = 2, OUT = 32 };

static LdParams view(int clips, int clip, LdCropPos pos)
{
	LdParams p;
	ld_params_default(&p);
	p.train = 0;
	p.frames = T;
	p.out_w = p.out_h = OUT;
	p.stride = STRIDE;
	p.view_clips = clips;
	p.view_clip = clip;
	p.crop_pos = pos;
	return p;
}

static LdPlan plan_of(const Manifest *m, uint64_t sample, const LdParams *p)
{
	LdPlan pl;
	char err[256];
	CHECK_OK(ld_plan_make(m, sample, p, &pl, err, sizeof err));
	CHECK_EQ_INT(pl.sample, sample);
	return pl;
}

// sample's frames for C clips start at starts[c] + 2t (one chunk: frame_no is the frame)
static void check_starts(const Manifest *m, uint64_t sample, int C, const int *starts)
{
	for (int c = 0; c < C; c++) {
		LdParams p = view(C, c, LD_CROP_CENTRE);
		LdPlan pl = plan_of(m, sample, &p);
		for (int t = 0; t < T; t++)
			CHECK(pl.frame_src[t] == 0 && pl.frame_no[t] == (uint32_t)(starts[c] + STRIDE * t));
	}
}

// the crop x (landscape) or y (portrait) of the three positions
static void check_crop(const Manifest *m, uint64_t sample, int box, const int off[3], int vertical)
{
	const LdCropPos pos[3] = {LD_CROP_START, LD_CROP_CENTRE, LD_CROP_END};
	for (int s = 0; s < 3; s++) {
		LdParams p = view(1, 0, pos[s]);
		LdPlan pl = plan_of(m, sample, &p);
		CHECK(pl.crop.w == box && pl.crop.h == box && !pl.crop.flip);
		CHECK_EQ_INT(vertical ? pl.crop.y : pl.crop.x, off[s]);
		CHECK_EQ_INT(vertical ? pl.crop.x : pl.crop.y, 0);
	}
}

static void refused(const Manifest *m, LdParams p, const char *needle)
{
	LdPlan pl;
	char err[256] = "";
	CHECK_EQ_INT(ld_plan_make(m, 0, &p, &pl, err, sizeof err), -LD_ERR_MANIFEST);
	printf("refused: %s\n", err);
	CHECK(strstr(err, needle));
}

static void plans(const Manifest *m)
{
	check_starts(m, 0, 10, (const int[]){0, 13, 26, 39, 52, 65, 78, 91, 104, 118}); // n = 150
	check_starts(m, 0, 4, (const int[]){0, 39, 78, 118});
	check_starts(m, 0, 1, (const int[]){0});                                   // linspace of one point: 0
	check_starts(m, 3, 10, (const int[]){0, 3, 6, 9, 12, 15, 18, 21, 24, 28}); // n = 60
	check_starts(m, 3, 7, (const int[]){0, 4, 9, 14, 18, 23, 28});
	check_starts(m, 2, 3, (const int[]){0, 0, 0}); // n = 32 = T x stride
	for (int c = 0; c < 3; c++) {                  // n = 20 < 32: frames 0, 2, ..., 18, then black, for every clip
		LdParams p = view(3, c, LD_CROP_CENTRE);
		LdPlan pl = plan_of(m, 1, &p);
		for (int t = 0; t < T; t++)
			CHECK(2 * t < 20 ? pl.frame_src[t] == 0 && pl.frame_no[t] == (uint32_t)(2 * t)
					 : pl.frame_src[t] == LD_FRAME_BLANK);
	}
	check_crop(m, 0, 48, (const int[]){0, 8, 16}, 0);  // 64 x 48
	check_crop(m, 1, 48, (const int[]){0, 8, 16}, 1);  // 48 x 64: along the height
	check_crop(m, 2, 48, (const int[]){0, 0, 0}, 0);   // square: one box
	check_crop(m, 3, 48, (const int[]){0, 10, 22}, 0); // 70 x 48: the centre is eval's, made even
	// the centre view's crop is the plain eval crop, and the plain eval plan is untouched
	LdParams e = view(1, 0, LD_CROP_CENTRE), v = e;
	e.stride = e.view_clips = 0;
	LdPlan pe = plan_of(m, 3, &e), pv = plan_of(m, 3, &v);
	CHECK(!memcmp(&pe.crop, &pv.crop, sizeof pe.crop));
	for (int t = 0; t < T; t++) // segment midpoints of 60 frames in 16 segments
		CHECK_EQ_INT(pe.frame_no[t], (int)((60 * t / 16 + 60 * (t + 1) / 16 - 1) / 2));

	LdParams bad = view(2, 0, LD_CROP_END);
	bad.train = 1;
	refused(m, bad, "eval mode's");
	refused(m, view(2, 2, LD_CROP_CENTRE), "not one of the view's clips");
	bad = view(3, 1, LD_CROP_CENTRE);
	bad.stride = 0;
	refused(m, bad, "temporal clips need a frame stride");
	bad = view(1, 0, (LdCropPos)7);
	refused(m, bad, "crop position");
	bad = view(1, 0, LD_CROP_CENTRE);
	bad.stride = LD_MAX_STRIDE + 1;
	refused(m, bad, "stride is outside");
}

// the decoded frames say their number (top half) and source column (bottom half)
static void decoded(const Manifest *m, LdDecoder *d)
{
	const size_t fb = (size_t)OUT * OUT * 3;
	uint8_t *clip = malloc(fb * T);
	CHECK(clip);
	LdFiles files = {0};
	char err[256];
	const LdCropPos pos[3] = {LD_CROP_START, LD_CROP_CENTRE, LD_CROP_END};
	const int starts[4] = {0, 39, 78, 118}, x0[3] = {0, 8, 16};
	for (int c = 0; c < 4; c++)
		for (int s = 0; s < 3; s++) {
			LdParams p = view(4, c, pos[s]);
			LdPlan pl;
			CHECK_OK(ld_sample_load(d, &files, m, 0, &p, &pl, clip, err, sizeof err));
			for (int t = 0; t < T; t++) {
				const uint8_t *f = clip + t * fb;
				// the crop is 48 source pixels scaled to 32: output column 0 is source column x0
				int fr = ld_fixture_index_frame(f[(OUT / 4 * OUT + OUT / 2) * 3]);
				int col = ld_fixture_index_column(f[(OUT * 3 / 4 * OUT) * 3]);
				if (fr != (starts[c] + STRIDE * t) % 50 || abs(col - x0[s]) > 1)
					printf("clip %d crop %d frame %d: says frame %d column %d\n", c, s, t, fr, col);
				CHECK(fr == (starts[c] + STRIDE * t) % 50 && abs(col - x0[s]) <= 1);
			}
		}
	LdParams p = view(3, 2, LD_CROP_END); // 20 frames: 0, 2, ..., 18, then black
	LdPlan pl;
	CHECK_OK(ld_sample_load(d, &files, m, 1, &p, &pl, clip, err, sizeof err));
	for (int t = 0; t < T; t++) {
		const uint8_t *f = clip + t * fb;
		int black = 1;
		for (size_t k = 0; k < fb; k++)
			black &= !f[k];
		CHECK(2 * t < 20 ? !black && ld_fixture_index_frame(f[(OUT / 4 * OUT) * 3]) == 2 * t : black);
	}
	ld_files_free(&files);
	free(clip);
}

int main(void)
{
	char dir[256], path[400];
	ld_libav_quiet();
	CHECK_OK(ld_fixture_tmpdir(dir, sizeof dir));
	const LdFixtureChunk ch[4] = {{"a.mp4", 150, 10, 10, 64, 48},
				      {"b.mp4", 20, 10, 10, 48, 64},
				      {"c.mp4", 32, 10, 10, 48, 48},
				      {"d.mp4", 60, 10, 10, 70, 48}}; // c and d are planned, never read
	for (int i = 0; i < 2; i++) {
		LdFixtureVideo v = {.width = ch[i].width,
				    .height = ch[i].height,
				    .n_frames = (int)ch[i].n_frames,
				    .fps = 10,
				    .gop = 10,
				    .crf = 1,
				    .index_code = 1};
		snprintf(path, sizeof path, "%s/%s", dir, ch[i].path);
		if (ld_fixture_encode(path, &v))
			test_skip("no H.264 encoder in this libav build");
	}
	snprintf(path, sizeof path, "%s/manifest.bin", dir);
	CHECK_OK(ld_fixture_manifest(path, ch, 4, NULL, NULL, NULL, 0));
	Manifest *m;
	char err[256];
	int rc = manifest_open(&m, path, err, sizeof err);
	if (rc)
		printf("%s: %s\n", path, err);
	CHECK_OK(rc);
	plans(m);
	LdDecoder *d;
	CHECK_OK(ld_decoder_new(&d));
	decoded(m, d);
	ld_decoder_free(d);
	manifest_close(m);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(!system(cmd));
	printf("eval views: LaViLa's clip starts, stride, padding and three crops, planned and decoded\n");
	return 0;
}
