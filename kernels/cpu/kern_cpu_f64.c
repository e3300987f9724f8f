// The CPU backend's fp64 ops: the same bodies as kern_cpu_f32.c in double precision, so tests
// can check every backward pass against central finite differences without fp32 noise.
#include "kern_cpu.h" // defines: KOMP, kcpu_threads, kcpu_gemm_f64, kcpu_ops_f64

#include <math.h>
#include <string.h>

typedef double real;
#define KS(name) name##_f64
#define KGEMM kcpu_gemm_f64
#define RSQRT sqrt
#define REXP exp
#define RLOG log
#define RERF erf
#define RTANH tanh

#include "kern_cpu_dense.inc"
#include "kern_cpu_embed.inc"
#include "kern_cpu_attn.inc"
#include "kern_cpu_table.inc"
