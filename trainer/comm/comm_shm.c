// Shared-memory backend of comm. Design: a header (world, slot size, barrier, abort word, the
// pid and start time of each rank: comm_shm_layout.h) and world+1 staging slots. Every
// collective is rounds of "copy in, barrier, combine/copy out, barrier". Guarantees: reductions
// add slots in rank order 0..K−1 into one shared result that every rank copies, so results are
// bit-identical across ranks and runs; a waiting rank notices a peer that exited (or is a
// zombie, or whose pid was reused) within ~20 ms and an unresponsive one after timeout_s. Not
// guaranteed: progress if a peer is alive but never calls the same collective (it fails by
// timeout), or safety if two ranks claim one rank number concurrently.
// The data plane and the comm thread that overlaps all-reduces with backward: comm_shm_thread.c.
#include "comm_shm_impl.h"   // defines: Shm, shm_barrier, shm_gather, shm_reduce, ...
#include "proc_time.h"       // defines: time_mono_s
#include "comm_shm_layout.h" // defines: struct ShmHeader, SHM_MAGIC, SHM_VERSION, HDR_BYTES
#include "proc_ident.h"      // defines: proc_start_time, proc_is_dead (common/)

#include <errno.h>       // defines: EINVAL, EPIPE, ETIMEDOUT, EBUSY, EPROTO, ENOMEM
#include <fcntl.h>       // defines: O_CREAT, O_RDWR
#include <limits.h>      // defines: INT_MAX
#include <linux/futex.h> // defines: FUTEX_WAIT, FUTEX_WAKE
#include <stdatomic.h>   // defines: atomic_*
#include <stdint.h>      // defines: uint32_t, uint64_t
#include <stdio.h>       // defines: snprintf, fopen, fscanf
#include <stdlib.h>      // defines: calloc, free
#include <string.h>      // defines: memcpy, strrchr
#include <sys/mman.h>    // defines: shm_open, mmap, munmap
#include <sys/stat.h>    // defines: fstat
#include <sys/syscall.h> // defines: SYS_futex
#include <time.h>        // defines: clock_gettime, timespec
#include <unistd.h>      // defines: getpid, ftruncate, close, syscall

static Shm *impl(Comm *c)
{
	return c->impl;
}

static unsigned char *slot(Shm *s, int i)
{
	return s->slots + (size_t)i * s->h->slot_bytes;
}

// alive unless it exited, is a zombie, or its pid now names another process (the start time
// it recorded at attach differs: a pid alone is reused)
static int rank_alive(const ShmHeader *h, int r, int pid)
{
	return !proc_is_dead(pid, atomic_load(&h->start_times[r]));
}

static int aborted_error(Comm *c);

