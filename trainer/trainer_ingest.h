// Ingest from the ring: rank r's next B READY positions copied into a host batch, error slots
// counted and skipped (the batch is filled with the following positions, so it is still a
// pure function of the stream), time spent waiting for data measured.
#ifndef TRAINER_INGEST_H
#define TRAINER_INGEST_H
// defines: TrainerIngest, trainer_ingest_open, trainer_ingest_close, trainer_ingest_position,
//          trainer_ingest_skip_to, trainer_ingest_batch

#include <signal.h> // defines: sig_atomic_t
#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t, int64_t, int32_t, uint8_t

#include "model_config.h" // defines: ModelConfig
#include "ring.h"         // defines: Ring, RingConsumer, RingGeometry

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
} TrainerIngest;

// Opens the ring and attaches as consumer rank. Errors with one sentence in err: -ENOENT no
// such ring, -EINVAL its geometry is not the model's (frames, image size, 3 channels, ctx-len)
// or it serves another number of ranks, -EBUSY the rank is held by a live process.
int trainer_ingest_open(TrainerIngest *in, const char *ring, int rank, int ranks, const ModelConfig *m, char *err,
			size_t errlen);
void trainer_ingest_close(TrainerIngest *in);
// next position this rank will acquire
uint64_t trainer_ingest_position(const TrainerIngest *in);
// consumes and drops positions until the next one is >= pos (a resumed run); -ERANGE when the
// ring already starts past pos, -ETIMEDOUT / -ESHUTDOWN as trainer_ingest_batch
int trainer_ingest_skip_to(TrainerIngest *in, uint64_t pos, double timeout_s, char *err, size_t errlen);
// clips (B, T, H, W, C) uint8, text (B, text_len) ids, ids (B) sample ids, pos (B) positions.
// Sample ids >= dataset_size (when > 0) and token ids outside the vocabulary: -ERANGE.
// No READY slot within timeout_s: -ETIMEDOUT; ring destroyed: -ESHUTDOWN; *cancel set while
// waiting: -ECANCELED (also from trainer_ingest_skip_to). err says which.
int trainer_ingest_batch(TrainerIngest *in, int B, uint8_t *clips, int32_t *text, int64_t *ids, uint64_t *pos,
			 int64_t dataset_size, double timeout_s, char *err, size_t errlen);

#endif
