// The CPU backend's free memory is MemAvailable: the meminfo parser reads the key asked for (not
// a key it begins, MemAvailable rather than MemFree), in kB, and refuses what is not "N kB";
// proc_mem_available on this machine says MemAvailable whenever /proc/meminfo has it.
#include "proc_mem.h" // defines: proc_meminfo_field, proc_mem_available

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int fails;

static void expect(const char *what, const char *text, const char *key, int want_rc, uint64_t want)
{
	uint64_t v = 12345;
	int rc = proc_meminfo_field(text, strlen(text), key, &v);
	if (rc != want_rc || (rc == 0 && v != want)) {
		printf("FAIL %s: rc %d value %llu, want rc %d value %llu\n", what, rc, (unsigned long long)v, want_rc,
		       (unsigned long long)want);
		fails++;
	}
}

int main(void)
{
	// a warm page cache: little free, much available (the case that refused ViT-B-16)
	static const char warm[] = "MemTotal:       32768000 kB\n"
				   "MemFree:         2516582 kB\n"
				   "MemAvailable:   23592960 kB\n"
				   "Buffers:          102400 kB\n"
				   "Cached:         20000000 kB\n";
	expect("MemAvailable", warm, "MemAvailable", 0, 23592960ull * 1024);
	expect("MemFree", warm, "MemFree", 0, 2516582ull * 1024);
	expect("MemTotal", warm, "MemTotal", 0, 32768000ull * 1024);
	expect("a key that is only a prefix", warm, "Mem", -ENOENT, 0);
	expect("absent (kernels before 3.14)", "MemTotal: 1000 kB\nMemFree: 10 kB\n", "MemAvailable", -ENOENT, 0);
	expect("last line without newline", "MemFree: 1 kB\nMemAvailable: 7 kB", "MemAvailable", 0, 7 * 1024);
	expect("no unit", "MemAvailable: 77\n", "MemAvailable", -EBADMSG, 0);
	expect("not a number", "MemAvailable: lots kB\n", "MemAvailable", -EBADMSG, 0);
	expect("other unit", "MemAvailable: 77 MB\n", "MemAvailable", -EBADMSG, 0);
	expect("empty", "", "MemAvailable", -ENOENT, 0);
	uint64_t b;
	int from;
	if (proc_mem_available(&b, &from) || b == 0) {
		printf("FAIL proc_mem_available on this machine\n");
		fails++;
	}
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	int has = 0;
	while (f && fgets(line, sizeof line, f))
		has |= !strncmp(line, "MemAvailable:", 13);
	if (f)
		fclose(f);
	if (has != from) {
		printf("FAIL /proc/meminfo %s MemAvailable, proc_mem_available says from_meminfo %d\n",
		       has ? "has" : "has no", from);
		fails++;
	}
	printf("%s\n", fails ? "FAILED" : "meminfo parsed: the CPU backend's free memory is MemAvailable");
	return fails ? 1 : 0;
}
