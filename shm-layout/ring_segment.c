// Creating, opening, validating and destroying the ring segment: the file in /dev/shm (or on
// hugetlbfs), its layout, NUMA binding, and the ABI/geometry checks with messages that say both sides.
//
// Creation is atomic: the segment is built under a temporary name, its magic is stored last,
// and it is renamed into place, so an opener never sees a half-initialised ring.
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
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
    r->payloads = r->base + r->ctl->payload_offset;
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

static int create_validate(const RingCreateOptions *o, char *errbuf, size_t errlen) {
    const RingGeometry *g = &o->geometry;
    if (!g->frames || !g->height || !g->width || !g->channels)
        return fail(errbuf, errlen, -EINVAL, "ring geometry must be positive (T=%u H=%u W=%u C=%u)", g->frames, g->height, g->width, g->channels);
    if (ring_payload_bytes(g) > (1ull << 34) || g->text_len > 65536)
        return fail(errbuf, errlen, -EINVAL, "ring slot too large (%" PRIu64 " bytes)", ring_payload_bytes(g));
    if (o->slots < 1 || o->slots > (1u << 20)) return fail(errbuf, errlen, -EINVAL, "ring slots must be 1..%u, got %u", 1u << 20, o->slots);
    if (o->ranks < 1 || o->ranks > RING_MAX_CONSUMERS)
        return fail(errbuf, errlen, -EINVAL, "ring ranks must be 1..%d, got %u", RING_MAX_CONSUMERS, o->ranks);
    if (o->first_position > SLOT_POS_MAX / 2) return fail(errbuf, errlen, -EINVAL, "first position %" PRIu64 " too large", o->first_position);
    return 0;
}

static void init_control(RingControl *c, const RingCreateOptions *o, uint64_t text_off, uint64_t stride,
                         uint64_t payload_off, uint64_t bytes, int huge) {
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
    c->payload_bytes = ring_payload_bytes(&o->geometry);
    c->text_offset = text_off;
    c->slot_stride = stride;
    c->slots_offset = RING_SLOTS_OFFSET;
    c->payload_offset = payload_off;
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

int ring_create(Ring **out, const char *name, const RingCreateOptions *o, char *errbuf, size_t errlen) {
    *out = NULL;
    if (!name_valid(name)) return fail(errbuf, errlen, -EINVAL, "bad ring name '%s' (letters, digits, - _ . ; at most 48)", name);
    int err = create_validate(o, errbuf, errlen);
    if (err) return err;

    Ring *r = calloc(1, sizeof *r);
    if (!r) return -ENOMEM;
    snprintf(r->name, sizeof r->name, "%s", name);

    uint64_t payload = ring_payload_bytes(&o->geometry);
    uint64_t text_off = round_up(payload, RING_CACHE_LINE);
    uint64_t stride = round_up(text_off + (uint64_t)o->geometry.text_len * sizeof(int32_t), RING_PAGE);
    uint64_t payload_off = round_up(RING_SLOTS_OFFSET + (uint64_t)o->slots * sizeof(RingSlotHeader), RING_PAGE);
    uint64_t bytes = payload_off + (uint64_t)o->slots * stride;

    char dir[128] = "", tmp[192];
    int huge = 0;
    if (o->hugepages) {
        if (hugetlbfs_dir(dir, sizeof dir)) {
            huge = 1;
            bytes = round_up(bytes, 2u << 20);
        } else {
            snprintf(r->hugepage_note, sizeof r->hugepage_note, "no hugetlbfs mounted; using %s with 4 KiB pages", ring_shm_dir);
        }
    }
    int fd = -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!huge) snprintf(dir, sizeof dir, "%s", ring_shm_dir);
        snprintf(tmp, sizeof tmp, "%s/.%s.creating.%d", dir, name, (int)getpid());
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL, 0660);
        if (fd < 0 && errno == EEXIST) {
            unlink(tmp);
            fd = open(tmp, O_RDWR | O_CREAT | O_EXCL, 0660);
        }
        if (fd >= 0 && ftruncate(fd, (off_t)bytes) == 0) {
            r->base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (r->base != MAP_FAILED) break;
        }
        int e = errno;
        if (fd >= 0) close(fd), unlink(tmp);
        fd = -1;
        r->base = NULL;
        if (huge) { // hugetlbfs without free pages refuses ftruncate/mmap: fall back
            snprintf(r->hugepage_note, sizeof r->hugepage_note, "hugetlbfs at %s refused %" PRIu64 " bytes (%s); using %s", dir, bytes,
                     strerror(e), ring_shm_dir);
            huge = 0;
            continue;
        }
        free(r);
        return fail(errbuf, errlen, -e, "cannot create ring segment %s (%" PRIu64 " bytes): %s", tmp, bytes, strerror(e));
    }
    r->bytes = bytes;
    if (o->numa_node >= 0 && (err = bind_numa(r->base, bytes, o->numa_node, errbuf, errlen)) != 0) goto undo;
    // fault every page in now (under the NUMA policy) so the hot path never takes a fault
    for (uint64_t off = 0; off < bytes; off += RING_PAGE) r->base[off] = 0;

    r->ctl = (RingControl *)r->base;
    init_control(r->ctl, o, text_off, stride, payload_off, bytes, huge);
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
    *out = r;
    return 0;
