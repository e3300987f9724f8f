// The part of the CUDA runtime API the kernels' host code uses, for the shim: device memory is
// host memory; streams, events and copies go through the scheduler (kemu_sched.cpp), which runs
// everything at once unless asynchronous streams are on or a stream captures (graphs: kemu_graph.cpp).
#include "kemu_impl.h" // defines: kemu_set_error, kemu_stream_ok, kemu_stream_id, kemu_func_dyn_smem_limit

#include <pthread.h>
#include <stdio.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <new>

enum : uint32_t {
	MAGIC_DEV = 0x6b656d64,
	MAGIC_HOST = 0x6b656d68,
	MAGIC_STREAM = 0x6b656d73,
	MAGIC_EVENT = 0x6b656d65
};
enum { SMEM_DEFAULT = 48 * 1024, SMEM_OPTIN = 227 * 1024, ALLOC_ALIGN = 256 };

struct CUstream_st {
	uint32_t magic;
	int id; // the scheduler's
};
struct CUevent_st {
	uint32_t magic;
	unsigned flags;
	int recorded;
	std::shared_ptr<KemuRecord> rec; // the last record (null: never recorded)
};
struct AllocHead { // in front of every allocation, one alignment unit
	uint32_t magic;
	size_t bytes;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cudaError_t last_error = cudaSuccess;
static struct {
	const void *func;
	int limit;
} smem_optin[256];
static int n_optin;
static std::vector<std::pair<uintptr_t, uintptr_t>> pinned; // cudaMallocHost, cudaHostAlloc, cudaHostRegister

cudaError_t kemu_set_error(cudaError_t e)
{
	if (e != cudaSuccess) {
		pthread_mutex_lock(&lock);
		last_error = e;
		pthread_mutex_unlock(&lock);
	}
	return e;
}

bool kemu_stream_ok(cudaStream_t s)
{
	return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread || s->magic == MAGIC_STREAM;
}

int kemu_stream_id(cudaStream_t s)
{
	return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread ? 0 : s->id;
}

static void pinned_add(const void *p, size_t n)
{
	pthread_mutex_lock(&lock);
	pinned.push_back({(uintptr_t)p, (uintptr_t)p + n});
	pthread_mutex_unlock(&lock);
}

static void pinned_remove(const void *p)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < pinned.size(); i++)
		if (pinned[i].first == (uintptr_t)p) {
			pinned.erase(pinned.begin() + (long)i);
			break;
		}
	pthread_mutex_unlock(&lock);
}

// host memory a copy may use without blocking the caller: page-locked
static bool is_pinned(const void *p, size_t n)
{
	pthread_mutex_lock(&lock);
	bool in = false;
	for (auto &r : pinned)
		in = in || ((uintptr_t)p >= r.first && (uintptr_t)p + n <= r.second);
	pthread_mutex_unlock(&lock);
	return in;
}

size_t kemu_func_dyn_smem_limit(const void *func)
{
	size_t limit = SMEM_DEFAULT;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < n_optin; i++)
		if (smem_optin[i].func == func)
			limit = (size_t)smem_optin[i].limit;
	pthread_mutex_unlock(&lock);
	return limit;
}

// ---- errors ----
cudaError_t cudaGetLastError(void)
{
	pthread_mutex_lock(&lock);
	cudaError_t e = last_error;
	last_error = cudaSuccess;
	pthread_mutex_unlock(&lock);
	return e;
}

cudaError_t cudaPeekAtLastError(void)
{
	return last_error;
}

