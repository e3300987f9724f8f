// safetensors files: write named tensors with string metadata, and read them back through
// mmap with every header field checked (offsets inside the file, sizes matching shapes).
#ifndef ST_FILE_H
#define ST_FILE_H
// defines: StDtype, StTensor, StFile, st_dtype_name, st_dtype_size, st_write_fd, st_write, st_open, st_close,
//          st_find, st_meta, st_count, st_entry

#include <stddef.h>
#include <stdint.h>

typedef enum { ST_F32, ST_F64, ST_F16, ST_BF16, ST_I32, ST_I64, ST_U64, ST_U8, ST_NDTYPES } StDtype;

#define ST_MAX_DIMS 8

typedef struct {
	char name[160];
	StDtype dtype;
	int ndim;
	int64_t shape[ST_MAX_DIMS];
	const void *data; // writer: the bytes to write; reader: points into the mapping
	size_t nbytes;
} StTensor;

typedef struct StFile StFile;

const char *st_dtype_name(StDtype d);
size_t st_dtype_size(StDtype d);
// writes header + data to fd at its current position; meta: NULL or n_meta key/value pairs.
// Returns 0 or -errno (ENOSPC, EFBIG, EIO...) from the first failing write; does not fsync.
int st_write_fd(int fd, const StTensor *t, int n, const char *const *meta_kv, int n_meta);
// the same into a new file at path (truncating an old one); not atomic, see ckpt_* for that
int st_write(const char *path, const StTensor *t, int n, const char *const *meta_kv, int n_meta);
// -errno for open/mmap failures, -EBADMSG for a malformed file
int st_open(StFile **out, const char *path);
void st_close(StFile *f);
int st_count(const StFile *f);
const StTensor *st_entry(const StFile *f, int i);
const StTensor *st_find(const StFile *f, const char *name);
// value of a __metadata__ key, or NULL
const char *st_meta(const StFile *f, const char *key);

#endif
