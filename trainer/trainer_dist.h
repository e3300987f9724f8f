// Who this rank is and whom it talks to: rank, world, local rank and node from the flags or the
// launcher's environment (Slurm, torchrun) through the rendezvous library, the device and the
// communicator (NCCL with the id handed out by rendezvous for GPU ranks, shared memory for CPU
// ranks, a local one for a single rank).
#ifndef TRAINER_DIST_H
#define TRAINER_DIST_H
// defines: trainer_dist_resolve, trainer_dist_ring_rank, trainer_dist_open_device, trainer_dist_open_comm

#include "comm.h"          // defines: Comm, Ring
#include "trainer_flags.h" // defines: TrainerConfig

// Fills rank, ranks, local_rank, local_ranks, node, nodes and rdv_info from --rank/--ranks,
// --master, --rdv, --rdv-file and the environment (see rdv_resolve). -EINVAL with a sentence.
int trainer_dist_resolve(TrainerConfig *c, char *err, size_t errlen);
// this rank's consumer rank and the rank count of its machine's ring (all ranks on one machine;
// the machine's ranks, each machine with its own ring, across machines)
void trainer_dist_ring_rank(const TrainerConfig *c, int *rank, int *ranks);
// the kernel context of --backend on --device (or the local rank); *why says what was chosen
int trainer_dist_open_device(const TrainerConfig *c, int threads, KernCtx **ctx, char *why, size_t whylen, char *err,
			     size_t errlen);
// the communicator for this backend and rank count: NCCL on a GPU backend with more than one rank
// (the id from rank 0 through the rendezvous: ring is this machine's ring for --rdv ring), the shm
// group --comm for CPU ranks, a local one for a single rank. fatal: called by NCCL's watchdog.
int trainer_dist_open_comm(const TrainerConfig *c, KernCtx *ctx, Ring *ring, CommFatalFn fatal, Comm **out, char *err,
			   size_t errlen);

#endif
