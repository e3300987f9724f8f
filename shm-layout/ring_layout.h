// The byte layout of the ring segment (private to shm-layout/): control block, process tables,
// slot headers, payloads. Every size and offset is static_asserted: changing one is an ABI change.
#ifndef SHM_RING_LAYOUT_H
#define SHM_RING_LAYOUT_H
// defines: RingControl, RingProcEntry, RingSlotHeader, RING_MAGIC, slot state word packing, Ring (struct)

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ring.h"

#define RING_MAGIC 0x31474e4952564141ull // "AAVRING1" little-endian
#define RING_CACHE_LINE 64
#define RING_PAGE 4096

// Segment layout (offsets from the start of the mapping):
//   [0, 4096)                         RingControl
//   [4096, +256*128)                  producer table  (RING_MAX_PRODUCERS x RingProcEntry)
//   [.., +64*128)                     consumer table  (RING_MAX_CONSUMERS x RingProcEntry)
//   [RING_SLOTS_OFFSET, +S*64)        slot headers
//   [payload_offset, +S*slot_stride)  payloads, each 4 KiB aligned: clip bytes then text ids

// Slot state word: position (52 bits) | owner (10 bits) | state (2 bits).
// EMPTY(g) -> WRITING(g, producer) -> READY(g, producer) -> READING(g, rank) -> EMPTY(g+S).
enum { SLOT_EMPTY = 0, SLOT_WRITING = 1, SLOT_READY = 2, SLOT_READING = 3 };
#define SLOT_STATE_BITS 2
#define SLOT_OWNER_BITS 10
#define SLOT_POS_SHIFT (SLOT_STATE_BITS + SLOT_OWNER_BITS)
#define SLOT_POS_MAX ((1ull << (64 - SLOT_POS_SHIFT)) - 1)

static inline uint64_t slot_word(uint64_t pos, uint32_t owner, uint32_t state)
{
	return (pos << SLOT_POS_SHIFT) | ((uint64_t)owner << SLOT_STATE_BITS) | state;
}
static inline uint64_t word_pos(uint64_t w)
{
	return w >> SLOT_POS_SHIFT;
}
static inline uint32_t word_owner(uint64_t w)
{
	return (uint32_t)(w >> SLOT_STATE_BITS) & ((1u << SLOT_OWNER_BITS) - 1);
}
static inline uint32_t word_state(uint64_t w)
{
	return (uint32_t)w & 3u;
}

// Process table entry states. CLAIMING (an attach in progress) carries the attaching pid in
// the upper bits, so an attach cut short by SIGKILL is recognised and the entry recovered.
enum { PROC_FREE = 0, PROC_ALIVE = 1, PROC_DEAD = 2, PROC_CLAIMING = 3 };
#define PROC_CLAIMING_BY(pid) ((uint32_t)(pid) << 2 | PROC_CLAIMING)
static inline int proc_is_claiming(uint32_t w)
{
	return (w & 3u) == PROC_CLAIMING;
}

typedef struct {
	// identity: written by the owner while CLAIMING, read by everyone
	_Atomic uint32_t state; // PROC_*, or PROC_CLAIMING_BY(pid)
	int32_t pid;
	uint64_t start_time; // /proc/<pid>/stat field 22: tells a reused pid from ours
	int32_t numa_node;
	uint32_t generation; // bumped at every attach
	uint64_t attach_unix_ns;
	_Atomic uint64_t heartbeat_ns; // CLOCK_MONOTONIC of the last sign of life
	// counters, cumulative over the entry's life (single writer: the current owner, or a
	// reaper for `adopted`); ringstat sums them for totals since creation
	_Atomic uint64_t items;
	_Atomic uint64_t errors;
	_Atomic uint64_t adopted;
	_Atomic uint64_t wait_ns;
	_Atomic uint64_t max_wait_ns;
	_Atomic uint64_t cursor; // consumer: next position to acquire
	// counter values when the current owner attached (for per-process rows)
	uint64_t base_items, base_errors, base_adopted, base_wait_ns;
	_Atomic uint64_t waiting_since_ns; // CLOCK_MONOTONIC when the current wait began, 0 when not waiting
} RingProcEntry;

typedef struct {
	_Atomic uint64_t state;   // packed slot state word
	_Atomic uint32_t waiters; // processes sleeping on this slot's futex
	uint32_t flags;           // RING_SLOT_*
	int32_t error;
	uint16_t crop[4];
	uint32_t reserved0;
	uint64_t sample_id;
	int32_t labels[RING_LABELS]; // ABI 4
	uint8_t reserved[64 - 48];
} RingSlotHeader;

