// trainer/fastclip: the FastCLIP and OpenCLIP losses of a data-parallel step (the one public header
// of this folder): hyper-parameters and their flags, and the exchange on device buffers that turns
// this rank's features into its loss and feature gradients through the loss ops of kernels/.
#ifndef TRAINER_FASTCLIP_H
#define TRAINER_FASTCLIP_H
// defines: FastclipKind, FastclipGammaSchedule, FastclipConfig, fastclip_kind_parse,
//          fastclip_kind_name, fastclip_config_default, fastclip_config_check, fastclip_gamma,
//          fastclip_tau_betas, fastclip_tau_lr_rgclg, fastclip_learns_global_tau, fastclip_uses_table,
//          fastclip_tau_base_lr, fastclip_tau_scheduled, fastclip_temp_hyper, fastclip_pack_width, fastclip_steps_per_epoch,
//          FASTCLIP_LOG_S_MAX,
//          fastclip_flag_set, fastclip_flag_table, fastclip_flags_help, fastclip_config_describe, FastclipExchange,
//          fastclip_exchange_create, fastclip_exchange_free, fastclip_exchange_run, fastclip_exchange_de1,
//          fastclip_exchange_de2, fastclip_exchange_table, fastclip_fcco_params

#include <stdbool.h>
#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t

#include "comm.h"     // defines: Comm
#include "flags.h"    // defines: FlagSpec
#include "kern_ops.h" // defines: KernCtx, KTensor, KFccoParams

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
	double gamma_min;       // --gamma-min: γ after the decay (FastCLIP --gamma, default 0.8)
	int gamma_decay_epochs; // --gamma-decay-epochs (default 10; README: epochs/2)
	FastclipGammaSchedule gamma_schedule;
	double rho;      // ρ (default 8.0)
	double eps;      // ε added to u in the FCCO ratio (default 1e-14)
	double tau_init; // initial τ: 0.07 global, 0.03 per-sample (v2)
	double lr_tau;   // v2: per-sample τ rate (0.0133); v3: base τ rate (2e-4); v0: peak τ rate on
			 // the model's schedule, < 0 = the model's --lr (FastCLIP --lr_tau -1)
	double beta1_tau, beta2_tau, eps_tau; // v2 τ update / v3 τ Adam (ViT: 0.9, 0.98, 1e-6)
	double tau_min, tau_max;              // v2 clip (0.01, 1)
	double grad_clamp_tau;                // v2 clamp of the τ gradient (5)
	int upstream_reset;                   // --fastclip-upstream-reset: FastCLIP's bad-u rule exactly (KFccoParams)
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
// whether the loss learns the global τ with its own Adam step (v0, v3): logit_scale is then not the
// optimizer's to update, but in its clipped gradient norm
int fastclip_learns_global_tau(FastclipKind kind);
// whether the loss keeps per-sample estimators in a table of one row per dataset sample (every
// FastCLIP kind; not openclip)
int fastclip_uses_table(FastclipKind kind);
// The global τ's rate (FastCLIP main.py, the logit_scale group) before any schedule: v3's lr_tau
// (×1/3 below τ 0.03 is decided on the device, fastclip_temp_hyper), v0's lr_tau or, when it is
// < 0, the model's model_lr; 0 when τ is not learned. fastclip_tau_scheduled: whether the rate
// follows the model's warmup + cosine (v0's cosine_lr) or stays constant (v3's step_thresh).
double fastclip_tau_base_lr(const FastclipConfig *cfg, double model_lr);
int fastclip_tau_scheduled(FastclipKind kind);
// kern_temp_step's hyper-parameters for the global τ's update number step (1 on the first) at
// rate lr: the loss's Adam betas and ε, v3's rate ÷3 once τ ≤ 0.03, log s clamped to [0, ln 100]
KTempStep fastclip_temp_hyper(const FastclipConfig *cfg, double lr, int64_t step);
// floats per sample the local phase produces and the step all-gathers: 2, or 12 for v2, 0 for openclip
int fastclip_pack_width(FastclipKind kind);
// optimizer steps in one epoch as FastCLIP counts it: ceil(train_num_samples / global_batch)
// (>= 1; 0 when train_num_samples < 1, i.e. the run has no epochs and γ stays at epoch 0's)
int64_t fastclip_steps_per_epoch(int64_t train_num_samples, int64_t global_batch);
// the loss ops' parameters of a FastCLIP kind for an epoch (γ, v2's τ update and betas)
KFccoParams fastclip_fcco_params(const FastclipConfig *cfg, int epoch);

