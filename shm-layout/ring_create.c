// Creating a ring segment: bounds and room checked before anything is allocated, the segment
// built without a name (stop signals held meanwhile), faulted in, and published by linking it.
//
// Creation is atomic: the segment is built as an unnamed file (O_TMPFILE; a named temporary
// where the file system cannot), its magic is stored last, and it is linked (or renamed) into
// place without replacing anything, so an opener never sees a half-initialised ring.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_NUMA
#include <numa.h>
#endif

#include "proc_ident.h" // defines: proc_start_time, proc_is_dead (common/)
#include "errbuf.h"     // defines: err_fmt
#include "proc_time.h"  // defines: time_mono_ns, time_real_ns
#include "ring_layout.h"

void ring_create_options_default(RingCreateOptions *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->geometry = (RingGeometry){.frames = 16, .height = 224, .width = 224, .channels = 3, .text_len = 77};
	opt->slots = 64;
	opt->ranks = 1;
	opt->adopt_timeout_ms = 200;
	opt->numa_node = -1;
}

static int bind_numa(void *base, size_t bytes, int node, char *errbuf, size_t errlen)
{
#ifdef HAVE_NUMA
	if (numa_available() < 0)
		return err_fmt(errbuf, errlen, -ENOTSUP,
			       "NUMA binding asked for node %d, but this kernel has no NUMA support", node);
	if (node > numa_max_node())
		return err_fmt(errbuf, errlen, -EINVAL, "NUMA node %d does not exist (this machine has nodes 0..%d)",
			       node, numa_max_node());
	numa_tonode_memory(base, bytes, node);
	return 0;
#else
	(void)base;
	(void)bytes;
	return err_fmt(errbuf, errlen, -ENOTSUP,
		       "NUMA binding to node %d asked for, but this build has no libnuma (make deps)", node);
#endif
}

static int create_validate(const RingCreateOptions *o, char *errbuf, size_t errlen)
{
	int err;
	RingLayout l;
	if ((err = ring_layout_compute(&o->geometry, o->slots, &l, errbuf, errlen)) ||
	    (err = ring_bound(errbuf, errlen, "ranks", o->ranks, 1, RING_MAX_CONSUMERS)) ||
	    (err = ring_bound(errbuf, errlen, "adopt timeout (ms)", o->adopt_timeout_ms, 0, RING_MAX_ADOPT_MS)) ||
	    (err = ring_bound(errbuf, errlen, "first position", o->first_position, 0, SLOT_POS_MAX / 2)))
		return err;
	return 0;
}

static void init_control(RingControl *c, const RingCreateOptions *o, const RingLayout *l, uint64_t bytes, int huge)
{
	c->abi_version = RING_ABI_VERSION;
	c->control_bytes = sizeof(RingControl);
	c->proc_entry_bytes = sizeof(RingProcEntry);
	c->slot_header_bytes = sizeof(RingSlotHeader);
	c->max_producers = RING_MAX_PRODUCERS;
	c->max_consumers = RING_MAX_CONSUMERS;
	c->geometry = o->geometry;
	c->slots = o->slots;
	c->ranks = o->ranks;
	c->adopt_timeout_ms = o->adopt_timeout_ms ? o->adopt_timeout_ms : 200;
	c->numa_node = o->numa_node;
	c->hugepages = (uint32_t)huge;
	c->seed = o->seed;
	c->data = o->data;
	c->data.name[sizeof c->data.name - 1] = 0;
	c->first_position = o->first_position;
	uint64_t id = 0;
	if (getrandom(&id, sizeof id, 0) != sizeof id)
		id = time_real_ns() ^ ((uint64_t)getpid() << 32);
	c->instance_id = id ? id : 1;
	c->payload_bytes = l->payload_bytes;
	c->text_offset = l->text_offset;
	c->slot_stride = l->slot_stride;
	c->slots_offset = RING_SLOTS_OFFSET;
	c->payload_offset = l->payload_offset;
	c->segment_bytes = bytes;
	c->created_unix_ns = time_real_ns();
	c->created_mono_ns = time_mono_ns();
	atomic_store(&c->claim_hint, o->first_position);
	atomic_store(&c->last_reap_ns, c->created_mono_ns);
}

