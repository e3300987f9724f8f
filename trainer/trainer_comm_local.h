// A world-of-one Comm for a trainer that runs as a single rank without a shared-memory group:
// every collective is a copy (or nothing), with the same byte accounting as the other backends.
#ifndef TRAINER_COMM_LOCAL_H
#define TRAINER_COMM_LOCAL_H
// defines: trainer_comm_local_open

#include "comm.h" // defines: Comm

// a Comm with rank 0 of world 1; comm_close frees it. -ENOMEM.
int trainer_comm_local_open(Comm **out);

#endif
