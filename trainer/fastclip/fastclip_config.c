// FastCLIP hyper-parameter defaults and schedules. Every default below is the value in
// Optimization-AI/fast_clip @efd89d5 (src/training/params.py, README training scripts).
#include "fastclip.h" // defines: FastclipConfig, fastclip_gamma, ...

#include <errno.h>  // defines: EINVAL
#include <math.h>   // defines: cos, exp, isfinite, M_PI
#include <string.h> // defines: strcmp

static const char *const kind_names[FASTCLIP_NKINDS] = {
	"openclip", "fastclip-v0", "fastclip-v1", "fastclip-v2", "fastclip-v3",
};

int fastclip_kind_parse(const char *name, FastclipKind *out)
{
	if (!name || !out)
		return -EINVAL;
	for (int k = 0; k < FASTCLIP_NKINDS; k++) {
		if (strcmp(name, kind_names[k]) == 0) {
			*out = (FastclipKind)k;
			return 0;
		}
	}
	return -EINVAL;
}

const char *fastclip_kind_name(FastclipKind kind)
{
	return (unsigned)kind < FASTCLIP_NKINDS ? kind_names[kind] : "unknown";
}

void fastclip_config_default(FastclipConfig *cfg, FastclipKind kind)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->kind = kind;
	cfg->gamma_min = 0.8;                              // params.py --gamma
	cfg->gamma_decay_epochs = 10;                      // params.py --gamma_decay_epochs
	cfg->gamma_schedule = FASTCLIP_GAMMA_COSINE;       // params.py --gamma_schedule
	cfg->rho = 8.0;                                    // params.py --rho
	cfg->eps = 1e-14;                                  // params.py --fastclip_eps
	cfg->tau_init = kind == FASTCLIP_V2 ? 0.03 : 0.07; // README v2 script --temperature 0.03; params.py 0.07
	// README v2 / v3 (CC3M) scripts; v0: main.py sets a negative --lr_tau to the model's lr
	cfg->lr_tau = kind == FASTCLIP_V2 ? 0.0133 : kind == FASTCLIP_V0 ? -1.0 : 2e-4;
	cfg->beta1_tau = 0.9; // params.py get_default_params("vit")
	cfg->beta2_tau = 0.98;
	cfg->eps_tau = 1e-6;
	cfg->tau_min = 0.01; // loss.py FastCLIPLossIndividual
	cfg->tau_max = 1.0;
	cfg->grad_clamp_tau = 5.0;
}

int fastclip_config_check(const FastclipConfig *cfg)
{
	if (!cfg || (unsigned)cfg->kind >= FASTCLIP_NKINDS)
		return -EINVAL;
	if (!(cfg->gamma_min > 0.0 && cfg->gamma_min <= 1.0) || cfg->gamma_decay_epochs < 1)
		return -EINVAL;
	if (cfg->gamma_schedule != FASTCLIP_GAMMA_COSINE && cfg->gamma_schedule != FASTCLIP_GAMMA_CONSTANT)
		return -EINVAL;
	if (!isfinite(cfg->rho) || !(cfg->eps >= 0.0) || !(cfg->tau_init > 0.0) ||
	    !(cfg->lr_tau >= 0.0 || (cfg->kind == FASTCLIP_V0 && cfg->lr_tau == -1.0)))
		return -EINVAL;
	if (!(cfg->beta1_tau >= 0.0 && cfg->beta1_tau < 1.0) || !(cfg->beta2_tau >= 0.0 && cfg->beta2_tau < 1.0))
		return -EINVAL;
	if (!(cfg->eps_tau > 0.0) || !(cfg->tau_min > 0.0 && cfg->tau_min < cfg->tau_max) ||
	    !(cfg->grad_clamp_tau > 0.0))
		return -EINVAL;
	return 0;
}

