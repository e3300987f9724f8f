// The trainer's start on a CUDA device: the CUDA stack it runs on (each library's version and the
// file it was loaded from), and the self-check against the CPU backend (trainer_selfcheck.h) that a
// device and build pair passes once before its first training step, or on every --self-check.
#ifndef TRAINER_GPU_H
#define TRAINER_GPU_H
// defines: trainer_gpu_facts, trainer_gpu_selfcheck, trainer_self_check_mode

#include <stddef.h> // defines: size_t

#include "kern_ops.h"      // defines: KernCtx
#include "trainer_flags.h" // defines: TrainerConfig

// Logs the device, its compute capability, the driver, and the CUDA runtime, cuBLASLt, cuDNN and
// NCCL versions with the file each was loaded from; key gets what identifies this device and build
// for the self-check's cache. Looks each library up among those loaded (dlsym): one the program did
// not load is said so.
void trainer_gpu_facts(int device, char *key, size_t keylen);
// The self-check of dev (the configured backend) against a CPU backend, unless always is 0 and the
// cache holds a pass for this device and build. 0 when it passed (or was cached); -1 with the
// refusal in err: the op, its error and tolerance, and how to report it.
int trainer_gpu_selfcheck(const TrainerConfig *c, KernCtx *dev, int always, char *err, size_t errlen);
// --self-check: the check on the configured backend (always run), its verdict logged; nothing to check
// on the CPU backend (the reference). The exit status: 0 passed, 1 refused.
int trainer_self_check_mode(const TrainerConfig *c);

#endif
