// Creating, opening, validating and destroying the ring segment: the file in /dev/shm (or on
// hugetlbfs), its layout, NUMA binding, and the ABI/geometry checks with messages that say both sides.
//
// Creation is atomic: the segment is built under a temporary name, its magic is stored last,
// and it is renamed into place, so an opener never sees a half-initialised ring.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
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

#include "ring_layout.h"

static const char ring_shm_dir[] = "/dev/shm";

static int fail(char *errbuf, size_t errlen, int err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *errbuf, size_t errlen, int err, const char *fmt, ...) {
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return err;
}

static uint64_t round_up(uint64_t x, uint64_t to) { return (x + to - 1) / to * to; }

uint64_t ring_payload_bytes(const RingGeometry *g) {
    return (uint64_t)g->frames * g->height * g->width * g->channels;
}

int ring_geometry_equal(const RingGeometry *a, const RingGeometry *b) {
    return a->frames == b->frames && a->height == b->height && a->width == b->width &&
           a->channels == b->channels && a->text_len == b->text_len;
}

void ring_geometry_format(const RingGeometry *g, char *buf, size_t len) {
    snprintf(buf, len, "T=%u H=%u W=%u C=%u text=%u", g->frames, g->height, g->width, g->channels, g->text_len);
}

void ring_create_options_default(RingCreateOptions *opt) {
    memset(opt, 0, sizeof *opt);
    opt->geometry = (RingGeometry){.frames = 16, .height = 224, .width = 224, .channels = 3, .text_len = 77};
    opt->slots = 64;
    opt->ranks = 1;
    opt->adopt_timeout_ms = 200;
    opt->numa_node = -1;
}

static int name_valid(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n > 48) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
            return 0;
    }
    return name[0] != '.';
}

