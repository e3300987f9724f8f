// Names, hints and errno values for CUDA, cuBLAS, cuDNN and NCCL results, and the latch that
// keeps the first error's message for the context (kcheck.h).
#include "kcheck.h" // defines: KErr, kcheck_*

#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

int kerr_set(KErr *e, int code, const char *fmt, ...)
{
	if (!e || e->code)
		return code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	e->code = code;
	return code;
}

void kerr_clear(KErr *e)
{
	e->code = 0;
	e->msg[0] = 0;
}

static int report(KErr *e, int code, const char *what, const char *name, const char *hint, const char *file, int line)
{
	if (!e) {
		fprintf(stderr, "%s:%d: %s failed: %s\n  hint: %s\n", file, line, what, name, hint);
		exit(1);
	}
	return kerr_set(e, code, "%s:%d: %s failed: %s (%s)", file, line, what, name, hint);
}

const char *kcheck_hint_cuda(int s)
{
	switch ((cudaError_t)s) {
	case cudaErrorMemoryAllocation:
		return "the GPU is out of memory: lower --batch-size, or look for other processes in nvidia-smi";
	case cudaErrorNoDevice: return "no GPU is visible: check nvidia-smi and CUDA_VISIBLE_DEVICES";
	case cudaErrorInvalidDevice: return "no such device ordinal: check CUDA_VISIBLE_DEVICES and the rank's device";
	case cudaErrorInsufficientDriver:
		return "the NVIDIA driver is older than the CUDA toolkit this was built with: update the driver";
	case cudaErrorNoKernelImageForDevice:
		return "this GPU's architecture is not compiled in: rebuild with CUDA_ARCH covering it";
	case cudaErrorInvalidConfiguration:
		return "block or grid dimensions out of range: check the launch configuration";
	case cudaErrorLaunchOutOfResources:
		return "too many registers or threads per block for this kernel: smaller blocks or __launch_bounds__";
	case cudaErrorIllegalAddress:
	case cudaErrorMisalignedAddress:
		return "a kernel accessed memory out of bounds or misaligned: run it under compute-sanitizer "
		       "(tools/gpu-check.sh) or through the CPU shim (make test)";
	case cudaErrorLaunchFailure:
		return "the kernel faulted: run it under compute-sanitizer, or through the CPU shim (make test), "
		       "which names the rule it broke";
	case cudaErrorInvalidValue:
		return "an invalid argument: a NULL pointer, a size, or dynamic shared memory above 48 KiB "
		       "without cudaFuncSetAttribute";
	case cudaErrorInvalidResourceHandle:
		return "a stream or event used after it was destroyed, or on another device";
	case cudaErrorNotSupported: return "the device or driver does not support this operation";
	case cudaErrorStreamCaptureUnsupported:
	case cudaErrorStreamCaptureInvalidated:
	case cudaErrorStreamCaptureIsolation:
	case cudaErrorStreamCaptureMerge:
	case cudaErrorStreamCaptureImplicit:
	case cudaErrorCapturedEvent:
		return "a call a CUDA graph cannot record (a host wait, an allocation, a synchronous copy, a wait on "
		       "work outside the graph) while the stream was captured: run with --no-cuda-graph and report it";
	default: return "an earlier asynchronous error may surface here: check with CUDA_LAUNCH_BLOCKING=1";
	}
}

int kcheck_errno_cuda(int s)
{
	switch ((cudaError_t)s) {
	case cudaSuccess: return 0;
	case cudaErrorMemoryAllocation: return -ENOMEM;
	case cudaErrorNoDevice:
	case cudaErrorInvalidDevice: return -ENODEV;
	case cudaErrorInsufficientDriver:
	case cudaErrorNoKernelImageForDevice:
	case cudaErrorNotSupported: return -ENOTSUP;
	case cudaErrorStreamCaptureUnsupported:
	case cudaErrorStreamCaptureInvalidated:
	case cudaErrorStreamCaptureIsolation:
	case cudaErrorStreamCaptureMerge:
	case cudaErrorStreamCaptureImplicit:
	case cudaErrorStreamCaptureUnmatched:
	case cudaErrorStreamCaptureWrongThread:
	case cudaErrorCapturedEvent: return -EPERM; // not permitted while a stream captures
	case cudaErrorInvalidValue:
	case cudaErrorInvalidConfiguration:
	case cudaErrorInvalidResourceHandle:
	case cudaErrorInvalidMemcpyDirection: return -EINVAL;
	default: return -EIO;
	}
}

int kcheck_cuda(KErr *e, int s, const char *what, const char *file, int line)
{
	if (s == cudaSuccess)
		return 0;
	char name[160];
	snprintf(name, sizeof name, "%s (%s)", cudaGetErrorName((cudaError_t)s), cudaGetErrorString((cudaError_t)s));
	return report(e, kcheck_errno_cuda(s), what, name, kcheck_hint_cuda(s), file, line);
}

static atomic_llong launches, captured;
static _Thread_local int capturing; // the backend captures this thread's stream work into a graph

void kcheck_count_launch(void)
{
	atomic_fetch_add_explicit(capturing ? &captured : &launches, 1, memory_order_relaxed);
}

long long kcheck_launches(void)
{
	return atomic_load_explicit(&launches, memory_order_relaxed);
}

void kcheck_capture(int on)
{
	capturing = on;
}

