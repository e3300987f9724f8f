// Ingest from the ring: rank r's next B READY positions copied to a device batch straight from
// the registered ring mapping (asynchronously; a slot is released when its copy is done), error slots counted and skipped (the batch is filled with the following
// positions, so it is still a pure function of the stream), time spent waiting for data measured.
#ifndef TRAINER_INGEST_H
#define TRAINER_INGEST_H
// defines: TrainerIngest, trainer_ingest_open, trainer_ingest_close, trainer_ingest_position,
//          trainer_ingest_skip_to, trainer_ingest_batch, IngestBatch, INGEST_MAX_INFLIGHT

#include <signal.h> // defines: sig_atomic_t
#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t, int64_t, int32_t, uint8_t

#include "model.h" // defines: ModelConfig
#include "ring.h"         // defines: Ring, RingConsumer, RingGeometry
#include "kern_ops.h"     // defines: KernCtx, KEvent, KTensor

#define INGEST_MAX_INFLIGHT 64

// where a batch goes: device tensors for the clips and tokens, host arrays for the rest
typedef struct {
	KTensor *clips; // (B, T, H, W, 3) u8 on the device
	KTensor *text;  // (B, text_len) i32 on the device
	int64_t *ids;   // (B) sample ids
	int64_t *pos;   // (B) stream positions g
} IngestBatch;

typedef struct {
	Ring *ring;
	RingConsumer *cons;
	char name[128];
	RingGeometry geom;
	uint64_t seed;        // the ring's data-stream seed (augmentation keys)
	int vocab;
	size_t clip_bytes;    // T*H*W*C
	uint64_t errors;      // error slots skipped since open
	double wait_s;        // seconds spent waiting for READY slots since open
	// when set and nonzero (a stop request), a wait that finds no data for 200 ms ends with
	// -ECANCELED: the batch is abandoned (the checkpoint holds the positions before it)
	const volatile sig_atomic_t *cancel;
	KernCtx *ctx;         // the device the ring mapping is registered with
	void *region;         // the registered span of payloads (ring_payload_region)
	// slots whose copy to the device is in flight, oldest first, each with the event after its copy
	RingSlot fly[INGEST_MAX_INFLIGHT];
	KEvent *fly_ev[INGEST_MAX_INFLIGHT];
	int fly_head, fly_n, fly_cap;
} TrainerIngest;

// Opens the ring, attaches as consumer rank and registers the payloads with ctx's device (so
// copies go from the ring without staging). Errors with one sentence in err: -ENOENT no such
// ring, -EINVAL its geometry is not the model's (frames, image size, 3 channels, ctx-len) or it
// serves another number of ranks, -EBUSY the rank is held by a live process.
int trainer_ingest_open(TrainerIngest *in, KernCtx *ctx, const char *ring, int rank, int ranks, const ModelConfig *m,
			char *err, size_t errlen);
void trainer_ingest_close(TrainerIngest *in);
// next position this rank will acquire
uint64_t trainer_ingest_position(const TrainerIngest *in);
// consumes and drops positions until the next one is >= pos (a resumed run); -ERANGE when the
// ring already starts past pos, -ETIMEDOUT / -ESHUTDOWN as trainer_ingest_batch
int trainer_ingest_skip_to(TrainerIngest *in, uint64_t pos, double timeout_s, char *err, size_t errlen);
// The next B = clips->shape[0] good positions: clips and tokens copied into the device batch
// (queued), sample ids and positions into the host arrays. The host waits for the device at most
// once, at the end, when a copy is still running (never on the CPU backend), or when more than
// fly_cap slots are in flight. Sample ids >= dataset_size (when > 0) and token ids outside the
// vocabulary: -ERANGE. No READY slot within timeout_s: -ETIMEDOUT; ring destroyed: -ESHUTDOWN;
// *cancel set while waiting: -ECANCELED (also from trainer_ingest_skip_to). err says which.
int trainer_ingest_batch(TrainerIngest *in, const IngestBatch *b, int64_t dataset_size, double timeout_s, char *err,
			 size_t errlen);

#endif