// records the group's failure (the first one wins) and releases every waiter
static int fail(Comm *c, int err, int who)
{
	Shm *s = impl(c);
	uint32_t zero = 0;
	int first = atomic_compare_exchange_strong(&s->h->aborted, &zero, (uint32_t)err);
	if (first)
		atomic_store(&s->h->failed_rank, who);
	atomic_fetch_add(&s->h->generation, 0x10000u);
	syscall(SYS_futex, &s->h->generation, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	if (!first) { // another rank saw the failure first: report its cause, not a consequence
		c->err[0] = 0;
		return aborted_error(c);
	}
	return -err;
}

static int aborted_error(Comm *c)
{
	for (int i = 0; i < 1000000 && atomic_load(&impl(c)->h->failed_rank) < 0; i++)
		; // the winner sets it right after the abort word (bounded: it may die in between)
	Shm *s = impl(c);
	uint32_t err = atomic_load(&s->h->aborted);
	int who = atomic_load(&s->h->failed_rank);
	if (c->err[0] == 0)
		snprintf(c->err, sizeof(c->err), "group aborted: rank %d %s", who,
			 err == ETIMEDOUT ? "did not reach a barrier in time" : "exited or left");
	return -(int)err;
}

// the first peer that left or exited, -1 when all are alive; a peer not joined yet is waited for
static int check_peers(Comm *c)
{
	Shm *s = impl(c);
	for (int r = 0; r < c->world; r++) {
		int pid = atomic_load(&s->h->pids[r]);
		if (r == c->rank || pid == 0)
			continue;
		if (pid < 0) {
			snprintf(c->err, sizeof(c->err), "rank %d left the group (closed its communicator)", r);
			return r;
		}
		if (!rank_alive(s->h, r, pid)) {
			snprintf(c->err, sizeof(c->err), "rank %d (pid %d) exited", r, pid);
			return r;
		}
	}
	return -1;
}

// names the ranks that have not entered barrier generation gen; returns the first or -1
static int name_missing(Comm *c, uint32_t gen, char *buf, size_t len)
{
	Shm *s = impl(c);
	size_t n = 0;
	int first = -1;
	buf[0] = 0;
	for (int r = 0; r < c->world && n < len; r++)
		if (atomic_load(&s->h->entered[r]) != gen + 1) {
			n += snprintf(buf + n, len - n, " %d%s", r,
				      atomic_load(&s->h->pids[r]) == 0 ? " (never joined)" : "");
			if (first < 0)
				first = r;
		}
	return first;
}

int shm_barrier(Comm *c)
{
	Shm *s = impl(c);
	ShmHeader *h = s->h;
	if (atomic_load(&h->aborted))
		return aborted_error(c);
	uint32_t gen = atomic_load(&h->generation);
	atomic_store(&h->entered[c->rank], gen + 1);
	if (atomic_fetch_add(&h->arrived, 1) == (uint32_t)c->world - 1) {
		atomic_store(&h->arrived, 0);
		atomic_fetch_add(&h->generation, 1);
		syscall(SYS_futex, &h->generation, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		return 0;
	}
	double start = time_mono_s(), last_check = start;
	for (int spin = 0; atomic_load(&h->generation) == gen; spin++) {
		if (spin < 2000)
			continue;
		struct timespec ts = {0, 20 * 1000 * 1000};
		syscall(SYS_futex, &h->generation, FUTEX_WAIT, gen, &ts, NULL, 0);
		if (atomic_load(&h->generation) != gen)
			break;
		double t = time_mono_s();
		if (t - last_check < 0.02)
			continue;
		last_check = t;
		if (atomic_load(&h->aborted))
			break;
		// a dead peer that never arrived blocks this barrier forever: check the missing ones
		int who = check_peers(c);
		if (who >= 0)
			return fail(c, EPIPE, who);
		if (t - start > s->timeout_s) {
			char missing[160];
			int first = name_missing(c, gen, missing, sizeof(missing));
			snprintf(c->err, sizeof(c->err), "timed out after %.0f s at a barrier waiting for rank%s",
				 s->timeout_s, missing);
			return fail(c, ETIMEDOUT, first);
		}
	}
	if (atomic_load(&h->aborted))
		return aborted_error(c);
	return 0;
}

int shm_gather(Comm *c, const void *send, void *recv, size_t bytes)
{
	Shm *s = impl(c);
	size_t cap = s->h->slot_bytes;
	for (size_t off = 0; off < bytes || (bytes == 0 && off == 0); off += cap) {
		size_t n = bytes - off < cap ? bytes - off : cap;
		if (n)
			memcpy(slot(s, c->rank), (const unsigned char *)send + off, n);
		int rc = shm_barrier(c);
		if (rc < 0)
			return rc;
		for (int r = 0; r < c->world; r++)
			if (n)
				memcpy((unsigned char *)recv + (size_t)r * bytes + off, slot(s, r), n);
		if ((rc = shm_barrier(c)) < 0)
			return rc;
		if (bytes == 0)
			break;
	}
	return 0;
}

static size_t elem_bytes(KDtype dt)
{
	return dt == KDT_F64 ? 8 : dt == KDT_BF16 ? 2 : 4;
}

// out[i] = the reduction of (K, stride) rows of src at [i]: ranks added in order 0..K−1 in the
// accumulation type (f32 for f32 and bf16, rounded once; f64 for the control channel's doubles)
static void combine(void *out, const unsigned char *src, size_t stride, int K, size_t lo, size_t hi, KDtype dt,
		    CommReduce op)
{
	if (dt == KDT_F64) {
		double *o = out;
		for (size_t i = lo; i < hi; i++) {
			double acc = ((const double *)src)[i];
			for (int r = 1; r < K; r++)
				acc += ((const double *)(src + (size_t)r * stride))[i];
			o[i] = op == COMM_AVG ? acc / (double)K : acc;
		}
	} else if (dt == KDT_F32) {
		float *o = out;
		for (size_t i = lo; i < hi; i++) {
			float acc = ((const float *)src)[i];
			for (int r = 1; r < K; r++)
				acc += ((const float *)(src + (size_t)r * stride))[i];
			o[i] = op == COMM_AVG ? acc / (float)K : acc;
		}
	} else {
		uint16_t *o = out;
		for (size_t i = lo; i < hi; i++) {
			float acc = kern_f32_from_bf16(((const uint16_t *)src)[i]);
			for (int r = 1; r < K; r++)
				acc += kern_f32_from_bf16(((const uint16_t *)(src + (size_t)r * stride))[i]);
			o[i] = kern_bf16_from_f32(op == COMM_AVG ? acc / (float)K : acc);
		}
	}
}

int shm_reduce(Comm *c, void *buf, size_t n, KDtype dt, CommReduce op)
{
	Shm *s = impl(c);
	const size_t es = elem_bytes(dt), cap = s->h->slot_bytes / es;
	const int K = c->world;
	for (size_t off = 0; off < n; off += cap) {
		size_t m = n - off < cap ? n - off : cap;
		memcpy(slot(s, c->rank), (unsigned char *)buf + off * es, m * es);
		int rc = shm_barrier(c);
		if (rc < 0)
			return rc;
		// this rank combines its share [lo, hi) of the round into the shared result slot
		combine(slot(s, K), slot(s, 0), s->h->slot_bytes, K, m * c->rank / K, m * (c->rank + 1) / K, dt, op);
		if ((rc = shm_barrier(c)) < 0)
			return rc;
		memcpy((unsigned char *)buf + off * es, slot(s, K), m * es);
		if ((rc = shm_barrier(c)) < 0)
			return rc;
	}
	return 0;
}

int shm_reduce_scatter(Comm *c, const void *send, void *recv, size_t n, KDtype dt, CommReduce op)
{
	Shm *s = impl(c);
	const int K = c->world;
	const size_t es = elem_bytes(dt), cap = s->h->slot_bytes / es / K; // per destination per round
	if (cap == 0) {
		snprintf(c->err, sizeof(c->err), "reduce_scatter: slot too small for %d ranks", K);
		return -EINVAL;
	}
	for (size_t off = 0; off < n; off += cap) {
		size_t m = n - off < cap ? n - off : cap;
		unsigned char *mine = slot(s, c->rank); // (K, m)
		for (int q = 0; q < K; q++)
			memcpy(mine + (size_t)q * m * es, (const unsigned char *)send + ((size_t)q * n + off) * es,
			       m * es);
		int rc = shm_barrier(c);
		if (rc < 0)
			return rc;
		// rows of this rank's block in every slot: element i of rank r at slot(r) + (rank·m + i)·es
		combine((unsigned char *)recv + off * es, slot(s, 0) + (size_t)c->rank * m * es, s->h->slot_bytes, K, 0,
			m, dt, op);
		if ((rc = shm_barrier(c)) < 0)
			return rc;
	}
	return 0;
}

int shm_bcast(Comm *c, void *buf, size_t bytes, int root)
{
	Shm *s = impl(c);
	size_t cap = s->h->slot_bytes;
	for (size_t off = 0; off < bytes; off += cap) {
		size_t n = bytes - off < cap ? bytes - off : cap;
		if (c->rank == root)
			memcpy(slot(s, c->world), (unsigned char *)buf + off, n);
		int rc = shm_barrier(c);
		if (rc < 0)
			return rc;
		if (c->rank != root)
			memcpy((unsigned char *)buf + off, slot(s, c->world), n);
		if ((rc = shm_barrier(c)) < 0)
			return rc;
	}
	return 0;
}

void shm_close_comm(Comm *c)
{
	Shm *s = impl(c);
	if (s) {
		shm_thread_stop(c);
		int32_t me = getpid();
		atomic_compare_exchange_strong(&s->h->pids[c->rank], &me, -1); // left: peers waiting fail fast
		munmap(s->h, s->map_bytes);
		free(s);
	}
	free(c);
}

static int shm_path(char *buf, size_t len, const char *name)
{
	if (!name || !name[0] || strchr(name, '/') || strlen(name) + 2 > len)
		return -EINVAL;
	snprintf(buf, len, "/%s", name);
	return 0;
}

int comm_shm_create(const char *name, int world, size_t slot_bytes)
{
	char path[256];
	if (shm_path(path, sizeof(path), name) < 0 || world < 1 || world > COMM_SHM_MAX_WORLD || slot_bytes < 64 ||
	    slot_bytes % 64)
		return -EINVAL;
	size_t seg = HDR_BYTES + (size_t)(world + 1) * slot_bytes;
	shm_unlink(path);
	int fd = shm_open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)seg) < 0) {
		int e = errno;
		close(fd);
		shm_unlink(path);
		return -e;
	}
	ShmHeader *h = mmap(NULL, seg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED) {
		int e = errno;
		shm_unlink(path);
		return -e;
	}
	h->version = SHM_VERSION;
	h->world = (uint32_t)world;
	h->slot_bytes = slot_bytes;
	h->seg_bytes = seg;
	atomic_store(&h->failed_rank, -1);
	atomic_thread_fence(memory_order_seq_cst);
	h->magic = SHM_MAGIC; // last: a segment with the magic is initialized
	munmap(h, seg);
	return 0;
}

