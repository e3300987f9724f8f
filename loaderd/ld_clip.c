// Turns a plan and the bytes of its sources into a clip: one ld_decode_video call per chunk
// (frames in order, one crop for all of them), or one image repeated over the clip's frames.
#include "loader.h"    // defines: ld_clip_decode, ld_file_read, ld_sample_load, ld_files_free, LD_ERR_*
#include "fs_dir.h"    // defines: fs_open_regular
#include "proc_time.h" // defines: time_mono_ns

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void opts_from(const LdParams *p, const LdPlan *plan, uint64_t deadline, LdDecodeOpts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = p->mode;
	o->out_w = p->out_w;
	o->out_h = p->out_h;
	o->crop = plan->crop;
	o->threads = p->threads;
	o->clip_decoders = p->clip_decoders;
	o->deadline_ns = deadline;
	o->no_seek = p->no_seek;
	o->loop_filter = p->loop_filter;
	o->cancel = p->cancel;
}

static int decode_image(LdDecoder *d, LdPlan *plan, const LdParams *p, const LdBuffer *b, uint8_t *dst,
			uint64_t deadline, char *err, size_t errlen)
{
	int w, h;
	int rc = ld_image_load(d, b->data, b->size, &w, &h, deadline, err, errlen);
	if (rc)
		return rc;
	plan->src_w = w;
	plan->src_h = h;
	ld_crop_make(p, plan->position, w, h, &plan->crop);
	LdDecodeOpts o;
	opts_from(p, plan, deadline, &o);
	if ((rc = ld_image_render(d, dst, &o, err, errlen)) != 0)
		return rc;
	size_t fb = (size_t)p->out_w * p->out_h * 3;
	for (int t = 1; t < plan->frames && p->mode != LD_MODE_DECODE_ONLY; t++)
		memcpy(dst + t * fb, dst, fb);
	return 0;
}

int ld_clip_decode(LdDecoder *d, const Manifest *m, LdPlan *plan, const LdParams *p, const LdBuffer *bufs, uint8_t *dst,
		   char *err, size_t errlen)
{
	uint64_t deadline = p->timeout_ms ? time_mono_ns() + (uint64_t)p->timeout_ms * 1000000ull : 0;
	if (plan->kind == MANIFEST_KIND_IMAGE) {
		char why[200];
		int rc = decode_image(d, plan, p, &bufs[0], dst, deadline, why, sizeof(why));
		if (rc)
			snprintf(err, errlen, "%s@%llu: %s", plan->src[0].path, (unsigned long long)plan->src[0].offset,
				 why);
		return rc;
	}
	LdDecodeOpts o;
	opts_from(p, plan, deadline, &o);
	size_t fb = (size_t)p->out_w * p->out_h * 3;
	for (int t = 0; t < plan->frames; t++)
		if (plan->frame_src[t] == LD_FRAME_BLANK) // past a short sample's end (eval views): LaViLa's zeros
			memset(dst + t * fb, 0, fb);
	for (int k = 0; k < plan->n_sources; k++) {
		uint32_t frames[LD_MAX_FRAMES];
		uint8_t *dsts[LD_MAX_FRAMES];
		int n = 0;
		for (int t = 0; t < plan->frames; t++)
			if (plan->frame_src[t] == k) {
				frames[n] = plan->frame_no[t];
				dsts[n++] = dst + t * fb;
			}
		const LdSource *src = &plan->src[k];
		const ManifestChunk *c = manifest_chunk(m, src->chunk);
		LdChunkInfo ci = {.n_frames = c->n_frames,
				  .fps_num = c->fps_num,
				  .fps_den = c->fps_den,
				  .width = c->width,
				  .height = c->height};
		ci.keyframes = manifest_keyframes(m, src->chunk, &ci.n_keyframes);
		if (src->indexed) {
			uint32_t np;
			ci.packets = manifest_packets(m, src->chunk, &np);
			ci.config = manifest_codec_config(m, src->chunk, &ci.config_size);
		}
		char why[200];
		int rc = ld_decode_video(d, bufs + src->first_range, src->n_ranges, &ci, frames, n, dsts, &o, why,
					 sizeof(why));
		if (rc) {
			snprintf(err, errlen, "%s: %s", plan->src[k].path, why);
			return rc;
		}
	}
	return 0;
}