// Slot s starts with the smallest position >= first that lives in it; rank r's cursor with
// the smallest position >= first that belongs to r.
static void init_tables(Ring *r, const RingCreateOptions *o)
{
	uint64_t first = o->first_position;
	for (uint32_t s = 0; s < o->slots; s++) {
		uint64_t g = first + (s + o->slots - first % o->slots) % o->slots;
		atomic_store(&r->slots[s].state, slot_word(g, 0, SLOT_EMPTY));
	}
	for (uint32_t k = 0; k < o->ranks; k++)
		atomic_store(&r->consumers[k].cursor, first + (k + o->ranks - first % o->ranks) % o->ranks);
}

// Bytes of memory the kernel could still hand out (MemAvailable), or of free huge pages; 0
// when /proc/meminfo does not say.
static uint64_t meminfo_bytes(int huge)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	char line[128];
	uint64_t avail = 0, free_pages = 0, page_kb = 0, v;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "MemAvailable: %" SCNu64, &v) == 1)
			avail = v * 1024;
		if (sscanf(line, "HugePages_Free: %" SCNu64, &v) == 1)
			free_pages = v;
		if (sscanf(line, "Hugepagesize: %" SCNu64, &v) == 1)
			page_kb = v;
	}
	fclose(f);
	return huge ? free_pages * page_kb * 1024 : avail;
}

// Refuses a segment that the file system or the memory cannot hold, before a byte is
// allocated: tmpfs grows on demand and answers an overcommitted page with SIGBUS.
static int check_room(const char *dir, uint64_t bytes, int huge, char *errbuf, size_t errlen)
{
	struct statvfs vf;
	uint64_t fs_free = statvfs(dir, &vf) == 0 ? (uint64_t)vf.f_bavail * vf.f_frsize : UINT64_MAX;
	if (huge && vf.f_blocks == 0)
		fs_free = UINT64_MAX; // hugetlbfs without a size limit: the pool decides
	uint64_t mem = meminfo_bytes(huge);
	if (bytes <= fs_free && (mem == 0 || bytes <= mem))
		return 0;
	return err_fmt(
		errbuf, errlen, -ENOSPC,
		"ring needs %.2f GB but %s has %.2f GB free and the machine %.2f GB of %s: use fewer --slots or smaller clips",
		bytes / 1e9, dir, fs_free == UINT64_MAX ? INFINITY : fs_free / 1e9, mem / 1e9,
		huge ? "free huge pages" : "available memory");
}

// Removes named temporaries that creators killed before they could remove them left behind
// (".NAME.creating.PID" whose PID is gone): the fallback below, or an older version of this code.
static void sweep_stale(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	char prefix[80];
	int n = snprintf(prefix, sizeof prefix, ".%s.creating.", name);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, (size_t)n) != 0)
			continue;
		char *end;
		long pid = strtol(de->d_name + n, &end, 10);
		if (*end || pid <= 0 || pid == getpid() || !proc_is_dead((int)pid, 0))
			continue;
		char path[400];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
}

static int stop_signal_pending(void)
{
	sigset_t p;
	return sigpending(&p) == 0 && (sigismember(&p, SIGINT) || sigismember(&p, SIGTERM) || sigismember(&p, SIGHUP));
}

// The segment while it is built: an unnamed file (tmp empty) or the named fallback tmp.
typedef struct {
	char dir[128];
	char tmp[192];
	int fd;
	int huge;
} Segment;

// An unnamed file in dir (O_TMPFILE), published later by linking its /proc/self/fd entry: a
// creator that dies at any moment (SIGKILL, or a stop signal taken by one of its other threads,
// which ring_create's mask does not cover) leaves nothing behind. -1 where the file system, the
// kernel or a missing /proc does not allow it.
int ring_create_named_temp;

