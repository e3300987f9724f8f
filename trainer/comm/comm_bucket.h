// Bucketed gradient all-reduce (average), DDP-style: parameters are grouped into buckets in
// reverse registration order (backward produces the last layers first); a bucket is reduced as
// soon as all its gradients are marked ready, in bucket order, so it can overlap backward.
#ifndef TRAINER_COMM_BUCKET_H
#define TRAINER_COMM_BUCKET_H
// defines: CommBuckets, comm_buckets_create, comm_buckets_ready, comm_buckets_finish,
//          comm_buckets_count, comm_buckets_free

#include <stddef.h> // defines: size_t

#include "comm.h" // defines: Comm

typedef struct CommBuckets CommBuckets;

// grads[i] (sizes[i] floats) are the gradient buffers of the nparams parameters, in the order
// the model registers them; bucket_bytes bounds a bucket (a larger parameter gets its own).
// The buffers must stay valid; every rank must register the same sizes. -EINVAL, -ENOMEM.
int comm_buckets_create(CommBuckets **out, Comm *c, int nparams, float *const *grads, const size_t *sizes,
			size_t bucket_bytes);
// marks parameter i's gradient final; reduces every bucket that is complete and next in order.
// -EINVAL for an unknown or already-ready parameter; a comm error is returned as is.
int comm_buckets_ready(CommBuckets *b, int param);
// after backward: -EINVAL (naming nothing) if a parameter was never marked ready; otherwise
// every gradient is averaged over ranks and the buckets are re-armed for the next step
int comm_buckets_finish(CommBuckets *b);
int comm_buckets_count(const CommBuckets *b);
void comm_buckets_free(CommBuckets *b);

#endif
