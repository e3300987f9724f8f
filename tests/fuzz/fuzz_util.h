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
	uint8_t *data; // the copy: data + size is the guard page
} FuzzBuf;

// One mapping per process, grown when an input needs more: body pages then the guard page. The
// copy is placed at the end of the body, so the guard follows it whatever its size (no mapping
// call per execution).
static uint8_t *fuzz_map;
static size_t fuzz_body;

// align: the copy's start is aligned to it (the manifest reader reads 8-byte fields in place),
// so up to align-1 bytes of slack may lie before the guard page when size is not a multiple
static inline int fuzz_guarded(FuzzBuf *b, const uint8_t *src, size_t size, size_t align)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (size + pg - 1) / pg * pg + pg;
	if (body > fuzz_body) {
		if (fuzz_map)
			munmap(fuzz_map, fuzz_body + pg);
		fuzz_map = mmap(NULL, body + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fuzz_map == MAP_FAILED) {
			fuzz_map = NULL;
			fuzz_body = 0;
			return -1;
		}
		mprotect(fuzz_map + body, pg, PROT_NONE);
		fuzz_body = body;
	}
	size_t start = fuzz_body - size;
	start -= start % (align ? align : 1);
	b->data = fuzz_map + start;
	if (size)
		memcpy(b->data, src, size);
	return 0;
}

static inline void fuzz_release(FuzzBuf *b)
{
	(void)b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
