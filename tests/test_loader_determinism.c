// Position g always gives the same bytes: two decoders (as two loader processes would) produce
// identical clips for the same (seed, g); another seed changes samples or crops.
#include "loader.h"           // defines: ld_sample_load, LdFiles
#include "test_loader_util.h" // defines: tl_dataset, tl_rmdir

int main(void)
{
	ld_libav_quiet();
	char dir[256], mpath[300], err[512];
	LdFixtureOpts o = {.videos = 1,
			   .chunks_per_video = 2,
			   .width = 320,
			   .height = 180,
			   .fps = 24,
			   .frames_per_chunk = 36,
			   .gop = 12,
			   .bframes = 2,
			   .images = 2};
	tl_dataset(dir, sizeof(dir), &o);
	snprintf(mpath, sizeof(mpath), "%s/manifest.bin", dir);
	Manifest *m1, *m2;
	CHECK(manifest_open(&m1, mpath, err, sizeof(err)) == 0);
	CHECK(manifest_open(&m2, mpath, err, sizeof(err)) == 0);
	LdDecoder *d1, *d2;
	CHECK(ld_decoder_new(&d1) == 0 && ld_decoder_new(&d2) == 0);
	LdParams p;
	ld_params_default(&p);
	p.seed = 11;
	p.flip = 1;
	size_t bytes = (size_t)p.frames * p.out_w * p.out_h * 3;
	uint8_t *a = malloc(bytes), *b = malloc(bytes);
	LdFiles f1 = {0}, f2 = {0};
	uint64_t n = manifest_header(m1)->n_samples;
	int differ = 0;
	for (uint64_t g = 0; g < 2 * n; g++) {
		LdPlan pa, pb;
		CHECK(ld_sample_load(d1, &f1, m1, g, &p, &pa, a, err, sizeof(err)) == 0);
		// the second decoder works on other positions first, as another loader would
		CHECK(ld_sample_load(d2, &f2, m2, (g * 7 + 3) % (2 * n), &p, &pb, b, err, sizeof(err)) == 0);
		CHECK(ld_sample_load(d2, &f2, m2, g, &p, &pb, b, err, sizeof(err)) == 0);
		CHECK(pa.sample == pb.sample && !memcmp(&pa.crop, &pb.crop, sizeof(pa.crop)));
		CHECK(!memcmp(a, b, bytes));
		LdParams q = p;
		q.seed = 12;
		LdPlan pc;
		CHECK(ld_plan_make(m1, g, &q, &pc, err, sizeof(err)) == 0);
		differ += pc.sample != pa.sample || memcmp(&pc.crop, &pa.crop, sizeof(pa.crop)) != 0;
	}
	printf("%llu positions bit-identical across decoders; %d differ under another seed\n",
	       (unsigned long long)(2 * n), differ);
	CHECK(differ > (int)n);
	ld_files_free(&f1);
	ld_files_free(&f2);
	free(a);
	free(b);
	ld_decoder_free(d1);
	ld_decoder_free(d2);
	manifest_close(m1);
	manifest_close(m2);
	tl_rmdir(dir);
	return 0;
}
