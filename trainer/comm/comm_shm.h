// Same-host shared-memory comm backend for K CPU rank processes: one POSIX shm segment with a
// slot per rank, a process-shared futex barrier, and dead-peer detection so no rank hangs.
#ifndef TRAINER_COMM_SHM_H
#define TRAINER_COMM_SHM_H
// defines: comm_shm_create, comm_shm_attach, comm_shm_unlink, COMM_SHM_MAX_WORLD

#include <stddef.h> // defines: size_t

#include "comm.h" // defines: Comm

#define COMM_SHM_MAX_WORLD 64

// Creates (or re-creates) the segment "/name" for world ranks, slot_bytes of staging per rank
// (larger collectives are cut into rounds). Done once by the launcher before the ranks start.
// -EINVAL on bad arguments, other -errno from shm_open/ftruncate/mmap.
int comm_shm_create(const char *name, int world, size_t slot_bytes);
// Joins the segment as rank. Every wait (barrier) checks the peers: a peer that exited or left
// makes the call fail with -EPIPE and comm_error() naming it; no progress for timeout_s seconds
// fails with -ETIMEDOUT. A failure is recorded in the segment so every other rank fails too.
// -EBUSY when a live process already holds the rank, -EPROTO on a segment of another version.
int comm_shm_attach(const char *name, int rank, double timeout_s, Comm **out);
int comm_shm_unlink(const char *name);

#endif
