// Every program that reads a manifest refuses one whose sections overlap (its caption tokens
// placed on the samples table) even with both checksums recomputed, as anyone can: loaderd,
// eval, clipdump and prep --verify --deep exit 1 saying which sections overlap, instead of
// reading every caption from the wrong bytes.
#include "ld_fixture.h"     // defines: ld_fixture_image, ld_fixture_tar, ld_fixture_manifest, ld_fixture_tmpdir
#include "manifest.h"       // defines: ManifestHeader
#include "manifest_recrc.h" // defines: manifest_recrc
#include "testutil.h"       // defines: CHECK, test_skip, test_file_read, test_file_write

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

// runs cmd (stdout and stderr into a file): exit 1 and the output says want
static void expect_refused(const char *what, const char *cmd, const char *want)
{
	char full[4096], log[512], out[8192];
	snprintf(log, sizeof log, "%s/out", dir);
	snprintf(full, sizeof full, "timeout -k 2 30 %s >%s 2>&1", cmd, log);
	int st = system(full);
	CHECK(st != -1 && WIFEXITED(st));
	FILE *f = fopen(log, "r");
	CHECK(f);
	size_t n = fread(out, 1, sizeof out - 1, f);
	out[n] = 0;
	fclose(f);
	printf("  %-10s exit %d: %s", what, WEXITSTATUS(st), out);
	if (WEXITSTATUS(st) != 1 || !strstr(out, want)) {
		fprintf(stderr, "%s: exit %d, want exit 1 and '%s'\n", what, WEXITSTATUS(st), want);
		exit(1);
	}
}

int main(void)
{
	const char *progs[] = {"loaderd/loaderd", "tools/clipdump", "tools/eval", "tools/prep"};
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
		if (access(progs[i], X_OK) != 0)
			test_skip("the programs are not built (run make)");
	CHECK(ld_fixture_tmpdir(dir, sizeof dir) == 0);
	uint8_t *png;
	size_t npng;
	CHECK(ld_fixture_image("png", 32, 32, 1, &png, &npng) == 0);
	char tar[512], manifest[512];
	snprintf(tar, sizeof tar, "%s/shard.tar", dir);
	const char *names[] = {"a.png", "b.png"};
	const uint8_t *datas[] = {png, png};
	size_t sizes[] = {npng, npng};
	uint64_t off[2], len[2] = {npng, npng};
	CHECK(ld_fixture_tar(tar, names, datas, sizes, 2, off) == 0);
	snprintf(manifest, sizeof manifest, "%s/manifest.bin", dir);
	CHECK(ld_fixture_manifest(manifest, NULL, 0, "shard.tar", off, len, 2) == 0);

	size_t n;
	uint8_t *b = test_file_read(manifest, &n);
	CHECK(b);
	ManifestHeader *h = (ManifestHeader *)b;
	h->tokens_off = h->samples_off;
	manifest_recrc(b, n);
	CHECK(test_file_write(manifest, b, n) == 0);
	free(b);

	char cmd[2048];
	const char *want = "samples section";
	snprintf(cmd, sizeof cmd, "loaderd/loaderd --ring avclip-hostile-%d --manifest %s --workers 1", (int)getpid(),
		 manifest);
	expect_refused("loaderd", cmd, want);
	snprintf(cmd, sizeof cmd, "tools/eval --init-seed 1 --model tiny --manifest %s", manifest);
	expect_refused("eval", cmd, want);
	snprintf(cmd, sizeof cmd, "tools/clipdump --manifest %s --positions 0-0 --out %s/sheets", manifest, dir);
	expect_refused("clipdump", cmd, want);
	snprintf(cmd, sizeof cmd, "tools/prep --verify %s --deep", manifest);
	expect_refused("prep", cmd, want);
	free(png);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	printf("every program refuses a manifest with overlapping sections\n");
	return 0;
}
