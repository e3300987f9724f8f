// Cores per GPU for loaderd --bench --for: clips/s a GPU trains = peak x MFU / FLOPs per training
// clip, the FLOPs from model's own count (model_flops_per_sample on the preset, sized to the
// bench's clip), so the loader and the trainer's MFU column share one formula.
#include "ld_cores.h" // defines: ld_for_parse, ld_cores_needed, ld_cores_print

#include "model.h" // defines: ModelConfig, model_config_preset, model_config_check, model_flops_per_sample

#include <math.h>
#include <stdlib.h>
#include <string.h>

// NVIDIA's datasheets, bf16 tensor-core dense (without sparsity): A100 SXM 312 TFLOP/s, H100 SXM
// 989, H200 SXM 989 (the H100's compute with more and faster memory)
const LdGpuPeak ld_gpu_peaks[LD_GPU_PEAKS] = {{"H200", 989}, {"H100", 989}, {"A100", 312}};

int ld_for_parse(const char *spec, int T, int h, int w, LdFor *f, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	const char *at = strchr(spec, '@');
	if (!at || at == spec || (size_t)(at - spec) >= sizeof(f->model)) {
		snprintf(err, errlen, "--for: '%s' is not MODEL@MFU (e.g. vit-b16@0.4)", spec);
		return -1;
	}
	memcpy(f->model, spec, (size_t)(at - spec));
	char *end;
	f->mfu = strtod(at + 1, &end);
	if (end == at + 1 || *end || !(f->mfu > 0 && f->mfu <= 1)) {
		snprintf(err, errlen, "--for: MFU '%s' is not a fraction in (0, 1] (0.4 for 40%%)", at + 1);
		return -1;
	}
	ModelConfig c;
	if (model_config_preset(&c, f->model) != 0) {
		snprintf(err, errlen,
			 "--for: no model preset '%s' (tiny | vit-s16 | vit-b16 | vit-l14, as the trainer's --model)",
			 f->model);
		return -1;
	}
	if (h != w) {
		snprintf(err, errlen, "--for: the model takes square frames; --bench-clip is %dx%dx%d", T, h, w);
		return -1;
	}
	c.frames = T, c.image_size = h;
	char why[160];
	if (model_config_check(&c, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "--for: %s does not take %dx%dx%d clips: %s", f->model, T, h, w, why);
		return -1;
	}
	f->frames = T, f->side = h;
	f->flops = 3 * model_flops_per_sample(&c);
	return 0;
}

double ld_gpu_clips_per_s(const LdFor *f, double tflops)
{
	return tflops * 1e12 * f->mfu / f->flops;
}

double ld_cores_needed(const LdFor *f, double tflops, double per_core)
{
	return per_core > 0 ? ld_gpu_clips_per_s(f, tflops) / per_core : INFINITY;
}

void ld_cores_print(FILE *out, const LdFor *f, double per_core)
{
	fprintf(out,
		"cores per GPU for %s at %.0f%% MFU on %dx%dx%d clips: %.1f GFLOP per training clip (3x the forward of "
		"model's count); bf16 dense peaks from the datasheets:",
		f->model, 100 * f->mfu, f->frames, f->side, f->side, f->flops / 1e9);
	for (int i = 0; i < LD_GPU_PEAKS; i++)
		fprintf(out, "%s %s %.0f", i ? "," : "", ld_gpu_peaks[i].name, ld_gpu_peaks[i].tflops);
	fprintf(out, " TFLOP/s (SXM)\n");
	for (int i = 0; i < LD_GPU_PEAKS; i++) {
		double n = ld_cores_needed(f, ld_gpu_peaks[i].tflops, per_core);
		fprintf(out, "%s: %.0f cores at T=%d (%.0f clips/s per GPU / %.1f clips/s per core = %.2f)\n",
			ld_gpu_peaks[i].name, ceil(n - 1e-9), f->frames, ld_gpu_clips_per_s(f, ld_gpu_peaks[i].tflops),
			per_core, n);
	}
}
