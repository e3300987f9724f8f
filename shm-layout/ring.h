// The shared-memory ring between loaderd producers and trainer consumers: its ABI and protocol.
// One public header; programs never reach into the structs except through the accessors below.
#ifndef SHM_RING_H
#define SHM_RING_H
// defines: RING_ABI_VERSION, RING_LABELS, RING_NO_LABEL, RingGeometry, RingDataId, RingCreateOptions, RingOpenOptions, Ring, RingSlot, RingProducer,
//          RingConsumer, RingStats, RingProcStats, ring_create, ring_open, ring_close, ring_destroy,
//          ring_payload_region, ring_producer_attach, ring_producer_claim, ring_producer_publish, ring_producer_publish_error,
//          ring_producer_detach, ring_consumer_attach, ring_consumer_acquire, ring_consumer_release,
//          ring_consumer_detach, ring_reap, ring_stats, ring_check_instance, ring_check_data, ring_data_set, RingBootState, RingBootSeen,
//          ring_boot_publish, ring_boot_read, ring_boot_clear, RING_BOOT_BLOB_MAX

#include <stddef.h>
#include <stdint.h>

// Bumped whenever the layout or the meaning of any field changes; a mismatch is refused.
// 2: the control block's reserved NCCL-id bytes became the bootstrap record (ring_boot_*).
// 3: the control block records the dataset (RingDataId) in bytes that were padding.
// 4: a slot header carries its clip's class labels (RingSlot.labels) in bytes that were reserved.
#define RING_ABI_VERSION 4
#define RING_LABELS 2          // class labels per slot (the manifest's label heads)
#define RING_NO_LABEL -1       // a head without a label (and every label of a caption-only dataset)
#define RING_MAX_PRODUCERS 256 // loader threads over all loaderd processes
#define RING_MAX_CONSUMERS 64  // = the most ranks one ring serves
#define RING_DEFAULT_NAME "avclip"

// What one slot carries: a uint8 clip (T, H, W, C) followed by text_len int32 token ids.
typedef struct {
	uint32_t frames;   // T
	uint32_t height;   // H
	uint32_t width;    // W
	uint32_t channels; // C
	uint32_t text_len; // caption tokens per slot (0 for none)
} RingGeometry;

// The dataset a ring's clips and captions come from, recorded at creation: a loader or trainer
// given another manifest is refused (a typo, a stale unit file, a manifest rewritten meanwhile)
// instead of training the job on another dataset. id 0: the creator recorded none.
typedef struct {
	uint64_t id;         // manifest_identity of the job's manifest
	uint64_t vocab_hash; // the captions' vocabulary (bpe_vocab_hash), 0 when not recorded
	char name[80];       // the manifest as the creator named it, for messages (NUL-terminated)
} RingDataId;

typedef struct {
	RingGeometry geometry;
	RingDataId data;           // the dataset (all zero: none recorded)
	uint32_t slots;            // S
	uint32_t ranks;            // N
	uint64_t seed;             // the data stream's seed, recorded for everyone who attaches
	uint64_t first_position;   // stream starts here (a resumed run starts where it stopped)
	uint32_t adopt_timeout_ms; // how often producers look for dead peers' slots (default 200)
	int numa_node;             // bind the segment to this node (-1: no binding)
	int hugepages;             // 1: try a hugetlbfs-backed segment, fall back to /dev/shm
	int replace;               // 1: an existing ring of this name is destroyed first
} RingCreateOptions;

// A ring is joined for writing only when this user made it (or the owner named here) and no
// one else may write it: another user's segment of the same name is hostile input.
typedef struct {
	const RingGeometry *expect_geometry; // NULL: accept the ring's geometry
	int read_only;                       // map PROT_READ (ringstat): never writes a byte
	int owner_given;                     // 1: owner_uid is the ring's owner to accept (else our euid)
	unsigned owner_uid;
	int allow_shared_write; // 1: a segment group/other may write is accepted
} RingOpenOptions;

typedef struct Ring Ring;
typedef struct RingProducer RingProducer;
typedef struct RingConsumer RingConsumer;

// Slot flags (RingSlot.flags)
#define RING_SLOT_ERROR 1u   // the position could not be produced; error holds the code
#define RING_SLOT_ADOPTED 2u // written by a producer that adopted it from a dead one

// A claimed (producer) or acquired (consumer) position; the pointers stay valid until
// publish/release. The producer fills payload, text and the metadata fields.
typedef struct {
	uint64_t position; // g
	uint32_t slot;     // g mod S
	uint32_t flags;    // RING_SLOT_*
	int32_t error;     // decode error code when RING_SLOT_ERROR (positive, producer-defined)
	uint64_t sample_id;
	uint16_t crop[4]; // x, y, w, h of the crop in source pixels (informational)
	// the clip's class label per head (RING_NO_LABEL: none); a claim starts with none
	int32_t labels[RING_LABELS];
	uint8_t *payload; // (T, H, W, C) uint8, 4 KiB aligned
	int32_t *text;    // (text_len,) token ids
} RingSlot;