static int open_unnamed(const char *dir)
{
	if (ring_create_named_temp || access("/proc/self/fd", X_OK) != 0)
		return -1;
	return open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

// The fallback: a named temporary ".NAME.creating.PID", removed on every error and on a stop
// signal; one left by a killed creator is swept by the next creation of that name.
static int open_named(Segment *s, const char *name)
{
	snprintf(s->tmp, sizeof s->tmp, "%s/.%s.creating.%d", s->dir, name, (int)getpid());
	int fd = open(s->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		unlink(s->tmp);
		fd = open(s->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	return fd;
}

static void segment_discard(Ring *r, Segment *s)
{
	if (r->base)
		munmap(r->base, r->bytes);
	r->base = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->tmp[0])
		unlink(s->tmp);
}

// Creates, sizes and maps the segment (hugetlbfs first when asked, else /dev/shm); r->base,
// r->bytes and r->hugepage_note are set, s filled (0, or -errno with a reason).
static int segment_make(Ring *r, const char *name, const RingCreateOptions *o, const RingLayout *l, Segment *s,
			char *errbuf, size_t errlen)
{
	int huge = 0;
	if (o->hugepages) {
		if (ring_hugetlbfs_dir(s->dir, sizeof s->dir))
			huge = 1;
		else
			snprintf(r->hugepage_note, sizeof r->hugepage_note,
				 "no hugetlbfs mounted; using %s with 4 KiB pages", ring_shm_dir);
	}
	for (;;) {
		if (!huge)
			snprintf(s->dir, sizeof s->dir, "%s", ring_shm_dir);
		uint64_t bytes = huge ? ring_round_up(l->bytes, 2u << 20) : l->bytes;
		char why[256];
		int err = check_room(s->dir, bytes, huge, why, sizeof why);
		if (err && huge) {
			snprintf(r->hugepage_note, sizeof r->hugepage_note, "%.100s; using %s", why, ring_shm_dir);
			huge = 0;
			continue;
		}
		if (err)
			return err_fmt(errbuf, errlen, err, "%s", why);
		sweep_stale(s->dir, name);
		s->tmp[0] = 0;
		s->fd = open_unnamed(s->dir);
		if (s->fd < 0)
			s->fd = open_named(s, name);
		// tmpfs: reserve the pages now, so a full file system is ENOSPC here and never SIGBUS later
		if (s->fd >= 0 && ftruncate(s->fd, (off_t)bytes) == 0 &&
		    (huge || (errno = posix_fallocate(s->fd, 0, (off_t)bytes)) == 0)) {
			r->base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
			if (r->base != MAP_FAILED) {
				r->bytes = bytes;
				s->huge = huge;
				return 0;
			}
		}
		int e = errno;
		r->base = NULL;
		segment_discard(r, s);
		if (huge) { // hugetlbfs without free pages refuses ftruncate/mmap: fall back
			snprintf(r->hugepage_note, sizeof r->hugepage_note,
				 "hugetlbfs at %.60s refused %" PRIu64 " bytes (%s); using %s", s->dir, bytes,
				 strerror(e), ring_shm_dir);
			huge = 0;
			continue;
		}
		return err_fmt(errbuf, errlen, -e, "cannot create ring segment in %s (%" PRIu64 " bytes): %s", s->dir,
			       bytes, strerror(e));
	}
}

// Gives the built segment its name; never replaces a file that is there (-EEXIST).
static int segment_publish(const Segment *s, const char *path)
{
	if (s->tmp[0])
		return renameat2(AT_FDCWD, s->tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0 ? 0 : -errno;
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", s->fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
}

// Faults every page in (under the NUMA policy) so the hot path never takes a fault; gives up
// with -EINTR when SIGINT, SIGTERM or SIGHUP arrives meanwhile (they are blocked by the caller).
static int segment_touch(Ring *r)
{
	for (uint64_t off = 0; off < r->bytes; off += RING_PAGE) {
		if ((off & ((1u << 24) - 1)) == 0 && stop_signal_pending())
			return -EINTR;
		r->base[off] = 0;
	}
	return 0;
}

// Builds and publishes the segment. SIGINT/SIGTERM/SIGHUP stay blocked in the calling thread
// meanwhile: one sent to it stops the build (nothing is published) and is delivered when the
// caller's mask is restored. One that another thread of the process takes ends the process
// without this code running; the unnamed segment then simply vanishes.
static int create_blocked(Ring *r, const char *name, const RingCreateOptions *o, const RingLayout *l, char *errbuf,
			  size_t errlen)
{
	Segment s = {.fd = -1};
	int err = segment_make(r, name, o, l, &s, errbuf, errlen);
	if (err)
		return err;
	if (o->numa_node >= 0 && (err = bind_numa(r->base, r->bytes, o->numa_node, errbuf, errlen)) != 0)
		goto undo;
	if ((err = segment_touch(r)) != 0) {
		if (s.tmp[0])
			err_fmt(errbuf, errlen, err,
				"ring creation interrupted by a signal; nothing was published (the temporary "
				"segment %s was removed)",
				s.tmp);
		else
			err_fmt(errbuf, errlen, err, "ring creation interrupted by a signal; nothing was published");
		goto undo;
	}
	r->ctl = (RingControl *)r->base;
	init_control(r->ctl, o, l, r->bytes, s.huge);
	r->n_slots = o->slots;
	r->n_ranks = o->ranks;
	r->adopt_timeout_ms = r->ctl->adopt_timeout_ms;
	r->geometry = o->geometry;
	r->payload_bytes = l->payload_bytes;
	r->text_offset = l->text_offset;
	r->slot_stride = l->slot_stride;
	r->payload_offset = l->payload_offset;
	ring_map_views(r);
	init_tables(r, o);
	atomic_store_explicit(&r->ctl->magic, RING_MAGIC, memory_order_release);

	char existing[192];
	if (ring_path(name, existing, sizeof existing) == 0) {
		if (!o->replace) {
			err = err_fmt(errbuf, errlen, -EEXIST,
				      "ring '%s' already exists (%s); remove it or recreate with replace", name,
				      existing);
			goto undo;
		}
		// marks the old ring closed and wakes its users before it goes
		int de = ring_destroy(name);
		if (de && de != -ENOENT) {
			err = err_fmt(errbuf, errlen, de, "cannot replace ring '%s': removing %s: %s", name, existing,
				      strerror(-de));
			goto undo;
		}
	}
	snprintf(r->path, sizeof r->path, "%s/%s", s.dir, name);
	if ((err = segment_publish(&s, r->path)) != 0) {
		if (err == -EEXIST)
			err_fmt(errbuf, errlen, err,
				"ring '%s' already exists (%s): another creator published it first", name, r->path);
		else
			err_fmt(errbuf, errlen, err, "cannot publish ring %s: %s", r->path, strerror(-err));
		goto undo;
	}
	struct stat st;
	fstat(s.fd, &st);
	r->file_dev = st.st_dev;
	r->file_ino = st.st_ino;
	r->instance_id = r->ctl->instance_id;
	close(s.fd);
	return 0;
undo:
	segment_discard(r, &s);
	return err;
}

int ring_create(Ring **out, const char *name, const RingCreateOptions *o, char *errbuf, size_t errlen)
{
	*out = NULL;
	if (!ring_name_valid(name))
		return err_fmt(errbuf, errlen, -EINVAL, "bad ring name '%s' (letters, digits, - _ . ; at most 48)",
			       name);
	int err = create_validate(o, errbuf, errlen);
	if (err)
		return err;
	RingLayout l;
	ring_layout_compute(&o->geometry, o->slots, &l, NULL, 0);

	Ring *r = calloc(1, sizeof *r);
	if (!r)
		return -ENOMEM;
	snprintf(r->name, sizeof r->name, "%s", name);
	sigset_t stop, old;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	err = create_blocked(r, name, o, &l, errbuf, errlen);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}
