// gpu_facts: what tools/gpu-check.sh reports first: the device, the driver's CUDA version, and
// for the CUDA runtime, cuBLASLt, cuDNN and NCCL the version compiled against, the version loaded
// and the file it was loaded from. Exit 0; 1 when a loaded library's major version is not the one
// compiled against (the program would misbehave, not fail loudly). Runs without a GPU too.
#define _GNU_SOURCE
#include <dlfcn.h>  // defines: dladdr, Dl_info
#include <stdio.h>  // defines: printf, snprintf
#include <string.h> // defines: strcat

#include <cuda_runtime_api.h> // defines: cudaRuntimeGetVersion, cudaDriverGetVersion, cudaGetDeviceProperties
#if HAVE_CUBLAS
#include <cublasLt.h> // defines: cublasLtGetVersion, CUBLAS_VER_MAJOR
#endif
#if HAVE_CUDNN
#include <cudnn.h> // defines: cudnnGetVersion, CUDNN_MAJOR
#endif
#if HAVE_NCCL
#include <nccl.h> // defines: ncclGetVersion, NCCL_MAJOR
#endif

static char summary[512];
static int mismatches;

// the file that holds fn, as the dynamic loader mapped it
static const char *file_of(void *fn)
{
	Dl_info info;
	return dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "?";
}

// one library: its name, the versions compiled against and loaded (major.minor.patch), its file
static void lib_line(const char *name, int hmaj, int hmin, int hpat, int maj, int min, int pat, void *fn)
{
	printf("%-10s %d.%d.%d loaded from %s (compiled against %d.%d.%d)%s\n", name, maj, min, pat, file_of(fn), hmaj,
	       hmin, hpat, maj != hmaj ? "  MAJOR VERSION MISMATCH" : "");
	mismatches += maj != hmaj;
	char part[64];
	snprintf(part, sizeof part, ", %s %d.%d.%d", name, maj, min, pat);
	if (strlen(summary) + strlen(part) < sizeof summary)
		strcat(summary, part);
}

int main(void)
{
	int rt = 0, drv = 0, n = 0;
	cudaRuntimeGetVersion(&rt);
	cudaDriverGetVersion(&drv);
	if (cudaGetDeviceCount(&n) != cudaSuccess)
		n = 0;
	if (n > 0) {
		struct cudaDeviceProp p;
		if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) {
			printf("device     %s, sm_%d%d, %d SMs, %.1f GiB, L2 %d MiB (%d devices)\n", p.name, p.major,
			       p.minor, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, p.l2CacheSize >> 20, n);
			snprintf(summary, sizeof summary, "%s sm_%d%d", p.name, p.major, p.minor);
		}
	} else {
		printf("device     none visible to the CUDA runtime\n");
		snprintf(summary, sizeof summary, "no device");
	}
	char drvs[32] = "no NVIDIA driver loaded";
	if (drv)
		snprintf(drvs, sizeof drvs, "driver CUDA %d.%d", drv / 1000, drv % 1000 / 10);
	printf("driver     %s\n", drvs);
	lib_line("CUDA-rt", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10, 0, rt / 1000, rt % 1000 / 10, 0,
		 (void *)cudaRuntimeGetVersion);
#if HAVE_CUBLAS
	size_t lt = cublasLtGetVersion();
	lib_line("cuBLASLt", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH, (int)(lt / 10000),
		 (int)(lt / 100 % 100), (int)(lt % 100), (void *)cublasLtGetVersion);
#else
	printf("cuBLASLt   not in this build\n");
#endif
#if HAVE_CUDNN
	size_t dn = cudnnGetVersion();
	lib_line("cuDNN", CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL, (int)(dn / 10000), (int)(dn / 100 % 100),
		 (int)(dn % 100), (void *)cudnnGetVersion);
#else
	printf("cuDNN      not in this build (mk/detect.sh found none)\n");
#endif
#if HAVE_NCCL
	int nc = 0;
	ncclGetVersion(&nc);
	lib_line("NCCL", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, nc / 10000, nc / 100 % 100, nc % 100,
		 (void *)ncclGetVersion);
#else
	printf("NCCL       not in this build (mk/detect.sh found none)\n");
#endif
	printf("%s, %s%s\n", summary, drvs, mismatches ? ", a library's major version differs from its header's" : "");
	return mismatches ? 1 : 0;
}