int comm_shm_unlink(const char *name)
{
	char path[256];
	if (shm_path(path, sizeof(path), name) < 0)
		return -EINVAL;
	return shm_unlink(path) < 0 ? -errno : 0;
}

int comm_shm_attach(const char *name, int rank, double timeout_s, Comm **out)
{
	char path[256];
	if (!out || shm_path(path, sizeof(path), name) < 0 || rank < 0 || !(timeout_s > 0))
		return -EINVAL;
	int fd = shm_open(path, O_RDWR, 0);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < HDR_BYTES) {
		close(fd);
		return -EPROTO;
	}
	ShmHeader *h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED)
		return -errno;
	int rc = 0;
	if (h->magic != SHM_MAGIC || h->version != SHM_VERSION || h->seg_bytes != (uint64_t)st.st_size)
		rc = -EPROTO;
	else if ((uint32_t)rank >= h->world)
		rc = -EINVAL;
	Comm *c = NULL;
	Shm *s = NULL;
	if (rc == 0) {
		int32_t old = atomic_load(&h->pids[rank]);
		if (old > 0 && rank_alive(h, rank, old))
			rc = -EBUSY;
		else {
			// the start time first: whoever sees the new pid sees its start time too
			uint64_t old_start = atomic_exchange(&h->start_times[rank], proc_start_time(getpid()));
			if (!atomic_compare_exchange_strong(&h->pids[rank], &old, (int32_t)getpid())) {
				atomic_store(&h->start_times[rank], old_start);
				rc = -EBUSY;
			}
		}
	}
	if (rc == 0 && (!(c = calloc(1, sizeof(*c))) || !(s = calloc(1, sizeof(*s)))))
		rc = -ENOMEM;
	if (rc < 0) {
		if (rc == -ENOMEM)
			atomic_store(&h->pids[rank], 0);
		free(c);
		munmap(h, (size_t)st.st_size);
		return rc;
	}
	s->h = h;
	s->slots = (unsigned char *)h + HDR_BYTES;
	s->map_bytes = (size_t)st.st_size;
	s->timeout_s = timeout_s;
	shm_thread_init(s);
	c->ops = &shm_comm_ops;
	c->impl = s;
	c->rank = rank;
	c->world = (int)h->world;
	*out = c;
	return 0;
}
