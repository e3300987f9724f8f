// Handing rank 0's blob to every rank through a file on a shared filesystem or the ring's control
// block, the choice between methods, and the header and deadline helpers the TCP method shares.
#include "rdv_internal.h" // defines: RdvHeader, rdv_backoff
#include "proc_time.h"    // defines: time_mono_ms
#include "comm.h"         // defines: RdvInfo, rdv_exchange
#include "hash_fnv.h"     // defines: fnv1a64

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int rdv_check_len(const RdvInfo *i, const void *blob, size_t len, char *err, size_t errlen)
{
	if (blob && len > 0 && len <= RDV_BLOB_MAX)
		return 0;
	return err_fmt(err, errlen, -EINVAL, "rank %d: the id must be 1 to %d bytes (is %zu)", i->rank, RDV_BLOB_MAX,
		       len);
}

void rdv_backoff(int *delay_ms, int cap_ms, int64_t deadline_ms)
{
	int64_t left = deadline_ms - time_mono_ms();
	int64_t ms = *delay_ms < left ? *delay_ms : left;
	if (ms > 0) {
		struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
	*delay_ms = *delay_ms * 3 / 2 + 1 < cap_ms ? *delay_ms * 3 / 2 + 1 : cap_ms;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void rdv_header_put(uint8_t out[RDV_HEADER_BYTES], const RdvHeader *h)
{
	put32(out, h->magic);
	put32(out + 4, (uint32_t)h->version | (uint32_t)h->kind << 16);
	put32(out + 8, (uint32_t)h->token);
	put32(out + 12, (uint32_t)(h->token >> 32));
	put32(out + 16, h->world);
	put32(out + 20, h->rank);
	put32(out + 24, h->len);
	put32(out + 28, h->pid);
}

void rdv_header_get(RdvHeader *h, const uint8_t in[RDV_HEADER_BYTES])
{
	uint32_t vk = get32(in + 4);
	*h = (RdvHeader){.magic = get32(in),
			 .version = (uint16_t)vk,
			 .kind = (uint16_t)(vk >> 16),
			 .token = get32(in + 8) | (uint64_t)get32(in + 12) << 32,
			 .world = get32(in + 16),
			 .rank = get32(in + 20),
			 .len = get32(in + 24),
			 .pid = get32(in + 28)};
}

const char *rdv_reason_text(RdvReason r)
{
	switch (r) {
	case RDV_R_OTHER_JOB: return "it belongs to another job (another job token)";
	case RDV_R_WORLD: return "the world sizes differ";
	case RDV_R_RANK: return "the rank is out of range";
	case RDV_R_DUPLICATE: return "another process already fetched the id as this rank";
	case RDV_R_LENGTH: return "the id lengths differ";
	case RDV_R_VERSION: return "the protocol versions differ (different builds)";
	default: return "no reason given";
	}
}

// ---- a file on a shared filesystem ----

// header, blob, FNV-1a of both: the bytes of the file
static size_t file_record(uint8_t *buf, const RdvInfo *i, const void *blob, size_t len)
{
	RdvHeader h = {RDV_MAGIC, RDV_VERSION,   RDV_FILE_RECORD,   i->token, (uint32_t)i->world_size,
		       0,         (uint32_t)len, (uint32_t)getpid()};
	rdv_header_put(buf, &h);
	memcpy(buf + RDV_HEADER_BYTES, blob, len);
	uint64_t sum = fnv1a64(buf, RDV_HEADER_BYTES + len);
	put32(buf + RDV_HEADER_BYTES + len, (uint32_t)sum);
	put32(buf + RDV_HEADER_BYTES + len + 4, (uint32_t)(sum >> 32));
	return RDV_HEADER_BYTES + len + 8;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

// The folder of the file is shared with whoever can write it: one that anyone may write without
// the sticky bit lets another user rename or replace what rank 0 writes there.
static int file_dir_check(const RdvInfo *i, char *err, size_t errlen)
{
	char dir[sizeof i->file];
	struct stat st;
	snprintf(dir, sizeof dir, "%s", i->file);
	const char *d = dirname(dir);
	if (stat(d, &st) < 0)
		return err_fmt(err, errlen, -errno, "rank %d: the folder %s of the rendezvous file: %s", i->rank, d,
			       strerror(errno));
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return err_fmt(err, errlen, -EPERM,
			       "rank %d: the folder %s of the rendezvous file is writable by every user (mode %04o) "
			       "without the sticky bit: another user could replace the file; use a folder of your "
			       "own or chmod +t it",
			       i->rank, d, (unsigned)(st.st_mode & 07777));
	return 0;
}

static int file_publish(const RdvInfo *i, const void *blob, size_t len, char *err, size_t errlen)
{
	uint8_t buf[RDV_HEADER_BYTES + RDV_BLOB_MAX + 8];
	char tmp[sizeof i->file + 32], dir[sizeof i->file];
	size_t n = file_record(buf, i, blob, len);
	int rc = file_dir_check(i, err, errlen);
	if (rc)
		return rc;
	// a new name of our own (O_EXCL): a link or file another user planted is never opened
	snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", i->file);
	int fd = mkstemp(tmp);
	if (fd < 0)
		return err_fmt(err, errlen, -errno, "rank 0: cannot create a file beside %s: %s", i->file,
			       strerror(errno));
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	rc = write_all(fd, buf, n);
	if (!rc && fchmod(fd, 0644) < 0) // readable by the other ranks, as the umask allows the folder
		rc = -errno;
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, i->file) < 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return err_fmt(err, errlen, rc, "rank 0: cannot write the rendezvous file %s: %s", i->file,
			       strerror(-rc));
	}
	snprintf(dir, sizeof dir, "%s", i->file);
	int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) { // the rename reaches the disk (and other machines' view) before we go on
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

// What a reader found: 0 and the blob; -EAGAIN (keep polling, *why says what was there);
// another negative errno for an error that waiting cannot mend.
static int file_try(const RdvInfo *i, void *blob, size_t len, char *why, size_t whylen, char *err, size_t errlen)
{
	uint8_t buf[RDV_HEADER_BYTES + RDV_BLOB_MAX + 8 + 1];
	// never a link, and never a FIFO or device someone planted (an open of a FIFO would block)
	int fd = open(i->file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ESTALE) {
			snprintf(why, whylen, "no file appeared");
			return -EAGAIN;
		}
		if (errno == ELOOP)
			return err_fmt(err, errlen, -ELOOP, "rank %d: the rendezvous file %s is a symbolic link",
				       i->rank, i->file);
		return err_fmt(err, errlen, -errno, "rank %d: cannot open the rendezvous file %s: %s", i->rank, i->file,
			       strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return err_fmt(err, errlen, -e, "rank %d: cannot stat the rendezvous file %s: %s", i->rank, i->file,
			       strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return err_fmt(err, errlen, -EINVAL,
			       "rank %d: the rendezvous file %s is not a regular file (a FIFO, device or folder)",
			       i->rank, i->file);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	size_t n = 0;
	ssize_t r;
	while (n < sizeof buf && ((r = read(fd, buf + n, sizeof buf - n)) > 0 || (r < 0 && errno == EINTR)))
		n += r > 0 ? (size_t)r : 0;
	close(fd);
	RdvHeader h;
	if (n >= RDV_HEADER_BYTES)
		rdv_header_get(&h, buf);
	if (n < RDV_HEADER_BYTES || h.magic != RDV_MAGIC || h.kind != RDV_FILE_RECORD || h.len > RDV_BLOB_MAX ||
	    n != RDV_HEADER_BYTES + h.len + 8 ||
	    fnv1a64(buf, RDV_HEADER_BYTES + h.len) != (get32(buf + n - 8) | (uint64_t)get32(buf + n - 4) << 32)) {
		snprintf(why, whylen, "the file there (%zu bytes) is not a rendezvous record, or is torn", n);
		return -EAGAIN;
	}
	if (h.version != RDV_VERSION || h.token != i->token) {
		snprintf(why, whylen,
			 "the file there is stale: written by pid %u of another job (token %016llx, ours %016llx)",
			 h.pid, (unsigned long long)h.token, (unsigned long long)i->token);
		return -EAGAIN;
	}
	if (h.world != (uint32_t)i->world_size || h.len != len)
		return err_fmt(err, errlen, -EPROTO,
			       "rank %d: rank 0 (pid %u) wrote an id of %u bytes for %u ranks to %s, but this rank "
			       "expects %zu bytes for %d ranks",
			       i->rank, h.pid, h.len, h.world, i->file, len, i->world_size);
	memcpy(blob, buf + RDV_HEADER_BYTES, len);
	return 0;
}

int rdv_exchange_file(const RdvInfo *i, void *blob, size_t len, char *err, size_t errlen)
{
	if (rdv_check_len(i, blob, len, err, errlen) < 0)
		return -EINVAL;
	if (!i->file[0])
		return err_fmt(err, errlen, -EINVAL, "rank %d: no rendezvous file given", i->rank);
	if (i->rank == 0)
		return file_publish(i, blob, len, err, errlen);
	int64_t t0 = time_mono_ms(), deadline = t0 + i->timeout_ms;
	int delay = 20;
	char why[256] = "no file appeared";
	for (;;) {
		int rc = file_try(i, blob, len, why, sizeof why, err, errlen);
		if (rc != -EAGAIN)
			return rc;
		if (time_mono_ms() >= deadline)
			return err_fmt(err, errlen, -ETIMEDOUT,
				       "rank %d: timed out after %.1f s waiting for rank 0 to write the id to %s (%s)",
				       i->rank, (time_mono_ms() - t0) / 1000.0, i->file, why);
		rdv_backoff(&delay, 500, deadline);
	}
}

// ---- the ring's control block (one machine) ----

static const char *boot_state_text(const RingBootSeen *s, char *buf, size_t len)
{
	switch (s->state) {
	case RING_BOOT_NONE: return "nothing was published";
	case RING_BOOT_BUSY: return "a publisher was writing it";
	case RING_BOOT_OTHER_JOB:
		snprintf(buf, len, "the ring holds an id of another job (token %016llx, pid %d)",
			 (unsigned long long)s->token, s->pid);
		return buf;
	case RING_BOOT_DEAD_PUBLISHER:
		snprintf(buf, len, "the ring holds a stale id of this job from pid %d, which has exited", s->pid);
		return buf;
	case RING_BOOT_OTHER_INSTANCE: return "the ring holds an id from before it was recreated";
	default: return "?";
	}
}

int rdv_exchange_ring(const RdvInfo *i, Ring *ring, void *blob, size_t len, char *err, size_t errlen)
{
	if (rdv_check_len(i, blob, len, err, errlen) < 0)
		return -EINVAL;
	if (!ring)
		return err_fmt(err, errlen, -EINVAL, "rank %d: the ring method needs the job's ring", i->rank);
	if (i->nodes != 1)
		return err_fmt(err, errlen, -EINVAL, "rank %d: the ring method works on one machine (the job has %d)",
			       i->rank, i->nodes);
	if (i->rank == 0) {
		int rc = ring_boot_publish(ring, i->token, (uint32_t)i->world_size, blob, len);
		if (rc < 0)
			return err_fmt(
				err, errlen, rc, "rank 0: cannot publish the id in the ring: %s%s", strerror(-rc),
				rc == -ESTALE || rc == -ENOENT ? " (the ring was recreated or removed: reopen it)"
							       : "");
		return 0;
	}
	int64_t t0 = time_mono_ms(), deadline = t0 + i->timeout_ms;
	int delay = 1;
	RingBootSeen seen;
	char buf[160];
	for (;;) {
		int rc = ring_boot_read(ring, i->token, (uint32_t)i->world_size, blob, len, &seen);
		if (rc == 0)
			return 0;
		if (rc == -EPROTO)
			return err_fmt(
				err, errlen, rc,
				"rank %d: rank 0 (pid %d) published an id for %u ranks in the ring, but this rank "
				"expects %d ranks and %zu bytes",
				i->rank, seen.pid, seen.world, i->world_size, len);
		if (rc != -EAGAIN)
			return err_fmt(err, errlen, rc, "rank %d: waiting for the id in the ring: %s%s", i->rank,
				       strerror(-rc),
				       rc == -ESTALE || rc == -ENOENT
					       ? " (the ring was recreated or removed: reopen it)"
					       : "");
		if (time_mono_ms() >= deadline)
			return err_fmt(
				err, errlen, -ETIMEDOUT,
				"rank %d: timed out after %.1f s waiting for rank 0 to publish the id in the ring (%s)",
				i->rank, (time_mono_ms() - t0) / 1000.0, boot_state_text(&seen, buf, sizeof buf));
		rdv_backoff(&delay, 50, deadline);
	}
}

int rdv_exchange(const RdvInfo *i, Ring *ring, void *blob, size_t len, char *err, size_t errlen)
{
	switch (i->method) {
	case RDV_TCP: return rdv_exchange_tcp(i, blob, len, err, errlen);
	case RDV_FILE: return rdv_exchange_file(i, blob, len, err, errlen);
	case RDV_RING: return rdv_exchange_ring(i, ring, blob, len, err, errlen);
	default: return err_fmt(err, errlen, -EINVAL, "rank %d: no rendezvous method resolved", i->rank);
	}
}