typedef struct {
	// identity and geometry: written once at creation, before magic is published
	_Atomic uint64_t magic;
	uint32_t abi_version;
	uint32_t control_bytes;     // sizeof(RingControl)
	uint32_t proc_entry_bytes;  // sizeof(RingProcEntry)
	uint32_t slot_header_bytes; // sizeof(RingSlotHeader)
	uint32_t max_producers, max_consumers;
	RingGeometry geometry; // 20 bytes
	uint32_t slots;
	uint32_t ranks;
	uint32_t adopt_timeout_ms;
	int32_t numa_node;
	uint32_t hugepages;
	uint64_t seed;
	uint64_t first_position;
	uint64_t instance_id;
	uint64_t payload_bytes;
	uint64_t text_offset; // within a payload
	uint64_t slot_stride;
	uint64_t slots_offset;
	uint64_t payload_offset;
	uint64_t segment_bytes;
	uint64_t created_unix_ns;
	uint64_t created_mono_ns;
	RingDataId data; // 96 bytes: the dataset (ABI 3)
	// hot, shared by producers: own cache lines
	alignas(RING_CACHE_LINE) _Atomic uint64_t claim_hint; // every position below it is claimed
	uint8_t pad1[RING_CACHE_LINE - 8];
	alignas(RING_CACHE_LINE) _Atomic uint32_t closed; // set by ring_destroy
	_Atomic uint32_t dead_producers;                  // entries in PROC_DEAD
	_Atomic uint64_t last_reap_ns;
	uint8_t pad2[RING_CACHE_LINE - 16];
	// single-machine bootstrap record (ring_boot.c): rank 0's blob (the NCCL unique id) under a
	// seqlock; every field is an atomic word so readers never race a writer's plain stores
	_Atomic uint64_t boot_seq;      // odd while a publisher writes; +2 per publish (the generation)
	_Atomic uint64_t boot_token;    // the publisher's job token
	_Atomic uint64_t boot_instance; // instance id of the ring it was published in
	_Atomic uint64_t boot_start;    // publisher's process start time (/proc/<pid>/stat field 22)
	_Atomic uint64_t boot_pid_len;  // publisher pid << 32 | blob length
	_Atomic uint64_t boot_world;    // the job's world size
	_Atomic uint64_t boot_blob[RING_BOOT_BLOB_MAX / 8];
	uint8_t reserved[RING_PAGE - 384 - 48 - RING_BOOT_BLOB_MAX];
} RingControl;

#define RING_PRODUCERS_OFFSET ((uint64_t)RING_PAGE)
#define RING_CONSUMERS_OFFSET (RING_PRODUCERS_OFFSET + RING_MAX_PRODUCERS * sizeof(RingProcEntry))
#define RING_SLOTS_OFFSET (RING_CONSUMERS_OFFSET + RING_MAX_CONSUMERS * sizeof(RingProcEntry))

_Static_assert(sizeof(RingGeometry) == 20, "RingGeometry is ABI");
_Static_assert(sizeof(RingProcEntry) == 128, "RingProcEntry is two cache lines");
_Static_assert(offsetof(RingProcEntry, items) == 40, "RingProcEntry layout");
_Static_assert(offsetof(RingProcEntry, base_items) == 88, "RingProcEntry layout");
_Static_assert(offsetof(RingProcEntry, waiting_since_ns) == 120, "RingProcEntry layout");
_Static_assert(sizeof(RingSlotHeader) == RING_CACHE_LINE, "slot header is one cache line");
_Static_assert(offsetof(RingSlotHeader, sample_id) == 32, "RingSlotHeader layout");
_Static_assert(offsetof(RingSlotHeader, labels) == 40 && RING_LABELS == 2, "RingSlotHeader layout (ABI 4)");
_Static_assert(offsetof(RingControl, geometry) == 32, "RingControl layout");
_Static_assert(offsetof(RingControl, seed) == 72, "RingControl layout");
_Static_assert(offsetof(RingControl, created_mono_ns) == 152, "RingControl layout");
_Static_assert(offsetof(RingControl, data) == 160 && sizeof(RingDataId) == 96, "RingControl layout");
_Static_assert(offsetof(RingControl, claim_hint) == 256, "RingControl layout");
_Static_assert(offsetof(RingControl, closed) == 320, "RingControl layout");
_Static_assert(offsetof(RingControl, boot_seq) == 384, "RingControl layout");
_Static_assert(offsetof(RingControl, boot_blob) == 432, "RingControl layout");
_Static_assert(sizeof(RingControl) == RING_PAGE, "control block is one page");
_Static_assert(RING_SLOTS_OFFSET % RING_PAGE == 0, "slot headers start on a page");
_Static_assert(RING_MAX_PRODUCERS < (1 << SLOT_OWNER_BITS) && RING_MAX_CONSUMERS < (1 << SLOT_OWNER_BITS),
	       "owner index fits the state word");