// The mount point of a hugetlbfs file system, if one is mounted and has pages.
static int hugetlbfs_dir(char *dir, size_t len) {
    FILE *f = fopen("/proc/mounts", "r");
    if (!f) return 0;
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

static uint64_t unix_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t ring_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int ring_path(const char *name, char *path, size_t len);

static void ring_map_views(Ring *r) {
    r->ctl = (RingControl *)r->base;
    r->producers = (RingProcEntry *)(r->base + RING_PRODUCERS_OFFSET);
    r->consumers = (RingProcEntry *)(r->base + RING_CONSUMERS_OFFSET);
    r->slots = (RingSlotHeader *)(r->base + RING_SLOTS_OFFSET);
    r->payloads = r->base + r->payload_offset;
}

static int bind_numa(void *base, size_t bytes, int node, char *errbuf, size_t errlen) {
#ifdef HAVE_NUMA
    if (numa_available() < 0) return fail(errbuf, errlen, -ENOTSUP, "NUMA binding asked for node %d, but this kernel has no NUMA support", node);
    if (node > numa_max_node())
        return fail(errbuf, errlen, -EINVAL, "NUMA node %d does not exist (this machine has nodes 0..%d)", node, numa_max_node());
    numa_tonode_memory(base, bytes, node);
    return 0;
#else
    (void)base;
    (void)bytes;
    return fail(errbuf, errlen, -ENOTSUP, "NUMA binding to node %d asked for, but this build has no libnuma (make deps)", node);
#endif
}

// Bounds of a ring's shape, each reported with its own numbers when violated.
#define RING_MAX_T 4096u
#define RING_MAX_HW 16384u
#define RING_MAX_C 16u
#define RING_MAX_TEXT 65536u
#define RING_MAX_SLOTS (1u << 20)
#define RING_MAX_PAYLOAD (1ull << 34)
#define RING_MAX_ADOPT_MS 3600000u

static int bound(char *errbuf, size_t errlen, const char *what, uint64_t v, uint64_t lo, uint64_t hi) {
    if (v >= lo && v <= hi) return 0;
    return fail(errbuf, errlen, -EINVAL, "ring %s must be %" PRIu64 "..%" PRIu64 ", got %" PRIu64, what, lo, hi, v);
}

static int geometry_validate(const RingGeometry *g, uint32_t slots, char *errbuf, size_t errlen) {
    int err;
    if ((err = bound(errbuf, errlen, "frames (T)", g->frames, 1, RING_MAX_T)) || (err = bound(errbuf, errlen, "height (H)", g->height, 1, RING_MAX_HW)) ||
        (err = bound(errbuf, errlen, "width (W)", g->width, 1, RING_MAX_HW)) || (err = bound(errbuf, errlen, "channels (C)", g->channels, 1, RING_MAX_C)) ||
        (err = bound(errbuf, errlen, "text length", g->text_len, 0, RING_MAX_TEXT)) || (err = bound(errbuf, errlen, "slots", slots, 1, RING_MAX_SLOTS)))
        return err;
    uint64_t payload = ring_payload_bytes(g); // each factor is bounded: no overflow
    if (payload > RING_MAX_PAYLOAD)
        return fail(errbuf, errlen, -EINVAL, "ring clip of T*H*W*C = %" PRIu64 " bytes is larger than the %" PRIu64 " bytes a slot may hold", payload,
                    (uint64_t)RING_MAX_PAYLOAD);
    return 0;
}

int ring_layout_compute(const RingGeometry *g, uint32_t slots, RingLayout *out, char *errbuf, size_t errlen) {
    int err = geometry_validate(g, slots, errbuf, errlen);
    if (err) return err;
    // with the bounds above every value stays below 2^55: plain arithmetic cannot overflow
    out->payload_bytes = ring_payload_bytes(g);
    out->text_offset = round_up(out->payload_bytes, RING_CACHE_LINE);
    out->slot_stride = round_up(out->text_offset + (uint64_t)g->text_len * sizeof(int32_t), RING_PAGE);
    out->payload_offset = round_up(RING_SLOTS_OFFSET + (uint64_t)slots * sizeof(RingSlotHeader), RING_PAGE);
    uint64_t all;
    if (__builtin_mul_overflow(out->slot_stride, (uint64_t)slots, &all) || __builtin_add_overflow(all, out->payload_offset, &out->bytes))
        return fail(errbuf, errlen, -EINVAL, "ring of %u slots x %" PRIu64 " bytes is too large", slots, out->slot_stride);
    return 0;
}

static int create_validate(const RingCreateOptions *o, char *errbuf, size_t errlen) {
    int err;
    RingLayout l;
    if ((err = ring_layout_compute(&o->geometry, o->slots, &l, errbuf, errlen)) ||
        (err = bound(errbuf, errlen, "ranks", o->ranks, 1, RING_MAX_CONSUMERS)) ||
        (err = bound(errbuf, errlen, "adopt timeout (ms)", o->adopt_timeout_ms, 0, RING_MAX_ADOPT_MS)) ||
        (err = bound(errbuf, errlen, "first position", o->first_position, 0, SLOT_POS_MAX / 2)))
        return err;
    return 0;
}

static void init_control(RingControl *c, const RingCreateOptions *o, const RingLayout *l, uint64_t bytes, int huge) {
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
    c->first_position = o->first_position;
    uint64_t id = 0;
    if (getrandom(&id, sizeof id, 0) != sizeof id) id = unix_ns() ^ ((uint64_t)getpid() << 32);
    c->instance_id = id ? id : 1;
    c->payload_bytes = l->payload_bytes;
    c->text_offset = l->text_offset;
    c->slot_stride = l->slot_stride;
    c->slots_offset = RING_SLOTS_OFFSET;
    c->payload_offset = l->payload_offset;
    c->segment_bytes = bytes;
    c->created_unix_ns = unix_ns();
    c->created_mono_ns = ring_now_ns();
    atomic_store(&c->claim_hint, o->first_position);
    atomic_store(&c->last_reap_ns, c->created_mono_ns);
}

// Slot s starts with the smallest position >= first that lives in it; rank r's cursor with
// the smallest position >= first that belongs to r.
static void init_tables(Ring *r, const RingCreateOptions *o) {
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
static uint64_t meminfo_bytes(int huge) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[128];
    uint64_t avail = 0, free_pages = 0, page_kb = 0, v;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemAvailable: %" SCNu64, &v) == 1) avail = v * 1024;
        if (sscanf(line, "HugePages_Free: %" SCNu64, &v) == 1) free_pages = v;
        if (sscanf(line, "Hugepagesize: %" SCNu64, &v) == 1) page_kb = v;
    }
    fclose(f);
    return huge ? free_pages * page_kb * 1024 : avail;
}

