// prep --verify --deep compares each chunk's size and frame rate with its file: a manifest
// whose chunk has width and height swapped (checksums recomputed, as anyone can) passes
// manifest_open, and loaderd would refuse every clip of that chunk, so --verify --deep must
// report it (exit 1, naming the chunk and both geometries); the unchanged manifest is OK.
#include "ld_fixture.h"     // defines: ld_fixture_dataset, ld_fixture_tmpdir
#include "manifest.h"       // defines: ManifestHeader, ManifestChunk
#include "manifest_recrc.h" // defines: manifest_recrc
#include "testutil.h"       // defines: CHECK, CHECK_OK, test_skip, test_file_read, test_file_write

#include <stdlib.h>
#include <sys/wait.h>

// runs prep --verify --deep on path; its exit status, its output in out
static int verify(const char *dir, const char *path, char *out, size_t cap)
{
	char cmd[1024], log[512];
	snprintf(log, sizeof log, "%s/verify.log", dir);
	snprintf(cmd, sizeof cmd, "timeout -k 2 60 tools/prep --verify %s --deep >%s 2>&1", path, log);
	int st = system(cmd);
	CHECK(st != -1 && WIFEXITED(st));
	FILE *f = fopen(log, "r");
	CHECK(f);
	size_t n = fread(out, 1, cap - 1, f);
	out[n] = 0;
	fclose(f);
	printf("--- exit %d:\n%s", WEXITSTATUS(st), out);
	return WEXITSTATUS(st);
}

int main(void)
{
	char dir[256], err[512], path[400], out[8192];
	CHECK_OK(ld_fixture_tmpdir(dir, sizeof dir));
	LdFixtureOpts fo = {.videos = 1,
			    .chunks_per_video = 2,
			    .width = 64,
			    .height = 48,
			    .fps = 10,
			    .frames_per_chunk = 20,
			    .gop = 5};
	if (ld_fixture_dataset(dir, &fo, err, sizeof err))
		test_skip(err); // no H.264 encoder in this libav build
	snprintf(path, sizeof path, "%s/manifest.bin", dir);
	CHECK(verify(dir, path, out, sizeof out) == 0 && strstr(out, "OK"));

	size_t n;
	uint8_t *b = test_file_read(path, &n);
	CHECK(b);
	ManifestChunk *c = (ManifestChunk *)(b + ((ManifestHeader *)b)->chunks_off) + 1;
	CHECK(c->width == 64 && c->height == 48);
	c->width = 48, c->height = 64;
	manifest_recrc(b, n);
	CHECK(test_file_write(path, b, n) == 0);
	free(b);

	CHECK(verify(dir, path, out, sizeof out) == 1);
	CHECK(strstr(out, "chunk 1: ") && strstr(out, "is 64x48 at 10/1 fps, manifest says 48x64 at 10/1 fps"));
	CHECK(strstr(out, "PROBLEMS FOUND"));
	snprintf(out, sizeof out, "rm -rf %s", dir);
	CHECK(system(out) == 0);
	return 0;
}
