// loaderd --bench --for MODEL@MFU: the cores-per-GPU arithmetic on given per-core rates (ViT-B/16,
// 4x224x224, 40% MFU: 488.6 GFLOP per training clip, so an H200 trains ~810 clips/s) and the
// printed "H200: N cores at T=4" lines rounded up; the flag's errors through loaderd's config parser.
#include "ld_config.h" // defines: ld_config_parse, LdConfig
#include "ld_cores.h"  // defines: ld_for_parse, ld_gpu_clips_per_s, ld_cores_needed, ld_cores_print
#include "testutil.h"  // defines: CHECK

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(const char *clip, const char *spec, int bench, LdConfig *c, char *err, size_t n)
{
	char *argv[] = {"loaderd",      "--manifest", "m",     "--bench",    bench ? "5" : "0",
			"--bench-clip", (char *)clip, "--for", (char *)spec, NULL};
	return ld_config_parse(c, 9, argv, err, n);
}

static void refused(const char *clip, const char *spec, int bench, const char *why)
{
	LdConfig c;
	char err[256] = "";
	int rc = parse(clip, spec, bench, &c, err, sizeof(err));
	if (rc != -1 || !strstr(err, why)) {
		fprintf(stderr, "--bench-clip %s --for %s: rc %d, '%s' (want '%s')\n", clip, spec, rc, err, why);
		exit(1);
	}
}

int main(void)
{
	LdConfig c;
	char err[256];
	CHECK(parse("4x224x224", "vit-b16@0.4", 1, &c, err, sizeof(err)) == 0);
	const LdFor *f = &c.bench_model;
	// ViT-B/16 video tower of 1 + 4*196 tokens plus AVION's text tower: 162.9 GFLOP forward
	CHECK(!strcmp(f->model, "vit-b16") && f->mfu == 0.4 && f->frames == 4 && f->side == 224);
	CHECK(fabs(f->flops / 488.6e9 - 1) < 1e-3);
	double h200 = ld_gpu_clips_per_s(f, 989);
	CHECK(fabs(h200 - 989e12 * 0.4 / f->flops) < 1e-9 * h200 && h200 > 805 && h200 < 815);
	CHECK(fabs(ld_cores_needed(f, 989, 80) - h200 / 80) < 1e-12);
	CHECK(fabs(ld_cores_needed(f, 312, 80) - 312e12 * 0.4 / f->flops / 80) < 1e-12);
	CHECK(isinf(ld_cores_needed(f, 989, 0)));
	// the printed lines: 10.1 cores round up to 11, an exact 10 stays 10, the A100's 3.2 is 4
	char *buf;
	size_t len;
	FILE *m = open_memstream(&buf, &len);
	ld_cores_print(m, f, 80);
	ld_cores_print(m, f, h200 / 10);
	fclose(m);
	printf("%s", buf);
	CHECK(strstr(buf, "H200: 11 cores at T=4 (810 clips/s per GPU / 80.0 clips/s per core = 10.12)"));
	CHECK(strstr(buf, "H100: 11 cores at T=4"));
	CHECK(strstr(buf, "A100: 4 cores at T=4 (255 clips/s per GPU / 80.0 clips/s per core = 3.19)"));
	CHECK(strstr(buf, "H200: 10 cores at T=4 (810 clips/s per GPU / 81.0 clips/s per core = 10.00)"));
	CHECK(strstr(buf, "488.6 GFLOP per training clip") && strstr(buf, "H200 989, H100 989, A100 312 TFLOP/s"));
	free(buf);
	// T=16 clips: four times the frames, more than four times the FLOPs (attention grows as tokens^2)
	LdConfig c16;
	CHECK(parse("16x224x224", "vit-b16@0.4", 1, &c16, err, sizeof(err)) == 0);
	CHECK(c16.bench_model.frames == 16 && c16.bench_model.flops > 4 * f->flops);
	CHECK(parse("8x64x64", "tiny@1", 1, &c, err, sizeof(err)) == 0 && c.bench_model.mfu == 1);
	// the flag's errors, each with its reason
	refused("4x224x224", "vit-b16@0.4", 0, "needs --bench SECONDS");
	refused("4x224x224", "vit-b16", 1, "is not MODEL@MFU");
	refused("4x224x224", "@0.4", 1, "is not MODEL@MFU");
	refused("4x224x224", "a-model-name-far-longer-than-any-preset@0.4", 1, "is not MODEL@MFU");
	refused("4x224x224", "vit-h14@0.4", 1, "no model preset 'vit-h14'");
	refused("4x224x224", "vit-b16@0", 1, "MFU '0' is not a fraction in (0, 1]");
	refused("4x224x224", "vit-b16@40", 1, "MFU '40' is not a fraction");
	refused("4x224x224", "vit-b16@0.4x", 1, "MFU '0.4x' is not a fraction");
	refused("4x224x224", "vit-b16@", 1, "MFU '' is not a fraction");
	refused("4x224x224", "vit-b16@nan", 1, "MFU 'nan' is not a fraction");
	refused("4x224x160", "vit-b16@0.4", 1, "square frames; --bench-clip is 4x224x160");
	refused("4x200x200", "vit-b16@0.4", 1,
		"vit-b16 does not take 4x200x200 clips: --image-size 200 is not a multiple of --patch 16");
	printf("--for: cores per GPU from a given per-core rate, rounded up; bad specs refused with a reason\n");
	return 0;
}
