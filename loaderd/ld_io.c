// Reader for the loader. With io_uring each submit opens the file, checks its size and queues
// one read of the range (or all its bytes); short reads are requeued for the rest; a thread
// keeps up to depth reads in flight so the disk works while it decodes. Without io_uring
// (ENOSYS/EPERM in many containers, or forced) each submit preads at once and the completion is
// queued in order.
#include "loader.h" // defines: ld_reader_new, ld_reader_submit, ld_reader_wait, ..., ld_file_open, ld_file_size_error, LD_ERR_*

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if HAVE_URING
#include <liburing.h>
#endif

struct LdReader {
	unsigned depth, inflight;
	int uring;
#if HAVE_URING
	struct io_uring ring;
#endif
	LdRead **ready; // pread path: finished reads in submit order (ring buffer of depth)
	unsigned head, count;
};

int ld_reader_new(LdReader **out, unsigned depth, int force_pread, char *why, size_t whylen)
{
	LdReader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->depth = depth ? depth : 1;
	r->ready = calloc(r->depth, sizeof(*r->ready));
	if (!r->ready) {
		free(r);
		return -ENOMEM;
	}
	if (why && whylen)
		why[0] = 0;
#if HAVE_URING
	if (!force_pread) {
		int rc = io_uring_queue_init(r->depth, &r->ring, 0);
		if (rc == 0)
			r->uring = 1;
		else if (why)
			snprintf(why, whylen, "io_uring_queue_init: %s", strerror(-rc));
	} else if (why)
		snprintf(why, whylen, "pread forced by configuration");
#else
	if (why)
		snprintf(why, whylen, force_pread ? "pread forced by configuration" : "built without liburing");
#endif
	*out = r;
	return 0;
}

void ld_reader_free(LdReader *r)
{
	if (!r)
		return;
#if HAVE_URING
	if (r->uring)
		io_uring_queue_exit(&r->ring);
#endif
	free(r->ready);
	free(r);
}

const char *ld_reader_kind(const LdReader *r)
{
	return r->uring ? "io_uring" : "pread";
}

// open + size + buffer; on failure rd->error is set and the fd closed
static int prepare(LdRead *rd)
{
	rd->error = 0;
	rd->size = rd->got = 0;
	struct stat st;
	rd->fd = ld_file_open(rd->path, &st, rd->reason, sizeof(rd->reason)); // never a FIFO: no open() blocks
	if (rd->fd < 0) {
		rd->error = rd->fd;
		rd->fd = -1;
		return rd->error;
	}
	rd->error = ld_file_size_error(rd->path, (uint64_t)st.st_size, rd->offset, rd->length, rd->expect_size,
				       rd->reason, sizeof(rd->reason));
	rd->want = rd->length ? rd->length : (size_t)st.st_size;
	if (!rd->error && rd->want > rd->cap) {
		uint8_t *p = realloc(rd->buf, rd->want);
		if (!p) {
			snprintf(rd->reason, sizeof(rd->reason), "%s: no memory for %zu bytes", rd->path, rd->want);
			rd->error = -LD_ERR_NOMEM;
		} else {
			rd->buf = p;
			rd->cap = rd->want;
		}
	}
	if (rd->error) {
		close(rd->fd);
		rd->fd = -1;
	}
	return rd->error;
}

static void finish(LdRead *rd)
{
	if (rd->fd >= 0)
		close(rd->fd);
	rd->fd = -1;
	rd->size = rd->got;
}

static void push_ready(LdReader *r, LdRead *rd)
{
	r->ready[(r->head + r->count) % r->depth] = rd;
	r->count++;
}

#if HAVE_URING
static int queue_uring(LdReader *r, LdRead *rd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
	if (!sqe)
		return -EBUSY;
	size_t n = rd->want - rd->got;
	if (n > 1u << 30)
		n = 1u << 30;
	io_uring_prep_read(sqe, rd->fd, rd->buf + rd->got, (unsigned)n, rd->offset + rd->got);
	io_uring_sqe_set_data(sqe, rd);
	int rc = io_uring_submit(&r->ring);
	return rc < 0 ? rc : 0;
}
#endif

int ld_reader_submit(LdReader *r, LdRead *rd)
{
	if (r->inflight >= r->depth)
		return -EBUSY;
	r->inflight++;
	if (prepare(rd) != 0) {
		if (r->uring) {
			push_ready(r, rd); // delivered by wait before any ring completion
			return 0;
		}
		push_ready(r, rd);
		return 0;
	}
#if HAVE_URING
	if (r->uring) {
		int rc = queue_uring(r, rd);
		if (rc == 0)
			return 0;
		snprintf(rd->reason, sizeof(rd->reason), "%s: io_uring submit: %s", rd->path, strerror(-rc));
		rd->error = -LD_ERR_IO;
		finish(rd);
		push_ready(r, rd);
		return 0;
	}
#endif
	while (rd->got < rd->want) {
		ssize_t n = pread(rd->fd, rd->buf + rd->got, rd->want - rd->got, (off_t)(rd->offset + rd->got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(rd->reason, sizeof(rd->reason), "%s: read %zu of %zu bytes: %s", rd->path, rd->got,
				 rd->want, n < 0 ? strerror(errno) : "end of file");
			rd->error = -LD_ERR_IO;
			break;
		}
		rd->got += (size_t)n;
	}
	finish(rd);
	push_ready(r, rd);
	return 0;
}

int ld_reader_wait(LdReader *r, LdRead **done)
{
	if (r->count) {
		*done = r->ready[r->head];
		r->head = (r->head + 1) % r->depth;
		r->count--;
		r->inflight--;
		return 0;
	}
	if (!r->inflight)
		return -EAGAIN;
#if HAVE_URING
	for (;;) {
		struct io_uring_cqe *cqe;
		int rc = io_uring_wait_cqe(&r->ring, &cqe);
		if (rc == -EINTR)
			continue;
		if (rc < 0)
			return rc;
		LdRead *rd = io_uring_cqe_get_data(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&r->ring, cqe);
		if (res == -EINTR || res == -EAGAIN || (res > 0 && rd->got + (size_t)res < rd->want)) {
			rd->got += res > 0 ? (size_t)res : 0;
			if (queue_uring(r, rd) == 0)
				continue; // the rest of a short read
			res = -EIO;
		}
		if (res <= 0 && rd->got < rd->want) {
			snprintf(rd->reason, sizeof(rd->reason), "%s: read %zu of %zu bytes: %s", rd->path, rd->got,
				 rd->want, res < 0 ? strerror(-res) : "end of file");
			rd->error = -LD_ERR_IO;
		} else if (res > 0)
			rd->got += (size_t)res;
		finish(rd);
		r->inflight--;
		*done = rd;
		return 0;
	}
#else
	return -EAGAIN;
#endif
}
