// Opening, validating and destroying the ring segment: the file in /dev/shm (or on hugetlbfs),
// its layout computed from the geometry, and the ABI/geometry checks with messages that say both sides.
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ring_layout.h"
#include "errbuf.h"    // defines: err_fmt
#include "proc_time.h" // defines: time_mono_ns

const char ring_shm_dir[] = "/dev/shm";

uint64_t ring_payload_bytes(const RingGeometry *g)
{
	return (uint64_t)g->frames * g->height * g->width * g->channels;
}

int ring_geometry_equal(const RingGeometry *a, const RingGeometry *b)
{
	return a->frames == b->frames && a->height == b->height && a->width == b->width && a->channels == b->channels &&
	       a->text_len == b->text_len;
}

void ring_geometry_format(const RingGeometry *g, char *buf, size_t len)
{
	snprintf(buf, len, "T=%u H=%u W=%u C=%u text=%u", g->frames, g->height, g->width, g->channels, g->text_len);
}

int ring_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 48)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
		      c == '_' || c == '.'))
			return 0;
	}
	return name[0] != '.';
}

// The mount point of a hugetlbfs file system, if one is mounted and has pages.
int ring_hugetlbfs_dir(char *dir, size_t len)
{
	FILE *f = fopen("/proc/mounts", "r");
	if (!f)
		return 0;
	char dev[256], mnt[128], type[64];
	int found = 0;
	while (fscanf(f, "%255s %127s %63s %*[^\n]", dev, mnt, type) == 3) {
		if (strcmp(type, "hugetlbfs") == 0) {
			snprintf(dir, len, "%s", mnt);
			found = 1;
			break;
		}
	}
	fclose(f);
	return found;
}

void ring_map_views(Ring *r)
{
	r->ctl = (RingControl *)r->base;
	r->producers = (RingProcEntry *)(r->base + RING_PRODUCERS_OFFSET);
	r->consumers = (RingProcEntry *)(r->base + RING_CONSUMERS_OFFSET);
	r->slots = (RingSlotHeader *)(r->base + RING_SLOTS_OFFSET);
	r->payloads = r->base + r->payload_offset;
}

int ring_bound(char *errbuf, size_t errlen, const char *what, uint64_t v, uint64_t lo, uint64_t hi)
{
	if (v >= lo && v <= hi)
		return 0;
	return err_fmt(errbuf, errlen, -EINVAL, "ring %s must be %" PRIu64 "..%" PRIu64 ", got %" PRIu64, what, lo, hi,
		       v);
}

static int geometry_validate(const RingGeometry *g, uint32_t slots, char *errbuf, size_t errlen)
{
	int err;
	if ((err = ring_bound(errbuf, errlen, "frames (T)", g->frames, 1, RING_MAX_T)) ||
	    (err = ring_bound(errbuf, errlen, "height (H)", g->height, 1, RING_MAX_HW)) ||
	    (err = ring_bound(errbuf, errlen, "width (W)", g->width, 1, RING_MAX_HW)) ||
	    (err = ring_bound(errbuf, errlen, "channels (C)", g->channels, 1, RING_MAX_C)) ||
	    (err = ring_bound(errbuf, errlen, "text length", g->text_len, 0, RING_MAX_TEXT)) ||
	    (err = ring_bound(errbuf, errlen, "slots", slots, 1, RING_MAX_SLOTS)))
		return err;
	uint64_t payload = ring_payload_bytes(g); // each factor is bounded: no overflow
	if (payload > RING_MAX_PAYLOAD)
		return err_fmt(errbuf, errlen, -EINVAL,
			       "ring clip of T*H*W*C = %" PRIu64 " bytes is larger than the %" PRIu64
			       " bytes a slot may hold",
			       payload, (uint64_t)RING_MAX_PAYLOAD);
	return 0;
}

