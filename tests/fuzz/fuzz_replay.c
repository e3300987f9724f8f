// The replay driver `make test` runs for each fuzz harness (built with gcc, no libFuzzer): every
// file of the harness's committed seed corpus, tests/fuzz/corpus/<name> (the program's name
// test_fuzz_<name>), goes through LLVMFuzzerTestOneInput once; a crash fails the test.
#include "fuzz_util.h" // defines: LLVMFuzzerTestOneInput

#include <dirent.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	const char *name = strncmp(base, "test_fuzz_", 10) == 0 ? base + 10 : base;
	char dir[512];
	snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "");
	if (argc < 2)
		snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", name);
	DIR *d = opendir(dir);
	if (!d) {
		printf("skip: no corpus %s (run from the repository root)\n", dir);
		return 77;
	}
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		long size = ftell(f);
		rewind(f);
		uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
		if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
			fprintf(stderr, "%s: cannot read\n", path);
			return 1;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)size);
		free(buf);
		n++;
	}
	closedir(d);
	printf("%s: %d inputs replayed\n", dir, n);
	return n ? 0 : 1;
}