// Where everything of a ring with this geometry and slot count lives; every value computed
// with overflow checks. Creation writes these into the control block and opening demands them
// back exactly, so a damaged field can never move a table or a payload.
typedef struct {
	uint64_t payload_bytes; // T*H*W*C
	uint64_t text_offset;   // within a payload, cache-line aligned
	uint64_t slot_stride;   // 4 KiB multiple
	uint64_t payload_offset;
	uint64_t bytes; // whole segment (before any hugepage rounding)
} RingLayout;
// 0, or -EINVAL with a reason when the geometry or slot count is out of bounds or too large
int ring_layout_compute(const RingGeometry *g, uint32_t slots, RingLayout *out, char *errbuf, size_t errlen);

// A process's view of an open ring. The geometry and every offset are copied out of the
// segment once, after validation: the control block is writable by every process that maps
// it, so nothing that indexes memory is ever read from it again.
struct Ring {
	uint8_t *base;
	size_t bytes;
	RingControl *ctl;
	RingProcEntry *producers; // (RING_MAX_PRODUCERS,)
	RingProcEntry *consumers; // (RING_MAX_CONSUMERS,)
	RingSlotHeader *slots;    // (S,)
	uint8_t *payloads;        // (S, slot_stride)
	// validated copies of the control block's shape
	uint32_t n_slots, n_ranks; // S, N
	uint32_t adopt_timeout_ms;
	RingGeometry geometry;
	uint64_t payload_bytes, text_offset, slot_stride, payload_offset;
	int read_only;
	uint64_t instance_id;
	RingDataId data;             // validated copy: NUL-terminated name
	uint64_t file_dev, file_ino; // to tell a recreated ring from ours
	char name[64];
	char path[192];
	char hugepage_note[128];
};

// Validates the segment mapped at base (bytes long, the file's size) and fills r's views and
// validated copies: magic, ABI, struct sizes, geometry bounds, and the exact layout. 0, or
// -EPROTO / -EINVAL with a one-line reason naming path. ring_open uses it; so do tests and the
// fuzz harness on mappings of their own.
int ring_attach_mapping(Ring *r, uint8_t *base, uint64_t bytes, const char *path, const RingOpenOptions *o,
			char *errbuf, size_t errlen);
// -EPROTO when a slot's position cannot occur in a sound ring: further ahead of the claim
// hint than the claims in flight allow (see ring_proto.c)
int ring_position_sane(const Ring *r, uint64_t pos);

// Bounds of a ring's shape, each reported with its own numbers when violated.
#define RING_MAX_T 4096u
#define RING_MAX_HW 16384u
#define RING_MAX_C 16u
#define RING_MAX_TEXT 65536u
#define RING_MAX_SLOTS (1u << 20)
#define RING_MAX_PAYLOAD (1ull << 34)
#define RING_MAX_ADOPT_MS 3600000u

// shared by the files of shm-layout/
extern const char ring_shm_dir[]; // "/dev/shm"
// 1: ring_create builds under a named temporary, its fallback where O_TMPFILE is not available
// (tests of that path set it; 0 otherwise)
extern int ring_create_named_temp;
static inline uint64_t ring_round_up(uint64_t x, uint64_t to)
{
	return (x + to - 1) / to * to;
}
// writes the reason into errbuf (may be NULL) and returns err
int ring_name_valid(const char *name);
// 0 when lo <= v <= hi, else -EINVAL and "ring WHAT must be LO..HI, got V"
int ring_bound(char *errbuf, size_t errlen, const char *what, uint64_t v, uint64_t lo, uint64_t hi);
// the mount point of a hugetlbfs file system, if one is mounted: 1, else 0
int ring_hugetlbfs_dir(char *dir, size_t len);
// the file backing ring `name`: /dev/shm first, then hugetlbfs; 0 or -ENOENT
int ring_path(const char *name, char *path, size_t len);
// points r's table views into r->base from the validated copies
void ring_map_views(Ring *r);
int ring_proc_is_dead(const RingProcEntry *e);
// 1 when the entry is ALIVE or CLAIMING and its process is gone; *word gets the state read
int ring_entry_owner_dead(const RingProcEntry *e, uint32_t *word);
void ring_slot_wake(RingSlotHeader *h);
int ring_slot_wait(Ring *r, RingSlotHeader *h, uint64_t seen, uint64_t deadline_ns);
// Marks dead producers/consumers; with adopt_for >= 0 it also hands one WRITING slot of a
// dead producer to that producer index and returns 1 with *slot_index set.
int ring_reap_internal(Ring *r, int adopt_for, uint32_t *slot_index);

#endif