// Refuses a segment that the file system or the memory cannot hold, before a byte is
// allocated: tmpfs grows on demand and answers an overcommitted page with SIGBUS.
static int check_room(const char *dir, uint64_t bytes, int huge, char *errbuf, size_t errlen) {
    struct statvfs vf;
    uint64_t fs_free = statvfs(dir, &vf) == 0 ? (uint64_t)vf.f_bavail * vf.f_frsize : UINT64_MAX;
    if (huge && vf.f_blocks == 0) fs_free = UINT64_MAX; // hugetlbfs without a size limit: the pool decides
    uint64_t mem = meminfo_bytes(huge);
    if (bytes <= fs_free && (mem == 0 || bytes <= mem)) return 0;
    return fail(errbuf, errlen, -ENOSPC,
                "ring needs %.2f GB but %s has %.2f GB free and the machine %.2f GB of %s: use fewer --slots or smaller clips", bytes / 1e9,
                dir, fs_free == UINT64_MAX ? INFINITY : fs_free / 1e9, mem / 1e9, huge ? "free huge pages" : "available memory");
}

// Removes temporary segments that creators killed by SIGKILL left behind (".NAME.creating.PID"
// whose PID is gone).
static void sweep_stale(const char *dir, const char *name) {
    DIR *d = opendir(dir);
    if (!d) return;
    char prefix[80];
    int n = snprintf(prefix, sizeof prefix, ".%s.creating.", name);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, prefix, (size_t)n) != 0) continue;
        char *end;
        long pid = strtol(de->d_name + n, &end, 10);
        if (*end || pid <= 0 || pid == getpid() || !ring_pid_is_dead((int)pid)) continue;
        char path[400];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
}

static int stop_signal_pending(void) {
    sigset_t p;
    return sigpending(&p) == 0 && (sigismember(&p, SIGINT) || sigismember(&p, SIGTERM) || sigismember(&p, SIGHUP));
}

// Creates, sizes and maps the temporary segment (hugetlbfs first when asked, else /dev/shm);
// r->base, r->bytes and r->hugepage_note are set, fd returned (or -errno with a reason).
static int segment_make(Ring *r, const char *name, const RingCreateOptions *o, const RingLayout *l, char *dir, size_t dirlen, char *tmp,
                        size_t tmplen, int *huge_out, char *errbuf, size_t errlen) {
    int huge = 0;
    if (o->hugepages) {
        if (hugetlbfs_dir(dir, dirlen))
            huge = 1;
        else
            snprintf(r->hugepage_note, sizeof r->hugepage_note, "no hugetlbfs mounted; using %s with 4 KiB pages", ring_shm_dir);
    }
    for (;;) {
        if (!huge) snprintf(dir, dirlen, "%s", ring_shm_dir);
        uint64_t bytes = huge ? round_up(l->bytes, 2u << 20) : l->bytes;
        char why[256];
        int err = check_room(dir, bytes, huge, why, sizeof why);
        if (err && huge) {
            snprintf(r->hugepage_note, sizeof r->hugepage_note, "%.100s; using %s", why, ring_shm_dir);
            huge = 0;
            continue;
        }
        if (err) return fail(errbuf, errlen, err, "%s", why);
        sweep_stale(dir, name);
        snprintf(tmp, tmplen, "%s/.%s.creating.%d", dir, name, (int)getpid());
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL, 0660);
        if (fd < 0 && errno == EEXIST) {
            unlink(tmp);
            fd = open(tmp, O_RDWR | O_CREAT | O_EXCL, 0660);
        }
        // tmpfs: reserve the pages now, so a full file system is ENOSPC here and never SIGBUS later
        if (fd >= 0 && ftruncate(fd, (off_t)bytes) == 0 && (huge || (errno = posix_fallocate(fd, 0, (off_t)bytes)) == 0)) {
            r->base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (r->base != MAP_FAILED) {
                r->bytes = bytes;
                *huge_out = huge;
                return fd;
            }
        }
        int e = errno;
        if (fd >= 0) close(fd), unlink(tmp);
        r->base = NULL;
        if (huge) { // hugetlbfs without free pages refuses ftruncate/mmap: fall back
            snprintf(r->hugepage_note, sizeof r->hugepage_note, "hugetlbfs at %s refused %" PRIu64 " bytes (%s); using %s", dir, bytes,
                     strerror(e), ring_shm_dir);
            huge = 0;
            continue;
        }
        return fail(errbuf, errlen, -e, "cannot create ring segment %s (%" PRIu64 " bytes): %s", tmp, bytes, strerror(e));
    }
}

