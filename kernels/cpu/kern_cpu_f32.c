// The CPU backend's fp32 ops: the reference every GPU kernel is checked against and the
// compute path of CPU training. Op bodies are in kern_cpu_*.inc, shared with the f64 build.
#include "kern_cpu.h" // defines: KOMP, kcpu_threads, kcpu_gemm_f32, kcpu_ops_f32

#include <math.h>
#include <string.h>

typedef float real;
#define KS(name) name##_f32
#define KGEMM kcpu_gemm_f32
#define RSQRT sqrtf
#define REXP expf
#define RLOG logf
#define RERF erff
#define RTANH tanhf

#include "kern_cpu_dense.inc"
#include "kern_cpu_embed.inc"
#include "kern_cpu_attn.inc"
#include "kern_cpu_table.inc"
