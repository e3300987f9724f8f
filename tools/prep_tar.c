// Webdataset shard indexer: walks ustar/GNU/pax headers with pread, groups adjacent
// members by key (basename up to its first dot) and keeps keys with an image and a caption.
#include "prep_tar.h" // defines: prep_tar_index, prep_tar_free
#include "fs_dir.h"   // defines: fs_open_regular
#include "bpe.h"      // defines: bpe_utf8_valid
#include "loader.h"   // defines: ld_decoder_new, ld_image_load, ld_decoder_free
#include "tar.h"      // defines: tar_header_sum

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void prep_tar_free(PrepTarIndex *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->img[i].key);
		free(t->img[i].caption);
	}
	free(t->img);
	memset(t, 0, sizeof(*t));
}

static uint64_t octal(const unsigned char *p, int n)
{
	if (p[0] & 0x80) { // GNU base-256 for sizes >= 8 GiB
		uint64_t v = p[0] & 0x7f;
		for (int i = 1; i < n; i++)
			v = v << 8 | p[i];
		return v;
	}
	uint64_t v = 0;
	for (int i = 0; i < n && p[i]; i++)
		if (p[i] >= '0' && p[i] <= '7')
			v = v * 8 + (uint64_t)(p[i] - '0');
	return v;
}

static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += (size_t)r;
	}
	return 0;
}

typedef struct {
	char key[512];
	int has_img, has_txt;
	uint64_t off, len;
	char *caption;
} Group;

static int flush(Group *g, PrepTarIndex *out, PrepAnnotList *rep, const char *path)
{
	if (!g->key[0])
		return 0;
	int rc = 0;
	if (!g->has_img || !g->has_txt) {
		rep->bad_record++;
		prep_annot_problem(rep, "%s: key %s has no %s", path, g->key, g->has_img ? "caption (.txt)" : "image");
	} else if (!bpe_utf8_valid(g->caption, strlen(g->caption))) {
		rep->bad_utf8++;
		prep_annot_problem(rep, "%s: key %s: caption is not valid UTF-8", path, g->key);
	} else {
		if (out->n == out->cap) {
			size_t cap = out->cap ? 2 * out->cap : 256;
			PrepTarImage *p = realloc(out->img, cap * sizeof(PrepTarImage));
			if (!p)
				return -ENOMEM;
			out->img = p;
			out->cap = cap;
		}
		PrepTarImage *im = &out->img[out->n];
		im->key = strdup(g->key);
		im->caption = g->caption;
		g->caption = NULL;
		im->offset = g->off, im->length = g->len;
		if (!im->key)
			rc = -ENOMEM;
		else
			out->n++;
	}
	free(g->caption);
	memset(g, 0, sizeof(*g));
	return rc;
}