// Faults every page in (under the NUMA policy) so the hot path never takes a fault; gives up
// with -EINTR when SIGINT, SIGTERM or SIGHUP arrives meanwhile (they are blocked by the caller).
static int segment_touch(Ring *r) {
    for (uint64_t off = 0; off < r->bytes; off += RING_PAGE) {
        if ((off & ((1u << 24) - 1)) == 0 && stop_signal_pending()) return -EINTR;
        r->base[off] = 0;
    }
    return 0;
}

// Builds and publishes the segment. SIGINT/SIGTERM/SIGHUP stay blocked meanwhile, so the
// temporary file is always removed before such a signal can end the process; the signal is
// delivered when the caller's mask is restored (a single-threaded caller sees it at once).
static int create_blocked(Ring *r, const char *name, const RingCreateOptions *o, const RingLayout *l, char *errbuf, size_t errlen) {
    char dir[128] = "", tmp[192];
    int huge = 0;
    int fd = segment_make(r, name, o, l, dir, sizeof dir, tmp, sizeof tmp, &huge, errbuf, errlen);
    if (fd < 0) return fd;
    int err = 0;
    if (o->numa_node >= 0 && (err = bind_numa(r->base, r->bytes, o->numa_node, errbuf, errlen)) != 0) goto undo;
    if ((err = segment_touch(r)) != 0) {
        fail(errbuf, errlen, err, "ring creation interrupted by a signal; the temporary segment %s was removed", tmp);
        goto undo;
    }
    r->ctl = (RingControl *)r->base;
    init_control(r->ctl, o, l, r->bytes, huge);
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
            err = fail(errbuf, errlen, -EEXIST, "ring '%s' already exists (%s); remove it or recreate with replace", name, existing);
            goto undo;
        }
        ring_destroy(name); // marks the old ring closed and wakes its users before it goes
    }
    snprintf(r->path, sizeof r->path, "%s/%s", dir, name);
    if (rename(tmp, r->path) < 0) {
        err = fail(errbuf, errlen, -errno, "cannot publish ring %s: %s", r->path, strerror(errno));
        goto undo;
    }
    struct stat st;
    fstat(fd, &st);
    r->file_dev = st.st_dev;
    r->file_ino = st.st_ino;
    r->instance_id = r->ctl->instance_id;
    close(fd);
    return 0;
undo:
    munmap(r->base, r->bytes);
    r->base = NULL;
    close(fd);
    unlink(tmp);
    return err;
}

