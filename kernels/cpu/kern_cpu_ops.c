// The CPU backend's model ops: each kern_cpu_*.inc, an op's body over `real` and its entry, built
// here twice; the bodies in float and double, the entries (staging the bf16 arguments) once.
#include "kern_cpu.h" // defines: KOMP, KcStage, kst_*, kcpu_threads, kcpu_gemm_f32, kcpu_gemm_f64, kcpu_*

#include <errno.h>
#include <math.h>
#include <string.h>

// the body of op in the staged compute type
#define RAW(s, op) ((s)->f64 ? op##_f64 : op##_f32)
// runs the body only when staging worked
#define RUN(s, call)                                                                                                   \
	do {                                                                                                           \
		if (!(s)->err)                                                                                         \
			call;                                                                                          \
	} while (0)

// The fp32 bodies: the reference every GPU kernel is checked against and the compute path of CPU
// training. Each .inc writes its bodies once over `real`; KS() names each instantiation.
#define real float
#define KS(name) name##_f32
#define KGEMM kcpu_gemm_f32
#define RSQRT sqrtf
#define REXP expf
#define RLOG logf
#define RERF erff
#define RTANH tanhf
#include "kern_cpu_dense.inc"
#include "kern_cpu_embed.inc"
#include "kern_cpu_mae.inc"
#include "kern_cpu_attn.inc"
#undef real
#undef KS
#undef KGEMM
#undef RSQRT
#undef REXP
#undef RLOG
#undef RERF
#undef RTANH

// The fp64 bodies: the same in double precision, so tests can check every backward pass against
// central finite differences without fp32 noise; after them each .inc's entries (KCPU_ENTRIES),
// which see both instantiations.
#define KCPU_ENTRIES 1
#define real double
#define KS(name) name##_f64
#define KGEMM kcpu_gemm_f64
#define RSQRT sqrt
#define REXP exp
#define RLOG log
#define RERF erf
#define RTANH tanh
#include "kern_cpu_dense.inc"
#include "kern_cpu_embed.inc"
#include "kern_cpu_mae.inc"
#include "kern_cpu_attn.inc"
#undef real
#undef KS
#undef KGEMM
#undef RSQRT
#undef REXP
#undef RLOG
#undef RERF
#undef RTANH