int ring_layout_compute(const RingGeometry *g, uint32_t slots, RingLayout *out, char *errbuf, size_t errlen)
{
	int err = geometry_validate(g, slots, errbuf, errlen);
	if (err)
		return err;
	// with the bounds above every value stays below 2^55: plain arithmetic cannot overflow
	out->payload_bytes = ring_payload_bytes(g);
	out->text_offset = ring_round_up(out->payload_bytes, RING_CACHE_LINE);
	out->slot_stride = ring_round_up(out->text_offset + (uint64_t)g->text_len * sizeof(int32_t), RING_PAGE);
	out->payload_offset = ring_round_up(RING_SLOTS_OFFSET + (uint64_t)slots * sizeof(RingSlotHeader), RING_PAGE);
	uint64_t all;
	if (__builtin_mul_overflow(out->slot_stride, (uint64_t)slots, &all) ||
	    __builtin_add_overflow(all, out->payload_offset, &out->bytes))
		return err_fmt(errbuf, errlen, -EINVAL, "ring of %u slots x %" PRIu64 " bytes is too large", slots,
			       out->slot_stride);
	return 0;
}

// Finds the file backing ring `name`: /dev/shm first, then hugetlbfs.
int ring_path(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", ring_shm_dir, name);
	if (access(path, F_OK) == 0)
		return 0;
	char dir[128];
	if (ring_hugetlbfs_dir(dir, sizeof dir)) {
		char alt[192];
		snprintf(alt, sizeof alt, "%s/%s", dir, name);
		if (access(alt, F_OK) == 0) {
			snprintf(path, len, "%s", alt);
			return 0;
		}
	}
	return -ENOENT;
}

static int check_control(const RingControl *c, const char *path, uint64_t file_bytes, const RingOpenOptions *o,
			 char *errbuf, size_t errlen)
{
	uint64_t magic = atomic_load_explicit(&c->magic, memory_order_acquire);
	if (magic != RING_MAGIC)
		return err_fmt(errbuf, errlen, -EPROTO,
			       "%s is not an avclip ring (magic %016" PRIx64 ", expected %016" PRIx64 ")", path, magic,
			       (uint64_t)RING_MAGIC);
	if (c->abi_version != RING_ABI_VERSION)
		return err_fmt(
			errbuf, errlen, -EPROTO,
			"ring %s has ABI version %u but this program speaks ABI version %u: rebuild the programs or recreate the ring",
			path, c->abi_version, RING_ABI_VERSION);
	if (c->control_bytes != sizeof(RingControl) || c->proc_entry_bytes != sizeof(RingProcEntry) ||
	    c->slot_header_bytes != sizeof(RingSlotHeader) || c->max_producers != RING_MAX_PRODUCERS ||
	    c->max_consumers != RING_MAX_CONSUMERS)
		return err_fmt(
			errbuf, errlen, -EPROTO,
			"ring %s layout differs from this program's (control %u/%zu, entry %u/%zu, slot header %u/%zu bytes) at the same ABI "
			"version %u: rebuild the programs",
			path, c->control_bytes, sizeof(RingControl), c->proc_entry_bytes, sizeof(RingProcEntry),
			c->slot_header_bytes, sizeof(RingSlotHeader), RING_ABI_VERSION);
	// every field that places memory must be exactly what creation computes from the geometry
	char why[160];
	RingGeometry g = c->geometry;
	RingLayout l;
	uint32_t slots = c->slots;
	if (ring_layout_compute(&g, slots, &l, why, sizeof why) != 0)
		return err_fmt(errbuf, errlen, -EPROTO, "ring %s is damaged: %s", path, why);
	uint64_t want_bytes = c->hugepages ? ring_round_up(l.bytes, 2u << 20) : l.bytes;
	const char *bad = c->payload_bytes != l.payload_bytes     ? "payload size"
			  : c->text_offset != l.text_offset       ? "text offset"
			  : c->slot_stride != l.slot_stride       ? "slot stride"
			  : c->slots_offset != RING_SLOTS_OFFSET  ? "slot table offset"
			  : c->payload_offset != l.payload_offset ? "payload offset"
			  : c->segment_bytes != want_bytes        ? "segment size"
								  : NULL;
	if (bad)
		return err_fmt(errbuf, errlen, -EPROTO,
			       "ring %s is damaged: its %s does not follow from its geometry and %u slots", path, bad,
			       slots);
	if (c->segment_bytes > file_bytes)
		return err_fmt(errbuf, errlen, -EPROTO,
			       "ring %s is damaged: its header says %" PRIu64 " bytes but the file has %" PRIu64, path,
			       c->segment_bytes, file_bytes);
	if (c->ranks < 1 || c->ranks > RING_MAX_CONSUMERS || c->adopt_timeout_ms < 1 ||
	    c->adopt_timeout_ms > RING_MAX_ADOPT_MS || c->first_position > SLOT_POS_MAX / 2)
		return err_fmt(errbuf, errlen, -EPROTO,
			       "ring %s is damaged: %u ranks, adopt timeout %u ms, first position %" PRIu64
			       " out of range",
			       path, c->ranks, c->adopt_timeout_ms, c->first_position);
	if (!memchr(c->data.name, 0, sizeof c->data.name))
		return err_fmt(errbuf, errlen, -EPROTO, "ring %s is damaged: its dataset name is not terminated", path);
	if (o && o->expect_geometry && !ring_geometry_equal(&g, o->expect_geometry)) {
		char have[96], want[96];
		ring_geometry_format(&g, have, sizeof have);
		ring_geometry_format(o->expect_geometry, want, sizeof want);
		return err_fmt(errbuf, errlen, -EINVAL, "ring %s has geometry %s but this program was asked for %s",
			       path, have, want);
	}
	return 0;
}