int ring_create(Ring **out, const char *name, const RingCreateOptions *o, char *errbuf, size_t errlen) {
    *out = NULL;
    if (!name_valid(name)) return fail(errbuf, errlen, -EINVAL, "bad ring name '%s' (letters, digits, - _ . ; at most 48)", name);
    int err = create_validate(o, errbuf, errlen);
    if (err) return err;
    RingLayout l;
    ring_layout_compute(&o->geometry, o->slots, &l, NULL, 0);

    Ring *r = calloc(1, sizeof *r);
    if (!r) return -ENOMEM;
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

// Finds the file backing ring `name`: /dev/shm first, then hugetlbfs.
static int ring_path(const char *name, char *path, size_t len) {
    snprintf(path, len, "%s/%s", ring_shm_dir, name);
    if (access(path, F_OK) == 0) return 0;
    char dir[128];
    if (hugetlbfs_dir(dir, sizeof dir)) {
        char alt[192];
        snprintf(alt, sizeof alt, "%s/%s", dir, name);
        if (access(alt, F_OK) == 0) {
            snprintf(path, len, "%s", alt);
            return 0;
        }
    }
    return -ENOENT;
}

static int check_control(const RingControl *c, const char *path, uint64_t file_bytes, const RingOpenOptions *o, char *errbuf, size_t errlen) {
    uint64_t magic = atomic_load_explicit(&c->magic, memory_order_acquire);
    if (magic != RING_MAGIC)
        return fail(errbuf, errlen, -EPROTO, "%s is not an avclip ring (magic %016" PRIx64 ", expected %016" PRIx64 ")", path, magic,
                    (uint64_t)RING_MAGIC);
    if (c->abi_version != RING_ABI_VERSION)
        return fail(errbuf, errlen, -EPROTO,
                    "ring %s has ABI version %u but this program speaks ABI version %u: rebuild the programs or recreate the ring", path,
                    c->abi_version, RING_ABI_VERSION);
    if (c->control_bytes != sizeof(RingControl) || c->proc_entry_bytes != sizeof(RingProcEntry) ||
        c->slot_header_bytes != sizeof(RingSlotHeader) || c->max_producers != RING_MAX_PRODUCERS || c->max_consumers != RING_MAX_CONSUMERS)
        return fail(errbuf, errlen, -EPROTO,
                    "ring %s layout differs from this program's (control %u/%zu, entry %u/%zu, slot header %u/%zu bytes) at the same ABI "
                    "version %u: rebuild the programs",
                    path, c->control_bytes, sizeof(RingControl), c->proc_entry_bytes, sizeof(RingProcEntry), c->slot_header_bytes,
                    sizeof(RingSlotHeader), RING_ABI_VERSION);
    // every field that places memory must be exactly what creation computes from the geometry
    char why[160];
    RingGeometry g = c->geometry;
    RingLayout l;
    uint32_t slots = c->slots;
    if (ring_layout_compute(&g, slots, &l, why, sizeof why) != 0)
        return fail(errbuf, errlen, -EPROTO, "ring %s is damaged: %s", path, why);
    uint64_t want_bytes = c->hugepages ? round_up(l.bytes, 2u << 20) : l.bytes;
    const char *bad = c->payload_bytes != l.payload_bytes     ? "payload size"
                      : c->text_offset != l.text_offset       ? "text offset"
                      : c->slot_stride != l.slot_stride       ? "slot stride"
                      : c->slots_offset != RING_SLOTS_OFFSET  ? "slot table offset"
                      : c->payload_offset != l.payload_offset ? "payload offset"
                      : c->segment_bytes != want_bytes        ? "segment size"
                                                              : NULL;
    if (bad)
        return fail(errbuf, errlen, -EPROTO, "ring %s is damaged: its %s does not follow from its geometry and %u slots", path, bad, slots);
    if (c->segment_bytes > file_bytes)
        return fail(errbuf, errlen, -EPROTO, "ring %s is damaged: its header says %" PRIu64 " bytes but the file has %" PRIu64, path,
                    c->segment_bytes, file_bytes);
    if (c->ranks < 1 || c->ranks > RING_MAX_CONSUMERS || c->adopt_timeout_ms < 1 || c->adopt_timeout_ms > RING_MAX_ADOPT_MS ||
        c->first_position > SLOT_POS_MAX / 2)
        return fail(errbuf, errlen, -EPROTO, "ring %s is damaged: %u ranks, adopt timeout %u ms, first position %" PRIu64 " out of range", path,
                    c->ranks, c->adopt_timeout_ms, c->first_position);
    if (o && o->expect_geometry && !ring_geometry_equal(&g, o->expect_geometry)) {
        char have[96], want[96];
        ring_geometry_format(&g, have, sizeof have);
        ring_geometry_format(o->expect_geometry, want, sizeof want);
        return fail(errbuf, errlen, -EINVAL, "ring %s has geometry %s but this program was asked for %s", path, have, want);
    }
    return 0;
}

int ring_attach_mapping(Ring *r, uint8_t *base, uint64_t bytes, const char *path, const RingOpenOptions *o, char *errbuf, size_t errlen) {
    if (bytes < RING_SLOTS_OFFSET)
        return fail(errbuf, errlen, -EPROTO, "%s is not an avclip ring (only %" PRIu64 " bytes)", path, bytes);
    const RingControl *c = (const RingControl *)base;
    int err = check_control(c, path, bytes, o, errbuf, errlen);
    if (err) return err;
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
    ring_map_views(r);
    return 0;
}

int ring_open(Ring **out, const char *name, const RingOpenOptions *o, char *errbuf, size_t errlen) {
    *out = NULL;
    if (!name_valid(name)) return fail(errbuf, errlen, -EINVAL, "bad ring name '%s'", name);
    char path[192];
    if (ring_path(name, path, sizeof path) < 0)
        return fail(errbuf, errlen, -ENOENT, "ring '%s' not found (%s/%s does not exist; is the job running?)", name, ring_shm_dir, name);
    int ro = o && o->read_only;
    int fd = open(path, ro ? O_RDONLY : O_RDWR);
    if (fd < 0) return fail(errbuf, errlen, -errno, "cannot open ring %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < RING_SLOTS_OFFSET) {
        close(fd);
        return fail(errbuf, errlen, -EPROTO, "%s is not an avclip ring (only %lld bytes)", path, (long long)st.st_size);
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
        return fail(errbuf, errlen, -e, "cannot map ring %s (%" PRIu64 " bytes): %s", path, bytes, strerror(e));
    }
    int err = ring_attach_mapping(r, base, bytes, path, o, errbuf, errlen);
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

void ring_close(Ring *r) {
    if (!r) return;
    munmap(r->base, r->bytes);
    free(r);
}

int ring_destroy(const char *name) {
    Ring *r;
    int err = ring_open(&r, name, NULL, NULL, 0);
    if (err == -ENOENT) return err;
    char path[192];
    if (ring_path(name, path, sizeof path) < 0) return -ENOENT;
    if (err == 0) {
        atomic_store(&r->ctl->closed, 1);
        for (uint32_t s = 0; s < r->n_slots; s++) ring_slot_wake(&r->slots[s]);
        ring_close(r);
    }
    // a segment that is not a valid ring (wrong ABI, damaged) is still removed by name
    return unlink(path) < 0 ? -errno : 0;
}

int ring_check_instance(const Ring *r) {
    struct stat st;
    char path[192];
    if (ring_path(r->name, path, sizeof path) < 0 || stat(path, &st) < 0) return -ENOENT;
    if ((uint64_t)st.st_dev != r->file_dev || (uint64_t)st.st_ino != r->file_ino) return -ESTALE;
    return atomic_load(&r->ctl->closed) ? -ESTALE : 0;
}

void ring_payload_region(const Ring *r, void **base, size_t *bytes) {
    *base = r->payloads;
    *bytes = (size_t)r->ctl->slots * r->ctl->slot_stride;
}

void ring_info(const Ring *r, RingInfo *info) {
    const RingControl *c = r->ctl;
    memset(info, 0, sizeof *info);
    info->geometry = r->geometry;
    info->slots = r->n_slots;
    info->ranks = r->n_ranks;
    info->seed = c->seed;
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
