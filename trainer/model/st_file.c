// safetensors reader and writer: 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the data. The parser accepts only that shape
// of JSON and checks every range, so a truncated or hostile file is an error, not a crash.
#include "model.h" // defines: StFile, StTensor

#include <ctype.h>
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
		if ((unsigned)t[i].dtype >= ST_NDTYPES || t[i].ndim < 0 || t[i].ndim > ST_MAX_DIMS || want != t[i].nbytes ||
		    !t[i].name[0]) {
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

// ---- reader: a JSON subset (objects, strings, integer arrays) ----
typedef struct {
	const char *p, *end;
} Cur;

static void ws(Cur *c)
{
	while (c->p < c->end && isspace((unsigned char)*c->p))
		c->p++;
}

static int expect(Cur *c, char ch)
{
	ws(c);
	if (c->p >= c->end || *c->p != ch)
		return -EBADMSG;
	c->p++;
	return 0;
}

static int peek(Cur *c, char ch)
{
	ws(c);
	return c->p < c->end && *c->p == ch;
}

// a string into out (NUL-terminated, at most cap-1 bytes)
static int str(Cur *c, char *out, size_t cap)
{
	if (expect(c, '"'))
		return -EBADMSG;
	size_t n = 0;
	while (c->p < c->end && *c->p != '"') {
		char ch = *c->p++;
		if (ch == '\\') {
			if (c->p >= c->end)
				return -EBADMSG;
			ch = *c->p++;
			if (ch == 'u') {
				if (c->end - c->p < 4)
					return -EBADMSG;
				unsigned v;
				if (sscanf(c->p, "%4x", &v) != 1 || v > 0x7f)
					return -EBADMSG; // names and metadata we write are ASCII
				ch = (char)v;
				c->p += 4;
			} else if (ch == 'n') {
				ch = '\n';
			} else if (ch == 't') {
				ch = '\t';
			} else if (ch != '"' && ch != '\\' && ch != '/') {
				return -EBADMSG;
			}
		}
		if (n + 1 >= cap)
			return -EBADMSG;
		out[n++] = ch;
	}
	if (c->p >= c->end)
		return -EBADMSG;
	c->p++;
	out[n] = 0;
	return 0;
}

static int integer(Cur *c, int64_t *v)
{
	ws(c);
	if (c->p >= c->end || !isdigit((unsigned char)*c->p))
		return -EBADMSG;
	int64_t x = 0;
	while (c->p < c->end && isdigit((unsigned char)*c->p)) {
		if (x > (INT64_MAX - 9) / 10)
			return -EBADMSG;
		x = x * 10 + (*c->p++ - '0');
	}
	*v = x;
	return 0;
}

static int int_array(Cur *c, int64_t *out, int cap, int *n)
{
	*n = 0;
	if (expect(c, '['))
		return -EBADMSG;
	if (peek(c, ']'))
		return expect(c, ']');
	for (;;) {
		if (*n >= cap || integer(c, &out[*n]))
			return -EBADMSG;
		(*n)++;
		if (peek(c, ','))
			c->p++;
		else
			return expect(c, ']');
	}
}

static int parse_meta(StFile *f, Cur *c)
{
	if (expect(c, '{'))
		return -EBADMSG;
	if (peek(c, '}'))
		return expect(c, '}');
	for (;;) {
		char k[256], v[4096];
		if (str(c, k, sizeof k) || expect(c, ':') || str(c, v, sizeof v) || f->n_meta >= ST_MAX_META)
			return -EBADMSG;
		f->meta_k[f->n_meta] = strdup(k);
		f->meta_v[f->n_meta] = strdup(v);
		if (!f->meta_k[f->n_meta] || !f->meta_v[f->n_meta])
			return -ENOMEM;
		f->n_meta++;
		if (peek(c, ','))
			c->p++;
		else
			return expect(c, '}');
	}
}

static int parse_tensor(Cur *c, StTensor *t, const uint8_t *data, size_t data_len)
{
	int have = 0;
	int64_t offs[2];
	if (expect(c, '{'))
		return -EBADMSG;
	for (;;) {
		char key[32], dt[16];
		if (str(c, key, sizeof key) || expect(c, ':'))
			return -EBADMSG;
		if (!strcmp(key, "dtype")) {
			if (str(c, dt, sizeof dt))
				return -EBADMSG;
			t->dtype = ST_NDTYPES;
			for (int i = 0; i < ST_NDTYPES; i++)
				if (!strcmp(dt, dnames[i]))
					t->dtype = (StDtype)i;
			if (t->dtype == ST_NDTYPES)
				return -EBADMSG;
			have |= 1;
		} else if (!strcmp(key, "shape")) {
			if (int_array(c, t->shape, ST_MAX_DIMS, &t->ndim))
				return -EBADMSG;
			have |= 2;
		} else if (!strcmp(key, "data_offsets")) {
			int k;
			if (int_array(c, offs, 2, &k) || k != 2)
				return -EBADMSG;
			have |= 4;
		} else {
			return -EBADMSG;
		}
		if (peek(c, ','))
			c->p++;
		else
			break;
	}
	if (expect(c, '}') || have != 7 || offs[0] > offs[1] || (uint64_t)offs[1] > data_len)
		return -EBADMSG;
	size_t want = st_dtype_size(t->dtype);
	for (int d = 0; d < t->ndim; d++) {
		if (t->shape[d] && want > SIZE_MAX / (size_t)t->shape[d])
			return -EBADMSG;
		want *= (size_t)t->shape[d];
	}
	t->nbytes = (size_t)(offs[1] - offs[0]);
	if (want != t->nbytes)
		return -EBADMSG;
	t->data = data + offs[0];
	return 0;
}

static int parse(StFile *f)
{
	if (f->size < 8)
		return -EBADMSG;
	const uint8_t *m = f->map;
	uint64_t hl = 0;
	for (int i = 0; i < 8; i++)
		hl |= (uint64_t)m[i] << (8 * i);
	if (hl < 2 || hl > f->size - 8)
		return -EBADMSG;
	Cur c = {(const char *)m + 8, (const char *)m + 8 + hl};
	const uint8_t *data = m + 8 + hl;
	size_t data_len = f->size - 8 - hl;
	int cap = 0;
	if (expect(&c, '{'))
		return -EBADMSG;
	if (peek(&c, '}'))
		return expect(&c, '}');
	for (;;) {
		char name[sizeof f->t[0].name];
		if (str(&c, name, sizeof name) || expect(&c, ':'))
			return -EBADMSG;
		if (!strcmp(name, "__metadata__")) {
			int rc = parse_meta(f, &c);
			if (rc)
				return rc;
		} else {
			if (f->n == cap) {
				cap = cap ? 2 * cap : 64;
				StTensor *nt = realloc(f->t, sizeof *nt * (size_t)cap);
				if (!nt)
					return -ENOMEM;
				f->t = nt;
			}
			StTensor *t = &f->t[f->n];
			memset(t, 0, sizeof *t);
			snprintf(t->name, sizeof t->name, "%s", name);
			if (parse_tensor(&c, t, data, data_len))
				return -EBADMSG;
			f->n++;
		}
		if (peek(&c, ','))
			c.p++;
		else
			return expect(&c, '}');
	}
}

int st_open(StFile **out, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat sb;
	if (fstat(fd, &sb)) {
		int e = -errno;
		close(fd);
		return e;
	}
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
	int rc = parse(f);
	if (rc) {
		st_close(f);
		return rc;
	}
	*out = f;
	return 0;
}

void st_close(StFile *f)
{
	if (!f)
		return;
	if (f->map)
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