void ld_files_free(LdFiles *f)
{
	for (int i = 0; i < LD_MAX_RANGES; i++) {
		free(f->buf[i]);
		f->buf[i] = NULL;
		f->cap[i] = 0;
	}
}

int ld_file_size_error(const char *path, uint64_t size, uint64_t offset, uint64_t length, uint64_t expect_size,
		       char *err, size_t errlen)
{
	if (expect_size && size != expect_size) {
		snprintf(err, errlen, "%s: %llu bytes, the manifest's packet index describes %llu (%s since prep)",
			 path, (unsigned long long)size, (unsigned long long)expect_size,
			 size < expect_size ? "truncated" : "replaced");
		return size < expect_size ? -LD_ERR_TRUNCATED : -LD_ERR_CORRUPT;
	}
	if (length == 0 && size == 0) {
		snprintf(err, errlen, "%s: zero-length file", path);
		return -LD_ERR_EMPTY;
	}
	if (length && offset + length > size) {
		snprintf(err, errlen, "%s: member [%llu, +%llu) past the end (%llu bytes)", path,
			 (unsigned long long)offset, (unsigned long long)length, (unsigned long long)size);
		return -LD_ERR_TRUNCATED;
	}
	return 0;
}

int ld_file_open(const char *path, struct stat *st, char *err, size_t errlen)
{
	int fd = fs_open_regular(path, st);
	if (fd == -EINVAL || fd == -EISDIR) {
		snprintf(err, errlen, "%s: not a regular file (%s)", path,
			 S_ISFIFO(st->st_mode)   ? "a FIFO"
			 : S_ISDIR(st->st_mode)  ? "a folder"
			 : S_ISSOCK(st->st_mode) ? "a socket"
						 : "a device");
		return -LD_ERR_MISSING;
	}
	if (fd < 0) {
		int e = -fd;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return e == ENOENT || e == EACCES || e == ENOTDIR || e == ENXIO ? -LD_ERR_MISSING : -LD_ERR_IO;
	}
	return fd;
}

int ld_file_read(const char *path, uint64_t offset, uint64_t length, uint64_t expect_size, uint8_t **buf, size_t *cap,
		 size_t *size, char *err, size_t errlen)
{
	struct stat st;
	int fd = ld_file_open(path, &st, err, errlen);
	if (fd < 0)
		return fd;
	int rc = ld_file_size_error(path, (uint64_t)st.st_size, offset, length, expect_size, err, errlen);
	size_t want = length ? length : (size_t)st.st_size;
	if (!rc && want > *cap) {
		uint8_t *p = realloc(*buf, want);
		if (!p) {
			snprintf(err, errlen, "%s: no memory for %zu bytes", path, want);
			rc = -LD_ERR_NOMEM;
		} else {
			*buf = p;
			*cap = want;
		}
	}
	size_t got = 0;
	while (!rc && got < want) {
		ssize_t r = pread(fd, *buf + got, want - got, (off_t)(offset + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, errlen, "%s: read %zu of %zu bytes: %s", path, got, want,
				 r < 0 ? strerror(errno) : "end of file");
			rc = -LD_ERR_IO;
		}
		got += r > 0 ? (size_t)r : 0;
	}
	close(fd);
	*size = got;
	return rc;
}

int ld_sample_load(LdDecoder *d, LdFiles *files, const Manifest *m, uint64_t g, const LdParams *p, LdPlan *plan,
		   uint8_t *dst, char *err, size_t errlen)
{
	int rc = ld_plan_make(m, g, p, plan, err, errlen);
	if (rc)
		return rc;
	LdBuffer bufs[LD_MAX_RANGES];
	for (int k = 0; k < plan->n_sources; k++) {
		const LdSource *src = &plan->src[k];
		for (int i = src->first_range; i < src->first_range + src->n_ranges; i++) {
			size_t size = 0;
			const LdRange *r = &plan->ranges[i];
			rc = ld_file_read(src->path, r->offset, r->length, src->file_size, &files->buf[i],
					  &files->cap[i], &size, err, errlen);
			if (rc)
				return rc;
			bufs[i] = (LdBuffer){files->buf[i], size, r->offset};
		}
	}
	return ld_clip_decode(d, m, plan, p, bufs, dst, err, errlen);
}
