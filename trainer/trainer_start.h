// What a start of the trainer would refuse, checked before anything is created: the vocabulary of
// --manifest against --eval-manifest's and --init-from's, and a resume against its checkpoint
// (batch size; the LR rule when --steps changed). trainer query check-start runs them alone, with the
// full --init-from load on the CPU, so tools/launch.sh refuses a bad start before loaders and
// trainers start and before it writes a run directory.
#ifndef TRAINER_START_H
#define TRAINER_START_H
// defines: TrainerVocab, trainer_start_vocab, trainer_start_init_report, trainer_start_resume, trainer_check_start

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t

#include "model.h"         // defines: StInitOpts, OptConfig
#include "trainer_flags.h" // defines: TrainerConfig

typedef struct {
	uint64_t hash;     // the training manifest's vocabulary (bpe_vocab_hash), 0: unknown (no --manifest)
	char hex[20];      // "%016llx" of it, "" unknown: what checkpoints record
	char merges[4200]; // its merges file (next to the manifest), "" unknown
	// the training manifest's dataset (manifest_identity), 0 without --manifest: the ring must serve
	// it, and checkpoints record it ("%016llx" in data_hex) so a resume on another is refused
	uint64_t data_id;
	char data_hex[20];
	// the manifest's label heads (0: none) and their class counts; --objective classify needs them
	int label_heads, label_classes[2];
	int new_data; // set by trainer_start_resume: the checkpoint was trained on another dataset (allowed)
} TrainerVocab;

// --manifest's vocabulary into v (unknown without --manifest: nothing is compared), and
// --eval-manifest's checked against it. 0 or -errno with the sentence (and the fix) in err.
int trainer_start_vocab(const TrainerConfig *c, TrainerVocab *v, char *err, size_t errlen);
// After --init-from loaded: logs what it loaded (tensors, dtypes, parameters, τ kept or reset and
// why, the captions' vocabulary) and refuses weights of another vocabulary than the manifest's:
// the one the file records (our exports), else for a 49408-token embedding without a record
// (open_clip and OpenAI CLIP files) OpenAI's merges; with --objective classify (the video tower
// only) neither τ nor the vocabulary. 0 or -EINVAL with err.
int trainer_start_init_report(const TrainerConfig *c, const TrainerVocab *v, const StInitOpts *io, char *err,
			      size_t errlen);
// With --resume and a checkpoint in --run-dir: a --batch-size other than the checkpoint's is
// refused (FastCLIP's epoch and γ schedules count its steps), a --manifest of another dataset than
// the checkpoint's unless --resume-on-new-data (then note says the u estimators start over), and a
// --manifest of another vocabulary than the one the checkpoint records (v: trainer_start_vocab's); when --steps differs from the
// checkpoint's, *opt (the run's schedule) gets the join of optim_join_schedule, or the recorded one
// when --steps is the same, and note says what the LR will do. 0 (also without a checkpoint: a fresh
// start) or -EINVAL with err; *step: the checkpoint's step (-1 without one).
int trainer_start_resume(const TrainerConfig *c, TrainerVocab *v, OptConfig *opt, int64_t *step, char *note,
			 size_t notelen, char *err, size_t errlen);
// query check-start: all of the above, --init-from loaded into this model on the CPU; logs what a
// start would and returns the exit status (0: the start would pass them)
int trainer_check_start(const TrainerConfig *c);

#endif
