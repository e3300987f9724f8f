// A whole sample from its plan: decodes each source chunk's frames (or the image) into the
// (T, H, W, 3) destination with one crop for the clip; plus a plain-read path for tools/tests.
#ifndef LOADERD_LD_CLIP_H
#define LOADERD_LD_CLIP_H
// defines: LdFiles, ld_clip_decode, ld_file_open, ld_file_read, ld_file_size_error, ld_files_free, ld_sample_load

#include "ld_plan.h" // defines: LdPlan, LdParams, LD_MAX_SOURCES

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h> // defines: struct stat

// Decodes plan's frames from bufs[0..plan->n_ranges) (the bytes of plan->ranges, read) into dst
// (T, out_h, out_w, 3). For an
// image, fills plan->src_w/h and plan->crop, and repeats the image over T frames. The watchdog
// (p->timeout_ms) starts now. 0 or -LD_ERR_* with a one-line reason.
int ld_clip_decode(LdDecoder *d, const Manifest *m, LdPlan *plan, const LdParams *p, const LdBuffer *bufs, uint8_t *dst,
		   char *err, size_t errlen);

// reusable read buffers for the plain (pread) path, one per range
typedef struct {
	uint8_t *buf[LD_MAX_RANGES];
	size_t cap[LD_MAX_RANGES];
} LdFiles;
void ld_files_free(LdFiles *f);

// Reads [offset, offset + length) of path (length 0: the whole file) into *buf (grown as
// needed); expect_size (0: any) is the file size a packet index describes. -LD_ERR_MISSING /
// EMPTY / IO / TRUNCATED / CORRUPT (other size than indexed) / NOMEM with a reason.
int ld_file_read(const char *path, uint64_t offset, uint64_t length, uint64_t expect_size, uint8_t **buf, size_t *cap,
		 size_t *size, char *err, size_t errlen);
// Opens a chunk or shard for reading, never blocking: a FIFO or device planted at the path (a
// hostile manifest, a file replaced in the dataset folder) would hang open() and read() beyond any
// watchdog. The fd (O_NONBLOCK cleared) with *st filled, or -LD_ERR_MISSING / IO with a reason.
int ld_file_open(const char *path, struct stat *st, char *err, size_t errlen);
// 0 when a file of size bytes fits what the read asks for, else -LD_ERR_* with a reason (shared
// by the pread and io_uring readers)
int ld_file_size_error(const char *path, uint64_t size, uint64_t offset, uint64_t length, uint64_t expect_size,
		       char *err, size_t errlen);

// plan + plain reads + decode of position g (tests, clipdump, benchmarks)
int ld_sample_load(LdDecoder *d, LdFiles *files, const Manifest *m, uint64_t g, const LdParams *p, LdPlan *plan,
		   uint8_t *dst, char *err, size_t errlen);

#endif
