// FastCLIP flag table (common/flags.h's engine): each entry names a FastclipConfig field, its
// bounds and its help; the defaults shown are those of fastclip_config_default for fastclip-v3.
#include "fastclip.h" // defines: fastclip_flag_set, ...

#include <errno.h>  // defines: EINVAL, ENOENT
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: strcmp

#include "flags.h" // defines: FlagSpec, FLAG_AT, flags_find, flags_set, flags_help

#define F(f) FLAG_AT(FastclipConfig, f)
// .def: fastclip-v3's default, shown by --help; fastclip_config_default sets the kind's own
// (test_fastclip_flags checks the two agree)
static const FlagSpec flags[] = {
	{"gamma-min", FLAG_DOUBLE, F(gamma_min), 1e-4, 1.0, "0.8", .help = "inner rate γ after the decay"},
	{"gamma-decay-epochs", FLAG_INT, F(gamma_decay_epochs), 1, 100000, "10",
	 .help = "epochs of the γ cosine decay (FastCLIP README: epochs/2)"},
	{"gamma-schedule", FLAG_ENUM, F(gamma_schedule), 0, 0, "cosine",
	 .help = "cosine, or constant (γ=1 in epoch 0, then γ-min)", .choices = "cosine|constant"},
	{"rho", FLAG_DOUBLE, F(rho), 0.0, 1000.0, "8", .help = "ρ of RGCL / RGCL-g (v2, v3)"},
	{"fastclip-eps", FLAG_DOUBLE, F(eps), 0.0, 1.0, "1e-14", .help = "ε added to u in g/(u+ε)"},
	{"temperature", FLAG_DOUBLE, F(tau_init), 1e-3, 10.0, "0.07",
	 .help = "initial τ (per-sample τ for v2; v2's default 0.03)"},
	{"lr-tau", FLAG_DOUBLE, F(lr_tau), 0.0, 10.0, "0.0002",
	 .help = "τ learning rate: v2 per-sample, v3 global (×1/3 when τ ≤ 0.03), v0 peak on the model's warmup+cosine (v2's "
		 "default 0.0133; v0's the model's --lr)"},
	{"tau-beta1", FLAG_DOUBLE, F(beta1_tau), 0.0, 0.999999, "0.9", .help = "β1 of the τ updates"},
	{"tau-beta2", FLAG_DOUBLE, F(beta2_tau), 0.0, 0.999999, "0.98", .help = "β2 of the τ updates"},
	{"tau-eps", FLAG_DOUBLE, F(eps_tau), 1e-12, 1.0, "1e-6", .help = "ε of the τ updates"},
	{"fastclip-upstream-reset", FLAG_SWITCH, F(upstream_reset), 0, 0, "0",
	 .help = "FastCLIP's bad-u rule exactly: u < 1e-35, inf or NaN is reset to g only when γ < 1, so at γ = 1 (epoch "
		 "0) an inf or NaN u stays NaN (default: reset at every γ; the same for finite u)"},
};
enum { NFLAGS = sizeof(flags) / sizeof(flags[0]) };

const FlagSpec *fastclip_flag_table(int *n)
{
	*n = NFLAGS;
	return flags;
}

static double get(const FastclipConfig *cfg, const FlagSpec *f)
{
	const char *p = (const char *)cfg + f->off;
	return f->type == FLAG_DOUBLE ? *(const double *)p : *(const int *)p;
}

int fastclip_flag_set(FastclipConfig *cfg, const char *name, const char *value)
{
	if (!cfg || !name || !value)
		return -EINVAL;
	const FlagSpec *f = flags_find(flags, NFLAGS, name);
	char err[160];
	return f ? flags_set(f, cfg, value, err, sizeof err) : -ENOENT;
}

int fastclip_flags_help(char *buf, size_t len)
{
	if (!buf || len == 0)
		return -EINVAL;
	return flags_help(flags, NFLAGS, buf, len);
}
int fastclip_config_describe(const FastclipConfig *cfg, char *buf, size_t len)
{
	if (!cfg || !buf || len == 0)
		return -EINVAL;
	size_t n = (size_t)snprintf(buf, len, "loss=%s", fastclip_kind_name(cfg->kind));
	for (int i = 0; i < NFLAGS && n < len; i++) {
		const FlagSpec *f = &flags[i];
		if (f->type == FLAG_ENUM)
			n += (size_t)snprintf(buf + n, len - n, " %s=%s", f->name,
					      cfg->gamma_schedule == FASTCLIP_GAMMA_COSINE ? "cosine" : "constant");
		else if (strcmp(f->name, "lr-tau") == 0 && get(cfg, f) < 0)
			n += (size_t)snprintf(buf + n, len - n, " %s=lr", f->name);
		else
			n += (size_t)snprintf(buf + n, len - n, " %s=%g", f->name, get(cfg, f));
	}
	return (int)n;
}
