// FastCLIP flag table: each entry names a FastclipConfig field, its bounds and its help; the
// defaults shown are those of fastclip_config_default (FastCLIP's code), for fastclip-v3.
#include "fastclip.h" // defines: fastclip_flag_set, ...

#include <errno.h>  // defines: EINVAL, ENOENT, ERANGE
#include <math.h>   // defines: isfinite
#include <stddef.h> // defines: offsetof
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: strtod
#include <string.h> // defines: strcmp

typedef enum { F_DOUBLE, F_INT, F_SCHEDULE } FlagType;

typedef struct {
	const char *name;
	FlagType type;
	size_t off;
	double lo, hi;
	const char *help;
} Flag;

static const Flag flags[] = {
	{ "gamma-min", F_DOUBLE, offsetof(FastclipConfig, gamma_min), 1e-4, 1.0, "inner rate γ after the decay" },
	{ "gamma-decay-epochs", F_INT, offsetof(FastclipConfig, gamma_decay_epochs), 1, 100000, "epochs of the γ cosine decay (FastCLIP README: epochs/2)" },
	{ "gamma-schedule", F_SCHEDULE, offsetof(FastclipConfig, gamma_schedule), 0, 1, "cosine | constant (γ=1 in epoch 0, then γ-min)" },
	{ "rho", F_DOUBLE, offsetof(FastclipConfig, rho), 0.0, 1000.0, "ρ of RGCL / RGCL-g (v2, v3)" },
	{ "fastclip-eps", F_DOUBLE, offsetof(FastclipConfig, eps), 0.0, 1.0, "ε added to u in g/(u+ε)" },
	{ "temperature", F_DOUBLE, offsetof(FastclipConfig, tau_init), 1e-3, 10.0, "initial τ (per-sample τ for v2)" },
	{ "lr-tau", F_DOUBLE, offsetof(FastclipConfig, lr_tau), 0.0, 10.0, "τ learning rate: v2 per-sample, v3 global (×1/3 when τ ≤ 0.03), v0 peak on the model's warmup+cosine" },
	{ "tau-beta1", F_DOUBLE, offsetof(FastclipConfig, beta1_tau), 0.0, 0.999999, "β1 of the τ updates" },
	{ "tau-beta2", F_DOUBLE, offsetof(FastclipConfig, beta2_tau), 0.0, 0.999999, "β2 of the τ updates" },
	{ "tau-eps", F_DOUBLE, offsetof(FastclipConfig, eps_tau), 1e-12, 1.0, "ε of the τ updates" },
};
enum { NFLAGS = sizeof(flags) / sizeof(flags[0]) };

static double get(const FastclipConfig *cfg, const Flag *f)
{
	const char *p = (const char *)cfg + f->off;
	if (f->type == F_DOUBLE)
		return *(const double *)p;
	if (f->type == F_INT)
		return *(const int *)p;
	return *(const FastclipGammaSchedule *)p;
}

int fastclip_flag_set(FastclipConfig *cfg, const char *name, const char *value)
{
	if (!cfg || !name || !value)
		return -EINVAL;
	for (int i = 0; i < NFLAGS; i++) {
		const Flag *f = &flags[i];
		if (strcmp(name, f->name) != 0)
			continue;
		char *p = (char *)cfg + f->off;
		if (f->type == F_SCHEDULE) {
			if (strcmp(value, "cosine") == 0)
				*(FastclipGammaSchedule *)p = FASTCLIP_GAMMA_COSINE;
			else if (strcmp(value, "constant") == 0)
				*(FastclipGammaSchedule *)p = FASTCLIP_GAMMA_CONSTANT;
			else
				return -EINVAL;
			return 0;
		}
		char *end;
		double v = strtod(value, &end);
		if (end == value || *end != 0 || !isfinite(v) || (f->type == F_INT && v != (double)(int)v))
			return -EINVAL;
		if (v < f->lo || v > f->hi)
			return -ERANGE;
		if (f->type == F_INT)
			*(int *)p = (int)v;
		else
			*(double *)p = v;
		return 0;
	}
	return -ENOENT;
}

int fastclip_flags_help(char *buf, size_t len)
{
	if (!buf || len == 0)
		return -EINVAL;
	FastclipConfig d;
	fastclip_config_default(&d, FASTCLIP_V3);
	size_t n = (size_t)snprintf(buf, len, "  --loss NAME  openclip | fastclip-v0 | fastclip-v1 | fastclip-v2 | fastclip-v3\n");
	for (int i = 0; i < NFLAGS && n < len; i++) {
		const Flag *f = &flags[i];
		if (f->type == F_SCHEDULE)
			n += (size_t)snprintf(buf + n, len - n, "  --%s S  %s (default cosine)\n", f->name, f->help);
		else
			n += (size_t)snprintf(buf + n, len - n, "  --%s X  %s [%g, %g] (default %g%s)\n", f->name, f->help, f->lo,
					      f->hi, get(&d, f), strcmp(f->name, "temperature") == 0 ? "; v2 0.03" :
								 strcmp(f->name, "lr-tau") == 0 ? "; v2 0.0133; v0 the model's --lr" : "");
	}
	return (int)n;
}

int fastclip_config_describe(const FastclipConfig *cfg, char *buf, size_t len)
{
	if (!cfg || !buf || len == 0)
		return -EINVAL;
	size_t n = (size_t)snprintf(buf, len, "loss=%s", fastclip_kind_name(cfg->kind));
	for (int i = 0; i < NFLAGS && n < len; i++) {
		const Flag *f = &flags[i];
		if (f->type == F_SCHEDULE)
			n += (size_t)snprintf(buf + n, len - n, " %s=%s", f->name,
					      cfg->gamma_schedule == FASTCLIP_GAMMA_COSINE ? "cosine" : "constant");
		else if (strcmp(f->name, "lr-tau") == 0 && get(cfg, f) < 0)
			n += (size_t)snprintf(buf + n, len - n, " %s=lr", f->name);
		else
			n += (size_t)snprintf(buf + n, len - n, " %s=%g", f->name, get(cfg, f));
	}
	return (int)n;
}
