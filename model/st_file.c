// safetensors reader and writer: 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the data. The parser accepts only that shape
// of JSON and checks every range, so a truncated or hostile file is an error, not a crash.
#include "model.h"  // defines: StFile, StTensor
#include "fs_dir.h" // defines: fs_open_regular
#include "json_lex.h" // defines: JsonLex, json_lex_init, json_fail, json_at, json_expect, json_accept, json_string, json_uint

#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_MAX_META 64

struct StFile {
	void *map;
	size_t size;
	StTensor *t;
	int n;
	char *meta_k[ST_MAX_META], *meta_v[ST_MAX_META];
	int n_meta;
	int meta_seen; // __metadata__ objects parsed
	int borrowed;  // map belongs to the caller (st_parse)
};

static const char *dnames[ST_NDTYPES] = {"F32", "F64", "F16", "BF16", "I32", "I64", "U64", "U8"};
static const size_t dsizes[ST_NDTYPES] = {4, 8, 2, 2, 4, 8, 8, 1};

const char *st_dtype_name(StDtype d)
{
	return (unsigned)d < ST_NDTYPES ? dnames[d] : "?";
}

size_t st_dtype_size(StDtype d)
{
	return (unsigned)d < ST_NDTYPES ? dsizes[d] : 0;
}

// ---- writer ----
typedef struct {
	char *s;
	size_t len, cap;
	int err;
} Buf;

static void put(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Buf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (k < 0) {
			b->err = -EINVAL;
			return;
		}
		if (b->len + (size_t)k < b->cap) {
			b->len += (size_t)k;
			return;
		}
		size_t nc = (b->cap + (size_t)k) * 2 + 256;
		char *ns = realloc(b->s, nc);
		if (!ns) {
			b->err = -ENOMEM;
			return;
		}
		b->s = ns;
		b->cap = nc;
	}
}

