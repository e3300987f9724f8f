// Global temperature update: torch.optim.AdamW's step for one scalar with weight decay 0,
// followed by open_clip's clamp of logit_scale to [0, ln 100].
#include "fastclip_ref.h" // defines: FastclipTemp

#include <errno.h> // defines: EINVAL
#include <math.h>  // defines: log, pow, sqrt, isfinite

#include "fastclip.h" // defines: FASTCLIP_LOG_S_MAX

double fastclip_clamp_log_s(double log_s)
{
	return log_s < 0.0 ? 0.0 : log_s > FASTCLIP_LOG_S_MAX ? FASTCLIP_LOG_S_MAX : log_s;
}

int fastclip_temp_init(FastclipTemp *t, double tau)
{
	if (!t || !(tau > 0.0) || !isfinite(tau))
		return -EINVAL;
	t->log_s = log(1.0 / tau);
	t->m = t->v = 0.0;
	t->steps = 0;
	return 0;
}

int fastclip_temp_step(FastclipTemp *t, double grad, double lr, double beta1, double beta2, double eps)
{
	if (!t || !isfinite(grad) || !(lr >= 0.0) || !(beta1 >= 0.0 && beta1 < 1.0) || !(beta2 >= 0.0 && beta2 < 1.0) ||
	    !(eps > 0.0))
		return -EINVAL;
	t->steps++;
	t->m = beta1 * t->m + (1.0 - beta1) * grad;
	t->v = beta2 * t->v + (1.0 - beta2) * grad * grad;
	double bc1 = 1.0 - pow(beta1, (double)t->steps), bc2 = 1.0 - pow(beta2, (double)t->steps);
	double denom = sqrt(t->v) / sqrt(bc2) + eps;
	t->log_s = fastclip_clamp_log_s(t->log_s - lr / bc1 * t->m / denom);
	return 0;
}
