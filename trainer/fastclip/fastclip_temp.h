// The global temperature as a learnable scalar log s = log(1/τ): its Adam step (AdamW without
// weight decay, as FastCLIP's optimizer treats it) and the [0, ln 100] clamp after each step.
#ifndef TRAINER_FASTCLIP_TEMP_H
#define TRAINER_FASTCLIP_TEMP_H
// defines: FastclipTemp, fastclip_temp_init, fastclip_temp_step, fastclip_clamp_log_s

#include <stdint.h> // defines: int64_t

typedef struct {
	double log_s;  // log(1/τ)
	double m, v;   // Adam moments
	int64_t steps; // Adam step count (bias correction)
} FastclipTemp;

// -EINVAL unless tau > 0
int fastclip_temp_init(FastclipTemp *t, double tau);
// one Adam step on log s with gradient grad (already averaged over ranks) and rate lr, then the
// clamp; -EINVAL on a bad argument or a non-finite gradient (state unchanged)
int fastclip_temp_step(FastclipTemp *t, double grad, double lr, double beta1, double beta2, double eps);
double fastclip_clamp_log_s(double log_s);

#endif
