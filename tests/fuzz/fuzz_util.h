// Shared by the fuzz harnesses: the input copied so that it ends exactly at a PROT_NONE page,
// as a mapped file with no NUL after it does, so any read past its end faults at once (also
// without a sanitizer, in the replay build that make test runs).
#ifndef TESTS_FUZZ_FUZZ_UTIL_H
#define TESTS_FUZZ_FUZZ_UTIL_H
// defines: FuzzBuf, fuzz_guarded, fuzz_release, LLVMFuzzerTestOneInput

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct {
	uint8_t *map;  // the whole mapping: data pages and the guard page after them
	size_t maplen;
	uint8_t *data; // the copy: data + size is the guard page
} FuzzBuf;

// align: the copy's start is aligned to it (the manifest reader reads 8-byte fields in place),
// so up to align-1 bytes of slack may lie before the guard page when size is not a multiple
static inline int fuzz_guarded(FuzzBuf *b, const uint8_t *src, size_t size, size_t align)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (size + pg - 1) / pg * pg + pg;
	b->maplen = body + pg;
	b->map = mmap(NULL, b->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->map == MAP_FAILED)
		return -1;
	mprotect(b->map + body, pg, PROT_NONE);
	size_t start = body - size;
	start -= start % (align ? align : 1);
	b->data = b->map + start;
	if (size)
		memcpy(b->data, src, size);
	return 0;
}

static inline void fuzz_release(FuzzBuf *b) { munmap(b->map, b->maplen); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