long long kcheck_captured(void)
{
	return atomic_load_explicit(&captured, memory_order_relaxed);
}

int kcheck_launch(KErr *e, int s, const char *kernel, const char *detail, const char *file, int line)
{
	if (s == cudaSuccess) {
		kcheck_count_launch();
		return 0;
	}
	char what[200], name[400];
	snprintf(what, sizeof what, "launch of %s", kernel);
	int shim = detail && *detail; // the CPU shim explains what the kernel did wrong
	snprintf(name, sizeof name, "%s (%s)%s%s", cudaGetErrorName((cudaError_t)s), cudaGetErrorString((cudaError_t)s),
		 shim ? ": " : "", shim ? detail : "");
	const char *hint = shim && s == cudaErrorLaunchFailure
				   ? "the kernel broke a rule of the kernel dialect (kernels/cuda/emu/README.md)"
				   : kcheck_hint_cuda(s);
	return report(e, kcheck_errno_cuda(s), what, name, hint, file, line);
}

// cublasStatus_t values are part of cuBLAS's ABI (cublas_api.h)
static const char *cublas_name(int s)
{
	switch (s) {
	case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
	case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
	case 7: return "CUBLAS_STATUS_INVALID_VALUE";
	case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
	case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
	case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
	case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
	case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
	case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
	default: return "CUBLAS_STATUS_(unknown)";
	}
}

const char *kcheck_hint_cublas(int s)
{
	switch (s) {
	case 1: return "the cuBLASLt handle is not initialized: check the CUDA context and device";
	case 3: return "out of GPU memory for cuBLAS's workspace or descriptors";
	case 7:
		return "an unsupported shape, leading dimension or alignment (leading dimension >= rows; bf16 "
		       "tensor-core paths want 16-byte aligned pointers and leading dimensions divisible by 8)";
	case 8: return "the GPU lacks a feature this call needs (bf16 needs sm_80 or newer)";
	case 13: return "the GEMM kernel failed to run: look for an earlier CUDA error, then compute-sanitizer";
	case 14: return "cuBLAS internal error: often an earlier asynchronous CUDA error surfacing here";
	case 15: return "no cuBLASLt algorithm for this combination of types, transposes and epilogue";
	default: return "see the cuBLAS documentation for this status";
	}
}

int kcheck_errno_cublas(int s)
{
	switch (s) {
	case 0: return 0;
	case 3: return -ENOMEM;
	case 7: return -EINVAL;
	case 8:
	case 15: return -ENOTSUP;
	default: return -EIO;
	}
}

int kcheck_cublas(KErr *e, int s, const char *what, const char *file, int line)
{
	if (s == 0)
		return 0;
	return report(e, kcheck_errno_cublas(s), what, cublas_name(s), kcheck_hint_cublas(s), file, line);
}

// cuDNN 9 groups its status codes by thousands: 1xxx setup, 2xxx bad parameter, 3xxx not
// supported, 4xxx internal, 5xxx execution failed (cudnn_graph.h)
const char *kcheck_hint_cudnn(int s)
{
	switch (s / 1000) {
	case 1: return "cuDNN is not initialized or its sub-libraries do not match: check the cuDNN 9 install";
	case 2: return "a bad parameter: a NULL or misaligned pointer, a shape or stride the graph rejects";
	case 3: return "cuDNN has no engine for this graph, shape, type or GPU: use the own kernel instead";
	case 4: return "cuDNN internal error (often out of host or device memory)";
	case 5: return "a cuDNN kernel failed: look for an earlier CUDA error, then compute-sanitizer";
	default: return "see the cuDNN documentation for this status";
	}
}

int kcheck_errno_cudnn(int s)
{
	switch (s / 1000) {
	case 0: return s ? -EIO : 0;
	case 2: return -EINVAL;
	case 3: return -ENOTSUP;
	default: return -EIO;
	}
}

// ncclResult_t (nccl.h): 1 unhandled CUDA error, 2 system, 3 internal, 4 invalid argument,
// 5 invalid usage, 6 remote error, 7 in progress (non-blocking communicators)
const char *kcheck_hint_nccl(int s)
{
	switch (s) {
	case 1: return "a CUDA call inside NCCL failed: rerun with NCCL_DEBUG=WARN";
	case 2:
		return "a system call failed (shared memory, sockets): check /dev/shm's size, rerun with NCCL_DEBUG=INFO";
	case 3: return "NCCL internal error: rerun with NCCL_DEBUG=INFO";
	case 4: return "an invalid argument: count, datatype, root, or a pointer that is not device memory";
	case 5: return "NCCL used wrongly: ranks disagree on the sequence of calls, or the communicator was aborted";
	case 6: return "a remote rank failed or the network dropped: check the other ranks' logs";
	case 7: return "the operation is still in progress on a non-blocking communicator: poll ncclCommGetAsyncError";
	default: return "see the NCCL documentation for this result";
	}
}

int kcheck_errno_nccl(int s)
{
	switch (s) {
	case 0: return 0;
	case 4:
	case 5: return -EINVAL;
	case 6: return -ECONNRESET;
	case 7: return -EINPROGRESS;
	default: return -EIO;
	}
}

int kcheck_lib(KErr *e, int code, const char *name, const char *hint, const char *what, const char *file, int line)
{
	return report(e, code, what, name, hint, file, line);
}