undo:
    munmap(r->base, bytes);
    close(fd);
    unlink(tmp);
    free(r);
    return err;
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
    if (c->segment_bytes > file_bytes || c->payload_offset + (uint64_t)c->slots * c->slot_stride > c->segment_bytes ||
        c->slots_offset != RING_SLOTS_OFFSET || c->slots == 0 || c->ranks == 0 || c->ranks > RING_MAX_CONSUMERS)
        return fail(errbuf, errlen, -EPROTO, "ring %s is damaged: its header does not match its size (%" PRIu64 " bytes)", path, file_bytes);
    if (o && o->expect_geometry && !ring_geometry_equal(&c->geometry, o->expect_geometry)) {
        char have[96], want[96];
        ring_geometry_format(&c->geometry, have, sizeof have);
        ring_geometry_format(o->expect_geometry, want, sizeof want);
        return fail(errbuf, errlen, -EINVAL, "ring %s has geometry %s but this program was asked for %s", path, have, want);
    }
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
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < sizeof(RingControl)) {
        close(fd);
        return fail(errbuf, errlen, -EPROTO, "%s is not an avclip ring (only %lld bytes)", path, (long long)st.st_size);
    }
    int prot = ro ? PROT_READ : PROT_READ | PROT_WRITE;
    RingControl *c = mmap(NULL, sizeof(RingControl), PROT_READ, MAP_SHARED, fd, 0);
    if (c == MAP_FAILED) {
        int e = errno;
        close(fd);
        return fail(errbuf, errlen, -e, "cannot map ring %s: %s", path, strerror(e));
    }
    int err = check_control(c, path, (uint64_t)st.st_size, o, errbuf, errlen);
    uint64_t bytes = c->segment_bytes;
    munmap(c, sizeof(RingControl));
    if (err) {
        close(fd);
        return err;
    }
    Ring *r = calloc(1, sizeof *r);
    if (!r) {
        close(fd);
        return -ENOMEM;
    }
    r->base = mmap(NULL, bytes, prot, MAP_SHARED, fd, 0);
    if (r->base == MAP_FAILED) {
        int e = errno;
        close(fd);
        free(r);
        return fail(errbuf, errlen, -e, "cannot map ring %s (%" PRIu64 " bytes): %s", path, bytes, strerror(e));
    }
    close(fd);
    r->bytes = bytes;
    r->read_only = ro;
    r->file_dev = st.st_dev;
    r->file_ino = st.st_ino;
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->path, sizeof r->path, "%s", path);
    ring_map_views(r);
    r->instance_id = r->ctl->instance_id;
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
        for (uint32_t s = 0; s < r->ctl->slots; s++) ring_slot_wake(&r->slots[s]);
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
    info->geometry = c->geometry;
    info->slots = c->slots;
    info->ranks = c->ranks;
    info->seed = c->seed;
    info->first_position = c->first_position;
    info->instance_id = c->instance_id;
    info->payload_bytes = c->payload_bytes;
    info->slot_stride = c->slot_stride;
    info->segment_bytes = c->segment_bytes;
    info->created_unix_ns = c->created_unix_ns;
    info->adopt_timeout_ms = c->adopt_timeout_ms;
    info->numa_node = c->numa_node;
    info->hugepages = (int)c->hugepages;
    info->closed = (int)atomic_load(&c->closed);
    snprintf(info->path, sizeof info->path, "%s", r->path);
    snprintf(info->hugepage_note, sizeof info->hugepage_note, "%s", r->hugepage_note);
}