static void put_str(Buf *b, const char *s)
{
	put(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			put(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			put(b, "\\u%04x", *s);
		else
			put(b, "%c", *s);
	}
	put(b, "\"");
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

int st_write_fd(int fd, const StTensor *t, int n, const char *const *kv, int n_meta)
{
	Buf b = {0};
	put(&b, "{");
	if (n_meta > 0) {
		put(&b, "\"__metadata__\":{");
		for (int i = 0; i < n_meta; i++) {
			put(&b, i ? "," : "");
			put_str(&b, kv[2 * i]);
			put(&b, ":");
			put_str(&b, kv[2 * i + 1]);
		}
		put(&b, "}");
	}
	size_t off = 0;
	for (int i = 0; i < n; i++) {
		size_t want = st_dtype_size(t[i].dtype);
		for (int d = 0; d < t[i].ndim; d++)
			want *= (size_t)t[i].shape[d];
		if ((unsigned)t[i].dtype >= ST_NDTYPES || t[i].ndim < 0 || t[i].ndim > ST_MAX_DIMS ||
		    want != t[i].nbytes || !t[i].name[0]) {
			free(b.s);
			return -EINVAL;
		}
		put(&b, (i || n_meta > 0) ? "," : "");
		put_str(&b, t[i].name);
		put(&b, ":{\"dtype\":\"%s\",\"shape\":[", st_dtype_name(t[i].dtype));
		for (int d = 0; d < t[i].ndim; d++)
			put(&b, "%s%lld", d ? "," : "", (long long)t[i].shape[d]);
		put(&b, "],\"data_offsets\":[%zu,%zu]}", off, off + t[i].nbytes);
		off += t[i].nbytes;
	}
	put(&b, "}");
	while (!b.err && b.len % 8) // data starts 8-byte aligned, as the reference writer does
		put(&b, " ");
	if (b.err) {
		free(b.s);
		return b.err;
	}
	uint8_t len8[8];
	for (int i = 0; i < 8; i++)
		len8[i] = (uint8_t)((uint64_t)b.len >> (8 * i));
	int rc = write_all(fd, len8, 8);
	if (!rc)
		rc = write_all(fd, b.s, b.len);
	for (int i = 0; i < n && !rc; i++)
		rc = write_all(fd, t[i].data, t[i].nbytes);
	free(b.s);
	return rc;
}

int st_write(const char *path, const StTensor *t, int n, const char *const *kv, int n_meta)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int rc = st_write_fd(fd, t, n, kv, n_meta);
	if (close(fd) && !rc)
		rc = -errno;
	return rc;
}

// ---- reader: a JSON subset (objects, strings, integer arrays) on the common tokenizer ----
// Every read is bounded by the header's end: the mapped header has no NUL after it, so no C
// string function may look at it (json_lex reads by length).

// names and metadata are ASCII (what st_write writes); anything else is refused
static int str(JsonLex *c, char *out, size_t cap)
{
	return json_string(c, out, cap, NULL, JSON_ASCII);
}

static int int_array(JsonLex *c, int64_t *out, int cap, int *n)
{
	*n = 0;
	if (json_expect(c, '['))
		return -EBADMSG;
	if (json_accept(c, ']'))
		return 0;
	for (;;) {
		if (*n >= cap)
			return json_fail(c, "more than %d integers in an array at byte %ld", cap, json_at(c));
		if (json_uint(c, &out[*n]))
			return -EBADMSG;
		(*n)++;
		if (!json_accept(c, ','))
			return json_expect(c, ']');
	}
}

static int parse_meta(StFile *f, JsonLex *c)
{
	if (f->meta_seen++)
		return json_fail(c, "__metadata__ appears twice");
	if (json_expect(c, '{'))
		return -EBADMSG;
	if (json_accept(c, '}'))
		return 0;
	for (;;) {
		char k[256], v[4096];
		if (str(c, k, sizeof k) || json_expect(c, ':') || str(c, v, sizeof v))
			return -EBADMSG;
		if (f->n_meta >= ST_MAX_META)
			return json_fail(c, "more than %d metadata entries", ST_MAX_META);
		for (int i = 0; i < f->n_meta; i++)
			if (!strcmp(f->meta_k[i], k))
				return json_fail(c, "metadata key '%s' appears twice", k);
		f->meta_k[f->n_meta] = strdup(k);
		f->meta_v[f->n_meta] = strdup(v);
		f->n_meta++;
		if (!f->meta_k[f->n_meta - 1] || !f->meta_v[f->n_meta - 1])
			return -ENOMEM;
		if (!json_accept(c, ','))
			return json_expect(c, '}');
	}
}

static int parse_tensor(JsonLex *c, StTensor *t, int64_t offs[2], const uint8_t *data, size_t data_len)
{
	int have = 0;
	if (json_expect(c, '{'))
		return -EBADMSG;
	for (;;) {
		char key[32], dt[16];
		if (str(c, key, sizeof key) || json_expect(c, ':'))
			return -EBADMSG;
		int bit = !strcmp(key, "dtype") ? 1 : !strcmp(key, "shape") ? 2 : !strcmp(key, "data_offsets") ? 4 : 0;
		if (!bit)
			return json_fail(c, "tensor %s: unknown field '%s'", t->name, key);
		if (have & bit)
			return json_fail(c, "tensor %s: field '%s' appears twice", t->name, key);
		have |= bit;
		if (bit == 1) {
			if (str(c, dt, sizeof dt))
				return -EBADMSG;
			t->dtype = ST_NDTYPES;
			for (int i = 0; i < ST_NDTYPES; i++)
				if (!strcmp(dt, dnames[i]))
					t->dtype = (StDtype)i;
			if (t->dtype == ST_NDTYPES)
				return json_fail(c, "tensor %s: unknown dtype '%s'", t->name, dt);
		} else if (bit == 2) {
			if (int_array(c, t->shape, ST_MAX_DIMS, &t->ndim))
				return -EBADMSG;
		} else {
			int k;
			if (int_array(c, offs, 2, &k))
				return -EBADMSG;
			if (k != 2)
				return json_fail(c, "tensor %s: data_offsets needs 2 integers", t->name);
		}
		if (!json_accept(c, ','))
			break;
	}
	if (json_expect(c, '}'))
		return -EBADMSG;
	if (have != 7)
		return json_fail(c, "tensor %s: dtype, shape or data_offsets missing", t->name);
	if (offs[0] > offs[1] || (uint64_t)offs[1] > data_len)
		return json_fail(c, "tensor %s: data_offsets [%lld, %lld) outside the %zu data bytes", t->name,
				 (long long)offs[0], (long long)offs[1], data_len);
	size_t want = st_dtype_size(t->dtype);
	for (int d = 0; d < t->ndim; d++) {
		if (t->shape[d] && want > SIZE_MAX / (size_t)t->shape[d])
			return json_fail(c, "tensor %s: shape too large", t->name);
		want *= (size_t)t->shape[d];
	}
	t->nbytes = (size_t)(offs[1] - offs[0]);
	if (want != t->nbytes)
		return json_fail(c, "tensor %s: its shape needs %zu bytes, data_offsets give %zu", t->name, want,
				 t->nbytes);
	t->data = data + offs[0];
	return 0;
}

typedef struct {
	const char *name;
	int64_t b, e;
} Span;

static int by_name(const void *a, const void *b)
{
	return strcmp(((const Span *)a)->name, ((const Span *)b)->name);
}

static int by_offset(const void *a, const void *b)
{
	const Span *x = a, *y = b;
	return x->b != y->b ? (x->b < y->b ? -1 : 1) : (x->e > y->e) - (x->e < y->e);
}

// names unique, and the tensors tile the data section exactly (no overlap, hole or tail), as
// the format asks
static int check_tensors(JsonLex *c, Span *sp, int n, size_t data_len)
{
	if (n == 0) // metadata only (sp is NULL: qsort must not see it)
		return data_len ? json_fail(c, "no tensor, yet %zu data bytes", data_len) : 0;
	qsort(sp, (size_t)n, sizeof *sp, by_name);
	for (int i = 1; i < n; i++)
		if (!strcmp(sp[i].name, sp[i - 1].name))
			return json_fail(c, "tensor %s appears twice", sp[i].name);
	qsort(sp, (size_t)n, sizeof *sp, by_offset);
	int64_t end = 0;
	for (int i = 0; i < n; i++) {
		if (sp[i].b != end)
			return json_fail(c, "tensor %s starts at data byte %lld, expected %lld (%s)", sp[i].name,
					 (long long)sp[i].b, (long long)end, sp[i].b < end ? "overlap" : "hole");
		end = sp[i].e;
	}
	if ((uint64_t)end != data_len)
		return json_fail(c, "the tensors cover %lld of the %zu data bytes", (long long)end, data_len);
	return 0;
}

// the safetensors limit on the JSON header (its reference reader refuses larger ones)
#define ST_MAX_HEADER 100000000ull

static int parse(StFile *f, char *err, size_t errlen)
{
	JsonLex c;
	json_lex_init(&c, f->map, 0, 0, "JSON header", err, errlen);
	if (f->size < 8)
		return json_fail(&c, "%zu bytes: shorter than the 8-byte header length", f->size);
	const uint8_t *m = f->map;
	uint64_t hl = 0;
	for (int i = 0; i < 8; i++)
		hl |= (uint64_t)m[i] << (8 * i);
	if (hl < 2 || hl > f->size - 8 || hl > ST_MAX_HEADER)
		return json_fail(
			&c, "header length %llu: the file has %zu bytes after it (at most %llu allowed, at least 2)",
			(unsigned long long)hl, f->size - 8, ST_MAX_HEADER);
	json_lex_init(&c, m + 8, hl, 8, "JSON header", err, errlen); // offsets in messages are file offsets
	if (*c.p != '{')
		return json_fail(&c, "the JSON header must begin with '{'");
	const uint8_t *data = m + 8 + hl;
	size_t data_len = f->size - 8 - hl;
	int cap = 0, rc = 0;
	Span *sp = NULL;
	if (json_expect(&c, '{'))
		return -EBADMSG;
	if (!json_accept(&c, '}'))
		for (;;) {
			char name[sizeof f->t[0].name];
			if (str(&c, name, sizeof name) || json_expect(&c, ':')) {
				rc = -EBADMSG;
				break;
			}
			if (!strcmp(name, "__metadata__")) {
				if ((rc = parse_meta(f, &c)))
					break;
			} else {
				if (f->n == cap) {
					cap = cap ? 2 * cap : 64;
					StTensor *nt = realloc(f->t, sizeof *nt * (size_t)cap);
					Span *ns = realloc(sp, sizeof *ns * (size_t)cap);
					if (ns)
						sp = ns;
					if (nt)
						f->t = nt;
					if (!nt || !ns) {
						rc = -ENOMEM;
						break;
					}
				}
				StTensor *t = &f->t[f->n];
				memset(t, 0, sizeof *t);
				memcpy(t->name, name, sizeof name);
				int64_t offs[2];
				if ((rc = parse_tensor(&c, t, offs, data, data_len)))
					break;
				sp[f->n] = (Span){NULL, offs[0], offs[1]};
				f->n++;
			}
			if (!json_accept(&c, ',')) {
				rc = json_expect(&c, '}');
				break;
			}
		}
	// the header may be padded with spaces after the JSON, nothing else
	for (; !rc && c.p < c.end; c.p++)
		if (*c.p != ' ')
			rc = json_fail(&c, "byte %ld after the JSON header is 0x%02x, not space padding", json_at(&c),
				       (unsigned char)*c.p);
	for (int i = 0; !rc && i < f->n; i++) // f->t no longer moves
		sp[i].name = f->t[i].name;
	if (!rc)
		rc = check_tensors(&c, sp, f->n, data_len);
	free(sp);
	return rc;
}

static int opened(StFile *f, StFile **out, char *err, size_t errlen)
{
	int rc = parse(f, err, errlen);
	if (rc) {
		st_close(f);
		return rc;
	}
	*out = f;
	return 0;
}

int st_parse(StFile **out, const void *buf, size_t size, char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	StFile *f = calloc(1, sizeof *f);
	if (!f)
		return -ENOMEM;
	f->map = (void *)buf;
	f->size = size;
	f->borrowed = 1;
	return opened(f, out, err, errlen);
}

int st_open_err(StFile **out, const char *path, char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	struct stat sb;
	int fd = fs_open_regular(path, &sb); // a FIFO at path must not block the open
	if (fd == -EINVAL) {
		if (err && errlen)
			snprintf(err, errlen, "%s is not a regular file (a FIFO, socket or device)", path);
		return -EBADMSG;
	}
	if (fd < 0)
		return fd;
	StFile *f = calloc(1, sizeof *f);
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	f->size = (size_t)sb.st_size;
	if (f->size > 0) {
		f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f->map == MAP_FAILED) {
			int e = -errno;
			f->map = NULL;
			close(fd);
			st_close(f);
			return e;
		}
	}
	close(fd);
	return opened(f, out, err, errlen);
}