int prep_tar_index(const char *path, PrepTarIndex *out, PrepAnnotList *rep)
{
	memset(out, 0, sizeof(*out));
	struct stat st;
	int fd = fs_open_regular(path, &st); // a FIFO in the shards folder must not block
	if (fd < 0)
		return fd == -EISDIR ? -EINVAL : fd;
	out->size = (uint64_t)st.st_size;
	Group g = {0};
	char longname[4096] = "";
	uint64_t pos = 0;
	int rc = 0, ended = 0;
	while (pos + 512 <= out->size) {
		unsigned char h[512];
		if ((rc = read_at(fd, h, 512, pos)) < 0)
			break;
		int zero = 1;
		for (int i = 0; i < 512 && zero; i++)
			zero = h[i] == 0;
		if (zero) {
			ended = 1; // end of archive
			break;
		}
		if (tar_header_sum(h) != octal(h + 148, 8)) {
			rep->bad_record++;
			prep_annot_problem(rep, "%s: bad tar header checksum at byte %llu; rest of the shard skipped",
					   path, (unsigned long long)pos);
			break;
		}
		uint64_t size = octal(h + 124, 12), data = pos + 512;
		if (data + size > out->size) {
			rep->bad_record++;
			prep_annot_problem(rep, "%s: member at byte %llu runs past the end (truncated shard)", path,
					   (unsigned long long)pos);
			break;
		}
		char type = (char)h[156];
		char name[4200];
		if (longname[0]) {
			snprintf(name, sizeof(name), "%s", longname);
			longname[0] = 0;
		} else if (memcmp(h + 257, "ustar", 5) == 0 && h[345]) {
			snprintf(name, sizeof(name), "%.155s/%.100s", (char *)h + 345, (char *)h);
		} else {
			snprintf(name, sizeof(name), "%.100s", (char *)h);
		}
		if ((type == 'L' || type == 'x') && size > (1u << 20)) { // a name, not data: bounded
			rep->bad_record++;
			prep_annot_problem(rep, "%s: %s header of %llu bytes at byte %llu; rest of the shard skipped",
					   path, type == 'L' ? "long-name" : "pax", (unsigned long long)size,
					   (unsigned long long)pos);
			break;
		}
		if (type == 'L' || type == 'x') { // GNU long name / pax header with a path record
			char *buf = malloc(size + 1);
			if (!buf || read_at(fd, buf, size, data) < 0) {
				free(buf);
				rc = -EIO;
				break;
			}
			buf[size] = 0;
			if (type == 'L') {
				snprintf(longname, sizeof(longname), "%s", buf);
			} else {
				char *p = strstr(buf, " path=");
				if (p) {
					p += 6;
					char *e = strchr(p, '\n');
					snprintf(longname, sizeof(longname), "%.*s", e ? (int)(e - p) : (int)strlen(p),
						 p);
				}
			}
			free(buf);
		} else if (type == '0' || type == 0) {
			const char *base = strrchr(name, '/');
			base = base ? base + 1 : name;
			const char *dot = strchr(base, '.');
			if (dot && dot != base) {
				char key[512];
				snprintf(key, sizeof(key), "%.*s", (int)(dot - name), name);
				if (strcmp(key, g.key) != 0) {
					if ((rc = flush(&g, out, rep, path)) < 0)
						break;
					snprintf(g.key, sizeof(g.key), "%s", key);
				}
				const char *ext = dot + 1;
				if (!strcasecmp(ext, "jpg") || !strcasecmp(ext, "jpeg") || !strcasecmp(ext, "png") ||
				    !strcasecmp(ext, "webp")) {
					g.has_img = 1, g.off = data, g.len = size;
				} else if (!strcasecmp(ext, "txt") && size < (1u << 20)) {
					free(g.caption);
					g.caption = malloc(size + 1);
					if (!g.caption || read_at(fd, g.caption, size, data) < 0) {
						rc = -EIO;
						break;
					}
					g.caption[size] = 0;
					if (strlen(g.caption) != size) { // a NUL inside is not text
						g.caption[0] = (char)0xff;
						g.caption[1] = 0;
					}
					g.has_txt = 1;
				}
			}
		}
		pos = data + (size + 511) / 512 * 512;
	}
	if (rc >= 0 && !ended && pos < out->size && pos + 512 > out->size) {
		rep->bad_record++;
		prep_annot_problem(rep, "%s: header at byte %llu cut short (truncated shard)", path,
				   (unsigned long long)pos);
	}
	if (rc >= 0)
		rc = flush(&g, out, rep, path);
	free(g.caption);
	close(fd);
	if (rc < 0)
		prep_tar_free(out);
	return rc;
}

int prep_tar_check_images(const char *path, PrepTarIndex *t, PrepAnnotList *rep)
{
	int fd = fs_open_regular(path, NULL);
	if (fd < 0)
		return fd;
	LdDecoder *d = NULL;
	if (ld_decoder_new(&d) < 0) {
		close(fd);
		return -ENOMEM;
	}
	size_t kept = 0;
	int dropped = 0;
	for (size_t i = 0; i < t->n; i++) {
		PrepTarImage *im = &t->img[i];
		char err[256] = "";
		int w, h, e = 0;
		uint8_t *buf = im->length <= SIZE_MAX ? malloc(im->length ? (size_t)im->length : 1) : NULL;
		if (!buf)
			e = -1,
			snprintf(err, sizeof err, "%llu bytes: too large to decode", (unsigned long long)im->length);
		else if ((e = read_at(fd, buf, (size_t)im->length, im->offset)) < 0)
			snprintf(err, sizeof err, "cannot read: %s", strerror(-e));
		else if (ld_image_load(d, buf, (size_t)im->length, &w, &h, 0, err, sizeof err) < 0)
			e = -1;
		free(buf);
		if (e < 0) {
			dropped++;
			prep_annot_problem(rep, "%s: key %s: %s; dropped", path, im->key, err);
			free(im->key);
			free(im->caption);
			continue;
		}
		t->img[kept++] = *im;
	}
	t->n = kept;
	ld_decoder_free(d);
	close(fd);
	return dropped;
}
