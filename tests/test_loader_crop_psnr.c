// The product path (packet index: only the needed GOPs' reference packets and the needed frames
// decoded, loop filter skipped on needed non-reference frames, crop in YUV, swscale into the
// output) matches the reference (demux, decode every frame from 0 -> full-frame RGB -> crop ->
// resize) within 35 dB PSNR for training crops (with and without flip), eval crops, clips across
// two chunks, 2-frame clips (the decoder jumps between GOPs) and PNG/JPEG/WebP images.
#include "loader.h"           // defines: ld_sample_load, LdFiles, ld_error_name
#include "test_loader_util.h" // defines: tl_dataset, tl_psnr, tl_rmdir

static double worst = 99.0;

static void compare(LdDecoder *d, const Manifest *m, uint64_t g, LdParams p)
{
	size_t bytes = (size_t)p.frames * p.out_w * p.out_h * 3;
	uint8_t *a = malloc(bytes), *b = malloc(bytes);
	CHECK(a && b);
	LdFiles f = {0};
	LdPlan pa, pb;
	char err[512];
	p.mode = LD_MODE_FUSED;
	int rc = ld_sample_load(d, &f, m, g, &p, &pa, a, err, sizeof(err));
	if (rc)
		fprintf(stderr, "g=%llu fused: %s (%s)\n", (unsigned long long)g, err, ld_error_name(rc));
	CHECK(rc == 0);
	p.mode = LD_MODE_NAIVE;
	p.no_seek = 1;
	rc = ld_sample_load(d, &f, m, g, &p, &pb, b, err, sizeof(err));
	if (rc)
		fprintf(stderr, "g=%llu reference: %s\n", (unsigned long long)g, err);
	CHECK(rc == 0);
	CHECK(pa.sample == pb.sample && !memcmp(&pa.crop, &pb.crop, sizeof(pa.crop)));
	size_t fb = (size_t)p.out_w * p.out_h * 3;
	for (int t = 0; t < p.frames; t++) {
		double q = tl_psnr(a + t * fb, b + t * fb, fb);
		if (q < worst)
			worst = q;
		if (q < 35.0)
			fprintf(stderr,
				"g=%llu sample %llu frame %d (src %d frame %u) crop %dx%d+%d+%d flip %d: %.1f dB\n",
				(unsigned long long)g, (unsigned long long)pa.sample, t, pa.frame_src[t],
				pa.frame_no[t], pa.crop.w, pa.crop.h, pa.crop.x, pa.crop.y, pa.crop.flip, q);
		CHECK(q >= 35.0);
	}
	// a different crop must really differ (the comparison can fail)
	ld_files_free(&f);
	free(a);
	free(b);
}

int main(void)
{
	ld_libav_quiet();
	char dir[256], mpath[300], err[256];
	LdFixtureOpts o = {.videos = 2,
			   .chunks_per_video = 2,
			   .width = 512,
			   .height = 288,
			   .fps = 24,
			   .frames_per_chunk = 48,
			   .gop = 12,
			   .bframes = 2,
			   .images = 4};
	tl_dataset(dir, sizeof(dir), &o);
	snprintf(mpath, sizeof(mpath), "%s/manifest.bin", dir);
	Manifest *m;
	CHECK(manifest_open(&m, mpath, err, sizeof(err)) == 0);
	LdDecoder *d;
	CHECK(ld_decoder_new(&d) == 0);
	uint64_t n = manifest_header(m)->n_samples;
	LdParams p;
	ld_params_default(&p);
	p.seed = 3;
	int clips = 0, crossing = 0, images = 0, webp = 0, indexed = 0;
	for (uint64_t g = 0; g < n; g++) {
		LdPlan plan;
		p.frames = g % 2 ? 8 : 4;
		p.flip = g % 3 == 0;
		CHECK(ld_plan_make(m, g, &p, &plan, err, sizeof(err)) == 0);
		clips += plan.kind == MANIFEST_KIND_CLIP;
		crossing += plan.n_sources > 1;
		for (int k = 0; k < plan.n_sources && plan.kind == MANIFEST_KIND_CLIP; k++)
			indexed += plan.src[k].indexed;
		images += plan.kind == MANIFEST_KIND_IMAGE;
		if (plan.kind == MANIFEST_KIND_IMAGE) { // which formats the images cover
			uint8_t *hd = NULL;
			size_t cap = 0, got = 0;
			CHECK(ld_file_read(plan.src[0].path, plan.src[0].offset, 4, 0, &hd, &cap, &got, err,
					   sizeof(err)) == 0);
			webp += !memcmp(hd, "RIFF", 4);
			free(hd);
		}
		compare(d, m, g, p);
	}
	// two frames per clip: the decoder jumps from one GOP to a later one between them
	p.frames = 2;
	uint64_t j0 = ld_decoder_jumps(d);
	for (uint64_t g = 0; g < n; g++)
		compare(d, m, g, p);
	uint64_t jumps = ld_decoder_jumps(d) - j0;
	CHECK(jumps > 0);
	p.train = 0;
	p.frames = 4;
	for (uint64_t g = 0; g < n; g += 3)
		compare(d, m, g, p);
	printf("%d clips (%d across chunks, %d chunk reads by packet index), %d images (%d WebP), %llu GOP jumps; worst "
	       "frame %.1f dB (>= 35)\n",
	       clips, crossing, indexed, images, webp, (unsigned long long)jumps, worst);
	CHECK(clips > 0 && crossing > 0 && images > 0 && indexed == clips + crossing);
	if (avcodec_find_encoder_by_name("libwebp"))
		CHECK(webp > 0);
	ld_decoder_free(d);
	manifest_close(m);
	tl_rmdir(dir);
	return 0;
}