int ring_attach_mapping(Ring *r, uint8_t *base, uint64_t bytes, const char *path, const RingOpenOptions *o,
			char *errbuf, size_t errlen)
{
	if (bytes < RING_SLOTS_OFFSET)
		return err_fmt(errbuf, errlen, -EPROTO, "%s is not an avclip ring (only %" PRIu64 " bytes)", path,
			       bytes);
	const RingControl *c = (const RingControl *)base;
	int err = check_control(c, path, bytes, o, errbuf, errlen);
	if (err)
		return err;
	// copies of what was just validated; the segment's own fields are never trusted again
	r->base = base;
	r->bytes = bytes;
	r->n_slots = c->slots;
	r->n_ranks = c->ranks;
	r->adopt_timeout_ms = c->adopt_timeout_ms;
	r->slot_stride = c->slot_stride;
	r->text_offset = c->text_offset;
	r->geometry = c->geometry;
	r->payload_offset = c->payload_offset;
	r->payload_bytes = c->payload_bytes;
	r->read_only = o && o->read_only;
	r->instance_id = c->instance_id;
	r->data = c->data;
	r->data.name[sizeof r->data.name - 1] = 0;
	ring_map_views(r);
	return 0;
}

// Writing into a ring another user made (after ours was removed, under the same name) would hand
// them this job's clips and captions, and take theirs: the segment must be ours (or the owner
// named) and writable by no one else unless asked for. A read-only open (ringstat) may look.
static int ring_check_owner(const struct stat *st, const char *path, const RingOpenOptions *o, char *errbuf,
			    size_t errlen)
{
	uid_t want = o && o->owner_given ? (uid_t)o->owner_uid : geteuid();
	if (st->st_uid != want)
		return err_fmt(errbuf, errlen, -EPERM,
			       "ring %s is owned by uid %u, not by uid %u (this user%s): another user made it; "
			       "refusing to join it",
			       path, (unsigned)st->st_uid, (unsigned)want,
			       o && o->owner_given ? " named as its owner" : "");
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(o && o->allow_shared_write))
		return err_fmt(errbuf, errlen, -EPERM,
			       "ring %s has mode %04o: group or other users may write it; refusing to join it (chmod "
			       "go-w it, or recreate it)",
			       path, (unsigned)(st->st_mode & 07777));
	return 0;
}

