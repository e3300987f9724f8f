// ustar archives: the one writer (synth's webdataset shards, the loader's test shards, tests)
// and the header checksum that writer and reader (tools/prep_tar.c) both compute.
#ifndef DATA_TAR_H
#define DATA_TAR_H
// defines: TarWriter, tar_header, tar_header_sum, tar_open, tar_add, tar_close

#include <stdint.h> // defines: uint64_t
#include <stdio.h>  // defines: FILE

typedef struct {
	FILE *f;
	uint64_t pos; // bytes written so far: the next member's header offset
} TarWriter;

// sum of the header's bytes with the checksum field read as eight spaces (POSIX ustar)
unsigned tar_header_sum(const unsigned char hdr[512]);
// the 512-byte ustar header of a member of type `type` ('0' file, 'x' pax, 'L' long name) with
// mtime 0, uid/gid 0, mode 0644, so the same members give the same bytes.
// -ENAMETOOLONG: name of 100 bytes or more; -EFBIG: len of 8 GiB or more
int tar_header(unsigned char hdr[512], const char *name, uint64_t len, char type);
// 0 or -errno
int tar_open(TarWriter *t, const char *path);
// appends a regular file member; *data_off (when not NULL) gets the offset of its data. 0 or -errno
int tar_add(TarWriter *t, const char *name, const void *data, size_t len, uint64_t *data_off);
// the two zero blocks that end an archive, then fclose; 0 or -errno
int tar_close(TarWriter *t);

#endif
