// A fake NCCL and CUDA runtime for tests of the NCCL backend without a GPU (tests/fake_nccl.c):
// the hooks a test sets, beside the NCCL and CUDA symbols the fake defines.
#ifndef TESTS_FAKE_NCCL_H
#define TESTS_FAKE_NCCL_H
// defines: fake_nccl_config, fake_cuda_delay, fake_nccl_violations, fake_nccl_set_async_error,
//          fake_nccl_free

#include <cuda_runtime.h> // defines: cudaStream_t
#include <nccl.h>         // defines: ncclResult_t
#include <stddef.h>       // defines: size_t

// seed of the polls a non-blocking call stays ncclInProgress (1..max_polls, or enqueued at once one
// time in five); exclusive: a device runs one NCCL kernel at a time (NCCL's warning: two
// communicators' kernels need not fit at once), so a cross-communicator order mismatch deadlocks
void fake_nccl_config(unsigned seed, int max_polls, int exclusive);
// a kernel of us microseconds queued on s (a slow compute stream)
void fake_cuda_delay(cudaStream_t s, long us);
// how many misuses the fake saw (an NCCL call on a communicator still in progress, a use after
// abort or destroy, ranks whose n-th collectives differ — a group's members in another order —, a
// host wait inside an open group; a stream touched before its collective was on it is not one: that
// shows in the results); the first one's description in first
int fake_nccl_violations(char *first, size_t n);
// every communicator on device dev reports r from ncclCommGetAsyncError from now on
void fake_nccl_set_async_error(int dev, ncclResult_t r);

// at the end of the test, every stream destroyed: the communicators and groups (they live until then,
// as queued work may point at an aborted one)
void fake_nccl_free(void);

#endif