int ring_open(Ring **out, const char *name, const RingOpenOptions *o, char *errbuf, size_t errlen)
{
	*out = NULL;
	if (!ring_name_valid(name))
		return err_fmt(errbuf, errlen, -EINVAL, "bad ring name '%s'", name);
	char path[192];
	if (ring_path(name, path, sizeof path) < 0)
		return err_fmt(errbuf, errlen, -ENOENT,
			       "ring '%s' not found (%s/%s does not exist; is the job running?)", name, ring_shm_dir,
			       name);
	int ro = o && o->read_only;
	int fd = open(path, (ro ? O_RDONLY : O_RDWR) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return err_fmt(errbuf, errlen, -errno, "cannot open ring %s: %s", path,
			       errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_fmt(errbuf, errlen, -EPROTO, "%s is not an avclip ring (not a regular file)", path);
	}
	int err = ro ? 0 : ring_check_owner(&st, path, o, errbuf, errlen);
	if (err) {
		close(fd);
		return err;
	}
	if ((uint64_t)st.st_size < RING_SLOTS_OFFSET) {
		close(fd);
		return err_fmt(errbuf, errlen, -EPROTO, "%s is not an avclip ring (only %lld bytes)", path,
			       (long long)st.st_size);
	}
	Ring *r = calloc(1, sizeof *r);
	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	uint64_t bytes = (uint64_t)st.st_size;
	uint8_t *base = mmap(NULL, bytes, ro ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (base == MAP_FAILED) {
		free(r);
		return err_fmt(errbuf, errlen, -e, "cannot map ring %s (%" PRIu64 " bytes): %s", path, bytes,
			       strerror(e));
	}
	err = ring_attach_mapping(r, base, bytes, path, o, errbuf, errlen);
	if (err) {
		munmap(base, bytes);
		free(r);
		return err;
	}
	r->file_dev = st.st_dev;
	r->file_ino = st.st_ino;
	snprintf(r->name, sizeof r->name, "%s", name);
	snprintf(r->path, sizeof r->path, "%s", path);
	*out = r;
	return 0;
}

void ring_close(Ring *r)
{
	if (!r)
		return;
	munmap(r->base, r->bytes);
	free(r);
}

int ring_destroy(const char *name)
{
	Ring *r;
	int err = ring_open(&r, name, NULL, NULL, 0);
	if (err == -ENOENT)
		return err;
	char path[192];
	if (ring_path(name, path, sizeof path) < 0)
		return -ENOENT;
	if (err == 0) {
		atomic_store(&r->ctl->closed, 1);
		for (uint32_t s = 0; s < r->n_slots; s++)
			ring_slot_wake(&r->slots[s]);
		ring_close(r);
	}
	// a segment that is not a valid ring (wrong ABI, damaged) is still removed by name
	return unlink(path) < 0 ? -errno : 0;
}

int ring_check_instance(const Ring *r)
{
	struct stat st;
	char path[192];
	if (ring_path(r->name, path, sizeof path) < 0 || stat(path, &st) < 0)
		return -ENOENT;
	if ((uint64_t)st.st_dev != r->file_dev || (uint64_t)st.st_ino != r->file_ino)
		return -ESTALE;
	return atomic_load(&r->ctl->closed) ? -ESTALE : 0;
}

void ring_payload_region(const Ring *r, void **base, size_t *bytes)
{
	*base = r->payloads;
	*bytes = (size_t)r->n_slots * r->slot_stride; // the validated copies: the segment is writable by everyone
}

void ring_info(const Ring *r, RingInfo *info)
{
	const RingControl *c = r->ctl;
	memset(info, 0, sizeof *info);
	info->geometry = r->geometry;
	info->slots = r->n_slots;
	info->ranks = r->n_ranks;
	info->seed = c->seed;
	info->data = r->data;
	info->first_position = c->first_position;
	info->instance_id = r->instance_id;
	info->payload_bytes = r->payload_bytes;
	info->slot_stride = r->slot_stride;
	info->segment_bytes = r->bytes;
	info->created_unix_ns = c->created_unix_ns;
	info->adopt_timeout_ms = r->adopt_timeout_ms;
	info->numa_node = c->numa_node;
	info->hugepages = (int)c->hugepages;
	info->closed = (int)atomic_load(&c->closed);
	snprintf(info->path, sizeof info->path, "%s", r->path);
	snprintf(info->hugepage_note, sizeof info->hugepage_note, "%s", r->hugepage_note);
}
