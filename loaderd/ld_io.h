// Whole-file and byte-range (tar member, GOP) reads for the loader: io_uring with several reads in flight, or
// pread when io_uring is refused or forced off. Completions come back in any order.
#ifndef LOADERD_LD_IO_H
#define LOADERD_LD_IO_H
// defines: LdRead, LdReader, ld_reader_new, ld_reader_free, ld_reader_submit, ld_reader_wait, ld_reader_kind

#include <stddef.h>
#include <stdint.h>

// One read. The caller owns it and its buffer (grown by the reader as needed, reused).
typedef struct LdRead {
	const char *path;
	uint64_t offset, length; // length 0: the whole file
	uint64_t expect_size;    // the file's size a packet index describes (0: not checked)
	uint8_t *buf;
	size_t cap;
	size_t size;      // bytes read (valid when done)
	int error;        // 0 or -LD_ERR_*
	char reason[256]; // when error
	void *user;
	// reader's own
	int fd;
	size_t want, got;
} LdRead;

typedef struct LdReader LdReader;

// depth: reads in flight at most. force_pread: do not try io_uring. *why_pread (may be NULL)
// receives why io_uring is not used, "" when it is. 0 or -errno.
int ld_reader_new(LdReader **out, unsigned depth, int force_pread, char *why_pread, size_t whylen);
void ld_reader_free(LdReader *r);
// "io_uring" or "pread"
const char *ld_reader_kind(const LdReader *r);
// Starts a read (errors are delivered through ld_reader_wait like completions). -EBUSY when
// depth reads are already in flight.
int ld_reader_submit(LdReader *r, LdRead *rd);
// Next finished read (*done), waiting when none is ready. -EAGAIN when nothing is in flight.
int ld_reader_wait(LdReader *r, LdRead **done);

#endif
