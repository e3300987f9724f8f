// Small helpers for the standalone test programs: checks that report file:line, skip (exit 77),
// and ring names unique per process so tests can run side by side.
#ifndef TESTS_TESTUTIL_H
#define TESTS_TESTUTIL_H
// defines: CHECK, CHECK_EQ_INT, CHECK_OK, EXPECT, test_failures, test_skip, test_ring_name, test_fill_word,
//          test_file_read, test_file_write

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "proc_time.h" // defines: time_mono_s

#define CHECK(cond)                                                                                                    \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                       \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

// EXPECT(cond, fmt, ...): a failed check says why and counts in test_failures, and the test goes on
// (CHECK stops at the first); main returns test_failures ? 1 : 0
static int test_failures __attribute__((unused));
#define EXPECT(cond, ...)                                                                                              \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                           \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fputc('\n', stderr);                                                                           \
			test_failures++;                                                                               \
		}                                                                                                      \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                                                             \
	do {                                                                                                           \
		long long _a = (long long)(a), _b = (long long)(b);                                                    \
		if (_a != _b) {                                                                                        \
			fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a, #b,  \
				_a, _b);                                                                               \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

// a call returning 0 or -errno
#define CHECK_OK(call)                                                                                                 \
	do {                                                                                                           \
		int _e = (call);                                                                                       \
		if (_e != 0) {                                                                                         \
			fprintf(stderr, "%s:%d: %s returned %d (%s)\n", __FILE__, __LINE__, #call, _e, strerror(-_e)); \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

static inline void test_skip(const char *why)
{
	printf("skip: %s\n", why);
	exit(77);
}

// "t-<what>-<pid>": unique per process, short enough for a ring name
static inline const char *test_ring_name(const char *what)
{
	static char name[64];
	snprintf(name, sizeof name, "t-%s-%d", what, (int)getpid());
	return name;
}

// the payload word i of position g in a stream with this seed (splitmix64 of a counter)
static inline uint64_t test_fill_word(uint64_t seed, uint64_t g, uint64_t i)
{
	uint64_t z = seed + g * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// a whole file into a malloc'd buffer (size in *n), NULL when it cannot be read
static inline uint8_t *test_file_read(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	uint8_t *buf = malloc(*n);
	if (buf && fread(buf, 1, *n, f) != *n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

// buf[0..n) as the whole file p: 0, or -1 when it cannot be written
static inline int test_file_write(const char *p, const void *buf, size_t n)
{
	FILE *f = fopen(p, "wb");
	int ok = f && fwrite(buf, 1, n, f) == n;
	return (f && fclose(f) == 0 && ok) ? 0 : -1;
}

#endif
