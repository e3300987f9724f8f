// Ingest from the ring: rank r's next B READY positions copied to a device batch on a copy stream
// straight from the registered ring mapping (or through a pinned staging buffer when the device
// refuses the registration), a slot released when its copy's event completes, error slots counted
// and skipped (the batch is filled with the following positions, so it is still a pure function of
// the stream), time spent waiting for data measured.
#ifndef TRAINER_INGEST_H
#define TRAINER_INGEST_H
// defines: TrainerIngest, trainer_ingest_open, trainer_ingest_close, trainer_ingest_position,
//          trainer_ingest_skip_to, trainer_ingest_batch, trainer_ingest_poll, trainer_ingest_set_node, trainer_ingest_set_classes, IngestBatch,
//          INGEST_MAX_INFLIGHT, INGEST_STAGING

#include <signal.h> // defines: sig_atomic_t
#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t, int64_t, int32_t, uint8_t

#include "model.h"    // defines: ModelConfig
#include "ring.h"     // defines: Ring, RingConsumer, RingGeometry
#include "kern_ops.h" // defines: KernCtx, KEvent, KTensor

#define INGEST_MAX_INFLIGHT 64
// trainer_ingest_open flag: copy through the pinned staging buffer even if registration would work
#define INGEST_STAGING 1

// where a batch goes: device tensors for the clips and tokens, host arrays for the rest
typedef struct {
	int64_t batch;  // B: the samples to take
	KTensor *clips; // (B, T, H, W, 3) u8 on the device
	KTensor *text;  // (B, text_len) i32 on the device
	int64_t *ids;   // (B) sample ids
	int64_t *pos;   // (B) global stream positions g (the augmentation's key)
	// class labels of each clip beside its text (RING_NO_LABEL where none; all of them for a
	// caption-only dataset): NULL or (B, RING_LABELS) host ints, and NULL or a (B, RING_LABELS)
	// i32 device tensor filled on the copy stream like the text
	int32_t *labels;
	KTensor *label_ids;
	// NULL, or an event recorded on the compute stream after the last op that reads clips/text of
	// the previous batch in these buffers: the copies wait for it on the device (double buffering)
	KEvent *free_ev;
	// NULL: the host waits until the batch is on the device. Else recorded on the copy stream after
	// the batch's copies; the compute stream waits for it (kern_stream_wait_event), the host does not
	KEvent *ready;
} IngestBatch;

typedef struct {
	Ring *ring;
	RingConsumer *cons;
	char name[128];
	RingGeometry geom;
	uint64_t seed;                    // the ring's data-stream seed (augmentation keys)
	uint32_t ring_ranks, node, nodes; // a ring position's global position (stream_node_position)
	int vocab;
	// each label head's class count, from the manifest (trainer_ingest_set_classes): a label
	// outside [0, n) other than RING_NO_LABEL is refused; 0 (the default): only labels < -1 are
	int n_classes[RING_LABELS];
	size_t clip_bytes; // T*H*W*C
	uint64_t errors;   // error slots skipped since open
	// A batch ends with -EIO when this many positions in a row were error slots (0: never): the
	// loaders cannot read the data any more (the dataset deleted or unmounted under the job), and
	// skipping on would wait forever for clips that never come. error_run counts the current run,
	// last_error is its last slot's loader code (LD_ERR_*, loaderd/loader.h).
	uint64_t max_error_run, error_run;
	int32_t last_error;
	double wait_s; // seconds spent waiting for READY slots since open
	// when set and nonzero (a stop request), a wait that finds no data for 200 ms ends with
	// -ECANCELED: the batch is abandoned (the checkpoint holds the positions before it)
	const volatile sig_atomic_t *cancel;
	KernCtx *ctx;  // the device's compute stream (the ring mapping is registered with its device)
	KernCtx *copy; // the copy stream: every upload of the batch goes here
	void *region;  // the registered span of payloads (ring_payload_region); NULL when staging
	// staging (registration refused or INGEST_STAGING): fly_cap entries of clip + text bytes, entry
	// i used by in-flight entry i; the ring slot is released right after its memcpy
	uint8_t *stage;
	size_t stage_stride;
	// pinned (fly_cap, RING_LABELS): in-flight entry i's labels, the source of its label copy
	int32_t *fly_labels;
	char note[512]; // one line for the log when open fell back to staging ("" otherwise)
	// copies in flight, oldest first, each with the event recorded after it; held[i]: the ring
	// slot fly[i] is still held (registered path) and is released when the event completes
	RingSlot fly[INGEST_MAX_INFLIGHT];
	KEvent *fly_ev[INGEST_MAX_INFLIGHT];
	int held[INGEST_MAX_INFLIGHT];
	int fly_head, fly_n, fly_cap;
	// kern_event_query, unless a test replaces it to hold copies "in flight" on the CPU backend
	int (*event_query)(KEvent *ev);
} TrainerIngest;

// Opens the ring, attaches as consumer rank, makes a copy stream on ctx's device and registers the
// payloads with it (so copies go from the ring without staging); when the device refuses the
// registration (or flags has INGEST_STAGING) copies go through pinned staging and in->note says so.
// Errors with one sentence in err: -ENOENT no such ring, -EINVAL its geometry is not the model's
// (frames, image size, 3 channels, ctx-len) or it serves another number of ranks, -EBUSY the rank
// is held by a live process.
int trainer_ingest_open(TrainerIngest *in, KernCtx *ctx, const char *ring, int rank, int ranks, const ModelConfig *m,
			int flags, char *err, size_t errlen);
void trainer_ingest_close(TrainerIngest *in);
// next position this rank will acquire
uint64_t trainer_ingest_position(const TrainerIngest *in);
// consumes and drops positions until the next one is >= pos (a resumed run); -ERANGE when the
// ring already starts past pos, -ETIMEDOUT / -ESHUTDOWN as trainer_ingest_batch
int trainer_ingest_skip_to(TrainerIngest *in, uint64_t pos, double timeout_s, char *err, size_t errlen);
// The next B = clips->shape[0] good positions: clips and tokens queued to the device batch on the
// copy stream, sample ids and positions into the host arrays. Slots whose copies are done are
// released as they complete (checked while waiting for data and at every slot); the host waits for
// the device only when the in-flight window (fly_cap slots) is full, or at the end when b->ready is
// NULL. Sample ids >= dataset_size (when > 0), token ids outside the vocabulary and labels outside
// their heads (trainer_ingest_set_classes): -ERANGE. No
// READY slot within timeout_s: -ETIMEDOUT; ring destroyed: -ESHUTDOWN; *cancel set while waiting:
// -ECANCELED (also from trainer_ingest_skip_to). err says which.
int trainer_ingest_batch(TrainerIngest *in, const IngestBatch *b, int64_t dataset_size, double timeout_s, char *err,
			 size_t errlen);
// releases the slots whose copies have completed (never waits); the count still in flight, or < 0
int trainer_ingest_poll(TrainerIngest *in);
// the label heads' class counts (n_heads of them, from manifest_label_classes) that labels are
// checked against; the heads past n_heads must carry none
void trainer_ingest_set_classes(TrainerIngest *in, int n_heads, const int *n_classes);
// this machine of a job of nodes machines, each with its own ring: positions reported in
// IngestBatch.pos become global (stream_node_position); the default is one machine
void trainer_ingest_set_node(TrainerIngest *in, int node, int nodes);

#endif