// --- lifetime -------------------------------------------------------------------------
// All functions return 0 or a negative errno. errbuf (may be NULL) receives a one-line
// reason a user can act on, e.g. both ABI versions or both geometries on a mismatch.
int ring_create(Ring **out, const char *name, const RingCreateOptions *opt, char *errbuf, size_t errlen);
int ring_open(Ring **out, const char *name, const RingOpenOptions *opt, char *errbuf, size_t errlen);
void ring_close(Ring *r);           // unmaps; producers/consumers must be detached first
int ring_destroy(const char *name); // marks the ring closed (waiters return -ESHUTDOWN), unlinks
// Whether a program holding the dataset `mine` (manifest_identity, its vocabulary, its path) may
// join ring r: 0 when the ring records the same dataset, or none (id 0: nothing to compare, the
// caller may warn); -EINVAL with a sentence naming both manifests, their identities, and what to do
// (who: "this loader", "rank 0") in err otherwise. Also -EINVAL when mine has id 0 but the ring
// records a dataset: a program that cannot say which data it serves must not join a job's ring.
int ring_check_data(const Ring *r, const char *ring_name, const RingDataId *mine, const char *who, char *err,
		    size_t errlen);
// fills d; a name longer than the field keeps its end ("...dataset/manifest"), the telling part
void ring_data_set(RingDataId *d, uint64_t id, uint64_t vocab_hash, const char *name);
// 0 while `name` still names the ring r was opened from; -ESTALE when it was recreated
// (attached processes should detach and re-open), -ENOENT when it is gone.
int ring_check_instance(const Ring *r);

// --- facts about an open ring ----------------------------------------------------------
typedef struct {
	RingGeometry geometry;
	uint32_t slots, ranks;
	uint64_t seed, first_position, instance_id;
	RingDataId data;        // the dataset recorded at creation (id 0: none)
	uint64_t payload_bytes; // T*H*W*C
	uint64_t slot_stride;   // bytes between payloads (4 KiB multiple)
	uint64_t segment_bytes;
	uint64_t created_unix_ns; // wall clock at creation
	uint32_t adopt_timeout_ms;
	int numa_node; // -1: not bound
	int hugepages; // 1: the segment is on hugetlbfs
	int closed;
	char path[192];          // file backing the segment
	char hugepage_note[128]; // why hugepages were not used, when asked for
} RingInfo;
void ring_info(const Ring *r, RingInfo *info);
// The span of every slot's payload and tokens in this process's mapping (S slot strides from the
// first payload), which a consumer registers for asynchronous copies to a device.
void ring_payload_region(const Ring *r, void **base, size_t *bytes);

// --- producers (loaderd) -------------------------------------------------------------------
// numa_node is recorded for ringstat. Registration fails with -EUSERS when the table is full.
int ring_producer_attach(Ring *r, int numa_node, RingProducer **out);
// Claims the next position to produce: a slot adopted from a dead producer first, else the
// lowest position nobody has claimed. Waits (up to timeout_ms, -1 forever) while that
// position's slot still holds the position S behind it. -ETIMEDOUT, -ESHUTDOWN.
int ring_producer_claim(RingProducer *p, RingSlot *slot, int timeout_ms);
// Makes the slot READY (release store after the payload). -ESTALE if the slot was not ours.
int ring_producer_publish(RingProducer *p, RingSlot *slot);
// Publishes the position with RING_SLOT_ERROR and the code: consumers skip it, nothing is lost.
int ring_producer_publish_error(RingProducer *p, RingSlot *slot, int32_t code);
// Leaves the table; claimed-but-unpublished slots are left to be adopted by live producers.
void ring_producer_detach(RingProducer *p);
void ring_producer_heartbeat(RingProducer *p);

// --- consumers (trainer rank r) ---------------------------------------------------------------
// One consumer per rank; -EBUSY while a live process holds the rank. A dead previous holder's
// acquired slots are handed back (they are delivered again, in order).
int ring_consumer_attach(Ring *r, uint32_t rank, RingConsumer **out);
// Acquires rank r's next position (r, r+N, r+2N, ... in order), waiting up to timeout_ms.
// Error slots are returned too (flags & RING_SLOT_ERROR) so the caller can count and skip.
// -EDEADLK when waiting could never end because this consumer itself holds the slot needed
// (hold fewer than S/N slots at a time), -ETIMEDOUT, -ESHUTDOWN.
int ring_consumer_acquire(RingConsumer *c, RingSlot *slot, int timeout_ms);
// Frees the slot for position g+S. Any order of release is allowed.
int ring_consumer_release(RingConsumer *c, RingSlot *slot);
void ring_consumer_detach(RingConsumer *c);
// Next position this consumer will acquire (the stream position to checkpoint).
uint64_t ring_consumer_position(const RingConsumer *c);

