// The TCP method: rank 0 listens on MASTER_PORT (every interface, IPv6 and IPv4) and hands its
// blob to each rank that says HELLO with the same job token, world size and blob length.
//
// Protocol (version 1, little-endian, see rdv_internal.h): the rank sends a 32-byte HELLO
// (magic, version, job token, world size, its rank, blob length, pid); the master answers with
// OK + blob, or REJECT + the reason in the rank field. A HELLO of another job is refused and
// the master goes on waiting for its own ranks; a HELLO of its own job that disagrees (world
// size, length, rank range, a rank twice) is an error on both sides, since waiting cannot mend
// it. The master serves connections one at a time, each under a 5 s deadline of its own.
#define _GNU_SOURCE       // accept4
#include "rdv_internal.h" // defines: RdvHeader, rdv_backoff
#include "proc_time.h"    // defines: time_mono_ms
#include "comm.h"         // defines: RdvInfo

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PEER_MS 5000 // one connection's exchange, on either side

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

// moves all n bytes (want_write: send) before deadline_ms: 0, -ETIMEDOUT, -EPIPE (peer closed), -errno
static int io_full(int fd, void *buf, size_t n, int64_t deadline_ms, int want_write)
{
	uint8_t *p = buf;
	while (n) {
		ssize_t r = want_write ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
		if (r > 0) {
			p += r;
			n -= (size_t)r;
			continue;
		}
		if (r == 0)
			return -EPIPE;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int64_t left = deadline_ms - time_mono_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pfd = {fd, want_write ? POLLOUT : POLLIN, 0};
		if (poll(&pfd, 1, (int)min64(left, 1000)) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

static void peer_name(const struct sockaddr *sa, socklen_t len, char *buf, size_t buflen)
{
	char host[NI_MAXHOST];
	if (getnameinfo(sa, len, host, sizeof host, NULL, 0, NI_NUMERICHOST))
		snprintf(host, sizeof host, "?");
	snprintf(buf, buflen, "%s", host);
}

// A socket on every interface: IPv6 accepting IPv4 too, or IPv4 alone where IPv6 is off.
static int listen_any(const RdvInfo *i, int *out, char *err, size_t errlen)
{
	int rc = 0;
	for (int v6 = 1; v6 >= 0; v6--) {
		int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		int one = 1, zero = 0;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); // a restart within TIME_WAIT
		struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
					  .sin6_port = htons((uint16_t)i->master_port),
					  .sin6_addr = in6addr_any};
		struct sockaddr_in a4 = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)i->master_port),
					 .sin_addr.s_addr = htonl(INADDR_ANY)};
		if (v6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
		int b = v6 ? bind(fd, (struct sockaddr *)&a6, sizeof a6) : bind(fd, (struct sockaddr *)&a4, sizeof a4);
		if (b == 0 && listen(fd, SOMAXCONN) == 0) {
			*out = fd;
			return 0;
		}
		rc = -errno;
		close(fd);
		if (rc == -EADDRINUSE || rc == -EACCES)
			break; // IPv4 alone would meet the same holder
	}
	return err_fmt(err, errlen, rc, "rank 0: cannot listen on port %d: %s%s", i->master_port, strerror(-rc),
		       rc == -EADDRINUSE ? " (another job or program holds it: choose another MASTER_PORT)" : "");
}

typedef struct {
	const RdvInfo *i;
	const void *blob;
	size_t len;
	uint32_t *pid_of; // (world): the pid that fetched each rank's copy, 0 before
	int served;       // ranks with their copy
	int foreign;      // connections of other jobs refused
} Master;

static int reply(int fd, const Master *m, RdvKind kind, RdvReason why, int64_t deadline)
{
	uint8_t buf[RDV_HEADER_BYTES + RDV_BLOB_MAX];
	RdvHeader h = {RDV_MAGIC,
		       RDV_VERSION,
		       (uint16_t)kind,
		       m->i->token,
		       (uint32_t)m->i->world_size,
		       (uint32_t)why,
		       kind == RDV_OK ? (uint32_t)m->len : 0,
		       (uint32_t)getpid()};
	rdv_header_put(buf, &h);
	if (kind == RDV_OK)
		memcpy(buf + RDV_HEADER_BYTES, m->blob, m->len);
	return io_full(fd, buf, RDV_HEADER_BYTES + (kind == RDV_OK ? m->len : 0), deadline, 1);
}

