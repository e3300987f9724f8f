// Checks of CUDA, cuBLAS, cuDNN and NCCL results: programs stop with file:line and a hint
// (llm.c's cudaCheck); library code gets -errno and a message latched in a KErr.
#ifndef KCHECK_H
#define KCHECK_H
// defines: KErr, kerr_set, kerr_clear, kcheck_cuda, kcheck_cublas, kcheck_lib, kcheck_launch, kcheck_launches,
//          kcheck_count_launch, kcheck_capture, kcheck_captured,
//          kcheck_hint_cuda/cublas/cudnn/nccl, kcheck_errno_cuda/cublas/cudnn/nccl,
//          cuda_check, cublas_check, cudnn_check, nccl_check, cuda_try, cublas_try, cudnn_try, nccl_try

#ifdef __cplusplus
extern "C" {
#endif

// The first error wins: later ones are usually its consequences. code is 0 or -errno.
typedef struct KErr {
	int code;
	char msg[512];
} KErr;

// latches (code, message) unless an error is already latched; returns code
int kerr_set(KErr *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void kerr_clear(KErr *e);

// status: a cudaError_t / cublasStatus_t. 0 when it is success; else the error is latched in e
// (what, file:line, the status's name and a hint) and -errno returned; e == NULL prints it and
// exits the program with status 1.
int kcheck_cuda(KErr *e, int status, const char *what, const char *file, int line);
int kcheck_cublas(KErr *e, int status, const char *what, const char *file, int line);
// a launch: status from cudaGetLastError, detail the shim's explanation ("" under nvcc); a
// successful one counts in kcheck_launches
int kcheck_launch(KErr *e, int status, const char *kernel, const char *detail, const char *file, int line);
// device work queued so far by this process: own kernel launches and GEMM calls (kgemm counts
// each call it queued with kcheck_count_launch), a graph launch as one; what a step's launch count
// is read from. Between kcheck_capture(1) and kcheck_capture(0) the calling thread's stream work
// is recorded into a graph, not queued: it counts in kcheck_captured instead.
void kcheck_count_launch(void);
long long kcheck_launches(void);
void kcheck_capture(int on);
long long kcheck_captured(void);
// cuDNN and NCCL: the caller names the status with the library's own function (see the macros),
// so this file does not link either library
int kcheck_lib(KErr *e, int code, const char *name, const char *hint, const char *what, const char *file, int line);

const char *kcheck_hint_cuda(int status);
const char *kcheck_hint_cublas(int status);
const char *kcheck_hint_cudnn(int status);
const char *kcheck_hint_nccl(int status);
int kcheck_errno_cuda(int status);
int kcheck_errno_cublas(int status);
int kcheck_errno_cudnn(int status);
int kcheck_errno_nccl(int status);

#ifdef __cplusplus
}
#endif

// programs and tests: stop at the first failure
#define cuda_check(call) ((void)kcheck_cuda(NULL, (int)(call), #call, __FILE__, __LINE__))
#define cublas_check(call) ((void)kcheck_cublas(NULL, (int)(call), #call, __FILE__, __LINE__))
#define cudnn_check(call) ((void)cudnn_try(NULL, call))
#define nccl_check(call) ((void)nccl_try(NULL, call))

// library code: evaluate to 0 or -errno, the message latched in e (KErr *)
#define cuda_try(e, call) kcheck_cuda((e), (int)(call), #call, __FILE__, __LINE__)
#define cublas_try(e, call) kcheck_cublas((e), (int)(call), #call, __FILE__, __LINE__)
#define cudnn_try(e, call)                                                                                             \
	__extension__({                                                                                                \
		int s_ = (int)(call);                                                                                  \
		s_ ? kcheck_lib((e), kcheck_errno_cudnn(s_), cudnnGetErrorString((cudnnStatus_t)s_),                   \
				kcheck_hint_cudnn(s_), #call, __FILE__, __LINE__)                                      \
		   : 0;                                                                                                \
	})
#define nccl_try(e, call)                                                                                              \
	__extension__({                                                                                                \
		int s_ = (int)(call);                                                                                  \
		s_ ? kcheck_lib((e), kcheck_errno_nccl(s_), ncclGetErrorString((ncclResult_t)s_),                      \
				kcheck_hint_nccl(s_), #call, __FILE__, __LINE__)                                       \
		   : 0;                                                                                                \
	})

#endif