static const struct {
	cudaError_t e;
	const char *name, *text;
} errors[] = {
	{cudaSuccess, "cudaSuccess", "no error"},
	{cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
	{cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
	{cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
	{cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
	{cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
	{cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
	 "CUDA driver version is insufficient for CUDA runtime version"},
	{cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
	{cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
	{cudaErrorNoKernelImageForDevice, "cudaErrorNoKernelImageForDevice",
	 "no kernel image is available for execution on the device"},
	{cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
	{cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
	{cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
	{cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
	{cudaErrorMisalignedAddress, "cudaErrorMisalignedAddress", "misaligned address"},
	{cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
	{cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
	{cudaErrorIllegalState, "cudaErrorIllegalState", "the operation cannot be performed in the present state"},
	{cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
	 "operation not permitted when stream is capturing"},
	{cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
	 "operation failed due to a previous error during capture"},
	{cudaErrorStreamCaptureMerge, "cudaErrorStreamCaptureMerge",
	 "operation would result in a merge of separate capture sequences"},
	{cudaErrorStreamCaptureUnmatched, "cudaErrorStreamCaptureUnmatched",
	 "capture was not ended in the same stream as it began"},
	{cudaErrorStreamCaptureIsolation, "cudaErrorStreamCaptureIsolation",
	 "dependency created on uncaptured work in another stream"},
	{cudaErrorCapturedEvent, "cudaErrorCapturedEvent",
	 "operation not permitted on an event last recorded in a capturing stream"},
	{cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread",
	 "attempt to terminate a thread-local capture sequence from another thread"},
	{cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const char *cudaGetErrorName(cudaError_t e)
{
	for (const auto &x : errors)
		if (x.e == e)
			return x.name;
	return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t e)
{
	for (const auto &x : errors)
		if (x.e == e)
			return x.text;
	return "unrecognized error code";
}

// ---- device ----
cudaError_t cudaGetDeviceCount(int *count)
{
	if (!count)
		return kemu_set_error(cudaErrorInvalidValue);
	*count = 1;
	return cudaSuccess;
}

cudaError_t cudaSetDevice(int dev)
{
	return dev == 0 ? cudaSuccess : kemu_set_error(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDevice(int *dev)
{
	if (!dev)
		return kemu_set_error(cudaErrorInvalidValue);
	*dev = 0;
	return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
	return kemu_sched_sync_all();
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev)
{
	if (!p || dev != 0)
		return kemu_set_error(p ? cudaErrorInvalidDevice : cudaErrorInvalidValue);
	memset(p, 0, sizeof *p);
	snprintf(p->name, sizeof p->name, "kemu (CPU execution shim, sm_90 limits)");
	p->major = 9;
	p->minor = 0;
	p->totalGlobalMem = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
	p->sharedMemPerBlock = SMEM_DEFAULT;
	p->sharedMemPerBlockOptin = SMEM_OPTIN;
	p->regsPerBlock = 65536;
	p->warpSize = 32;
	p->maxThreadsPerBlock = 1024;
	p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
	p->maxThreadsDim[2] = 64;
	p->maxGridSize[0] = 0x7fffffff;
	p->maxGridSize[1] = p->maxGridSize[2] = 65535;
	p->multiProcessorCount = 1;
	return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int dev)
{
	if (!value || dev != 0)
		return kemu_set_error(value ? cudaErrorInvalidDevice : cudaErrorInvalidValue);
	switch (attr) {
	case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
	case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
	case cudaDevAttrMultiProcessorCount: *value = 1; break;
	case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
	case cudaDevAttrWarpSize: *value = 32; break;
	case cudaDevAttrMaxSharedMemoryPerBlock: *value = SMEM_DEFAULT; break;
	case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = SMEM_OPTIN; break;
	default: return kemu_set_error(cudaErrorNotSupported);
	}
	return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
	if (!func)
		return kemu_set_error(cudaErrorInvalidValue);
	if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
		return cudaSuccess; // carve-out preferences and the like change nothing here
	if (value < 0 || value > SMEM_OPTIN)
		return kemu_set_error(cudaErrorInvalidValue);
	pthread_mutex_lock(&lock);
	int i = 0;
	while (i < n_optin && smem_optin[i].func != func)
		i++;
	cudaError_t e = cudaSuccess;
	if (i < (int)(sizeof smem_optin / sizeof smem_optin[0])) {
		smem_optin[i].func = func;
		smem_optin[i].limit = value;
		n_optin += i == n_optin;
	} else {
		e = cudaErrorMemoryAllocation;
	}
	pthread_mutex_unlock(&lock);
	return kemu_set_error(e);
}

// ---- memory: 256-byte aligned like cudaMalloc, device memory poisoned (NaN bytes) because a
// device's fresh memory is undefined ----
static cudaError_t alloc(void **p, size_t bytes, uint32_t magic)
{
	if (!p)
		return kemu_set_error(cudaErrorInvalidValue);
	if (cudaError_t e = kemu_sched_capture_forbid(magic == MAGIC_DEV ? "cudaMalloc" : "cudaMallocHost"))
		return e; // not a stream op: a graph could not replay it
	*p = nullptr;
	if (bytes == 0)
		return cudaSuccess;
	char *m = (char *)aligned_alloc(ALLOC_ALIGN,
					ALLOC_ALIGN + ((bytes + ALLOC_ALIGN - 1) & ~(size_t)(ALLOC_ALIGN - 1)));
	if (!m)
		return kemu_set_error(cudaErrorMemoryAllocation);
	AllocHead *h = (AllocHead *)m;
	h->magic = magic;
	h->bytes = bytes;
	if (magic == MAGIC_DEV) {
		memset(m + ALLOC_ALIGN, 0xff, bytes);
		kemu_check_alloc(m + ALLOC_ALIGN, bytes);
	} else {
		pinned_add(m + ALLOC_ALIGN, bytes);
	}
	*p = m + ALLOC_ALIGN;
#if defined(__SANITIZE_ADDRESS__)
	// under AddressSanitizer an access past `bytes` is caught, not only past the rounded size
	ASAN_POISON_MEMORY_REGION(m + ALLOC_ALIGN + bytes,
				  ((bytes + ALLOC_ALIGN - 1) & ~(size_t)(ALLOC_ALIGN - 1)) - bytes);
#endif
	return cudaSuccess;
}

static cudaError_t release(void *p, uint32_t magic)
{
	if (!p)
		return cudaSuccess;
	AllocHead *h = (AllocHead *)((char *)p - ALLOC_ALIGN);
	if (((uintptr_t)p & (ALLOC_ALIGN - 1)) || h->magic != magic)
		return kemu_set_error(cudaErrorInvalidValue);
	if (cudaError_t e = kemu_sched_capture_forbid(magic == MAGIC_DEV ? "cudaFree" : "cudaFreeHost"))
		return e;      // it waits for the device
	kemu_sched_sync_all(); // as a device's free: queued work may still use the memory
	if (magic == MAGIC_DEV)
		kemu_check_free(p);
	else
		pinned_remove(p);
	h->magic = 0;
	free(h);
	return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
	return alloc(p, bytes, MAGIC_DEV);
}
cudaError_t cudaFree(void *p)
{
	return release(p, MAGIC_DEV);
}
cudaError_t cudaMallocHost(void **p, size_t bytes)
{
	return alloc(p, bytes, MAGIC_HOST);
}
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags)
{
	return alloc(p, bytes, MAGIC_HOST);
}
cudaError_t cudaFreeHost(void *p)
{
	return release(p, MAGIC_HOST);
}

cudaError_t cudaHostRegister(void *p, size_t bytes, unsigned int flags)
{
	if (!p || !bytes)
		return kemu_set_error(cudaErrorInvalidValue);
	if (cudaError_t e = kemu_sched_capture_forbid("cudaHostRegister"))
		return e;
	pinned_add(p, bytes);
	return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *p)
{
	if (!p)
		return kemu_set_error(cudaErrorInvalidValue);
	if (cudaError_t e = kemu_sched_capture_forbid("cudaHostUnregister"))
		return e;
	kemu_sched_sync_all();
	pinned_remove(p);
	return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
	if (!free_bytes || !total)
		return kemu_set_error(cudaErrorInvalidValue);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	*total = (size_t)sysconf(_SC_PHYS_PAGES) * page;
	*free_bytes = (size_t)sysconf(_SC_AVPHYS_PAGES) * page;
	return cudaSuccess;
}

// A copy is an op of its stream. Page-locked memory is read or written when the copy runs (a D2H
// copy's destination holds poison, 0xff bytes, NaN, until then); pageable memory as CUDA's "API
// synchronization behavior" says: a source is staged when the call is made, a destination is
// written before the call returns. The synchronous cudaMemcpy waits for the copy except from
// pageable memory to the device (it returns once the source is staged) and between device
// buffers (no host synchronization), so work on a non-blocking stream is not ordered after those.
static bool copy_waits(bool src_dev, bool src_pinned, bool dst_dev, bool dst_pinned, bool sync_api)
{
	const bool src_pageable = !src_dev && !src_pinned, dst_pageable = !dst_dev && !dst_pinned;
	if (src_dev && dst_dev)
		return false;
	if (dst_dev)
		return sync_api && src_pinned;
	if (src_dev)
		return sync_api || dst_pageable;
	return sync_api || src_pageable || dst_pageable;
}

static cudaError_t copy(void *dst, const void *src, size_t n, int id, bool sync_api)
{
	std::shared_ptr<char> staged;
	const bool dst_dev = kemu_check_is_device(dst), src_dev = kemu_check_is_device(src);
	const bool src_pinned = !src_dev && is_pinned(src, n), dst_pinned = !dst_dev && is_pinned(dst, n);
	const bool wait = copy_waits(src_dev, src_pinned, dst_dev, dst_pinned, sync_api);
	if (sync_api)
		if (cudaError_t e = kemu_sched_capture_forbid("cudaMemcpy (synchronous)"))
			return e;
	const bool captured = kemu_sched_capture_status(id) != KEMU_CAPTURE_NONE;
	if (captured && ((!src_dev && !src_pinned) || (!dst_dev && !dst_pinned)))
		return kemu_sched_capture_refuse(id, cudaErrorStreamCaptureUnsupported,
						 "cudaMemcpyAsync from or to pageable host memory");
	if (!wait && !src_dev && !src_pinned) {
		staged.reset((char *)malloc(n), free);
		if (!staged)
			return kemu_set_error(cudaErrorMemoryAllocation);
		memcpy(staged.get(), src, n);
	}
	if (!wait && !dst_dev && !captured && kemu_sched_async())
		memset(dst, 0xff, n); // read before the copy has been waited for: poison
	static const char *const names[2][4] = {
		{"cudaMemcpyAsync HtoH", "cudaMemcpyAsync HtoD", "cudaMemcpyAsync DtoH", "cudaMemcpyAsync DtoD"},
		{"cudaMemcpy HtoH", "cudaMemcpy HtoD", "cudaMemcpy DtoH", "cudaMemcpy DtoD"}};
	cudaError_t e = kemu_sched_enqueue(
		id, names[sync_api][2 * src_dev + dst_dev],
		[=]() {
			kemu_check_order_range(src, n, false);
			kemu_check_order_range(dst, n, true);
			memmove(dst, staged ? staged.get() : src, n);
			return cudaSuccess;
		},
		!wait && dst_pinned);
	if (!e && wait)
		e = kemu_sched_sync_record(kemu_sched_record(id));
	return kemu_set_error(e);
}

static cudaError_t copy_args(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
	if ((unsigned)kind > (unsigned)cudaMemcpyDefault)
		return kemu_set_error(cudaErrorInvalidMemcpyDirection);
	if (n && (!dst || !src))
		return kemu_set_error(cudaErrorInvalidValue);
	return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
	cudaError_t e = copy_args(dst, src, n, kind);
	return e || !n ? e : copy(dst, src, n, 0, true);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s)
{
	if (!kemu_stream_ok(s))
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	cudaError_t e = copy_args(dst, src, n, kind);
	return e || !n ? e : copy(dst, src, n, kemu_stream_id(s), false);
}

static cudaError_t fill(void *p, int v, size_t n, int id)
{
	if (n && !p)
		return kemu_set_error(cudaErrorInvalidValue);
	if (!n)
		return cudaSuccess;
	return kemu_set_error(kemu_sched_enqueue(id, "cudaMemsetAsync", [=]() {
		kemu_check_order_range(p, n, true);
		memset(p, v, n);
		return cudaSuccess;
	}));
}

// on the legacy stream, and (device memory) not waited for, as on a device; a synchronous API,
// which a capturing thread may not call
cudaError_t cudaMemset(void *p, int v, size_t n)
{
	if (cudaError_t e = kemu_sched_capture_forbid("cudaMemset (synchronous)"))
		return e;
	return fill(p, v, n, 0);
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
	return kemu_stream_ok(s) ? fill(p, v, n, kemu_stream_id(s)) : kemu_set_error(cudaErrorInvalidResourceHandle);
}

// ---- streams and events: the scheduler's (kemu_sched.cpp) ----
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
	if (!s)
		return kemu_set_error(cudaErrorInvalidValue);
	*s = (cudaStream_t)calloc(1, sizeof(CUstream_st));
	if (!*s)
		return kemu_set_error(cudaErrorMemoryAllocation);
	(*s)->id = kemu_sched_stream_open(!(flags & cudaStreamNonBlocking));
	if ((*s)->id < 0) {
		free(*s);
		*s = nullptr;
		return kemu_set_error(cudaErrorMemoryAllocation);
	}
	(*s)->magic = MAGIC_STREAM;
	return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
	return cudaStreamCreateWithFlags(s, 0);
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	if (!s || !kemu_stream_ok(s) || s == cudaStreamLegacy || s == cudaStreamPerThread)
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	if (kemu_sched_capture_status(s->id) != KEMU_CAPTURE_NONE)
		return kemu_sched_capture_refuse(s->id, cudaErrorStreamCaptureUnsupported, "cudaStreamDestroy");
	kemu_sched_stream_close(s->id); // its queued work runs first, as on a device
	s->magic = 0;
	free(s);
	return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	return kemu_stream_ok(s) ? kemu_sched_sync_stream(kemu_stream_id(s))
				 : kemu_set_error(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
	return kemu_stream_ok(s) ? kemu_sched_query_stream(kemu_stream_id(s))
				 : kemu_set_error(cudaErrorInvalidResourceHandle);
}

static bool event_ok(cudaEvent_t e)
{
	return e && e->magic == MAGIC_EVENT;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
	if (!e)
		return kemu_set_error(cudaErrorInvalidValue);
	*e = new (std::nothrow) CUevent_st();
	if (!*e)
		return kemu_set_error(cudaErrorMemoryAllocation);
	(*e)->magic = MAGIC_EVENT;
	(*e)->flags = flags;
	return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
	return cudaEventCreateWithFlags(e, 0);
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	if (!event_ok(e))
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	e->magic = 0;
	delete e;
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	if (!event_ok(e) || !kemu_stream_ok(s))
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	e->recorded = 1;
	e->rec = kemu_sched_record(kemu_stream_id(s));
	return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	return event_ok(e) ? kemu_sched_sync_record(e->rec) : kemu_set_error(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
	return event_ok(e) ? kemu_sched_query_record(e->rec) : kemu_set_error(cudaErrorInvalidResourceHandle);
}

// waits for the record that is the event's last now: a later record does not change what it waits for
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
	if (!kemu_stream_ok(s) || !event_ok(e))
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	return kemu_sched_wait(kemu_stream_id(s), e->rec);
}

// the host clock between the records' runs (not ready while either waits): the shim does not model device time
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
	if (!ms)
		return kemu_set_error(cudaErrorInvalidValue);
	if (!event_ok(a) || !event_ok(b) || ((a->flags | b->flags) & cudaEventDisableTiming))
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	if (!a->recorded || !b->recorded)
		return kemu_set_error(cudaErrorInvalidResourceHandle);
	cudaError_t e = kemu_sched_elapsed(a->rec, b->rec, ms);
	return e == cudaSuccess || e == cudaErrorNotReady ? e : kemu_set_error(e);
}