// One accepted connection: 1 served, 0 ignored (not ours, or gone), < 0 an error of this job.
static int serve(Master *m, int fd, const char *peer, char *err, size_t errlen)
{
	const RdvInfo *i = m->i;
	int64_t deadline = time_mono_ms() + PEER_MS;
	uint8_t buf[RDV_HEADER_BYTES];
	RdvHeader h;
	if (io_full(fd, buf, sizeof buf, deadline, 0) < 0)
		return 0; // a port scanner, or a rank that died: it retries if it lives
	rdv_header_get(&h, buf);
	if (h.magic != RDV_MAGIC || h.kind != RDV_HELLO)
		return 0;
	if (h.token != i->token) {
		reply(fd, m, RDV_REJECT, h.version != RDV_VERSION ? RDV_R_VERSION : RDV_R_OTHER_JOB, deadline);
		m->foreign++;
		return 0;
	}
	RdvReason why = h.version != RDV_VERSION             ? RDV_R_VERSION
			: h.world != (uint32_t)i->world_size ? RDV_R_WORLD
			: h.rank == 0 || h.rank >= h.world   ? RDV_R_RANK
			: h.len != m->len                    ? RDV_R_LENGTH
			: m->pid_of[h.rank]                  ? RDV_R_DUPLICATE
							     : RDV_R_NONE;
	if (why == RDV_R_NONE) {
		if (reply(fd, m, RDV_OK, RDV_R_NONE, deadline) < 0)
			return 0; // it went away: it asks again if it lives
		m->pid_of[h.rank] = h.pid ? h.pid : 1;
		m->served++;
		return 1;
	}
	reply(fd, m, RDV_REJECT, why, deadline);
	if (why == RDV_R_DUPLICATE)
		return err_fmt(
			err, errlen, -EEXIST,
			"rank 0: rank %u asked for the id twice (pid %u earlier, pid %u from %s now): two processes "
			"have the same rank",
			h.rank, m->pid_of[h.rank], h.pid, peer);
	return err_fmt(err, errlen, -EPROTO,
		       "rank 0: refused rank %u (pid %u at %s): %s (it has %u ranks, protocol %u, %u bytes; rank 0 has "
		       "%d ranks, protocol %d, %zu bytes)",
		       h.rank, h.pid, peer, rdv_reason_text(why), h.world, h.version, h.len, i->world_size, RDV_VERSION,
		       m->len);
}

// "2, 5, 7" (the first few ranks without their copy)
static void missing_ranks(const Master *m, char *buf, size_t len)
{
	size_t at = 0;
	int shown = 0;
	buf[0] = '\0';
	for (int r = 1; r < m->i->world_size && at < len; r++) {
		if (m->pid_of[r])
			continue;
		if (shown++ == 16) {
			snprintf(buf + at, len - at, ", ...");
			return;
		}
		at += (size_t)snprintf(buf + at, len - at, "%s%d", shown > 1 ? ", " : "", r);
	}
}

static int master_run(const RdvInfo *i, const void *blob, size_t len, char *err, size_t errlen)
{
	int lfd = -1, rc;
	if (i->world_size == 1)
		return 0;
	if ((rc = listen_any(i, &lfd, err, errlen)) < 0)
		return rc;
	Master m = {.i = i, .blob = blob, .len = len, .pid_of = calloc((size_t)i->world_size, sizeof(uint32_t))};
	if (!m.pid_of) {
		close(lfd);
		return err_fmt(err, errlen, -ENOMEM, "rank 0: out of memory for %d ranks", i->world_size);
	}
	int64_t t0 = time_mono_ms(), deadline = t0 + i->timeout_ms;
	rc = 0;
	while (m.served < i->world_size - 1 && rc >= 0) {
		int64_t left = deadline - time_mono_ms();
		if (left <= 0) {
			char miss[160];
			missing_ranks(&m, miss, sizeof miss);
			rc = err_fmt(
				err, errlen, -ETIMEDOUT,
				"rank 0: timed out after %.1f s on port %d waiting for %d of %d ranks to fetch the id "
				"(missing: %s)%s",
				(time_mono_ms() - t0) / 1000.0, i->master_port, i->world_size - 1 - m.served,
				i->world_size - 1, miss, m.foreign ? "; connections of another job were refused" : "");
			break;
		}
		struct pollfd pfd = {lfd, POLLIN, 0};
		if (poll(&pfd, 1, (int)min64(left, 1000)) <= 0)
			continue;
		struct sockaddr_storage sa;
		socklen_t sl = sizeof sa;
		int cfd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (cfd < 0)
			continue; // EAGAIN, or the peer gave up before we got to it
		char peer[NI_MAXHOST];
		peer_name((struct sockaddr *)&sa, sl, peer, sizeof peer);
		rc = serve(&m, cfd, peer, err, errlen);
		close(cfd);
	}
	close(lfd);
	free(m.pid_of);
	return rc < 0 ? rc : 0;
}

static int connect_by(const struct addrinfo *ai, int64_t deadline, int *out)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		int e = errno;
		if (e != EINPROGRESS) {
			close(fd);
			return -e;
		}
		struct pollfd pfd = {fd, POLLOUT, 0};
		int64_t left = deadline - time_mono_ms();
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		if (poll(&pfd, 1, left > 0 ? (int)left : 0) <= 0) { // a refusal already there still counts
			close(fd);
			return -ETIMEDOUT;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr) {
			close(fd);
			return -soerr;
		}
	}
	*out = fd;
	return 0;
}

