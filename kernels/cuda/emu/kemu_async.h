// The shim's asynchronous copies into shared memory (cp.async) and its one order-dependent atomic
// (an f32 add): what kernels/cuda/kmma.h's kcp_async_* and katomic_add_f32_unordered run on the CPU.
#ifndef KEMU_ASYNC_H
#define KEMU_ASYNC_H
// defines: kemu::AsyncCopy, kemu::async_check, kemu::async_issue, kemu::async_commit, kemu::async_take,
//          kemu::atomic_add_f32_unordered, KEMU_UNINSTRUMENTED
//
// Model (PTX ISA, "cp.async"): a thread's copies are asynchronous until it waits for their group;
// cp.async.commit_group closes the group of the copies issued since the last one, and
// cp.async.wait_group N returns when at most N of the thread's groups are still pending. Here a
// copy reads its source when it is issued, fills its destination with 0xff bytes (NaN: a read
// before the wait sees garbage, as on a device) and writes the data only when the thread waits for
// its group. Both writes are the issuing thread's, so the racecheck sees the destination as written
// from the issue to the wait: another thread touching it in between, or reading it before a barrier
// that follows the wait, is a race. A thread that returns with copies it never waited for fails the
// launch (the dialect asks for a wait_group 0 before the end). Not modelled: the copy's latency,
// and a source that changes between the issue and the wait.

#include "kemu.h" // defines: kemu::fault, kemu::in_shared, kemu::atomic_access, KEMU_CHECKED

#include <stdint.h>
#include <string.h>

namespace kemu
{

struct AsyncCopy {
	void *dst;
	unsigned n; // 4, 8 or 16 bytes
	alignas(16) unsigned char data[16];
};
// faults unless dst is in this block's shared memory and dst and src are n-byte aligned
void async_check(void *dst, const void *src, unsigned n, const char *file, int line);
// records a copy of the calling thread (its data already read), in the group not yet committed
void async_issue(void *dst, const void *data, unsigned n);
void async_commit();
// the copies of the calling thread's committed groups but the newest `keep`, oldest first (at most
// cap; returns how many): they leave its queue, and the caller writes them
size_t async_take(int keep, AsyncCopy *out, size_t cap);

// atomicAdd on an f32: plain read-modify-write (fibers are never preempted), so the result depends
// on the order blocks and threads run in, which the shim shuffles; not instrumented (an atomic
// conflicts with nothing), but on shared memory its operand must have been written
#if KEMU_CHECKED
#define KEMU_UNINSTRUMENTED __attribute__((no_sanitize_thread))
#else
#define KEMU_UNINSTRUMENTED
#endif
KEMU_UNINSTRUMENTED inline void atomic_add_f32_unordered(float *p, float v)
{
	if (KEMU_CHECKED)
		atomic_access(p, sizeof *p);
	*p += v;
}

} // namespace kemu

#endif
