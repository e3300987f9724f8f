// Helpers for the ring tests: a small ring with a given shape, removed again at exit.
#ifndef TESTS_RING_TESTUTIL_H
#define TESTS_RING_TESTUTIL_H
// defines: test_ring_create, test_ring_recreate, test_ring_cleanup, test_fill_payload, test_check_payload,
//          test_shm_count

#include <dirent.h>

#include "ring.h"
#include "testutil.h"

static char test_ring_created[64];

static inline void test_ring_cleanup(void)
{
	if (test_ring_created[0])
		ring_destroy(test_ring_created);
}

// files in /dev/shm whose name contains `part`; the first one's name into first (len bytes) if given
static inline int test_shm_count(const char *part, char *first, size_t len)
{
	DIR *d = opendir("/dev/shm");
	CHECK(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strstr(de->d_name, part) && n++ == 0 && first)
			snprintf(first, len, "%s", de->d_name);
	closedir(d);
	return n;
}

// A ring of S slots for N ranks with clips of 1x4x16x3 bytes and 4 text ids.
static inline Ring *test_ring_create(const char *name, uint32_t slots, uint32_t ranks)
{
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = 1, .height = 4, .width = 16, .channels = 3, .text_len = 4};
	o.slots = slots;
	o.ranks = ranks;
	o.seed = 1234;
	o.adopt_timeout_ms = 100;
	char err[256] = "";
	Ring *r = NULL;
	int e = ring_create(&r, name, &o, err, sizeof err);
	if (e) {
		fprintf(stderr, "ring_create(%s): %s\n", name, err);
		exit(1);
	}
	snprintf(test_ring_created, sizeof test_ring_created, "%s", name);
	atexit(test_ring_cleanup);
	return r;
}

// Recreates the ring r was opened from under the same name and shape (a new instance): what a
// launcher does between two jobs. Returns the new ring; r's mapping stays valid but stale.
static inline Ring *test_ring_recreate(Ring *r, const char *name)
{
	RingInfo info;
	ring_info(r, &info);
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = info.geometry;
	o.slots = info.slots;
	o.ranks = info.ranks;
	o.replace = 1;
	Ring *fresh = NULL;
	char err[256] = "";
	if (ring_create(&fresh, name, &o, err, sizeof err)) {
		fprintf(stderr, "ring_create(%s, replace): %s\n", name, err);
		exit(1);
	}
	return fresh;
}

static inline void test_fill_payload(uint8_t *p, size_t bytes, int32_t *text, uint32_t text_len, uint64_t seed,
				     uint64_t g)
{
	for (size_t i = 0; i < bytes; i++)
		p[i] = (uint8_t)(test_fill_word(seed, g, i / 8) >> (8 * (i % 8)));
	for (uint32_t i = 0; i < text_len; i++)
		text[i] = (int32_t)(test_fill_word(seed, g, 1u << 20 | i) & 0xffff);
}

static inline int test_check_payload(const uint8_t *p, size_t bytes, const int32_t *text, uint32_t text_len,
				     uint64_t seed, uint64_t g)
{
	for (size_t i = 0; i < bytes; i++)
		if (p[i] != (uint8_t)(test_fill_word(seed, g, i / 8) >> (8 * (i % 8))))
			return 0;
	for (uint32_t i = 0; i < text_len; i++)
		if (text[i] != (int32_t)(test_fill_word(seed, g, 1u << 20 | i) & 0xffff))
			return 0;
	return 1;
}

#endif