// One HELLO to one address: 0 and the blob; -EAGAIN (retry; *last says why); or a final error.
static int ask(const RdvInfo *i, int fd, void *blob, size_t len, int64_t deadline, char *last, size_t lastlen,
	       char *err, size_t errlen)
{
	uint8_t buf[RDV_HEADER_BYTES];
	RdvHeader h = {RDV_MAGIC,         RDV_VERSION,   RDV_HELLO,         i->token, (uint32_t)i->world_size,
		       (uint32_t)i->rank, (uint32_t)len, (uint32_t)getpid()};
	rdv_header_put(buf, &h);
	int rc = io_full(fd, buf, sizeof buf, deadline, 1);
	if (!rc)
		rc = io_full(fd, buf, sizeof buf, deadline, 0);
	if (rc < 0) {
		snprintf(last, lastlen, "%s", rc == -EPIPE ? "the master closed the connection" : strerror(-rc));
		return -EAGAIN;
	}
	rdv_header_get(&h, buf);
	if (h.magic != RDV_MAGIC)
		return err_fmt(
			err, errlen, -EPROTO,
			"rank %d: something that is not an avclip rendezvous answers at %s port %d (another program "
			"on MASTER_PORT?)",
			i->rank, i->master_addr, i->master_port);
	if (h.kind == RDV_REJECT && h.rank == RDV_R_OTHER_JOB)
		return err_fmt(
			err, errlen, -EPERM,
			"rank %d: the master at %s port %d (pid %u) belongs to another job (its token %016llx, "
			"ours %016llx for job %s): two jobs share MASTER_PORT, or the ranks disagree on the job id",
			i->rank, i->master_addr, i->master_port, h.pid, (unsigned long long)h.token,
			(unsigned long long)i->token, i->job);
	if (h.kind == RDV_REJECT)
		return err_fmt(err, errlen, -EPROTO, "rank %d: the master at %s port %d refused this rank: %s", i->rank,
			       i->master_addr, i->master_port, rdv_reason_text((RdvReason)h.rank));
	if (h.kind != RDV_OK || h.token != i->token || h.world != (uint32_t)i->world_size || h.len != len)
		return err_fmt(err, errlen, -EPROTO, "rank %d: the master at %s port %d sent a malformed answer",
			       i->rank, i->master_addr, i->master_port);
	if ((rc = io_full(fd, blob, len, deadline, 0)) < 0) {
		snprintf(last, lastlen, "the master's answer broke off: %s", strerror(-rc));
		return -EAGAIN;
	}
	return 0;
}

static int worker_run(const RdvInfo *i, void *blob, size_t len, char *err, size_t errlen)
{
	int64_t t0 = time_mono_ms(), deadline = t0 + i->timeout_ms;
	int delay = 20;
	char port[16], last[320] = "no attempt finished";
	snprintf(port, sizeof port, "%d", i->master_port);
	for (;;) {
		struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
		int g = getaddrinfo(i->master_addr, port, &hints, &res);
		if (g == EAI_NONAME || g == EAI_SERVICE || g == EAI_FAMILY)
			return err_fmt(err, errlen, -EHOSTUNREACH,
				       "rank %d: cannot resolve the master address '%s': %s", i->rank, i->master_addr,
				       gai_strerror(g));
		if (g)
			snprintf(last, sizeof last, "resolving '%s': %s", i->master_addr, gai_strerror(g));
		for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			int fd = -1, rc = connect_by(ai, min64(deadline, time_mono_ms() + PEER_MS), &fd);
			if (rc < 0) {
				snprintf(last, sizeof last, "%s", strerror(-rc));
				continue;
			}
			rc = ask(i, fd, blob, len, min64(deadline, time_mono_ms() + PEER_MS), last, sizeof last, err,
				 errlen);
			close(fd);
			if (rc != -EAGAIN) {
				freeaddrinfo(res);
				return rc;
			}
		}
		if (res)
			freeaddrinfo(res);
		if (time_mono_ms() >= deadline)
			return err_fmt(
				err, errlen, -ETIMEDOUT,
				"rank %d: timed out after %.1f s waiting for rank 0 to hand out the id at %s port %d "
				"(last attempt: %s)",
				i->rank, (time_mono_ms() - t0) / 1000.0, i->master_addr, i->master_port, last);
		rdv_backoff(&delay, 1000, deadline);
	}
}

int rdv_exchange_tcp(const RdvInfo *i, void *blob, size_t len, char *err, size_t errlen)
{
	if (rdv_check_len(i, blob, len, err, errlen) < 0)
		return -EINVAL;
	return i->rank == 0 ? master_run(i, blob, len, err, errlen) : worker_run(i, blob, len, err, errlen);
}