// Looks for dead producers and consumers and marks them; a producer calls it on its own
// every adopt_timeout_ms. Returns how many dead processes were found.
int ring_reap(Ring *r);

// --- statistics (read-only; what ringstat shows) --------------------------------------------------
typedef struct {
	int index; // table index (producer) or rank (consumer)
	int state; // 0 free, 1 alive, 2 dead (awaiting reaping)
	int pid, numa_node;
	uint64_t attach_unix_ns, heartbeat_age_ns;
	// since this process attached
	uint64_t items;       // published (producer) / released (consumer)
	uint64_t errors;      // error slots published / received
	uint64_t adopted;     // slots adopted (producer) / delivered again after a crash or detach (consumer)
	uint64_t wait_ns;     // producer: stalled on a full ring; consumer: waiting for data
	uint64_t max_wait_ns; // longest single wait
	uint64_t position;    // consumer: next position
} RingProcStats;

typedef struct {
	uint64_t now_ns;                         // CLOCK_MONOTONIC when read
	uint64_t age_ns;                         // since creation
	uint32_t empty, writing, ready, reading; // slots by state
	// totals since creation (over every process that ever attached)
	uint64_t produced, consumed, errors, adopted, redelivered;
	uint64_t producer_wait_ns, consumer_wait_ns;
	uint32_t live_producers, live_consumers, dead_producers;
	uint64_t claim_position; // lowest position no producer has claimed yet (approximately)
} RingStats;

// Fills stats; with procs != NULL also per-process rows (up to max_procs, producers then
// consumers, only entries not free) and returns their count.
int ring_stats(const Ring *r, RingStats *stats, RingProcStats *procs, int max_procs, int *n_producers);

// --- single-machine bootstrap (DESIGN §9) ----------------------------------------------------
// Rank 0 of a job publishes an opaque blob (the NCCL unique id) in the control block; the other
// ranks on this machine read it. The record carries the job token, the world size, the ring's
// instance id and the publisher's identity (pid + process start time), so a reader never takes
// the blob of another job, of an earlier incarnation of the ring, or of a rank 0 that has died
// (a previous attempt of the same job). Ranks must share the machine's pid namespace.
#define RING_BOOT_BLOB_MAX 128

typedef enum {
	RING_BOOT_NONE = 0,       // nothing published (or cleared)
	RING_BOOT_READY,          // a usable blob of this job
	RING_BOOT_BUSY,           // a publisher is writing it right now
	RING_BOOT_OTHER_JOB,      // published by a job with another token
	RING_BOOT_DEAD_PUBLISHER, // this job's token, but its publisher is gone: a previous attempt
	RING_BOOT_OTHER_INSTANCE, // published in an earlier incarnation of the ring
} RingBootState;

// What a read found, for messages ("a stale id of pid 1234, generation 3").
typedef struct {
	RingBootState state;
	uint64_t generation; // publishes since the ring was created
	uint64_t token;
	uint32_t world;
	int pid; // the publisher
} RingBootSeen;

// Publishes len (1..RING_BOOT_BLOB_MAX) bytes for job `token` of `world` ranks. -ESTALE when
// the ring was recreated (re-open it), -EINVAL for a bad length, -EROFS on a read-only mapping.
int ring_boot_publish(Ring *r, uint64_t token, uint32_t world, const void *blob, size_t len);
// Copies the blob of job `token` into blob (len bytes, which must be the published length):
// 0 when there was one; -EAGAIN when there is none usable yet (seen->state says what there
// was); -EPROTO when this job's live publisher published another world size or length (the
// ranks disagree: seen says what it published); -ESTALE when the ring was recreated. Never waits.
int ring_boot_read(Ring *r, uint64_t token, uint32_t world, void *blob, size_t len, RingBootSeen *seen);
// Clears the record when it belongs to `token` (0), or leaves another job's (-EPERM).
int ring_boot_clear(Ring *r, uint64_t token);

// --- helpers -----------------------------------------------------------------------------
uint64_t ring_payload_bytes(const RingGeometry *g);
int ring_geometry_equal(const RingGeometry *a, const RingGeometry *b);
// "T=16 H=224 W=224 C=3 text=77"
void ring_geometry_format(const RingGeometry *g, char *buf, size_t len);
void ring_create_options_default(RingCreateOptions *opt);

#endif
