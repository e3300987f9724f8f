// Every program rejects a damaged ring or manifest with one clear line and exit 1, never a
// crash, a hang or a silent misread: ringstat, ringctl info, loaderd, the trainer and clipdump
// for garbage in the ring's control block (text offset) and for slot words far ahead of the
// stream; loaderd, eval and clipdump for a manifest whose data section no longer matches its
// checksum (a changed caption token).
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/wait.h>

#include "ld_fixture.h" // defines: ld_fixture_image, ld_fixture_tar, ld_fixture_manifest, ld_fixture_tmpdir
#include "manifest.h"   // defines: ManifestHeader
#include "ring_layout.h"
#include "ring_testutil.h"

static char dir[256], seg_path[192];
static const char *ring;

static void poke_u64(size_t off, uint64_t v)
{
	int fd = open(seg_path, O_RDWR);
	CHECK(fd >= 0 && pwrite(fd, &v, sizeof v, (off_t)off) == (ssize_t)sizeof v);
	close(fd);
}

// runs cmd with stderr into a file; exit status 1 and exactly one stderr line saying `want`
static void expect_one_line(const char *what, const char *cmd, const char *want)
{
	char full[4096], errf[512], *line = NULL;
	size_t cap = 0;
	snprintf(errf, sizeof errf, "%s/err", dir);
	snprintf(full, sizeof full, "timeout -k 2 20 %s >/dev/null 2>%s", cmd, errf);
	int st = system(full);
	CHECK(st != -1 && WIFEXITED(st));
	FILE *f = fopen(errf, "r");
	CHECK(f);
	int lines = 0, found = 0;
	while (getline(&line, &cap, f) > 0) { // whole lines: the trainer's configuration line is long
		// loaderd and the trainer log their configuration first: count only warnings and fatal lines
		if (strstr(line, "] info: "))
			continue;
		lines++;
		found |= strstr(line, want) != NULL;
		printf("  %-14s exit %d: %s", what, WEXITSTATUS(st), line);
	}
	free(line);
	fclose(f);
	if (WEXITSTATUS(st) != 1 || lines != 1 || !found) {
		fprintf(stderr, "%s: exit %d, %d lines, want exit 1 and one line saying '%s'\n", what, WEXITSTATUS(st),
			lines, want);
		exit(1);
	}
}

static void run_all(const char *manifest, int slots_damaged)
{
	char cmd[2048];
	const char *b = getenv("BUILD") ? getenv("BUILD") : "build";
	(void)b;
	if (!slots_damaged) {
		snprintf(cmd, sizeof cmd, "tools/ringstat --ring %s", ring);
		expect_one_line("ringstat", cmd, "damaged");
		snprintf(cmd, sizeof cmd, "tools/ringctl info --ring %s", ring);
		expect_one_line("ringctl info", cmd, "damaged");
	}
	snprintf(cmd, sizeof cmd, "loaderd/loaderd --ring %s --manifest %s --workers 1 --timeout-ms 0", ring, manifest);
	expect_one_line("loaderd", cmd, "damaged");
	snprintf(
		cmd, sizeof cmd,
		"trainer/trainer --ring %s --run-dir %s/run --model tiny --image-size 16 --patch 8 --frames 2 --vis-width 32 "
		"--vis-layers 1 --vis-heads 2 --vocab 64 --ctx-len 8 --txt-width 32 --txt-layers 1 --txt-heads 2 --embed-dim 16 "
		"--threads 1 --dataset-size 4 --batch-size 2 --steps 1",
		ring, dir);
	expect_one_line("trainer", cmd, "damaged");
	snprintf(cmd, sizeof cmd, "tools/clipdump --ring %s --rank 0 --count 1 --out %s/sheets", ring, dir);
	expect_one_line("clipdump", cmd, "damaged");
}

int main(void)
{
	alarm(200);
	const char *progs[] = {"tools/ringstat",  "tools/ringctl",  "loaderd/loaderd",
			       "trainer/trainer", "tools/clipdump", "tools/eval"};
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
		if (access(progs[i], X_OK) != 0)
			test_skip("the programs are not built (run make)");
	CHECK(ld_fixture_tmpdir(dir, sizeof dir) == 0);
	// a valid manifest of one image, so loaderd gets as far as the ring
	uint8_t *png;
	size_t npng;
	CHECK(ld_fixture_image("png", 32, 32, 1, &png, &npng) == 0);
	char tar[512], manifest[512];
	snprintf(tar, sizeof tar, "%s/shard.tar", dir);
	const char *names[] = {"a.png"};
	const uint8_t *datas[] = {png};
	uint64_t off, len = npng;
	CHECK(ld_fixture_tar(tar, names, datas, &npng, 1, &off) == 0);
	snprintf(manifest, sizeof manifest, "%s/manifest.bin", dir);
	CHECK(ld_fixture_manifest(manifest, NULL, 0, "shard.tar", &off, &len, 1) == 0);

	ring = test_ring_name("dmgtools");
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = 2, .height = 16, .width = 16, .channels = 3, .text_len = 8};
	o.slots = 8;
	Ring *r;
	char err[256];
	if (ring_create(&r, ring, &o, err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	snprintf(test_ring_created, sizeof test_ring_created, "%s", ring);
	atexit(test_ring_cleanup);
	RingInfo info;
	ring_info(r, &info);
	snprintf(seg_path, sizeof seg_path, "%s", info.path);

	printf("text offset past the segment:\n");
	uint64_t good = r->ctl->text_offset;
	poke_u64(offsetof(RingControl, text_offset), 1ull << 40);
	run_all(manifest, 0);
	poke_u64(offsetof(RingControl, text_offset), good);

	printf("slot words far ahead of the stream:\n");
	uint64_t saved[8];
	for (uint32_t s = 0; s < o.slots; s++)
		saved[s] = atomic_load(&r->slots[s].state);
	for (uint32_t s = 0; s < o.slots; s++)
		atomic_store(&r->slots[s].state, slot_word((1ull << 40) + s, 0, SLOT_EMPTY));
	run_all(manifest, 1);
	for (uint32_t s = 0; s < o.slots; s++)
		atomic_store(&r->slots[s].state, saved[s]);

	printf("a manifest whose data no longer matches its checksum:\n");
	FILE *mf = fopen(manifest, "r+b");
	ManifestHeader mh;
	CHECK(mf && fread(&mh, sizeof mh, 1, mf) == 1);
	uint16_t tokv = 0;
	CHECK(fseek(mf, (long)mh.tokens_off + 2, SEEK_SET) == 0 && fread(&tokv, 2, 1, mf) == 1);
	tokv ^= 1;
	CHECK(fseek(mf, (long)mh.tokens_off + 2, SEEK_SET) == 0 && fwrite(&tokv, 2, 1, mf) == 1);
	fclose(mf);
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "loaderd/loaderd --ring %s --manifest %s --workers 1", ring, manifest);
	expect_one_line("loaderd", cmd, "data checksum mismatch");
	snprintf(cmd, sizeof cmd, "tools/eval --init-seed 1 --model tiny --manifest %s", manifest);
	expect_one_line("eval", cmd, "data checksum mismatch");
	snprintf(cmd, sizeof cmd, "tools/clipdump --manifest %s --positions 0-0 --out %s/sheets", manifest, dir);
	expect_one_line("clipdump", cmd, "data checksum mismatch");
	ring_close(r);
	free(png);
	char rm[600];
	snprintf(rm, sizeof rm, "rm -rf %s", dir);
	CHECK(system(rm) == 0);
	printf("every program refuses a damaged ring or manifest with one line\n");
	return 0;
}