double fastclip_gamma(const FastclipConfig *cfg, int epoch)
{
	if (epoch <= 0)
		return 1.0;
	if (epoch >= cfg->gamma_decay_epochs || cfg->gamma_schedule == FASTCLIP_GAMMA_CONSTANT)
		return cfg->gamma_min;
	return 0.5 * (1.0 + cos(M_PI * epoch / cfg->gamma_decay_epochs)) * (1.0 - cfg->gamma_min) + cfg->gamma_min;
}

void fastclip_tau_betas(const FastclipConfig *cfg, int epoch, double *beta1, double *beta2)
{
	*beta1 = epoch > 0 ? cfg->beta1_tau : 0.0;
	*beta2 = epoch > 0 ? cfg->beta2_tau : 0.0;
}

// v3's step_thresh: the τ rate is divided by this once τ is at or below the threshold
static const double V3_TAU_LOW = 0.03, V3_LR_DIV = 3.0;

double fastclip_tau_lr_rgclg(const FastclipConfig *cfg, double log_s)
{
	return exp(-log_s) <= V3_TAU_LOW ? cfg->lr_tau / V3_LR_DIV : cfg->lr_tau;
}

int fastclip_learns_global_tau(FastclipKind kind)
{
	return kind == FASTCLIP_V0 || kind == FASTCLIP_V3;
}

int fastclip_uses_table(FastclipKind kind)
{
	return kind != FASTCLIP_OPENCLIP;
}

double fastclip_tau_base_lr(const FastclipConfig *cfg, double model_lr)
{
	if (cfg->kind == FASTCLIP_V3)
		return cfg->lr_tau;
	if (cfg->kind == FASTCLIP_V0)
		return cfg->lr_tau < 0 ? model_lr : cfg->lr_tau;
	return 0.0;
}

int fastclip_tau_scheduled(FastclipKind kind)
{
	return kind == FASTCLIP_V0;
}

KTempStep fastclip_temp_hyper(const FastclipConfig *cfg, double lr, int64_t step)
{
	const int v3 = cfg->kind == FASTCLIP_V3;
	return (KTempStep){.lr = lr,
			   .lr_low = v3 ? lr / V3_LR_DIV : lr,
			   .tau_low = v3 ? V3_TAU_LOW : 0.0,
			   .beta1 = cfg->beta1_tau,
			   .beta2 = cfg->beta2_tau,
			   .eps = cfg->eps_tau,
			   .step = step,
			   .lo = 0.0,
			   .hi = FASTCLIP_LOG_S_MAX};
}

int fastclip_pack_width(FastclipKind kind)
{
	switch (kind) {
	case FASTCLIP_OPENCLIP: return 0;
	case FASTCLIP_V2: return 12;
	default: return 2;
	}
}

int64_t fastclip_steps_per_epoch(int64_t train_num_samples, int64_t global_batch)
{
	if (train_num_samples < 1 || global_batch < 1)
		return 0;
	return (train_num_samples + global_batch - 1) / global_batch;
}

KFccoParams fastclip_fcco_params(const FastclipConfig *cfg, int epoch)
{
	static const KFccoVersion version[FASTCLIP_NKINDS] = {
		[FASTCLIP_V0] = KFCCO_V0, [FASTCLIP_V1] = KFCCO_V1, [FASTCLIP_V2] = KFCCO_V2, [FASTCLIP_V3] = KFCCO_V3};
	double b1, b2;
	fastclip_tau_betas(cfg, epoch, &b1, &b2);
	return (KFccoParams){.version = version[cfg->kind],
			     .gamma = fastclip_gamma(cfg, epoch),
			     .eps = cfg->eps,
			     .rho = cfg->rho,
			     .lr_tau = cfg->lr_tau,
			     .beta1 = b1,
			     .beta2 = b2,
			     .eps_tau = cfg->eps_tau,
			     .tau_min = cfg->tau_min,
			     .tau_max = cfg->tau_max,
			     .grad_clamp = cfg->grad_clamp_tau,
			     .epoch = epoch,
			     .upstream_reset = cfg->upstream_reset};
}
