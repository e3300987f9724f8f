// The byte layout of a comm_shm group's segment (private to trainer/comm/ and its tests): a
// one-page header with the barrier, the abort word and each rank's identity, then the slots.
#ifndef TRAINER_COMM_SHM_LAYOUT_H
#define TRAINER_COMM_SHM_LAYOUT_H
// defines: struct ShmHeader, SHM_MAGIC, SHM_VERSION, HDR_BYTES

#include "comm.h" // defines: COMM_SHM_MAX_WORLD

#include <stdatomic.h>
#include <stdint.h>

#define SHM_MAGIC 0x4d4d4f43504c4356ull // "VCLPCOMM"
#define SHM_VERSION 2u                  // 2: each rank's start time next to its pid
#define HDR_BYTES 4096

struct ShmHeader {
	uint64_t magic;
	uint32_t version, world;
	uint64_t slot_bytes, seg_bytes;
	_Atomic uint32_t arrived;                     // barrier: ranks arrived in this generation
	_Atomic uint32_t generation;                  // barrier: bumped by the last arriver (futex word)
	_Atomic int32_t failed_rank;                  // -1, or the rank whose failure aborted the group
	_Atomic uint32_t aborted;                     // 0, or an errno that every later call returns
	_Atomic int32_t pids[COMM_SHM_MAX_WORLD];     // 0: not joined yet, -1: left, else its pid
	_Atomic uint32_t entered[COMM_SHM_MAX_WORLD]; // barrier generation each rank last entered
	// start time of each rank's process (proc_start_time): a pid alone is reused by the system
	_Atomic uint64_t start_times[COMM_SHM_MAX_WORLD];
};
_Static_assert(sizeof(struct ShmHeader) <= HDR_BYTES, "comm shm header must fit its page");

#endif