// ---- flags: a table (name, bounds, default, help) ----
// name without "--" ("gamma-min"). Choose the kind first (fastclip_kind_parse on --loss, then
// fastclip_config_default), since it sets kind-dependent defaults. -ENOENT for an unknown name,
// -EINVAL for a value that does not parse, -ERANGE for one outside the flag's bounds.
int fastclip_flag_set(FastclipConfig *cfg, const char *name, const char *value);
// the table itself (common/flags.h), n entries: what fastclip_flag_set sets
const FlagSpec *fastclip_flag_table(int *n);
// "  --gamma-min NUM   γ after the decay [0.0001, 1] (default 0.8)\n" ...; returns snprintf's count
int fastclip_flags_help(char *buf, size_t len);
// "loss=fastclip-v3 gamma-min=0.8 ..." (every flag's effective value)
int fastclip_config_describe(const FastclipConfig *cfg, char *buf, size_t len);

// ---- the exchange of one step on device buffers (DESIGN §7 steps 2-4) ----
// FastCLIP: all-gather the features (no gradient) and the sample ids, the local phase (g, u,
// v2's τ) for this rank's anchors, all-gather the packs and write them into this rank's replica of
// the per-sample table, then the surrogate, whose backward is purely local.
// OpenCLIP: all-gather the features, the gathered InfoNCE, and a sum reduce-scatter of the gathered
// copies' gradients (gather-with-gradient).
// Everything is queued on the caller's stream; with NCCL nothing waits, with the shm backend the
// host waits only where a collective needs the stream's work done (never on the CPU backend).
typedef struct FastclipExchange FastclipExchange;

// B rows of width d per rank in dtype act (the features' storage), n table rows (dataset samples;
// unused by openclip). Reserves the loss ops' workspace on ctx and starts the table (u at 0, v2's τ
// at tau_init). Every rank must use the same cfg, B and d. -EINVAL, -ENOMEM.
int fastclip_exchange_create(FastclipExchange **out, const FastclipConfig *cfg, Comm *comm, KernCtx *ctx, int B, int d,
			     KDtype act, int64_t n);
void fastclip_exchange_free(FastclipExchange *x);
// After the forward pass queued e1, e2 (B, d) on stream, for samples ids (B) I64 (FastCLIP kinds)
// at the temperature log_s (1) f32: writes loss (1) f32 (this rank's surrogate, or its local
// InfoNCE over the gathered batch for openclip), the feature gradients de1/de2 and dlog_s (1) ACT
// (= dL/dlog s of this rank; 0 where τ is not learned). epoch drives γ. A comm failure is
// returned as is (comm_error says why).
int fastclip_exchange_run(FastclipExchange *x, KernCtx *stream, const KTensor *e1, const KTensor *e2,
			  const KTensor *ids, const KTensor *log_s, int epoch, KTensor *loss, KTensor *dlog_s);
// (B, d) f32: dL/de1, dL/de2 of this rank's loss after the last run
const KTensor *fastclip_exchange_de1(const FastclipExchange *x);
const KTensor *fastclip_exchange_de2(const FastclipExchange *x);
// the per-sample table (n, kern_fcco_table_width) f32 of this rank's replica; NULL for openclip
KTensor *fastclip_exchange_table(FastclipExchange *x);

#endif
