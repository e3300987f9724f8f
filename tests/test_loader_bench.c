// loaderd --bench on a manifest: makes clips of the asked geometry on its own threads for the
// given seconds, then prints clips/s per core and the cost per clip and exits 0; a malformed
// --bench-clip is refused with a reason; --for MODEL@MFU adds the cores per GPU at that rate.
#include "test_loader_harness.h" // defines: th_loaderd
#include "test_loader_util.h"    // defines: tl_dataset, tl_rmdir

#include <math.h>

static int run(const char *cmd, char *out, size_t cap)
{
	FILE *p = popen(cmd, "r");
	CHECK(p);
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = 0;
	return pclose(p);
}

int main(void)
{
	ld_libav_quiet();
	if (access(th_loaderd(), X_OK) != 0)
		test_skip("loaderd/loaderd is not built (run from the repository root after make)");
	char dir[256], cmd[1024];
	static char out[16384];
	LdFixtureOpts o = {.videos = 2,
			   .chunks_per_video = 2,
			   .width = 256,
			   .height = 144,
			   .fps = 24,
			   .frames_per_chunk = 36,
			   .gop = 12,
			   .bframes = 3,
			   .images = 2};
	tl_dataset(dir, sizeof(dir), &o);
	snprintf(cmd, sizeof(cmd), "%s --manifest %s/manifest.bin --bench 2 --bench-clip 8x64x48 --log-level warn 2>&1",
		 th_loaderd(), dir);
	int st = run(cmd, out, sizeof(out));
	printf("%s", out);
	double per_core = 0;
	const char *l = strstr(out, "s of CPU: ");
	CHECK(st == 0 && l && sscanf(l, "s of CPU: %lf clips/s per core", &per_core) == 1 && per_core > 0);
	CHECK(strstr(out, "clips 8x64x48") && strstr(out, "per clip, ms of one core") && strstr(out, "key frames"));
	CHECK(strstr(out, "(0 errors)"));
	// --for: the cores per GPU after the measured rate, the same rate in its arithmetic
	snprintf(cmd, sizeof(cmd),
		 "%s --manifest %s/manifest.bin --bench 1 --bench-clip 4x64x64 --for tiny@0.5 --log-level warn 2>&1",
		 th_loaderd(), dir);
	st = run(cmd, out, sizeof(out));
	printf("%s", out);
	double rate = 0, gpu = 0, shown = 0, quotient = 0;
	int cores = 0;
	l = strstr(out, "s of CPU: ");
	CHECK(st == 0 && l && sscanf(l, "s of CPU: %lf clips/s per core", &rate) == 1 && rate > 0);
	CHECK(strstr(out, "cores per GPU for tiny at 50% MFU on 4x64x64 clips"));
	l = strstr(out, "\nH200: ");
	CHECK(l && sscanf(l, "\nH200: %d cores at T=4 (%lf clips/s per GPU / %lf clips/s per core = %lf", &cores, &gpu,
			  &shown, &quotient) == 4);
	// the rates are printed to 0.1 and the quotient to 0.01: the cores are the quotient rounded up, and
	// the quotient is the GPU's clips/s over the measured rate within what that printing rounds away
	CHECK(fabs(shown - rate) < 0.051 && cores == (int)ceil(quotient - 1e-9) &&
	      fabs(gpu / shown - quotient) <= 0.006 + 0.051 * gpu / (shown * (shown - 0.051)) &&
	      strstr(out, "\nA100: "));
	snprintf(cmd, sizeof(cmd), "%s --manifest %s/manifest.bin --bench 1 --bench-clip 8x64 2>&1", th_loaderd(), dir);
	st = run(cmd, out, sizeof(out));
	CHECK(st != 0 && strstr(out, "--bench-clip: '8x64' is not TxHxW"));
	tl_rmdir(dir);
	printf("loaderd --bench: %.1f clips/s per core on the fixture\n", per_core);
	return 0;
}
