// FastCLIP hyper-parameters: loss kinds, defaults taken from FastCLIP's code, the per-epoch
// inner-rate (γ) schedule and the temperature learning-rate rule of FastCLIP-v3.
#ifndef TRAINER_FASTCLIP_CONFIG_H
#define TRAINER_FASTCLIP_CONFIG_H
// defines: FastclipKind, FastclipGammaSchedule, FastclipConfig, fastclip_kind_parse,
//          fastclip_kind_name, fastclip_config_default, fastclip_config_check, fastclip_gamma,
//          fastclip_tau_betas, fastclip_tau_lr_rgclg, fastclip_pack_width, fastclip_steps_per_epoch,
//          FASTCLIP_LOG_S_MAX

#include <stdbool.h>
#include <stdint.h> // defines: int64_t

// ln(100): upper clamp of log s = log(1/τ) after each optimizer step (open_clip and FastCLIP)
#define FASTCLIP_LOG_S_MAX 4.605170185988091

typedef enum {
	FASTCLIP_OPENCLIP = 0, // symmetric InfoNCE over the gathered batch, gather-with-gradient
	FASTCLIP_V0,           // GCL, global τ learnable on ∇L
	FASTCLIP_V1,           // GCL, constant global τ
	FASTCLIP_V2,           // RGCL, per-sample τ with its own Adam-style update
	FASTCLIP_V3,           // RGCL-g, global learnable τ, τ LR ×1/3 when τ ≤ 0.03
	FASTCLIP_NKINDS
} FastclipKind;

typedef enum { FASTCLIP_GAMMA_COSINE = 0, FASTCLIP_GAMMA_CONSTANT } FastclipGammaSchedule;

typedef struct {
	FastclipKind kind;
	double gamma_min;          // --gamma-min: γ after the decay (FastCLIP --gamma, default 0.8)
	int gamma_decay_epochs;    // --gamma-decay-epochs (default 10; README: epochs/2)
	FastclipGammaSchedule gamma_schedule;
	double rho;                // ρ (default 8.0)
	double eps;                // ε added to u in the FCCO ratio (default 1e-14)
	double tau_init;           // initial τ: 0.07 global, 0.03 per-sample (v2)
	double lr_tau;             // v2: per-sample τ rate (0.0133); v3: base τ rate (2e-4); v0: peak τ rate on
	                           // the model's schedule, < 0 = the model's --lr (FastCLIP --lr_tau -1)
	double beta1_tau, beta2_tau, eps_tau; // v2 τ update / v3 τ Adam (ViT: 0.9, 0.98, 1e-6)
	double tau_min, tau_max;   // v2 clip (0.01, 1)
	double grad_clamp_tau;     // v2 clamp of the τ gradient (5)
} FastclipConfig;

// "openclip", "fastclip-v0" ... "fastclip-v3"; -EINVAL when unknown
int fastclip_kind_parse(const char *name, FastclipKind *out);
const char *fastclip_kind_name(FastclipKind kind);
// fills *cfg with FastCLIP's code defaults for that kind
void fastclip_config_default(FastclipConfig *cfg, FastclipKind kind);
// -EINVAL when a value is out of its domain
int fastclip_config_check(const FastclipConfig *cfg);

// γ for an epoch: 1.0 in epoch 0; cosine from 1 to γ_min over gamma_decay_epochs; then γ_min
double fastclip_gamma(const FastclipConfig *cfg, int epoch);
// v2's Adam betas for an epoch: 0 in epoch 0 (plain normalized step), the configured ones after
void fastclip_tau_betas(const FastclipConfig *cfg, int epoch, double *beta1, double *beta2);
// v3's τ learning rate (FastCLIP's step_thresh schedule): lr_tau, ×1/3 when τ = exp(-log_s) ≤ 0.03
double fastclip_tau_lr_rgclg(const FastclipConfig *cfg, double log_s);
// floats per sample the local phase produces and the step all-gathers: 2, or 12 for v2, 0 for openclip
int fastclip_pack_width(FastclipKind kind);
// optimizer steps in one epoch as FastCLIP counts it: ceil(train_num_samples / global_batch)
// (>= 1; 0 when train_num_samples < 1, i.e. the run has no epochs and γ stays at epoch 0's)
int64_t fastclip_steps_per_epoch(int64_t train_num_samples, int64_t global_batch);

#endif
