// loaderd --bench --for MODEL@MFU: the loader cores one GPU needs to feed a trainer model preset
// at a given MFU, from the per-core rate the bench measured and the model's FLOPs per clip.
#ifndef LOADERD_LD_CORES_H
#define LOADERD_LD_CORES_H
// defines: LdGpuPeak, LD_GPU_PEAKS, ld_gpu_peaks, LdFor, ld_for_parse, ld_gpu_clips_per_s, ld_cores_needed, ld_cores_print

#include <stddef.h>
#include <stdio.h>

// a GPU's bf16 dense tensor-core peak, as its datasheet states it
typedef struct {
	const char *name;
	double tflops;
} LdGpuPeak;
enum { LD_GPU_PEAKS = 3 };
extern const LdGpuPeak ld_gpu_peaks[LD_GPU_PEAKS]; // H200, H100, A100 (SXM)

typedef struct {
	char model[32];   // a model preset name
	double mfu;       // (0, 1]
	int frames, side; // the clip the model is given: T frames of side x side
	double flops;     // model FLOPs of one training clip: 3x model_flops_per_sample (backward 2x)
} LdFor;

// Parses "MODEL@MFU" for clips of T x h x w: the preset must exist, MFU be a number in (0, 1], the
// clip square and fit the model (its side a multiple of the patch). 0, or -1 with a reason in err.
int ld_for_parse(const char *spec, int T, int h, int w, LdFor *f, char *err, size_t errlen);
// clips/s one GPU of tflops trains at f's MFU
double ld_gpu_clips_per_s(const LdFor *f, double tflops);
// loader cores that GPU needs at per_core clips/s per core (fractional; callers round up)
double ld_cores_needed(const LdFor *f, double tflops, double per_core);
// "H200: N cores at T=4 (...)" for each of ld_gpu_peaks, after a line naming the figures used
void ld_cores_print(FILE *out, const LdFor *f, double per_core);

#endif
