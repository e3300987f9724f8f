// Every bad input gives its own error code and a reason, never a crash or a hang: missing,
// zero-length, truncated, corrupt header, unsupported codec, one frame fewer than the manifest
// says, watchdog deadline, bad tar members; odd sizes (4:4:4) and VFR input decode or fail cleanly.
#include "loader.h"           // defines: ld_sample_load, LdFiles, LD_ERR_*, ld_error_name
#include "test_loader_util.h" // defines: tl_psnr, tl_rmdir

static char dir[256];

static void encode(const char *name, LdFixtureVideo v)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int rc = ld_fixture_encode(p, &v);
	if (rc < 0)
		fprintf(stderr, "encoding %s: %s\n", name, av_err2str(rc));
	CHECK(rc >= 0);
}

static void write_file(const char *name, const uint8_t *data, size_t n)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	CHECK(f);
	CHECK(fwrite(data, 1, n, f) == n || n == 0);
	fclose(f);
}

static uint8_t *read_all(const char *name, size_t *n)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	uint8_t *b = NULL;
	size_t cap = 0;
	char err[256];
	CHECK(ld_file_read(p, 0, 0, 0, &b, &cap, n, err, sizeof(err)) == 0);
	return b;
}

int main(void)
{
	ld_libav_quiet();
	if (!avcodec_find_encoder_by_name("libx264") || !avcodec_find_encoder_by_name("mjpeg"))
		test_skip("libavcodec lacks the libx264 or mjpeg encoder for test inputs");
	CHECK(ld_fixture_tmpdir(dir, sizeof(dir)) == 0);
	LdFixtureVideo good = {.width = 256, .height = 144, .n_frames = 48, .fps = 24, .gop = 12, .bframes = 2};
	encode("good.mp4", good);
	size_t n;
	uint8_t *g = read_all("good.mp4", &n);
	write_file("empty.mp4", g, 0);
	write_file("trunc.mp4", g, n * 2 / 5);
	uint8_t *junk = malloc(n);
	memcpy(junk, g, n);
	for (size_t i = 0; i < 256 && i < n; i++)
		junk[i] = (uint8_t)(i * 151 + 7);
	write_file("junk.mp4", junk, n);
	LdFixtureVideo mj = good;
	mj.codec = "ffv1";
	mj.bframes = 0;
	encode("ffv1.mkv", mj);
	LdFixtureVideo sh = good;
	sh.n_frames = 47;
	encode("short.mp4", sh);
	LdFixtureVideo odd = good;
	odd.width = 321;
	odd.height = 181;
	odd.yuv444 = 1;
	encode("odd444.mp4", odd);
	LdFixtureVideo vfr = good;
	vfr.vfr = 1;
	encode("vfr.mp4", vfr);
	// image shard: a good odd-sized PNG, junk bytes, a truncated JPEG
	uint8_t *png, *jpg;
	size_t npng, njpg;
	CHECK(ld_fixture_image("png", 201, 151, 1, &png, &npng) == 0);
	CHECK(ld_fixture_image("mjpeg", 200, 150, 2, &jpg, &njpg) == 0);
	const char *names[] = {"a.png", "b.jpg", "c.jpg"};
	const uint8_t *datas[] = {png, junk + 1000, jpg};
	size_t sizes[] = {npng, 500, 40};
	uint64_t offs[3];
	char tp[512];
	snprintf(tp, sizeof(tp), "%s/shard.tar", dir);
	CHECK(ld_fixture_tar(tp, names, datas, sizes, 3, offs) == 0);
	uint64_t lens[3] = {npng, 500, 40};

	LdFixtureChunk ch[] = {
		{"good.mp4", 48, 24, 12, 256, 144},  {"missing.mp4", 48, 24, 12, 256, 144},
		{"empty.mp4", 48, 24, 12, 256, 144}, {"trunc.mp4", 48, 24, 12, 256, 144},
		{"junk.mp4", 48, 24, 12, 256, 144},  {"ffv1.mkv", 48, 24, 12, 256, 144},
		{"short.mp4", 48, 24, 12, 256, 144}, {"odd444.mp4", 48, 24, 12, 321, 181},
		{"vfr.mp4", 48, 24, 12, 256, 144},   {"good.mp4", 48, 24, 12, 320, 180},
	};
	int nch = (int)(sizeof(ch) / sizeof(ch[0]));
	// expected code per sample; -1: success or any clean error (VFR)
	int want[] = {0,
		      LD_ERR_MISSING,
		      LD_ERR_EMPTY,
		      -2,
		      LD_ERR_CORRUPT,
		      LD_ERR_CODEC,
		      LD_ERR_SHORT,
		      0,
		      -1,
		      LD_ERR_GEOMETRY,
		      0,
		      LD_ERR_CODEC,
		      -1};
	char mp[512], err[512];
	snprintf(mp, sizeof(mp), "%s/manifest.bin", dir);
	CHECK(ld_fixture_manifest(mp, ch, nch, "shard.tar", offs, lens, 3) == 0);
	Manifest *m;
	CHECK(manifest_open(&m, mp, err, sizeof(err)) == 0);
	LdDecoder *d;
	CHECK(ld_decoder_new(&d) == 0);
	LdParams p;
	ld_params_default(&p);
	p.train = 0;
	p.frames = 48; // every frame: the last one too
	p.out_w = p.out_h = 64;
	uint8_t *out = malloc((size_t)48 * 64 * 64 * 3);
	LdFiles f = {0};
	uint64_t ns = manifest_header(m)->n_samples;
	CHECK(ns == sizeof(want) / sizeof(want[0]));
	for (uint64_t s = 0; s < ns; s++) {
		LdPlan plan;
		err[0] = 0;
		int rc = -ld_sample_load(d, &f, m, s, &p, &plan, out, err, sizeof(err));
		printf("sample %llu: %-17s %s\n", (unsigned long long)s, ld_error_name(rc), err);
		if (want[s] >= 0)
			CHECK(rc == want[s]);
		else if (want[s] == -2) // truncated: the container's index points past the end
			CHECK(rc == LD_ERR_TRUNCATED);
		CHECK(rc == 0 || strlen(err) > 5);
	}
	// the watchdog: a 1 ms budget cannot decode 48 frames
	p.timeout_ms = 1;
	LdPlan plan;
	int rc = -ld_sample_load(d, &f, m, 0, &p, &plan, out, err, sizeof(err));
	printf("watchdog: %s %s\n", ld_error_name(rc), err);
	CHECK(rc == LD_ERR_TIMEOUT);
	ld_files_free(&f);
	free(out);
	free(g);
	free(junk);
	free(png);
	free(jpg);
	ld_decoder_free(d);
	manifest_close(m);
	tl_rmdir(dir);
	return 0;
}
