// What the parts of the shim tell each other: the fiber scheduler, the launcher and the runtime
// (private to kernels/cuda/emu).
#ifndef KEMU_IMPL_H
#define KEMU_IMPL_H
// defines: kemu_fibers_run_block, kemu_set_error, kemu_stream_ok, kemu_stream_id, kemu_func_dyn_smem_limit,
//          kemu_check_*, kemu_sched_*, KemuVClock, KemuRecord, kemu_async_block_begin, kemu_async_block_end,
//          KemuNode, KemuNodes, KEMU_CAPTURE_*

// the standard headers before kemu.h, whose dialect macros (__noinline__) they must not see
#include <functional>
#include <memory>
#include <vector>

#include "kemu.h" // defines: kemu::Body

// Runs one block of `block` threads, each calling body(ctx), until all return. shuffle: draw the
// next runnable thread at random from *rng (advanced). Returns 0, -ENOMEM, or -EFAULT with the
// reason in msg when the kernel broke a rule (a barrier not reached by all, a bad mask, ...).
int kemu_fibers_run_block(const dim3 &block, kemu::Body body, void *ctx, int shuffle, uint64_t *rng, char *msg,
			  size_t msg_len);
// the runtime's "last error" (cudaGetLastError returns and clears it); returns e
cudaError_t kemu_set_error(cudaError_t e);
// the null stream, cudaStreamLegacy, cudaStreamPerThread, or one cudaStreamCreate made
bool kemu_stream_ok(cudaStream_t s);
// the scheduler's index of a stream (0: the legacy default stream)
int kemu_stream_id(cudaStream_t s);
// dynamic shared memory a kernel may use: 48 KiB, or what cudaFuncSetAttribute allowed it
size_t kemu_func_dyn_smem_limit(const void *func);

// cp.async (kemu_async.cpp): every thread's queue of copies is empty when a block begins; at its
// end a thread with copies it never waited for fails the launch (-EFAULT, the reason in msg)
void kemu_async_block_begin(unsigned nthreads);
int kemu_async_block_end(char *msg, size_t len);

// The memory checkers (kemu_check.cpp). The runtime names the device memory a kernel may write;
// a launch brackets its blocks (launch_begin holds the checker's lock until launch_end; it returns
// 0 or -ENOMEM); the scheduler reports each barrier and each __syncwarp release.
void kemu_check_alloc(void *p, size_t bytes);
void kemu_check_free(void *p);
int kemu_check_launch_begin(const char *kernel, dim3 grid, dim3 block, void *dyn, size_t dyn_len);
void kemu_check_block_begin(uint64_t linear_block);
void kemu_check_stacks(const void *lo, size_t len); // where the fibers' stacks are
void kemu_check_block_end(void);
void kemu_check_launch_end(void);
void kemu_check_barrier(void);
void kemu_check_syncwarp(unsigned warp);
// ldmatrix reads a row of n bytes of shared memory for the calling lane
void kemu_check_ldmatrix(const void *row, size_t n);