int st_open_as(StFile **out, const char *path, const char *not_valid, char *err, size_t errlen)
{
	char why[200];
	int rc = st_open_err(out, path, why, sizeof why);
	if (rc == -EBADMSG && err && errlen)
		snprintf(err, errlen, "%s: %s: %s", path, not_valid, why);
	else if (rc && err && errlen)
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	return rc;
}

int st_open(StFile **out, const char *path)
{
	return st_open_err(out, path, NULL, 0);
}

void st_close(StFile *f)
{
	if (!f)
		return;
	if (f->map && !f->borrowed)
		munmap(f->map, f->size);
	for (int i = 0; i < f->n_meta; i++) {
		free(f->meta_k[i]);
		free(f->meta_v[i]);
	}
	free(f->t);
	free(f);
}

int st_count(const StFile *f)
{
	return f->n;
}

const StTensor *st_entry(const StFile *f, int i)
{
	return i >= 0 && i < f->n ? &f->t[i] : NULL;
}

const StTensor *st_find(const StFile *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->t[i].name, name))
			return &f->t[i];
	return NULL;
}

const char *st_meta(const StFile *f, const char *key)
{
	for (int i = 0; i < f->n_meta; i++)
		if (!strcmp(f->meta_k[i], key))
			return f->meta_v[i];
	return NULL;
}