// Asynchronous streams (kemu_sched.cpp). Streams are indices 0..KEMU_NSTREAM-1, 0 the legacy
// default stream. Without KEMU_SCHED_SEED (or kemu_sched) everything runs at once: enqueue runs
// the work and returns its error, the waits return at once. Otherwise the calls return the sticky
// error of an earlier op (cudaSuccess if none) and the work runs later.
enum { KEMU_NSTREAM = 64 };
struct KemuVClock {
	uint64_t c[KEMU_NSTREAM]; // per stream: the last of its ops ordered before
};
struct KemuRecord; // one cudaEventRecord: done when it ran, with the clock it saw
// true when stream work may be deferred: asynchronous streams, or while a stream capture is open
// (a launch or a kgemm then goes through kemu_sched_enqueue, which records it into the capture)
bool kemu_sched_async(void);
int kemu_sched_stream_open(bool blocking); // -1 when all are in use
void kemu_sched_stream_close(int id);      // after its work has run
// lazy: runs only when the host waits for it or queries (a copy into pinned host memory)
cudaError_t kemu_sched_enqueue(int id, const char *name, std::function<cudaError_t()> work, bool lazy = false);
std::shared_ptr<KemuRecord> kemu_sched_record(int id);
cudaError_t kemu_sched_wait(int id, const std::shared_ptr<KemuRecord> &r); // r may be null (never recorded)
cudaError_t kemu_sched_sync_stream(int id);
cudaError_t kemu_sched_sync_record(const std::shared_ptr<KemuRecord> &r);
// ms from a's run to b's: cudaErrorNotReady while either has not run (CUDA's cudaEventElapsedTime)
cudaError_t kemu_sched_elapsed(const std::shared_ptr<KemuRecord> &a, const std::shared_ptr<KemuRecord> &b, float *ms);
double kemu_now_ms(void); // CLOCK_MONOTONIC
cudaError_t kemu_sched_sync_all(void);
cudaError_t kemu_sched_query_stream(int id); // cudaSuccess or cudaErrorNotReady (or the sticky error)
cudaError_t kemu_sched_query_record(const std::shared_ptr<KemuRecord> &r);

// Stream capture (CUDA graphs). Between kemu_sched_capture_begin and _end on a stream, what is
// enqueued on it is recorded as nodes instead of run or queued (an event record there marks the
// event as captured); a graph launch queues the nodes on a stream again, each with the arguments
// of its capture. Capture-mode errors: a call the capturing thread may not make (a host wait on
// the capturing stream or the device, an allocation, a synchronous copy) fails with
// cudaErrorStreamCaptureUnsupported and invalidates the capture; a wait on an event recorded
// outside it with cudaErrorStreamCaptureIsolation; a query or wait of a captured event with
// cudaErrorCapturedEvent. Modelled: one stream per capture (a stream joining a capture through a
// captured event, CUDA's fork/join, is refused as unsupported).
struct KemuNode {
	const char *name;
	std::function<cudaError_t()> work;
	bool lazy;
};
typedef std::vector<KemuNode> KemuNodes;
enum { KEMU_CAPTURE_NONE = 0, KEMU_CAPTURE_ACTIVE, KEMU_CAPTURE_INVALID };
cudaError_t kemu_sched_capture_begin(int id, bool relaxed);
// the nodes (null when the capture was invalidated: cudaErrorStreamCaptureInvalidated)
cudaError_t kemu_sched_capture_end(int id, std::shared_ptr<const KemuNodes> *out);
int kemu_sched_capture_status(int id);
// the calling thread captures (not relaxed): `call` may not be made; its captures are invalidated,
// returns cudaErrorStreamCaptureUnsupported. cudaSuccess when it captures nothing.
cudaError_t kemu_sched_capture_forbid(const char *call);
// invalidates stream id's capture for a call it cannot record; returns e
cudaError_t kemu_sched_capture_refuse(int id, cudaError_t e, const char *why);
// queues the nodes on stream id in order (or records them into its capture), after the last
// launch of the same graph (*last, updated)
cudaError_t kemu_sched_launch_graph(int id, const KemuNodes &nodes, std::shared_ptr<KemuRecord> *last);

// The stream-order checker (kemu_check.cpp): while an op runs, its device-memory accesses (a
// kernel's through the instrumentation, a copy's or a GEMM's as ranges) are checked against the
// last writer and reader of each 4 bytes: one not ordered before (by `vc`) is reported on stderr
// naming both ops, and order_end returns true (the op then fails).
void kemu_check_order_begin(int stream, const KemuVClock *vc, const char *op);
void kemu_check_order_range(const void *p, size_t n, bool write);
bool kemu_check_order_end(void);
// true when p lies in memory from cudaMalloc
bool kemu_check_is_device(const void *p);

#endif
